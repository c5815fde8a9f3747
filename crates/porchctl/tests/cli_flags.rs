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
    // pflag names the letter and what was left of the cluster when it reached it.
    refused(
        &["rpkg", "get", "-Ax"],
        "error: unknown shorthand flag: 'x' in -x\n",
    );
    refused(
        &["rpkg", "get", "-xA"],
        "error: unknown shorthand flag: 'x' in -xA\n",
    );
    refused(&["rpkg", "get", "---x"], "error: bad flag syntax: ---x\n");
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
    // A root flag cobra does not know at the root takes the next word as its value while
    // it looks for the command.
    refused(
        &["-A", "rpkg", "get"],
        "error: unknown command \"get\" for \"porchctl\"\n",
    );
}

#[test]
fn a_group_given_an_unknown_command_prints_its_usage() {
    // Only the root checks its words (cobra's legacyArgs); a group's RunE prints its
    // usage to stderr and succeeds.
    for args in [
        &["rpkg", "gett"][..],
        &["rpkg"],
        &["repo", "bogus"],
        &["fn", "x"],
        &["pkg"],
    ] {
        let (code, stdout, stderr) = porchctl(args);
        assert_eq!((code, stdout.as_str()), (0, ""), "{args:?}");
        assert!(
            stderr.contains(&format!("Usage: porchctl {} ", args[0])),
            "{args:?}: {stderr}"
        );
    }
    // Its flags are read first.
    refused(
        &["rpkg", "gett", "--bogus"],
        "error: unknown flag: --bogus\n",
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
        &["fr"],
        "error: unknown command \"fr\" for \"porchctl\"\n\nDid you mean this?\n\tfn\n",
    );
    refused(
        &["rep"],
        "error: unknown command \"rep\" for \"porchctl\"\n\nDid you mean this?\n\trepo\n",
    );
}

