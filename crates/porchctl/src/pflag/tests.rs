//! `read` against porchctl's own command tree: what cobra finds and what pflag sets, in
//! the one spelling clap is given.

use clap::CommandFactory;

use super::{Reading, read};
use crate::{Cli, cli};

fn root() -> clap::Command {
    let mut cmd = cli::adapt(Cli::command());
    cmd.build();
    cmd
}

fn reading(args: &[&str]) -> Result<Reading, String> {
    let argv: Vec<String> = std::iter::once("porchctl")
        .chain(args.iter().copied())
        .map(str::to_string)
        .collect();
    read(&root(), &argv)
}

/// The spelled-out command line after the program name.
fn run(args: &[&str]) -> Vec<String> {
    match reading(args) {
        Ok(Reading::Run(argv)) => argv[1..].to_vec(),
        other => panic!("{args:?}: {other:?}"),
    }
}

fn refused(args: &[&str]) -> String {
    match reading(args) {
        Err(why) => why,
        other => panic!("{args:?} was not refused: {other:?}"),
    }
}

#[test]
fn commands_are_found_past_flags_and_their_values() {
    // `-n` is rpkg's persistent flag: cobra skips its value while looking for commands.
    assert_eq!(
        run(&["-n", "foo", "rpkg", "get"]),
        ["rpkg", "get", "--namespace=foo"]
    );
    assert_eq!(
        run(&["rpkg", "--namespace", "foo", "get", "x"]),
        ["rpkg", "get", "--namespace=foo", "--", "x"]
    );
    assert_eq!(
        run(&["--truncate-output=false", "rpkg", "get"]),
        ["rpkg", "get", "--truncate-output=false"]
    );
    // An alias finds the command under its name.
    assert_eq!(run(&["rpackage", "list"]), ["rpkg", "get"]);
    // A root flag unknown at the root takes the next word as its value in cobra's search,
    // so the command word after it is not found.
    assert_eq!(
        refused(&["-A", "rpkg", "get"]),
        "unknown command \"get\" for \"porchctl\""
    );
}

#[test]
fn unknown_words_at_the_root_are_cobras_error() {
    assert_eq!(
        refused(&["frobnicate"]),
        "unknown command \"frobnicate\" for \"porchctl\""
    );
    assert_eq!(
        refused(&["rep", "get"]),
        "unknown command \"rep\" for \"porchctl\"\n\nDid you mean this?\n\trepo\n"
    );
}

#[test]
fn a_group_without_a_known_command_prints_its_usage() {
    for (args, path) in [
        (&["rpkg"][..], &["rpkg"][..]),
        (&["rpkg", "gett"], &["rpkg"]),
        (&["repo", "-n", "x", "bogus"], &["repo"]),
        (&["fn", "bogus"], &["fn"]),
        (&["pkg"], &["pkg"]),
        // cobra's help command is the root's only.
        (&["rpkg", "help", "get"], &["rpkg"]),
    ] {
        let want: Vec<String> = path.iter().map(|s| s.to_string()).collect();
        assert_eq!(reading(args), Ok(Reading::Usage(want)), "{args:?}");
    }
    // The group's flags are parsed first.
    assert_eq!(
        refused(&["rpkg", "gett", "--bogus"]),
        "unknown flag: --bogus"
    );
}

#[test]
fn long_flags_take_every_pflag_spelling() {
    for args in [
        &["repo", "reg", "--name", "v", "u"][..],
        &["repo", "reg", "--name=v", "u"],
        &["repo", "reg", "u", "--name", "v"],
    ] {
        assert_eq!(
            run(args),
            ["repo", "reg", "--name=v", "--", "u"],
            "{args:?}"
        );
    }
    // A value is the next word whatever it starts with; `=` may give an empty one.
    assert_eq!(
        run(&["repo", "reg", "--name", "-x"]),
        ["repo", "reg", "--name=-x"]
    );
    assert_eq!(run(&["repo", "reg", "--name="]), ["repo", "reg", "--name="]);
    // k8s' WordSepNormalizeFunc: `_` in a flag name reads as `-`.
    assert_eq!(
        run(&["repo", "reg", "--repo_basic_username", "me", "u"]),
        ["repo", "reg", "--repo-basic-username=me", "--", "u"]
    );
    // The last value of a scalar flag wins; repeatable ones keep every value.
    assert_eq!(
        run(&["rpkg", "get", "--name", "a", "--name=b"]),
        ["rpkg", "get", "--name=b"]
    );
    assert_eq!(
        run(&["rpkg", "init", "p", "--keywords", "a,b", "--keywords=c"]),
        ["rpkg", "init", "--keywords=a,b", "--keywords=c", "--", "p"]
    );
}

