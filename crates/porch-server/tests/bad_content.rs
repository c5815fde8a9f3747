//! A package's content is the user's: every mistake in it is a 4xx naming the cause (never a
//! 500), and nothing is saved. Each case is a resources update through the server binary.

mod common;

use common::porch::*;
use kube::api::{Api, DynamicObject};
use serde_json::json;

const NS: &str = "default";

/// What is wrong, the files of the update, and what the message must name.
type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str);

fn kptfile(body: &str) -> String {
    format!("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n{body}")
}

/// Nesting deeper than any parser must follow.
fn deeply_nested() -> String {
    let depth = 20_000;
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata:\n  x: {}{}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    )
}

async fn expect_refused(
    prrs: &Api<DynamicObject>,
    pr: &str,
    case: &str,
    files: &[(&str, &str)],
) -> String {
    let before = files_of(prrs, pr).await;
    let (code, msg) = api_err(put_files(prrs, pr, files).await);
    assert!(
        (400..500).contains(&code),
        "{case}: expected a 4xx, got {code}: {msg}"
    );
    assert_eq!(files_of(prrs, pr).await, before, "{case}: nothing is saved");
    msg
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn content_mistakes_are_4xx_with_their_cause() {
    let env = Env::start().await;
    let url = env.empty_repo("git");
    env.register(NS, "git", &url, json!({})).await;
    let prs = env.prs(NS);
    let prrs = env.prrs(NS);
    init(&prs, "git", "pkg", "ws").await;
    let pr = "git.pkg.ws";

    let pipeline = |image: &str| kptfile(&format!("pipeline:\n  mutators:\n  - {image}\n"));
    let unknown_image = pipeline("image: example.invalid/no-such-function:v1");
    let exec = pipeline("exec: /bin/cat");
    let unknown_field = kptfile("pipelne:\n  mutators: []\n");
    let old_version = "apiVersion: kpt.dev/v1alpha1\nkind: Kptfile\nmetadata:\n  name: pkg\n";
    let nested = deeply_nested();
    let cases: Vec<Case> = vec![
        (
            "malformed YAML",
            vec![("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: [\n")],
            "cm.yaml",
        ),
        (
            "a document that is not KRM",
            vec![("cm.yaml", "just: a map\n")],
            "cm.yaml",
        ),
        (
            "a Kptfile with an unknown field",
            vec![("Kptfile", &unknown_field)],
            "Kptfile",
        ),
        (
            "an old Kptfile apiVersion",
            vec![("Kptfile", old_version)],
            "Kptfile",
        ),
        (
            "binary garbage in a YAML file",
            vec![("cm.yaml", "\u{1}\u{2}\u{3}kind: \u{7f}\u{0}")],
            "cm.yaml",
        ),
        ("deeply nested YAML", vec![("cm.yaml", &nested)], "cm.yaml"),
        (
            "an unknown function image",
            vec![("Kptfile", &unknown_image)],
            "no-such-function",
        ),
        (
            "an exec function the server does not allow",
            vec![("Kptfile", &exec)],
            "exec",
        ),
    ];
    for (case, files, cause) in cases {
        let msg = expect_refused(&prrs, pr, case, &files).await;
        assert!(
            msg.contains(cause),
            "{case}: the message names {cause}: {msg}"
        );
    }
    // The package still takes a good update afterwards.
    put_files(
        &prrs,
        pr,
        &[(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n",
        )],
    )
    .await
    .expect("a good update after the bad ones");
}
