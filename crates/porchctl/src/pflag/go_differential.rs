//! porchctl's command line read by our port of cobra and pflag and by the real ones,
//! side by side: Debian's cobra and pflag build a mirror of porchctl's command tree (the
//! commands, aliases, flags with their shorthands, aliases, types and `NoOptDefVal`,
//! the argument validators), and thousands of generated command lines (every flag form
//! pflag knows, clusters, `--`, unknown and misspelt flags and commands, good and bad
//! values of every flag type) must come out the same: the command found, each flag as
//! pflag set it in order, the arguments, or the same error text.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use clap::builder::ValueParser;
use clap::{Arg, ArgAction, Command, CommandFactory};
use serde_json::{Value, json};

use super::{Found, Reading, find_and_parse, read, validator};
use crate::{Cli, cli};

use crate::go_oracle;
use crate::go_oracle::Rng;

/// The mirror: reads the tree spec, then one command line (a JSON array) per input, and
/// answers as [`ours`] does.
const PROGRAM: &str = r#"package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/klog"
)

type FlagSpec struct {
	Long    string   `json:"long"`
	Short   string   `json:"short"`
	Aliases []string `json:"aliases"`
	Type    string   `json:"type"`
}

type CmdSpec struct {
	Name    string     `json:"name"`
	Aliases []string   `json:"aliases"`
	Min     int        `json:"min"`
	Max     int        `json:"max"`
	Flags   []FlagSpec `json:"flags"`
	Subs    []CmdSpec  `json:"subs"`
}

// Each Set as pflag makes it, recorded after the real value accepted it.
var log []string

type rec struct {
	inner pflag.Value
	name  string
}

func (r *rec) Set(s string) error {
	if err := r.inner.Set(s); err != nil {
		return err
	}
	log = append(log, r.name+"="+s)
	return nil
}
func (r *rec) String() string { return r.inner.String() }
func (r *rec) Type() string   { return r.inner.Type() }

func wrap(fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if _, ok := f.Value.(*rec); !ok {
			f.Value = &rec{inner: f.Value, name: f.Name}
		}
	})
}

func build(s CmdSpec) *cobra.Command {
	c := &cobra.Command{Use: s.Name, Aliases: s.Aliases}
	c.Run = func(*cobra.Command, []string) {}
	switch {
	case s.Min >= 0:
		c.Args = cobra.MinimumNArgs(s.Min)
	case s.Max >= 0:
		c.Args = cobra.MaximumNArgs(s.Max)
	}
	fs := c.Flags()
	aliases := map[string]string{}
	// klog's flags, as porchctl adds them from Go's flag set.
	gofs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(gofs)
	for _, f := range s.Flags {
		if g := gofs.Lookup(strings.Replace(f.Long, "-", "_", -1)); g != nil {
			fs.AddFlag(pflag.PFlagFromGoFlag(g))
			continue
		}
		switch f.Type {
		case "bool":
			fs.BoolP(f.Long, f.Short, false, "")
		case "int":
			fs.Int64P(f.Long, f.Short, 0, "")
		case "uint":
			fs.Uint64P(f.Long, f.Short, 0, "")
		case "int32":
			fs.Int32P(f.Long, f.Short, 0, "")
		case "count":
			fs.CountP(f.Long, f.Short, "")
		case "duration":
			fs.DurationP(f.Long, f.Short, 0, "")
		case "stringSlice":
			fs.StringSliceP(f.Long, f.Short, nil, "")
		case "stringArray":
			fs.StringArrayP(f.Long, f.Short, nil, "")
		default:
			fs.StringP(f.Long, f.Short, "", "")
		}
		for _, a := range f.Aliases {
			aliases[a] = f.Long
		}
	}
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		name = strings.Replace(name, "_", "-", -1)
		if long, ok := aliases[name]; ok {
			return pflag.NormalizedName(long)
		}
		return pflag.NormalizedName(name)
	})
	for _, sub := range s.Subs {
		c.AddCommand(build(sub))
	}
	return c
}