#[test]
fn booleans_never_take_the_next_word() {
    assert_eq!(
        run(&["repo", "reg", "--deployment", "false"]),
        ["repo", "reg", "--deployment=true", "--", "false"]
    );
    assert_eq!(
        run(&["repo", "reg", "--deployment=false", "u"]),
        ["repo", "reg", "--deployment=false", "--", "u"]
    );
    // The value's spelling is left to the flag's parser (strconv.ParseBool).
    assert_eq!(
        run(&["repo", "reg", "--deployment=T"]),
        ["repo", "reg", "--deployment=T"]
    );
    // kpt's `fn render --truncate-output` is a boolean too: `false` is the package.
    assert_eq!(
        run(&["fn", "render", "--truncate-output", "false"]),
        ["fn", "render", "--truncate-output=true", "--", "false"]
    );
}

#[test]
fn short_flags_cluster_as_pflag_reads_them() {
    assert_eq!(
        run(&["rpkg", "get", "-Anfoo"]),
        ["rpkg", "get", "--all-namespaces=true", "--namespace=foo"]
    );
    assert_eq!(
        run(&["rpkg", "get", "-An", "foo"]),
        ["rpkg", "get", "--all-namespaces=true", "--namespace=foo"]
    );
    // A value flag takes the rest of the cluster, whatever it is.
    assert_eq!(
        run(&["rpkg", "get", "-nA"]),
        ["rpkg", "get", "--namespace=A"]
    );
    assert_eq!(
        run(&["rpkg", "get", "-n=x"]),
        ["rpkg", "get", "--namespace=x"]
    );
    // `-n=` is no `-f=value` form (nothing after `=`): `=` is the value.
    assert_eq!(
        run(&["rpkg", "get", "-n="]),
        ["rpkg", "get", "--namespace=="]
    );
    assert_eq!(
        run(&["rpkg", "get", "-A=false"]),
        ["rpkg", "get", "--all-namespaces=false"]
    );
    assert_eq!(
        refused(&["rpkg", "get", "-A="]),
        "unknown shorthand flag: '=' in -="
    );
}

#[test]
fn flag_errors_are_pflags_texts() {
    assert_eq!(
        refused(&["rpkg", "get", "--bogus"]),
        "unknown flag: --bogus"
    );
    assert_eq!(
        refused(&["rpkg", "get", "--bo_gus=1"]),
        "unknown flag: --bo_gus"
    );
    // The letter and what was left of the cluster when pflag reached it.
    assert_eq!(
        refused(&["rpkg", "get", "-Ax"]),
        "unknown shorthand flag: 'x' in -x"
    );
    assert_eq!(
        refused(&["rpkg", "get", "-xA"]),
        "unknown shorthand flag: 'x' in -xA"
    );
    assert_eq!(
        refused(&["rpkg", "get", "--name"]),
        "flag needs an argument: --name"
    );
    assert_eq!(
        refused(&["rpkg", "get", "-An"]),
        "flag needs an argument: 'n' in -n"
    );
    assert_eq!(refused(&["rpkg", "get", "---x"]), "bad flag syntax: ---x");
    assert_eq!(refused(&["rpkg", "get", "--=x"]), "bad flag syntax: --=x");
    // pflag sets flags as it reads them: a bad value before the unknown flag is the error.
    assert_eq!(
        refused(&["rpkg", "get", "--revision=x", "--bogus"]),
        "invalid argument \"x\" for \"--revision\" flag: strconv.ParseInt: parsing \"x\": invalid syntax"
    );
    assert_eq!(
        refused(&["rpkg", "get", "--bogus", "--revision=x"]),
        "unknown flag: --bogus"
    );
}

#[test]
fn a_double_dash_ends_the_flags() {
    assert_eq!(
        run(&["repo", "reg", "--", "--deployment", "-n"]),
        ["repo", "reg", "--", "--deployment", "-n"]
    );
    // `fn eval`: arguments after `--` are the function's.
    assert_eq!(
        run(&["fn", "eval", "dir", "-i", "img", "--", "a=b", "--c"]),
        ["fn", "eval", "--image=img", "dir", "--", "a=b", "--c"]
    );
    // A lone `-` is an argument.
    assert_eq!(
        run(&["fn", "eval", "-", "--image=img"]),
        ["fn", "eval", "--image=img", "-"]
    );
}

