//! A real OCI registry (distribution's `docker-registry`) on a free loopback port, and KRM
//! function images built from busybox-static, written as an OCI layout by hand and pushed
//! with `skopeo`. Test support: failures panic with what is missing.

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

fn need(tool: &str) -> String {
    for dir in ["/usr/bin", "/usr/sbin", "/usr/local/bin", "/bin"] {
        let p = Path::new(dir).join(tool);
        if p.exists() {
            return p.to_string_lossy().into_owned();
        }
    }
    panic!(
        "{tool} is missing: run .ci/setup.sh (Debian packages docker-registry, skopeo, bubblewrap, busybox-static)"
    );
}

/// A running registry, stopped when dropped.
pub struct Registry {
    child: Child,
    /// Where it listens (plain HTTP).
    pub addr: SocketAddr,
    /// Basic credentials it requires, if any (used for pushes too).
    pub credentials: Option<(String, String)>,
    _dir: tempfile::TempDir,
}

/// The user [`Registry::start_with_auth`] accepts, and its password.
pub const USER: &str = "fn-puller";
/// [`USER`]'s password.
pub const PASSWORD: &str = "s3cret";
/// bcrypt (cost 4, fast enough per request) of [`PASSWORD`], for the registry's htpasswd.
const PASSWORD_BCRYPT: &str = "$2b$04$CA1VAERUu8lM4aT8G2SuYufEtZquLb4hrmETN6TUNRQs6BAIxJNlK";

impl Registry {
    /// Starts a registry with its storage in a temporary directory.
    pub fn start() -> Registry {
        Self::start_inner(false)
    }

    /// Starts a registry that requires basic auth as [`USER`] / [`PASSWORD`].
    pub fn start_with_auth() -> Registry {
        Self::start_inner(true)
    }