func answer(root *cobra.Command, args []string) string {
	log = nil
	cmd, flags, err := root.Find(args)
	if err != nil {
		return "ERR " + err.Error()
	}
	if cmd.Name() == "help" && cmd.Parent() == root {
		return "HELPCMD"
	}
	path := cmd.CommandPath()
	path = strings.TrimPrefix(strings.TrimPrefix(path, root.Name()), " ")
	cmd.InitDefaultHelpFlag()
	wrap(cmd.Flags())
	if err := cmd.ParseFlags(flags); err != nil {
		return "ERR " + err.Error()
	}
	if h, _ := cmd.Flags().GetBool("help"); h {
		return "HELP " + path
	}
	if cmd.HasSubCommands() {
		return "USAGE " + path
	}
	rest := cmd.Flags().Args()
	if err := cmd.ValidateArgs(rest); err != nil {
		return "ERR " + err.Error()
	}
	a, _ := json.Marshal(rest)
	return fmt.Sprintf("RUN %s|%s|%s|%d", path, strings.Join(log, "\x01"), a, cmd.Flags().ArgsLenAtDash())
}

func main() {
	spec, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	var s CmdSpec
	if err := json.Unmarshal(spec, &s); err != nil {
		panic(err)
	}
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for {
		line, err := in.ReadString(0)
		if err == io.EOF {
			return
		}
		in.ReadString('\n')
		var args []string
		if err := json.Unmarshal([]byte(strings.TrimSuffix(line, "\x00")), &args); err != nil {
			panic(err)
		}
		// A fresh tree per command line: pflag keeps state between parses.
		root := build(s)
		root.Run = nil
		root.CompletionOptions.DisableDefaultCmd = true
		root.InitDefaultHelpCmd()
		out.WriteString(answer(root, args))
		out.WriteString("\x00\n")
	}
}
"#;

fn root() -> Command {
    let mut cmd = cli::adapt(Cli::command());
    cmd.build();
    cmd
}

fn is_help(arg: &Arg) -> bool {
    matches!(
        arg.get_action(),
        ArgAction::Help | ArgAction::HelpShort | ArgAction::HelpLong
    )
}

/// pflag's type of a flag, from the parser clap was given (`None`: a value only the
/// command itself checks, given only good values here).
fn flag_type(arg: &Arg) -> Option<&'static str> {
    let parser = arg.get_value_parser().type_id();
    let same = |p: ValueParser| p.type_id() == parser;
    Some(match arg.get_action() {
        ArgAction::Count => "count",
        _ if same(ValueParser::new(cli::GoBool)) || same(ValueParser::new(cli::GoFlagBool)) => {
            "bool"
        }
        _ if same(ValueParser::new(cli::GoUint)) => "uint",
        _ if same(ValueParser::new(cli::KlogLevel)) => "klog",
        _ if same(ValueParser::new(cli::GoInt::<i64>::new())) => "int",
        _ if same(ValueParser::new(cli::GoInt::<i32>::new())) => "int32",
        _ if same(ValueParser::new(cli::GoDuration)) => "duration",
        _ if same(ValueParser::new(cli::GoCsv)) => "stringSlice",
        ArgAction::Append if same(ValueParser::string()) => "stringArray",
        ArgAction::Set if same(ValueParser::string()) || same(ValueParser::path_buf()) => "string",
        _ => return None,
    })
}

/// The spec of `cmd` and its sub-commands (clap's own `help` left out: cobra adds its own
/// to the root).
fn spec(cmd: &Command, path: &[String]) -> Value {
    let flags: Vec<Value> = cmd
        .get_arguments()
        .filter(|a| !a.is_positional() && !is_help(a))
        .filter_map(|a| {
            let long = a.get_long()?;
            Some(json!({
                "long": long,
                "short": a.get_short().map(String::from).unwrap_or_default(),
                "aliases": a.get_all_aliases().unwrap_or_default(),
                "type": flag_type(a).unwrap_or("custom"),
            }))
        })
        .collect();
    let (min, max) = match validator(path) {
        Some(super::Validator::Minimum(n)) => (n as i64, -1),
        Some(super::Validator::Maximum(n)) => (-1, n as i64),
        None => (-1, -1),
    };
    let subs: Vec<Value> = cmd
        .get_subcommands()
        .filter(|s| s.get_name() != "help")
        .map(|s| {
            let mut p = path.to_vec();
            p.push(s.get_name().to_string());
            spec(s, &p)
        })
        .collect();
    json!({
        "name": cmd.get_name(),
        "aliases": cmd.get_all_aliases().collect::<Vec<_>>(),
        "min": min, "max": max,
        "flags": flags,
        "subs": subs,
    })
}

