//! The command line read as cobra and pflag read it, over clap's command tree.
//!
//! Upstream porchctl (and kpt) find the command with cobra's `Find` (words that are not
//! flags or flag values name sub-commands, wherever flags stand), then parse every flag
//! the command sees (its own and its ancestors' persistent ones) with pflag's loop:
//! `--flag v`, `--flag=v`, `-f v`, `-fv`, `-f=v`, clustered short booleans, a boolean
//! never taking the next word, `--` ending the flags, `_` in a flag name read as `-`
//! (k8s' `WordSepNormalizeFunc`), the last value of a scalar flag winning. This module
//! ports those two loops branch by branch and hands clap one unambiguous spelling of
//! the result (`--long=value` per flag, then the arguments), so clap only builds the
//! typed structs. Errors carry pflag's and cobra's texts.

use clap::{Arg, ArgAction, Command};

use crate::cli;

/// What the command line asks for.
#[derive(Debug, PartialEq)]
pub enum Reading {
    /// The command line for clap, in one spelling.
    Run(Vec<String>),
    /// A command group (`rpkg`, `repo`, ...) run without a known sub-command: its RunE
    /// prints its usage to stderr and succeeds. The names from the root down.
    Usage(Vec<String>),
}

/// The flags `cmd` sees (its own and the global ones clap propagated to it).
fn flags(cmd: &Command) -> impl Iterator<Item = &Arg> {
    cmd.get_arguments().filter(|a| !a.is_positional())
}

/// k8s' `WordSepNormalizeFunc`: `_` in a flag name reads as `-`.
fn normalize(name: &str) -> String {
    name.replace('_', "-")
}

/// A long flag by name or alias (a command's own normalize function, as `rpkg get`'s
/// `--ws` for `--workspace`).
fn long_flag<'a>(cmd: &'a Command, name: &str) -> Option<&'a Arg> {
    let wanted = normalize(name);
    flags(cmd).find(|a| {
        a.get_long()
            .into_iter()
            .chain(a.get_all_aliases().unwrap_or_default())
            .any(|l| normalize(l) == wanted)
    })
}

fn short_flag(cmd: &Command, c: char) -> Option<&Arg> {
    flags(cmd).find(|a| a.get_short() == Some(c))
}

/// pflag's `NoOptDefVal`: the value a flag takes when it is given alone.
fn no_opt_value(arg: &Arg) -> Option<String> {
    match arg.get_action() {
        ArgAction::Help | ArgAction::HelpShort | ArgAction::HelpLong | ArgAction::SetTrue => {
            return Some("true".into());
        }
        ArgAction::SetFalse => return Some("false".into()),
        ArgAction::Count => return Some("+1".into()),
        _ => {}
    }
    // Every flag here whose value may be left out is a boolean (`cli::adapt`).
    arg.get_num_args()
        .is_some_and(|n| n.min_values() == 0)
        .then(|| "true".to_string())
}

/// cobra adds the help flag to a command only when it runs it, after the search: while
/// searching, `-h`/`--help` is an unknown flag, taken to have a value.
fn is_help(arg: &Arg) -> bool {
    matches!(
        arg.get_action(),
        ArgAction::Help | ArgAction::HelpShort | ArgAction::HelpLong
    )
}

fn long_has_no_opt(cmd: &Command, name: &str) -> bool {
    long_flag(cmd, name).is_some_and(|a| !is_help(a) && no_opt_value(a).is_some())
}

fn short_has_no_opt(cmd: &Command, name: &str) -> bool {
    name.chars()
        .next()
        .and_then(|c| short_flag(cmd, c))
        .is_some_and(|a| !is_help(a) && no_opt_value(a).is_some())
}

/// Does `s` (no `=` in it) name a flag whose value is the next word, as cobra guesses?
fn takes_next_word(cmd: &Command, s: &str) -> bool {
    if s.contains('=') {
        return false;
    }
    if let Some(name) = s.strip_prefix("--") {
        return !long_has_no_opt(cmd, name);
    }
    s.starts_with('-') && s.chars().count() == 2 && !short_has_no_opt(cmd, &s[1..])
}

/// cobra's `stripFlags`: the words of `args` that are neither flags nor (by its guess)
/// flag values.
fn strip_flags(args: &[String], cmd: &Command) -> Vec<String> {
    let mut words = Vec::new();
    let mut rest = args;
    while let Some((s, tail)) = rest.split_first() {
        rest = tail;
        if s == "--" {
            break;
        }
        if takes_next_word(cmd, s) {
            if rest.len() <= 1 {
                break;
            }
            rest = &rest[1..];
            continue;
        }
        if !s.is_empty() && !s.starts_with('-') {
            words.push(s.clone());
        }
    }
    words
}

