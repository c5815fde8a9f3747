//! porchctl's command line as cobra and pflag take it, through the real binary: the
//! error texts (kubectl's `error: <msg>`, exit 1, no usage) and, against the real
//! porch-server, boolean flags in `--flag=true|false` form reaching the request.

mod common;

use std::process::Command;

use common::Server;
use kube::api::Api;
use porch_api::Repository;

/// Run porchctl with no cluster configured (every case fails before connecting).
fn porchctl(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_porchctl"))
        .args(args)
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .output()
        .expect("porchctl runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn refused(args: &[&str], want: &str) {
    let (code, stdout, stderr) = porchctl(args);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (1, "", want),
        "{args:?}"
    );
}

#[test]
fn unknown_flags_are_pflags_errors() {
    refused(&["repo", "reg", "--x"], "error: unknown flag: --x\n");
    refused(&["repo", "reg", "--x=1", "u"], "error: unknown flag: --x\n");
    refused(
        &["repo", "get", "-x"],
        "error: unknown shorthand flag: 'x' in -x\n",
    );
    refused(
        &["rpkg", "get", "-Ax"],
        "error: unknown shorthand flag: 'x' in -Ax\n",
    );
}

#[test]
fn bad_values_name_the_flag_and_gos_parse_error() {
    refused(
        &["repo", "reg", "u", "--deployment=yes"],
        "error: invalid argument \"yes\" for \"--deployment\" flag: strconv.ParseBool: parsing \"yes\": invalid syntax\n",
    );
    refused(
        &["rpkg", "get", "-A=maybe"],
        "error: invalid argument \"maybe\" for \"-A, --all-namespaces\" flag: strconv.ParseBool: parsing \"maybe\": invalid syntax\n",
    );
    refused(
        &["rpkg", "get", "--revision", "one"],
        "error: invalid argument \"one\" for \"--revision\" flag: strconv.ParseInt: parsing \"one\": invalid syntax\n",
    );
    refused(
        &["rpkg", "get", "--revision=99999999999999999999"],
        "error: invalid argument \"99999999999999999999\" for \"--revision\" flag: strconv.ParseInt: parsing \"99999999999999999999\": value out of range\n",
    );
    // A string-slice value is a CSV record: encoding/csv's errors.
    refused(
        &["rpkg", "init", "p", "--keywords", "a\"b"],
        "error: invalid argument \"a\\\"b\" for \"--keywords\" flag: parse error on line 1, column 2: bare \" in non-quoted-field\n",
    );
    refused(
        &["rpkg", "init", "p", "--keywords=\"a"],
        "error: invalid argument \"\\\"a\" for \"--keywords\" flag: parse error on line 1, column 3: extraneous or missing \" in quoted-field\n",
    );
    refused(
        &["--truncate-output=nope", "version"],
        "error: invalid argument \"nope\" for \"--truncate-output\" flag: strconv.ParseBool: parsing \"nope\": invalid syntax\n",
    );
}

#[test]
fn a_value_flag_at_the_end_needs_an_argument() {
    refused(
        &["repo", "reg", "u", "--name"],
        "error: flag needs an argument: --name\n",
    );
    refused(
        &["repo", "get", "-n"],
        "error: flag needs an argument: 'n' in -n\n",
    );
}

#[test]
fn unknown_commands_are_cobras_errors() {
    refused(
        &["frobnicate"],
        "error: unknown command \"frobnicate\" for \"porchctl\"\n",
    );
    refused(
        &["rpkg", "gett"],
        "error: unknown command \"gett\" for \"porchctl rpkg\"\n\nDid you mean this?\n\tget\n",
    );
}

#[test]
fn help_is_not_an_error() {
    let (code, stdout, stderr) = porchctl(&["repo", "reg", "--help"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("porchctl repo reg REPOSITORY [flags]"),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boolean_flags_with_values_reach_the_repository() {
    let s = Server::start();
    s.porchctl_ok(&[
        "repo",
        "reg",
        "http://127.0.0.1:9/x/on.git",
        "--deployment=true",
    ]);
    s.porchctl_ok(&[
        "repo",
        "reg",
        "--deployment=false",
        "http://127.0.0.1:9/x/off.git",
    ]);
    s.porchctl_ok(&[
        "repo",
        "register",
        "--name",
        "bare",
        "--deployment",
        "--",
        "http://127.0.0.1:9/x/b.git",
    ]);
    let repos: Api<Repository> = Api::namespaced(s.client().await, "default");
    let deployment = |r: Repository| r.spec.deployment;
    assert_eq!(deployment(repos.get("on").await.expect("on")), Some(true));
    assert_ne!(deployment(repos.get("off").await.expect("off")), Some(true));
    assert_eq!(
        deployment(repos.get("bare").await.expect("bare")),
        Some(true)
    );
}

#[test]
fn suggestions_follow_cobras_rule() {
    // Within two edits, or a prefix of the command's name.
    refused(
        &["rpkg", "prop"],
        "error: unknown command \"prop\" for \"porchctl rpkg\"\n\nDid you mean this?\n\tpropose\n\tpropose-delete\n",
    );
    refused(
        &["rep"],
        "error: unknown command \"rep\" for \"porchctl\"\n\nDid you mean this?\n\trepo\n",
    );
}