/// Run porchctl in `dir` with no cluster configured.
fn porchctl_in(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_porchctl"))
        .args(args)
        .current_dir(dir)
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .output()
        .expect("porchctl runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn duration_flags_are_gos_durations() {
    // component-base's `--log-flush-frequency`, on the root and so everywhere.
    let (code, stdout, stderr) = porchctl(&["--log-flush-frequency=5s", "version", "extra"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("Version: "), "{stdout}");
    refused(
        &["rpkg", "get", "--log-flush-frequency", "5"],
        "error: invalid argument \"5\" for \"--log-flush-frequency\" flag: time: missing unit in duration \"5\"\n",
    );
    refused(
        &["repo", "reg", "u", "--timeout=3d"],
        "error: invalid argument \"3d\" for \"--timeout\" flag: time: unknown unit \"d\" in duration \"3d\"\n",
    );
    refused(
        &["repo", "reg", "u", "--timeout="],
        "error: invalid argument \"\" for \"--timeout\" flag: time: invalid duration \"\"\n",
    );
}

#[test]
fn a_bad_value_before_an_unknown_flag_is_the_error() {
    refused(
        &["rpkg", "get", "--revision=x", "--bogus"],
        "error: invalid argument \"x\" for \"--revision\" flag: strconv.ParseInt: parsing \"x\": invalid syntax\n",
    );
    refused(
        &["rpkg", "get", "--bogus", "--revision=x"],
        "error: unknown flag: --bogus\n",
    );
}

#[test]
fn help_takes_a_boolean_value() {
    let (code, stdout, _) = porchctl(&["rpkg", "get", "--help=true"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("porchctl rpkg get"), "{stdout}");
    // `-h=false` asks for no help: the command runs (and fails without a cluster).
    let (code, stdout, stderr) = porchctl(&["rpkg", "get", "-h=false"]);
    assert_eq!((code, stdout.as_str()), (1, ""));
    assert!(
        stderr.starts_with("Error: invalid configuration"),
        "{stderr}"
    );
    refused(
        &["rpkg", "get", "--help=maybe"],
        "error: invalid argument \"maybe\" for \"-h, --help\" flag: strconv.ParseBool: parsing \"maybe\": invalid syntax\n",
    );
}

#[test]
fn fn_commands_read_flags_as_kpts_cobra_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    // kpt's `--truncate-output` is a boolean: `false` is the package path.
    let (code, _, stderr) =
        porchctl_in(dir.path(), &["fn", "render", "--truncate-output", "false"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("false"), "{stderr}");
    refused(
        &["fn", "render", "--truncate-output=maybe"],
        "error: invalid argument \"maybe\" for \"--truncate-output\" flag: strconv.ParseBool: parsing \"maybe\": invalid syntax\n",
    );
    // kpt HEAD's `--image-pull-policy` is a pflag value (any case) refusing in its words.
    refused(
        &["fn", "render", "--image-pull-policy=bogus"],
        "error: invalid argument \"bogus\" for \"--image-pull-policy\" flag: must must be one of Always, IfNotPresent, Never\n",
    );
    refused(
        &["fn", "eval", "--image-pull-policy", "x", "-i", "img"],
        "error: invalid argument \"x\" for \"--image-pull-policy\" flag: must must be one of Always, IfNotPresent, Never\n",
    );
    refused(
        &["fn", "eval", "-i"],
        "error: flag needs an argument: 'i' in -i\n",
    );
    refused(
        &["fn", "eval", "--image"],
        "error: flag needs an argument: --image\n",
    );
    refused(&["fn", "eval", "--bogus"], "error: unknown flag: --bogus\n");
    refused(
        &["fn", "eval", "-mx"],
        "error: unknown shorthand flag: 'x' in -x\n",
    );
}

#[test]
fn pkg_init_reads_string_slices_and_strings_in_every_form() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (code, _, stderr) = porchctl_in(
        dir.path(),
        &[
            "pkg",
            "init",
            "--keywords",
            "a,\"b,c\"",
            "p",
            "--keywords=d",
            "--description",
            "-d-",
            "--site=",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let kptfile = std::fs::read_to_string(dir.path().join("p/Kptfile")).expect("Kptfile");
    assert!(
        kptfile.contains("description: -d-\n  keywords:\n  - a\n  - b,c\n  - d\n"),
        "{kptfile}"
    );
    refused(
        &["pkg", "init", "--keywords", "a\"b"],
        "error: invalid argument \"a\\\"b\" for \"--keywords\" flag: parse error on line 1, column 2: bare \" in non-quoted-field\n",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flags_in_any_position_and_spelling_reach_the_server() {
    let s = Server::start();
    // Persistent flags before the command words, `_` for `-`, short clusters, `--`.
    s.porchctl_ok(&[
        "-n",
        "default",
        "repo",
        "register",
        "--repo_basic_username=me",
        "--repo-basic-password",
        "pw",
        "--name",
        "spelled",
        "--description=-d-",
        "--deployment=1",
        "--directory",
        "/sub",
        "--",
        "http://127.0.0.1:9/x/spelled.git",
    ]);
    let repos: Api<Repository> = Api::namespaced(s.client().await, "default");
    let r = repos.get("spelled").await.expect("spelled");
    assert_eq!(r.spec.deployment, Some(true));
    assert_eq!(r.spec.description.as_deref(), Some("-d-"));
    let git = r.spec.git.expect("git");
    assert_eq!(git.directory.as_deref(), Some("/sub"));
    assert_eq!(
        git.secret_ref.map(|s| s.name).as_deref(),
        Some("spelled-auth")
    );
    // `rpkg get` with a cluster of short flags and the last scalar value winning.
    let out = s.porchctl_ok(&[
        "rpkg", "get", "-An", "nowhere", "--name=a", "--name", "none",
    ]);
    assert!(out.is_empty() || out.starts_with("NAME"), "{out}");
}

#[test]
fn completion_without_a_shell_prints_its_help() {
    // cobra's `completion` is a group of one command per shell: alone, its help.
    let (code, stdout, stderr) = porchctl(&["completion"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert!(stdout.contains("Usage: porchctl completion"), "{stdout}");
}

#[test]
fn fn_eval_refuses_a_second_directory_after_its_own_checks() {
    refused(
        &["fn", "eval", "a", "b", "-i", "img"],
        "error: 0 or 1 arguments supported, function arguments go after '--'\n",
    );
    // `--image` is checked first, as kpt's preRunE does.
    refused(
        &["fn", "eval", "a", "b"],
        "error: must specify --image or --exec\n",
    );
    // kpt's `-k/--keywords` (a string array) and `--allow-alpha-wasm` are flags of eval.
    refused(
        &[
            "fn",
            "eval",
            "-k",
            "x",
            "--keywords=y",
            "--allow-alpha-wasm",
            "a",
            "b",
        ],
        "error: must specify --image or --exec\n",
    );
}

/// Upstream's rpkg and repo commands build their client in preRunE, before they look at their
/// arguments: with no usable configuration that is the error, whatever the arguments.
#[test]
fn commands_need_a_configuration_before_their_arguments() {
    for args in [
        &["rpkg", "init"][..],
        &["rpkg", "clone", "only-source"],
        &["rpkg", "copy"],
        &["rpkg", "upgrade"],
        &["rpkg", "pull"],
        &["rpkg", "push"],
        &["repo", "reg"],
        &["repo", "unreg"],
    ] {
        let (code, stdout, stderr) = porchctl(args);
        assert_eq!((code, stdout.as_str()), (1, ""), "{args:?}");
        assert!(
            stderr.starts_with("Error: ") && !stderr.contains("positional argument"),
            "{args:?}: {stderr}"
        );
    }
}