/// cobra's `argsMinusFirstX`: `args` without the first word `x` that is not a flag value.
fn args_minus_first(args: &[String], x: &str, cmd: &Command) -> Vec<String> {
    let mut pos = 0;
    while pos < args.len() {
        let s = &args[pos];
        if s == "--" {
            break;
        }
        if takes_next_word(cmd, s) {
            pos += 2;
            continue;
        }
        if !s.starts_with('-') && s == x {
            let mut out = args[..pos].to_vec();
            out.extend_from_slice(&args[pos + 1..]);
            return out;
        }
        pos += 1;
    }
    args.to_vec()
}

/// One flag as the command line set it.
pub(crate) struct Setting<'a> {
    pub arg: &'a Arg,
    /// The value as given (`NoOptDefVal` for a flag given alone).
    pub value: String,
}

/// pflag's parse of `args` against the flags of `cmd`: the settings in order, the
/// arguments before `--` and those after it (`None` without `--`).
type Parsed<'a> = (Vec<Setting<'a>>, Vec<String>, Option<Vec<String>>);

/// Why pflag stopped, with the flags it had set by then.
type Refusal<'a> = (Vec<Setting<'a>>, String);

fn parse_flags<'a>(cmd: &'a Command, args: &[String]) -> Result<Parsed<'a>, Refusal<'a>> {
    let mut settings = Vec::new();
    let mut positionals = Vec::new();
    let mut rest = args;
    while let Some((s, tail)) = rest.split_first() {
        rest = tail;
        if s.len() < 2 || !s.starts_with('-') {
            positionals.push(s.clone());
            continue;
        }
        if s == "--" {
            return Ok((settings, positionals, Some(rest.to_vec())));
        }
        if let Some(body) = s.strip_prefix("--") {
            if body.starts_with('-') || body.starts_with('=') {
                return Err((settings, format!("bad flag syntax: {s}")));
            }
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let Some(arg) = long_flag(cmd, name) else {
                return Err((settings, format!("unknown flag: --{name}")));
            };
            let value = match (inline, no_opt_value(arg)) {
                (Some(v), _) => v,
                (None, Some(v)) => v,
                (None, None) => match rest.split_first() {
                    Some((v, tail)) => {
                        rest = tail;
                        v.clone()
                    }
                    None => return Err((settings, format!("flag needs an argument: {s}"))),
                },
            };
            match set(arg, value) {
                Ok(setting) => settings.push(setting),
                Err(why) => return Err((settings, why)),
            }
            continue;
        }
        // A cluster of short flags: each letter a flag, until one takes a value.
        let mut shorthands = &s[1..];
        while let Some(c) = shorthands.chars().next() {
            let after = &shorthands[c.len_utf8()..];
            let Some(arg) = short_flag(cmd, c) else {
                return Err((
                    settings,
                    format!(
                        "unknown shorthand flag: {} in -{shorthands}",
                        go_quote_char(c)
                    ),
                ));
            };
            let value = if let Some(v) = after.strip_prefix('=').filter(|v| !v.is_empty()) {
                shorthands = "";
                v.to_string()
            } else if let Some(v) = no_opt_value(arg) {
                shorthands = after;
                v
            } else if !after.is_empty() {
                shorthands = "";
                after.to_string()
            } else if let Some((v, tail)) = rest.split_first() {
                rest = tail;
                shorthands = "";
                v.clone()
            } else {
                return Err((
                    settings,
                    format!(
                        "flag needs an argument: {} in -{shorthands}",
                        go_quote_char(c)
                    ),
                ));
            };
            match set(arg, value) {
                Ok(setting) => settings.push(setting),
                Err(why) => return Err((settings, why)),
            }
        }
    }
    Ok((settings, positionals, None))
}

/// Go's `%q` of a flag letter.
fn go_quote_char(c: char) -> String {
    match c {
        '\'' => "'\\''".into(),
        '\\' => "'\\\\'".into(),
        c => format!("'{c}'"),
    }
}

