//! `porchctl rpkg push` refuses a directory (or a ResourceList) without a root Kptfile
//! before it sends anything: the "server" here is a bare listener that must see no
//! connection.

use std::io::Write;
use std::net::TcpListener;
use std::process::{Command, Output, Stdio};

fn push(args: &[&str], server: &str, home: &std::path::Path, stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_porchctl"))
        .args(["rpkg", "push"])
        .args(args)
        .args(["--server", server, "--token", "t", "-n", "default"])
        .env("HOME", home)
        .env_remove("KUBECONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run porchctl");
    if let Some(mut input) = child.stdin.take() {
        input
            .write_all(stdin.unwrap_or_default().as_bytes())
            .expect("write stdin");
    }
    child.wait_with_output().expect("porchctl output")
}

#[test]
fn push_refuses_a_directory_without_a_kptfile_before_sending_anything() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let server = format!("https://{}", listener.local_addr().expect("addr"));
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("pkg");
    std::fs::create_dir_all(dir.join("sub")).expect("mkdir");
    std::fs::write(
        dir.join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
    )
    .expect("write");
    // A subpackage's Kptfile does not make the directory a package.
    std::fs::write(
        dir.join("sub/Kptfile"),
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\n",
    )
    .expect("write");
    std::fs::write(
        dir.join(".KptRevisionMetadata"),
        "apiVersion: \"\"\nkind: KptRevisionMetadata\nmetadata:\n  name: r.p.ws\n  namespace: default\n  resourceVersion: \"5\"\n",
    )
    .expect("write");
    let d = dir.to_str().expect("utf-8 path");

    let out = push(&["r.p.ws", d], &server, tmp.path(), None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "directory {d:?} is not a kpt package: it has no Kptfile at its root"
        )),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing pushed");

    let cm = "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm\n    annotations:\n      config.kubernetes.io/path: cm.yaml\n";
    let meta = "- apiVersion: \"\"\n  kind: KptRevisionMetadata\n  metadata:\n    name: r.p.ws\n    namespace: default\n    resourceVersion: \"5\"\n    annotations:\n      config.kubernetes.io/path: .KptRevisionMetadata\n";
    let list = |items: &str| {
        format!("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{items}")
    };
    let out = push(
        &["r.p.ws", "-"],
        &server,
        tmp.path(),
        Some(&list(&format!("{meta}{cm}"))),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the ResourceList on stdin is not a kpt package"),
        "{stderr}"
    );
    // Upstream's own check, the pulled metadata, is reported first.
    let out = push(&["r.p.ws", "-"], &server, tmp.path(), Some(&list(cm)));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "\".KptRevisionMetadata\" not found in PackageRevisionResources 'default/r.p.ws'"
        ),
        "{stderr}"
    );

    // No DIR at all reads stdin too, after upstream's notice (no newline of its own).
    let out = push(&["r.p.ws"], &server, tmp.path(), Some(&list(cm)));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(
            "Warning: This way of using stdin will be deprecated in Porch release 5.x.x. Please use '-' to provide stdin.Error: \".KptRevisionMetadata\" not found"
        ),
        "{stderr}"
    );

    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("porchctl connected to the server: {other:?}"),
    }
}