#[test]
fn help_is_a_boolean_flag() {
    assert_eq!(run(&["help", "rpkg"]), ["help", "rpkg"]);
    assert_eq!(run(&["rpkg", "get", "--help"]), ["rpkg", "get", "--help"]);
    // While cobra looks for the command, `-h` is not defined yet and takes the next word
    // as its value: this is rpkg's help.
    assert_eq!(run(&["rpkg", "-h", "get", "x"]), ["rpkg", "--help"]);
    assert_eq!(run(&["rpkg", "get", "-h", "x"]), ["rpkg", "get", "--help"]);
    assert_eq!(run(&["rpkg", "get", "-h=false"]), ["rpkg", "get"]);
    assert_eq!(
        run(&["rpkg", "get", "--help=0", "-A"]),
        ["rpkg", "get", "--all-namespaces=true"]
    );
    assert_eq!(
        refused(&["rpkg", "get", "-h=maybe"]),
        "invalid argument \"maybe\" for \"-h, --help\" flag: strconv.ParseBool: parsing \"maybe\": invalid syntax"
    );
}

#[test]
fn leaf_commands_take_any_number_of_arguments() {
    // cobra's legacy rule for a command without a validator: the command reads the
    // arguments it uses.
    assert_eq!(run(&["version", "a", "b"]), ["version"]);
    assert_eq!(
        run(&["fn", "render", "a", "b"]),
        ["fn", "render", "--", "a"]
    );
    assert_eq!(
        run(&["rpkg", "propose", "a", "b", "c"]),
        ["rpkg", "propose", "--", "a", "b", "c"]
    );
}

#[test]
fn logging_flags_of_the_root_are_everywhere() {
    assert_eq!(
        run(&[
            "rpkg",
            "get",
            "--log_flush_frequency",
            "5s",
            "--logtostderr=false"
        ]),
        [
            "rpkg",
            "get",
            "--log-flush-frequency=5s",
            "--logtostderr=false"
        ]
    );
    assert_eq!(
        run(&["--vmodule=x=2", "fn", "render", "-v", "3"]),
        ["fn", "render", "--vmodule=x=2", "--v=3"]
    );
}

#[test]
fn upstream_argument_validators_count_every_argument() {
    assert_eq!(
        refused(&["pkg", "get"]),
        "requires at least 1 arg(s), only received 0"
    );
    assert_eq!(
        run(&["pkg", "get", "u", "d", "extra"]),
        ["pkg", "get", "--", "u", "d"]
    );
    assert_eq!(
        refused(&["pkg", "init", "a", "b"]),
        "accepts at most 1 arg(s), received 2"
    );
    assert_eq!(
        refused(&["fn", "source", "a", "--", "b"]),
        "accepts at most 1 arg(s), received 2"
    );
    assert_eq!(
        refused(&["fn", "sink"]),
        "requires at least 1 arg(s), only received 0"
    );
    // Help comes before the validator.
    assert_eq!(run(&["pkg", "get", "-h"]), ["pkg", "get", "--help"]);
}

#[test]
fn a_commands_flag_aliases_are_its_flags() {
    // `rpkg get` names three flags also by a short alias (upstream's normalize function);
    // they are spelled out under the flag's own name.
    assert_eq!(
        run(&["rpkg", "get", "--ws", "w2", "--repo=shelf", "--rev", "3"]),
        [
            "rpkg",
            "get",
            "--workspace=w2",
            "--repository=shelf",
            "--revision=3"
        ]
    );
    // Newest upstream `rpkg copy` has `-w` and the `--ws` alias too; a flag it lacks
    // (`--repo`) stays unknown.
    for v in [
        &["rpkg", "copy", "--ws", "w2", "a.b.c"][..],
        &["rpkg", "copy", "-w", "w2", "a.b.c"],
    ] {
        assert_eq!(
            run(v),
            ["rpkg", "copy", "--workspace=w2", "--", "a.b.c"],
            "{v:?}"
        );
    }
    assert_eq!(
        refused(&["rpkg", "copy", "--repo", "r", "a.b.c"]),
        "unknown flag: --repo"
    );
}

#[test]
fn repo_reg_takes_upstreams_short_flag_names() {
    assert_eq!(
        run(&[
            "repo",
            "reg",
            "-d",
            "a shelf",
            "--dir=/x",
            "--deploy",
            "--pw",
            "p",
            "--username=u",
            "r"
        ]),
        [
            "repo",
            "reg",
            "--description=a shelf",
            "--directory=/x",
            "--deployment=true",
            "--repo-basic-password=p",
            "--repo-basic-username=u",
            "--",
            "r"
        ]
    );
}