/// pflag's `Set` for the flags clap does not parse (help); the others' values go through
/// their own parsers when clap reads the spelled-out command line.
fn set<'a>(arg: &'a Arg, value: String) -> Result<Setting<'a>, String> {
    let is_help = matches!(
        arg.get_action(),
        ArgAction::Help | ArgAction::HelpShort | ArgAction::HelpLong
    );
    if is_help && cli::parse_go_bool(&value).is_none() {
        return Err(format!(
            "invalid argument {} for {} flag: strconv.ParseBool: parsing {}: invalid syntax",
            cli::go_quote(&value),
            cli::go_quote(&cli::flag_name(Some(arg))),
            cli::go_quote(&value)
        ));
    }
    Ok(Setting { arg, value })
}

/// What cobra's search and pflag's loop made of a command line, before clap sees it.
pub(crate) struct Parse<'a> {
    /// The command's names from the root down.
    pub path: Vec<String>,
    pub cmd: &'a Command,
    /// Every flag as pflag set it, in order (a repeated scalar flag more than once).
    pub settings: Vec<Setting<'a>>,
    /// The arguments before `--`.
    pub positionals: Vec<String>,
    /// The arguments after `--` (`None` without `--`).
    pub after_dash: Option<Vec<String>>,
}

/// What cobra found.
pub(crate) enum Found<'a> {
    /// The root's `help` command.
    HelpCommand,
    Parsed(Parse<'a>),
}

/// cobra's `Find`, then pflag's `Parse` of the command's flags. Values are checked as
/// pflag sets them, one after the other: the first bad one (or the syntax error that
/// stopped the loop, when no value before it was bad) is the error.
pub(crate) fn find_and_parse<'a>(
    root: &'a Command,
    program: &str,
    args: &[String],
) -> Result<Found<'a>, String> {
    let mut cmd = root;
    let mut path: Vec<String> = Vec::new();
    let mut args = args.to_vec();
    loop {
        let words = strip_flags(&args, cmd);
        let Some(next) = words.first() else { break };
        let Some(sub) = cmd.find_subcommand(next) else {
            break;
        };
        if sub.get_name() == "help" {
            if !path.is_empty() {
                // cobra has a help command on the root only.
                break;
            }
            return Ok(Found::HelpCommand);
        }
        args = args_minus_first(&args, next, cmd);
        path.push(sub.get_name().to_string());
        cmd = sub;
    }
    let stray = strip_flags(&args, cmd);
    if cmd.has_subcommands()
        && path.is_empty()
        && let Some(word) = stray.first()
    {
        return Err(format!(
            "unknown command {} for \"porchctl\"{}",
            cli::go_quote(word),
            cli::suggestions_for(cmd, word)
        ));
    }
    let (settings, stopped) = match parse_flags(cmd, &args) {
        Ok((settings, positionals, after_dash)) => {
            check_values(root, program, &path, &settings)?;
            return Ok(Found::Parsed(Parse {
                path,
                cmd,
                settings,
                positionals,
                after_dash,
            }));
        }
        Err(refusal) => refusal,
    };
    check_values(root, program, &path, &settings)?;
    Err(stopped)
}