/// Our answer, in the mirror's words.
fn ours(root: &Command, args: &[String]) -> String {
    let found = match find_and_parse(root, "porchctl", args) {
        Ok(found) => found,
        Err(e) => return format!("ERR {e}"),
    };
    let parse = match found {
        Found::HelpCommand => return "HELPCMD".into(),
        Found::Parsed(parse) => parse,
    };
    let path = parse.path.join(" ");
    let mut argv = vec!["porchctl".to_string()];
    argv.extend(args.iter().cloned());
    match read(root, &argv) {
        Err(e) => return format!("ERR {e}"),
        Ok(Reading::Usage(_)) => return format!("USAGE {path}"),
        Ok(Reading::Run(run))
            if run.len() == parse.path.len() + 2 && run.last().is_some_and(|a| a == "--help") =>
        {
            return format!("HELP {path}");
        }
        Ok(Reading::Run(_)) => {}
    }
    let log: Vec<String> = parse
        .settings
        .iter()
        .map(|s| format!("{}={}", s.arg.get_long().unwrap_or_default(), s.value))
        .collect();
    let dash = parse
        .after_dash
        .as_ref()
        .map_or(-1, |_| parse.positionals.len() as i64);
    let mut rest = parse.positionals.clone();
    rest.extend(parse.after_dash.iter().flatten().cloned());
    format!(
        "RUN {path}|{}|{}|{dash}",
        log.join("\x01"),
        serde_json::to_string(&rest).expect("json")
    )
}

/// A flag as the generator sees it.
struct GenFlag {
    long: String,
    short: Option<char>,
    aliases: Vec<String>,
    kind: &'static str,
    good: Vec<String>,
}

fn values(rng: &mut Rng, f: &GenFlag) -> String {
    const ANY: &[&str] = &[
        "x",
        "",
        "-",
        "--",
        "-x",
        "a=b",
        "a,b",
        "\"a,b\",c",
        "\"",
        "é",
        "1",
        "-1",
        "0x1f",
        "true",
        "false",
        "2s",
        "rpkg",
        "get",
        "--namespace",
        "a b",
    ];
    if !f.good.is_empty() && (f.kind == "custom" || rng.chance(60)) {
        return rng.pick(&f.good).clone();
    }
    let typed: &[&str] = match f.kind {
        "bool" => &[
            "true", "false", "1", "0", "t", "F", "TRUE", "yes", "tru", "",
        ],
        "int" | "int32" | "uint" | "count" => &[
            "3",
            "-7",
            "0x10",
            "0o17",
            "017",
            "0b101",
            "1_000",
            "0x_1",
            "99999999999",
            "9223372036854775808",
            "-9223372036854775808",
            "2147483648",
            "+5",
            "x",
            "",
        ],
        "duration" => &[
            "1s", "1m30s", "-2h", "0", "1", "1.5h", "1us", "1µs", "x", "", "3d",
        ],
        _ => ANY,
    };
    if rng.chance(85) {
        rng.pick(typed).to_string()
    } else {
        rng.pick(ANY).to_string()
    }
}

/// One spelling of a flag (with its value where it takes one).
fn flag_words(rng: &mut Rng, f: &GenFlag, out: &mut Vec<String>) {
    let value = values(rng, f);
    let boolish = f.kind == "bool" || f.kind == "count";
    let mut long = f.long.clone();
    if !f.aliases.is_empty() && rng.chance(20) {
        long = rng.pick(&f.aliases).clone();
    }
    if long.contains('-') && rng.chance(10) {
        long = long.replace('-', "_");
    }
    let form = rng.below(if f.short.is_some() { 6 } else { 3 });
    match (form, f.short) {
        (0, _) if boolish => out.push(format!("--{long}")),
        (0, _) | (1, _) => out.push(format!("--{long}={value}")),
        (2, _) => {
            out.push(format!("--{long}"));
            out.push(value);
        }
        (3, Some(c)) if !boolish => out.push(format!("-{c}{value}")),
        (3, Some(c)) => out.push(format!("-{c}")),
        (4, Some(c)) => out.push(format!("-{c}={value}")),
        (_, Some(c)) => {
            out.push(format!("-{c}"));
            out.push(value);
        }
        _ => out.push(format!("--{long}={value}")),
    }
}