    fn start_inner(auth: bool) -> Registry {
        let dir = tempfile::tempdir().expect("tempdir");
        let port = TcpListener::bind("127.0.0.1:0")
            .expect("bind")
            .local_addr()
            .expect("addr")
            .port();
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().expect("addr");
        let config = dir.path().join("config.yml");
        let mut text = format!(
            "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {addr}\n",
            dir.path().join("data").display()
        );
        if auth {
            let htpasswd = dir.path().join("htpasswd");
            std::fs::write(&htpasswd, format!("{USER}:{PASSWORD_BCRYPT}\n")).expect("htpasswd");
            text.push_str(&format!(
                "auth:\n  htpasswd:\n    realm: test\n    path: {}\n",
                htpasswd.display()
            ));
        }
        std::fs::write(&config, text).expect("config");
        let log = std::fs::File::create(dir.path().join("registry.log")).expect("log");
        let child = Command::new(need("docker-registry"))
            .arg("serve")
            .arg(&config)
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("start docker-registry");
        let started = Instant::now();
        while TcpStream::connect(addr).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "registry did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Registry {
            child,
            addr,
            credentials: auth.then(|| (USER.to_string(), PASSWORD.to_string())),
            _dir: dir,
        }
    }

    /// Pushes `image` as `<addr>/<name>`, in Docker schema 2 format when `docker_format`.
    pub fn push(&self, image: &Image, name: &str, docker_format: bool) -> String {
        self.copy(
            image,
            name,
            if docker_format {
                &["--format", "v2s2"]
            } else {
                &[]
            },
        )
    }

    /// Pushes a multi-platform image with all its platforms.
    pub fn push_all(&self, image: &Image, name: &str) -> String {
        self.copy(image, name, &["--all"])
    }

    fn copy(&self, image: &Image, name: &str, flags: &[&str]) -> String {
        let dest = format!("{}/{name}", self.addr);
        let mut cmd = Command::new(need("skopeo"));
        cmd.args(["--insecure-policy", "copy", "--dest-tls-verify=false"]);
        if let Some((user, password)) = &self.credentials {
            cmd.arg(format!("--dest-creds={user}:{password}"));
        }
        cmd.args(flags);
        let out = cmd
            .arg(format!(
                "oci:{}:{}",
                image.layout.path().display(),
                image.tag
            ))
            .arg(format!("docker://{dest}"))
            .output()
            .expect("run skopeo");
        assert!(
            out.status.success(),
            "skopeo copy failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        dest
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn sha(data: &[u8]) -> String {
    let hex: String = Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

fn tar_layer(files: &[(&str, &[u8], u32)]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (path, data, mode) in files {
        let mut h = tar::Header::new_gnu();
        if path.ends_with('/') {
            h.set_entry_type(tar::EntryType::Directory);
            h.set_size(0);
        } else {
            h.set_size(data.len() as u64);
        }
        h.set_mode(*mode);
        b.append_data(&mut h, path, *data).expect("append");
    }
    b.into_inner().expect("tar")
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(data).expect("gzip");
    gz.finish().expect("gzip")
}

/// An image in an OCI layout directory.
pub struct Image {
    layout: tempfile::TempDir,
    tag: String,
}

/// Builds a two-layer image: busybox plus a file the second layer whites out, then the
/// function script `script` run as `busybox sh /fn.sh` by user 65532.
pub fn function_image(script: &str) -> Image {
    function_image_with_payload(script, 0)
}

/// [`function_image`] plus a third layer holding `payload` bytes of incompressible data
/// (`/payload`), for images of a realistic size (a catalog function is about 20 MB).
pub fn function_image_with_payload(script: &str, payload: usize) -> Image {
    let layout = tempfile::tempdir().expect("tempdir");
    let (md, mn) = write_manifest_sized(layout.path(), script, "amd64", payload);
    finish(
        layout,
        serde_json::json!({
            "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": md, "size": mn
        }),
    )
}

/// A multi-platform image (an OCI image index): the linux/arm64 entry, listed first, runs
/// `arm64_script`, the linux/amd64 one `amd64_script`. Push it with [`Registry::push_all`].
pub fn multi_arch_image(amd64_script: &str, arm64_script: &str) -> Image {
    let layout = tempfile::tempdir().expect("tempdir");
    let mut entries = Vec::new();
    for (arch, script) in [("arm64", arm64_script), ("amd64", amd64_script)] {
        let (d, n) = write_manifest(layout.path(), script, arch);
        entries.push(serde_json::json!({
            "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": d, "size": n,
            "platform": {"architecture": arch, "os": "linux"}
        }));
    }
    let index = serde_json::json!({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": entries
    });
    let (d, n) = put_blob(layout.path(), index.to_string().as_bytes());
    finish(
        layout,
        serde_json::json!({
            "mediaType": "application/vnd.oci.image.index.v1+json", "digest": d, "size": n
        }),
    )
}

fn put_blob(layout: &Path, data: &[u8]) -> (String, usize) {
    let blobs = layout.join("blobs/sha256");
    std::fs::create_dir_all(&blobs).expect("mkdir");
    let d = sha(data);
    std::fs::write(blobs.join(d.trim_start_matches("sha256:")), data).expect("blob");
    (d, data.len())
}

/// Writes the layers, config and manifest of one function image; returns the manifest's
/// digest and size.
fn write_manifest(layout: &Path, script: &str, arch: &str) -> (String, usize) {
    write_manifest_sized(layout, script, arch, 0)
}

/// Incompressible bytes (xorshift), so that gzip cannot shrink the payload layer.
fn noise(len: usize) -> Vec<u8> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn write_manifest_sized(
    layout: &Path,
    script: &str,
    arch: &str,
    payload: usize,
) -> (String, usize) {
    let busybox = std::fs::read(need("busybox")).expect("read busybox");
    let base = tar_layer(&[
        ("bin/", b"", 0o755),
        ("bin/busybox", &busybox, 0o755),
        ("etc/", b"", 0o755),
        ("etc/junk", b"hidden by the next layer", 0o644),
    ]);
    let top = tar_layer(&[
        ("etc/.wh.junk", b"", 0o644),
        ("fn.sh", script.as_bytes(), 0o755),
    ]);
    let mut raws = vec![base, top];
    if payload > 0 {
        raws.push(tar_layer(&[("payload", &noise(payload), 0o644)]));
    }
    let mut layers = Vec::new();
    let mut diff_ids = Vec::new();
    for raw in &raws {
        diff_ids.push(sha(raw));
        let (d, n) = put_blob(layout, &gzip(raw));
        layers.push(serde_json::json!({
            "mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": d, "size": n
        }));
    }
    let config = serde_json::json!({
        "architecture": arch, "os": "linux",
        "config": {
            "Entrypoint": ["/bin/busybox", "sh"], "Cmd": ["/fn.sh"],
            "Env": ["PATH=/bin", "FN_MODE=test"], "WorkingDir": "/work", "User": "65532:65532"
        },
        "rootfs": {"type": "layers", "diff_ids": diff_ids}
    });
    let (cd, cn) = put_blob(layout, config.to_string().as_bytes());
    let manifest = serde_json::json!({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cd, "size": cn},
        "layers": layers
    });
    put_blob(layout, manifest.to_string().as_bytes())
}

/// Writes `index.json` naming `top` as tag `v1`, and `oci-layout`.
fn finish(layout: tempfile::TempDir, mut top: serde_json::Value) -> Image {
    let tag = "v1".to_string();
    top["annotations"] = serde_json::json!({"org.opencontainers.image.ref.name": tag});
    let index = serde_json::json!({"schemaVersion": 2, "manifests": [top]});
    std::fs::write(layout.path().join("index.json"), index.to_string()).expect("index");
    std::fs::write(
        layout.path().join("oci-layout"),
        r#"{"imageLayoutVersion":"1.0.0"}"#,
    )
    .expect("oci-layout");
    Image { layout, tag }
}
