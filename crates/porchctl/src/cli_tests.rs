//! The command line parsed through [`crate::pflag::read`] as the binary parses it: every
//! form pflag accepts, per flag type.

use clap::{CommandFactory, FromArgMatches};

use crate::repo_cmd::{RepoArgs, RepoCommand};
use crate::rpkg_cmd::{RpkgArgs, RpkgCommand};
use crate::{Cli, Command, cli};

/// The command line read as the binary reads it: pflag's reading, then clap's.
fn parse(args: &[&str]) -> Result<Cli, String> {
    let argv: Vec<String> = std::iter::once("porchctl")
        .chain(args.iter().copied())
        .map(str::to_string)
        .collect();
    let mut cmd = cli::adapt(Cli::command());
    cmd.build();
    let argv = match crate::pflag::read(&cmd, &argv)? {
        crate::pflag::Reading::Run(argv) => argv,
        usage => return Err(format!("{usage:?}")),
    };
    let m = cmd.try_get_matches_from(argv).map_err(|e| e.to_string())?;
    Cli::from_arg_matches(&m).map_err(|e| e.to_string())
}

fn repo(args: &[&str]) -> RepoArgs {
    match parse(args)
        .unwrap_or_else(|e| panic!("{args:?}: {e}"))
        .command
    {
        Command::Repo(r) => *r,
        other => panic!("{other:?}"),
    }
}

fn rpkg(args: &[&str]) -> RpkgArgs {
    match parse(args)
        .unwrap_or_else(|e| panic!("{args:?}: {e}"))
        .command
    {
        Command::Rpkg(r) => *r,
        other => panic!("{other:?}"),
    }
}

/// `repo reg ARGS...`'s parsed flags (the type is private to `repo_cmd`).
macro_rules! reg {
    ($($a:expr),* $(,)?) => {
        match repo(&["repo", "reg", $(AsRef::<str>::as_ref(&$a)),*]).command {
            RepoCommand::Reg(r) => r,
            other => panic!("{other:?}"),
        }
    };
}

#[test]
fn boolean_flags_take_every_pflag_spelling() {
    assert!(!reg!("u").deployment);
    assert!(reg!("u", "--deployment").deployment);
    for t in ["true", "True", "TRUE", "t", "T", "1"] {
        assert!(reg!("u", &format!("--deployment={t}")).deployment, "{t}");
    }
    for f in ["false", "False", "FALSE", "f", "F", "0"] {
        assert!(!reg!("u", &format!("--deployment={f}")).deployment, "{f}");
    }
    // A boolean never takes the next word: it stays a positional argument.
    let r = reg!("--create-branch", "true");
    assert!(r.create_branch);
    assert_eq!(r.repository.as_deref(), Some("true"));
    // Global booleans too.
    assert!(
        !parse(&["--truncate-output=false", "version"])
            .expect("parses")
            .truncate_output
    );
    assert!(
        parse(&["--truncate-output", "version"])
            .expect("parses")
            .truncate_output
    );
}

#[test]
fn short_boolean_flags_take_a_value_after_equals() {
    let get = |args: &[&str]| match rpkg(args).command {
        RpkgCommand::Get(g) => g,
        other => panic!("{other:?}"),
    };
    assert!(get(&["rpkg", "get", "-A"]).print.all_namespaces);
    assert!(!get(&["rpkg", "get", "-A=false"]).print.all_namespaces);
    assert!(
        get(&["rpkg", "get", "--all-namespaces=true"])
            .print
            .all_namespaces
    );
}

#[test]
fn string_flags_take_the_next_word_or_an_equals_value() {
    assert_eq!(reg!("u", "--name", "foo").name, "foo");
    assert_eq!(reg!("u", "--name=foo").name, "foo");
    // Whatever the next word starts with.
    assert_eq!(reg!("u", "--name", "-x").name, "-x");
    assert_eq!(
        reg!("u", "--description", "--not-a-flag").description,
        "--not-a-flag"
    );
    assert_eq!(reg!("u", "--name=").name, "");
}

#[test]
fn short_value_flags_take_every_pflag_spelling() {
    for args in [
        &["repo", "get", "-n", "ns"][..],
        &["repo", "get", "-nns"],
        &["repo", "get", "-n=ns"],
        &["repo", "get", "--namespace", "ns"],
        &["repo", "get", "--namespace=ns"],
        &["repo", "-n", "ns", "get"],
    ] {
        assert_eq!(repo(args).conn.namespace.as_deref(), Some("ns"), "{args:?}");
    }
}

#[test]
fn integer_flags_are_parsed_as_strconv_does() {
    let get = |args: &[&str]| match rpkg(args).command {
        RpkgCommand::Get(g) => g.revision,
        other => panic!("{other:?}"),
    };
    assert_eq!(get(&["rpkg", "get", "--revision", "3"]), 3);
    assert_eq!(get(&["rpkg", "get", "--revision=0x10"]), 16);
    assert_eq!(get(&["rpkg", "get", "--revision", "-1"]), -1);
    assert_eq!(get(&["rpkg", "get"]), -2, "not given");
    assert_eq!(repo(&["repo", "-v", "4", "get"]).conn.verbosity, Some(4));
    assert_eq!(repo(&["repo", "-v4", "get"]).conn.verbosity, Some(4));
    assert_eq!(repo(&["repo", "get", "--v=2"]).conn.verbosity, Some(2));
    // Upstream's root command has klog's flags too.
    assert_eq!(
        parse(&["-v", "3", "version"]).expect("parses").verbosity,
        Some(3)
    );
    assert_eq!(
        parse(&["-v5", "repo", "get"]).expect("parses").verbosity,
        Some(5)
    );
    assert_eq!(
        parse(&["--v=3", "fn", "render", "."])
            .expect("parses")
            .verbosity,
        Some(3)
    );
}