/// Every command path and the flags each sees.
fn commands(cmd: &Command, path: Vec<String>, out: &mut Vec<(Vec<String>, Vec<GenFlag>)>) {
    let flags = cmd
        .get_arguments()
        .filter(|a| !a.is_positional())
        .filter_map(|a| {
            let long = a.get_long()?.to_string();
            let good: Vec<String> = a
                .get_possible_values()
                .iter()
                .map(|v| v.get_name().to_string())
                .collect();
            let kind = if is_help(a) {
                "bool"
            } else {
                flag_type(a).unwrap_or("custom")
            };
            if kind == "custom" && good.is_empty() {
                return None;
            }
            Some(GenFlag {
                long,
                short: a.get_short(),
                aliases: a
                    .get_all_aliases()
                    .unwrap_or_default()
                    .into_iter()
                    .map(String::from)
                    .collect(),
                kind,
                good,
            })
        })
        .collect();
    out.push((path.clone(), flags));
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let mut p = path.clone();
        p.push(sub.get_name().to_string());
        commands(sub, p, out);
    }
}

fn command_line(rng: &mut Rng, all: &[(Vec<String>, Vec<GenFlag>)]) -> Vec<String> {
    let (path, flags) = rng.pick(all);
    // The command words, each perhaps by an alias or misspelt.
    let mut words: Vec<String> = path.clone();
    if rng.chance(10) && !words.is_empty() {
        let i = rng.below(words.len());
        words[i] = rng
            .pick(&[
                "rpgk",
                "rpkgs",
                "repository",
                "rpackage",
                "help",
                "gett",
                "pkg",
            ])
            .to_string();
    }
    let mut out: Vec<String> = Vec::new();
    let mut pending = words.into_iter();
    let extras = rng.below(6);
    for _ in 0..extras + 2 {
        if rng.chance(45)
            && let Some(w) = pending.next()
        {
            out.push(w);
            continue;
        }
        match rng.below(20) {
            0 => out.push(
                rng.pick(&["--", "-", "---x", "--=x", "-=", "--zz", "-Z", "-h"])
                    .to_string(),
            ),
            1 => out.push(
                rng.pick(&["pkg", "arg", "-1", "a=b", "", "x y"])
                    .to_string(),
            ),
            2 if flags.len() > 1 => {
                // A cluster of short flags.
                let shorts: Vec<&GenFlag> = flags.iter().filter(|f| f.short.is_some()).collect();
                if !shorts.is_empty() {
                    let mut w = String::from("-");
                    for _ in 0..2 + rng.below(2) {
                        w.push(rng.pick(&shorts).short.unwrap_or('x'));
                    }
                    if rng.chance(30) {
                        w.push_str("=v");
                    }
                    out.push(w);
                }
            }
            _ if !flags.is_empty() => {
                let f = rng.pick(flags);
                flag_words(rng, f, &mut out);
            }
            _ => {}
        }
    }
    out.extend(pending);
    out
}