/// pflag's `Set` of each value in turn: the first refused one is the error, in pflag's
/// words (each value goes through the parser clap will use, on its own).
fn check_values(
    root: &Command,
    program: &str,
    path: &[String],
    settings: &[Setting<'_>],
) -> Result<(), String> {
    // Each value on its own, all on one copy of the tree.
    let mut tree: Option<Command> = None;
    for s in settings {
        let single = spell(std::slice::from_ref(s));
        if single.is_empty() {
            continue;
        }
        let mut trial = vec![program.to_string()];
        trial.extend(path.iter().cloned());
        trial.extend(single);
        let tree = tree.get_or_insert_with(|| root.clone());
        if let Err(e) = tree.try_get_matches_from_mut(trial)
            && e.kind() == clap::error::ErrorKind::ValueValidation
        {
            return Err(cli::take_flag_error().unwrap_or_else(|| e.to_string()));
        }
    }
    Ok(())
}

/// Reads `argv` (program name first) against `root` (built: `Command::build`).
pub fn read(root: &Command, argv: &[String]) -> Result<Reading, String> {
    let Some((program, args)) = argv.split_first() else {
        return Ok(Reading::Run(argv.to_vec()));
    };
    let parse = match find_and_parse(root, program, args)? {
        // cobra's help command: clap's does the same.
        Found::HelpCommand => return Ok(Reading::Run(argv.to_vec())),
        Found::Parsed(parse) => parse,
    };
    let Parse {
        path,
        cmd,
        settings,
        positionals,
        after_dash,
    } = parse;
    let help = settings
        .iter()
        .rfind(|s| is_help(s.arg))
        .is_some_and(|s| cli::parse_go_bool(&s.value) == Some(true));
    let mut out = vec![program.clone()];
    out.extend(path.iter().cloned());
    if help {
        out.push("--help".into());
        return Ok(Reading::Run(out));
    }
    if cmd.has_subcommands() {
        return Ok(Reading::Usage(path));
    }
    let count = positionals.len() + after_dash.as_ref().map_or(0, Vec::len);
    if let Some(rule) = validator(&path) {
        rule.check(count)?;
    }
    out.extend(spell(&settings));
    out.extend(arguments(cmd, positionals, after_dash));
    Ok(Reading::Run(out))
}

/// The arguments as clap should see them. A leaf command without an argument validator
/// takes any number of arguments (cobra's legacy rule) and reads the ones it uses:
/// those beyond what the command declares are dropped. Arguments after `--` go to the
/// command's trailing arguments when it has them (`fn eval`'s function arguments), else
/// they are arguments like the others.
fn arguments(cmd: &Command, mut before: Vec<String>, after: Option<Vec<String>>) -> Vec<String> {
    let trailing = cmd.get_positionals().any(Arg::is_last_set);
    let mut after = after.unwrap_or_default();
    if !trailing {
        before.append(&mut after);
    }
    let capacity = cmd
        .get_positionals()
        .filter(|a| !a.is_last_set())
        .map(|a| a.get_num_args().map_or(1, |n| n.max_values()))
        .fold(0usize, usize::saturating_add);
    before.truncate(capacity);
    if trailing {
        if !after.is_empty() {
            before.push("--".into());
            before.extend(after);
        }
        return before;
    }
    // After `--` clap takes every word as an argument, as pflag did.
    if before.is_empty() {
        return before;
    }
    std::iter::once("--".to_string()).chain(before).collect()
}

/// A cobra argument validator (`Args`) of an upstream command.
#[derive(Debug, Clone, Copy)]
enum Validator {
    Minimum(usize),
    Maximum(usize),
}

impl Validator {
    /// cobra's texts (args.go).
    fn check(self, count: usize) -> Result<(), String> {
        match self {
            Validator::Minimum(n) if count < n => Err(format!(
                "requires at least {n} arg(s), only received {count}"
            )),
            Validator::Maximum(n) if count > n => {
                Err(format!("accepts at most {n} arg(s), received {count}"))
            }
            _ => Ok(()),
        }
    }
}

/// The commands whose upstream definition sets `Args` (kpt's `pkg get`, `pkg init`,
/// `fn source`, `fn sink`); the others have none and take any arguments.
fn validator(path: &[String]) -> Option<Validator> {
    let path: Vec<&str> = path.iter().map(String::as_str).collect();
    match path.as_slice() {
        ["pkg", "get"] | ["fn", "sink"] => Some(Validator::Minimum(1)),
        ["pkg", "init"] | ["fn", "source"] => Some(Validator::Maximum(1)),
        _ => None,
    }
}

/// One spelling per setting: a scalar flag's last value, every value of a repeatable one.
fn spell(settings: &[Setting<'_>]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, s) in settings.iter().enumerate() {
        let repeatable = matches!(s.arg.get_action(), ArgAction::Append | ArgAction::Count);
        let overridden = settings[i + 1..]
            .iter()
            .any(|later| later.arg.get_id() == s.arg.get_id());
        if matches!(
            s.arg.get_action(),
            ArgAction::Help | ArgAction::HelpShort | ArgAction::HelpLong
        ) || (!repeatable && overridden)
        {
            continue;
        }
        let name = match (s.arg.get_long(), s.arg.get_short()) {
            (Some(l), _) => format!("--{l}"),
            (None, Some(c)) => format!("-{c}"),
            (None, None) => continue,
        };
        match s.arg.get_action() {
            ArgAction::Count => out.push(name),
            ArgAction::SetTrue | ArgAction::SetFalse => {
                // Only reached before `cli::adapt`; the parse-time value is pflag's.
                if cli::parse_go_bool(&s.value) == Some(true) {
                    out.push(name);
                }
            }
            _ => out.push(format!("{name}={}", s.value)),
        }
    }
    out
}

#[cfg(test)]
mod go_differential;
#[cfg(test)]
mod tests;