#[test]
fn duration_flags_take_both_forms() {
    use std::time::Duration;
    assert_eq!(
        reg!("u", "--timeout", "90s").timeout,
        Duration::from_secs(90)
    );
    assert_eq!(reg!("u", "--timeout=2m").timeout, Duration::from_secs(120));
    assert_eq!(
        reg!("u", "--timeout=1m30s").timeout,
        Duration::from_secs(90)
    );
    assert_eq!(reg!("u").timeout, Duration::from_secs(120), "default");
    assert_eq!(
        parse(&["repo", "reg", "u", "--timeout=90"])
            .err()
            .as_deref(),
        Some(
            "invalid argument \"90\" for \"--timeout\" flag: time: missing unit in duration \"90\""
        )
    );
    assert_eq!(
        repo(&["repo", "get", "--request-timeout", "5s"])
            .conn
            .request_timeout,
        "5s"
    );
}

#[test]
fn string_slices_split_on_commas_and_repeat() {
    let init = |args: &[&str]| match rpkg(args).command {
        RpkgCommand::Init(i) => crate::cli::csv_elements(&i.keywords),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        init(&["rpkg", "init", "p", "--keywords", "a,b"]),
        ["a", "b"]
    );
    assert_eq!(
        init(&["rpkg", "init", "p", "--keywords=a", "--keywords", "b,c"]),
        ["a", "b", "c"]
    );
    // Each value is a CSV record (pflag's readAsCSV): quotes keep a comma, `""` is a
    // quote, an empty value adds nothing; a stringArray flag (`--as-group`) never splits.
    assert_eq!(
        init(&[
            "rpkg",
            "init",
            "p",
            "--keywords",
            "\"a,b\",c",
            "--keywords="
        ]),
        ["a,b", "c"]
    );
    assert_eq!(
        init(&["rpkg", "init", "p", "--keywords=\"say \"\"hi\"\"\""]),
        ["say \"hi\""]
    );
    assert!(parse(&["rpkg", "init", "p", "--keywords", "a\"b"]).is_err());
    let group = repo(&["repo", "get", "--as-group", "x,z", "--as-group=y"])
        .conn
        .as_group;
    assert_eq!(group, ["x,z", "y"]);
}

#[test]
fn a_double_dash_ends_the_flags() {
    let r = reg!("--name=n", "--", "--deployment");
    assert!(!r.deployment);
    assert_eq!(r.repository.as_deref(), Some("--deployment"));
    assert_eq!(r.name, "n");
}

#[test]
fn porch_commands_ignore_arguments_they_do_not_read() {
    // cobra gives `repo reg` every argument; it reads the first.
    let r = reg!("http://a/x.git", "extra", "--deployment", "more");
    assert_eq!(r.repository.as_deref(), Some("http://a/x.git"));
    assert!(r.deployment);
}

#[test]
fn fn_eval_reads_string_arrays_and_shorts_as_kpt() {
    let eval = match parse(&[
        "fn",
        "eval",
        "-e",
        "A=1,2",
        "--env=B",
        "-eC",
        "pkg",
        "-i=img",
        "-s",
        "-tmutator",
        "--match_kind",
        "Kptfile",
        "--",
        "k=v",
        "-x",
    ])
    .expect("parses")
    .command
    {
        Command::Fn(crate::fn_cmd::FnCommand::Eval(e)) => e,
        other => panic!("{other:?}"),
    };
    // kpt's `--env` is a string array: each value whole, never split on commas.
    assert_eq!(eval.env, ["A=1,2", "B", "C"]);
    assert_eq!(eval.image.as_deref(), Some("img"));
    assert!(eval.save);
    assert_eq!(eval.fn_type, "mutator");
    assert_eq!(eval.match_kind.as_deref(), Some("Kptfile"));
    assert_eq!(eval.dir, std::path::PathBuf::from("pkg"));
    assert_eq!(eval.fn_args, ["k=v", "-x"]);
}

#[test]
fn label_columns_are_kubectls_string_slice() {
    let cols = match repo(&[
        "repo",
        "get",
        "-L",
        "a,\"b,c\"",
        "-L=d",
        "--label-columns",
        "e",
    ])
    .command
    {
        RepoCommand::Get(g) => cli::csv_elements(&g.print.label_columns),
        other => panic!("{other:?}"),
    };
    assert_eq!(cols, ["a", "b,c", "d", "e"]);
}

#[test]
fn upstream_shorthands_and_aliases_read_through_pflag() {
    for v in [
        &["rpkg", "copy", "src", "-w", "v2"][..],
        &["rpkg", "copy", "-wv2", "src"],
        &["rpkg", "copy", "src", "-w=v2"],
        &["rpkg", "edit", "--ws", "v2", "src"],
        &["rpkg", "copy", "src", "--ws=v2"],
    ] {
        match rpkg(v).command {
            RpkgCommand::Copy(c) => assert_eq!(
                (c.args, c.workspace),
                (vec!["src".to_string()], "v2".to_string()),
                "{v:?}"
            ),
            other => panic!("{other:?}"),
        }
    }
    for (v, want) in [
        (&["rpkg", "pull", "p", "d", "-f"][..], true),
        (&["rpkg", "pull", "-f", "p", "d"], true),
        (&["rpkg", "pull", "p", "d", "-f=false"], false),
        (&["rpkg", "read", "p", "d"], false),
    ] {
        match rpkg(v).command {
            RpkgCommand::Pull(p) => assert_eq!(
                (p.args, p.force),
                (vec!["p".to_string(), "d".to_string()], want),
                "{v:?}"
            ),
            other => panic!("{other:?}"),
        }
    }
}