#[test]
fn command_lines_read_as_cobra_and_pflag_read_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(overlay) = cobra_overlay(dir.path()) else {
        return;
    };
    let Some(bin) = go_oracle::build_with(
        dir.path(),
        PROGRAM,
        "cobra-mirror",
        "k8s.io/klog",
        "golang-github-spf13-cobra-dev golang-github-spf13-pflag-dev golang-k8s-klog-dev",
        Some(&overlay),
    ) else {
        return;
    };
    let root = root();
    let spec_file = dir.path().join("tree.json");
    std::fs::write(&spec_file, spec(&root, &[]).to_string()).expect("spec");
    let mut all = Vec::new();
    commands(&root, Vec::new(), &mut all);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let lines: Vec<Vec<String>> = (0..5000).map(|_| command_line(&mut rng, &all)).collect();
    let inputs: Vec<String> = lines
        .iter()
        .map(|l| serde_json::to_string(l).expect("json"))
        .collect();
    let answers = answers_with_spec(&bin, &spec_file, &inputs);
    let mut differ = BTreeMap::new();
    for (line, want) in lines.iter().zip(&answers) {
        let got = ours(&root, line);
        if &got != want {
            differ.insert(line.clone(), (want.clone(), got));
        }
    }
    let mut report = String::new();
    for (line, (want, got)) in differ.iter().take(25) {
        let _ = writeln!(report, "{line:?}\n  cobra: {want:?}\n  ours:  {got:?}");
    }
    assert!(
        differ.is_empty(),
        "{} of {} command lines read differently:\n{report}",
        differ.len(),
        lines.len()
    );
}

/// Debian's cobra (1.6.1) with the one change of cobra 1.7 that the search for a
/// command depends on: `argsMinusFirstX` removes the first command word that is not a
/// flag's value (Porch builds with cobra 1.8.1). A newer cobra is used as it is.
fn cobra_overlay(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    let debian = std::path::Path::new(go_oracle::GOPATH).join("src/github.com/spf13/cobra");
    if !debian.is_dir() {
        eprintln!(
            "skipped: needs cobra's sources (apt-get install golang-github-spf13-cobra-dev; \
             .ci/setup.sh installs it)"
        );
        return None;
    }
    let overlay = dir.join("overlay");
    let target = overlay.join("src/github.com/spf13/cobra");
    std::fs::create_dir_all(&target).expect("overlay");
    for entry in std::fs::read_dir(&debian).expect("cobra sources") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if !name.ends_with(".go") || name.ends_with("_test.go") {
            continue;
        }
        let mut text = std::fs::read_to_string(&path).expect("read cobra source");
        if name == "command.go" && !text.contains("func (c *Command) argsMinusFirstX(") {
            const OLD_CALL: &str = "innerfind(cmd, argsMinusFirstX(innerArgs, nextSubCmd))";
            const OLD_FN: &str = "func argsMinusFirstX(args []string, x string) []string {";
            assert!(
                text.contains(OLD_CALL) && text.contains(OLD_FN),
                "cobra's command.go has neither argsMinusFirstX form"
            );
            text = text.replace(
                OLD_CALL,
                "innerfind(cmd, c.argsMinusFirstX(innerArgs, nextSubCmd))",
            );
            text = text.replace(
                OLD_FN,
                &format!(
                    "{FLAG_AWARE}\nfunc argsMinusFirstXOld(args []string, x string) []string {{"
                ),
            );
        }
        std::fs::write(target.join(name), text).expect("write overlay");
    }
    Some(overlay)
}

/// cobra 1.7's rule, in our words: a word after a flag that takes the next word as its
/// value is that value, not a command.
const FLAG_AWARE: &str = r#"func (c *Command) argsMinusFirstX(args []string, x string) []string {
	c.mergePersistentFlags()
	fs := c.Flags()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		takesValue := !strings.Contains(a, "=") &&
			((strings.HasPrefix(a, "--") && !hasNoOptDefVal(a[2:], fs)) ||
				(strings.HasPrefix(a, "-") && len(a) == 2 && !shortHasNoOptDefVal(a[1:], fs)))
		if takesValue {
			i++
			continue
		}
		if !strings.HasPrefix(a, "-") && a == x {
			out := append([]string{}, args[:i]...)
			return append(out, args[i+1:]...)
		}
	}
	return args
}
"#;

/// [`go_oracle::answers`] with the tree spec as the program's argument.
fn answers_with_spec(
    bin: &std::path::Path,
    spec: &std::path::Path,
    inputs: &[String],
) -> Vec<String> {
    let wrapper = bin.with_file_name("run-mirror");
    std::fs::write(
        &wrapper,
        format!("#!/bin/sh\nexec '{}' '{}'\n", bin.display(), spec.display()),
    )
    .expect("wrapper");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    go_oracle::answers(&wrapper, inputs)
}
