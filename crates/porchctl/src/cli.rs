//! The command line as cobra and pflag parse it, on top of clap.
//!
//! pflag takes a boolean flag as `--flag`, `--flag=true` or `--flag=false` (any of
//! strconv.ParseBool's spellings), never the next word; a value flag takes `--flag v`,
//! `--flag=v`, `-f v`, `-fv` or `-f=v`, whatever `v` starts with. Errors are what
//! porchctl prints for a non-kpt error: kubectl's `CheckErr` form `error: <msg>`, exit
//! code 1, no usage text (the root command sets `SilenceUsage`).

use std::io::Write;
use std::process::ExitCode;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Arg, ArgAction, Command};

mod values;
pub use values::*;

/// pflag's name of a flag in messages: `-n, --namespace` or `--name`.
pub(crate) fn flag_name(arg: Option<&Arg>) -> String {
    match arg.map(|a| (a.get_short(), a.get_long())) {
        Some((Some(s), Some(l))) => format!("-{s}, --{l}"),
        Some((None, Some(l))) => format!("--{l}"),
        Some((Some(s), None)) => format!("-{s}"),
        _ => arg.map(|a| a.get_id().to_string()).unwrap_or_default(),
    }
}

/// Go's `%q` of a string.
pub(crate) fn go_quote(s: &str) -> String {
    kpt::goquote::go_quote(s)
}

/// The logging flags upstream's root command carries: klog's (added from Go's flag set,
/// hidden) and component-base's `--log-flush-frequency`. Accepted everywhere and
/// ignored (set RUST_LOG for logs); their values are checked as upstream checks them.
#[derive(Debug, Clone, clap::Args)]
pub struct LogFlags {
    #[arg(long, global = true, hide = true, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = GoFlagBool)]
    add_dir_header: Option<FlagBool>,
    #[arg(long, global = true, hide = true, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = GoFlagBool)]
    alsologtostderr: Option<FlagBool>,
    #[arg(long, global = true, hide = true, value_name = "FILE:N", value_parser = Klog::TraceLocation)]
    log_backtrace_at: Option<String>,
    #[arg(long, global = true, hide = true, value_name = "DIR")]
    log_dir: Option<String>,
    #[arg(long, global = true, hide = true, value_name = "FILE")]
    log_file: Option<String>,
    #[arg(long, global = true, hide = true, value_name = "MB", value_parser = GoFlagUint64)]
    log_file_max_size: Option<u64>,
    #[arg(long, global = true, hide = true, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = GoFlagBool)]
    logtostderr: Option<FlagBool>,
    #[arg(long, global = true, hide = true, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = GoFlagBool)]
    one_output: Option<FlagBool>,
    #[arg(long, global = true, hide = true, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = GoFlagBool)]
    skip_headers: Option<FlagBool>,
    #[arg(long, global = true, hide = true, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_parser = GoFlagBool)]
    skip_log_headers: Option<FlagBool>,
    #[arg(long, global = true, hide = true, value_name = "SEVERITY", value_parser = Klog::Severity)]
    stderrthreshold: Option<String>,
    #[arg(long, global = true, hide = true, value_name = "PATTERN=N", value_parser = Klog::ModuleSpec)]
    vmodule: Option<String>,
    /// Maximum time between log flushes (accepted; logs are not buffered).
    #[arg(long, global = true, value_name = "DURATION", value_parser = GoDuration)]
    log_flush_frequency: Option<std::time::Duration>,
}

/// Give every flag of `cmd` (and its sub-commands) pflag's forms.
pub fn adapt(cmd: Command) -> Command {
    adapt_tree(cmd, false)
}

/// The id of the arguments cobra passes on unread (see [`adapt_tree`]).
const EXTRA_ARGS: &str = "cobra_extra_args";

/// `porch`: under `repo` or `rpkg`, whose leaf commands have no argument validator,
/// so cobra hands them any number of arguments and they read the ones they use.
fn adapt_tree(cmd: Command, porch: bool) -> Command {
    let mut cmd = cmd.mut_args(adapt_arg);
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    let takes_any_count = cmd
        .get_positionals()
        .any(|a| a.get_num_args().is_some_and(|n| n.max_values() > 1));
    if porch && names.is_empty() && !takes_any_count {
        cmd = cmd.arg(
            Arg::new(EXTRA_ARGS)
                .num_args(0..)
                .action(ArgAction::Append)
                .hide(true),
        );
    }
    names.into_iter().fold(cmd, |c, name| {
        let below = porch || matches!(name.as_str(), "repo" | "rpkg");
        c.mut_subcommand(name, |sub| adapt_tree(sub, below))
    })
}

fn adapt_arg(arg: Arg) -> Arg {
    if arg.is_positional() {
        return arg;
    }
    if matches!(arg.get_action(), ArgAction::SetTrue) {
        return arg
            .action(ArgAction::Set)
            .num_args(0..=1)
            .require_equals(true)
            .default_missing_value("true")
            .default_value("false")
            .hide_default_value(true)
            .value_parser(GoBool);
    }
    if is_optional_value(&arg)
        && arg.get_value_parser().type_id() == clap::builder::ValueParser::bool().type_id()
    {
        // A boolean declared with an optional value (`--flag[=bool]`): pflag's bool flag.
        return arg.require_equals(true).value_parser(GoBool);
    }
    if matches!(arg.get_action(), ArgAction::Set | ArgAction::Append) && !is_optional_value(&arg) {
        // pflag gives a value flag the next word whatever it starts with.
        return arg.allow_hyphen_values(true);
    }
    arg
}

/// A flag whose value may be left out (`--flag` alone): a boolean in pflag's form.
fn is_optional_value(arg: &Arg) -> bool {
    arg.get_num_args().is_some_and(|n| n.min_values() == 0)
}

/// Print a parse error or the help/version text the way porchctl does; the exit code.
pub fn report(err: &clap::Error, argv: &[String], cmd: &Command) -> ExitCode {
    match err.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = err.print();
            return ExitCode::SUCCESS;
        }
        _ => {}
    }
    fail(&message(err, argv, cmd))
}

/// Print a command-line error as kubectl's `CheckErr` does (porchctl's handler for
/// errors that are not kpt's): `error: <msg>`, a newline unless the message ends in
/// one; exit code 1.
pub fn fail(text: &str) -> ExitCode {
    let newline = if text.ends_with('\n') { "" } else { "\n" };
    let _ = write!(std::io::stderr(), "error: {text}{newline}");
    ExitCode::FAILURE
}

/// A command group's RunE without a sub-command: `cmd.Usage()`, which cobra writes to
/// stderr; success.
pub fn usage(root: &Command, path: &[String]) -> ExitCode {
    let argv = std::iter::once("porchctl".to_string())
        .chain(path.iter().cloned())
        .chain(std::iter::once("--help".to_string()));
    if let Err(e) = root.clone().try_get_matches_from(argv) {
        // A closed stderr is no failure of the command.
        let _ = write!(std::io::stderr(), "{}", e.render());
    }
    ExitCode::SUCCESS
}

fn context_str(err: &clap::Error, kind: ContextKind) -> Option<String> {
    match err.get(kind)? {
        ContextValue::String(s) => Some(s.clone()),
        ContextValue::Strings(v) => v.first().cloned(),
        _ => None,
    }
}

/// cobra's and pflag's text for a clap error.
fn message(err: &clap::Error, argv: &[String], cmd: &Command) -> String {
    if err.kind() == ErrorKind::ValueValidation
        && let Some(m) = take_flag_error()
    {
        return m;
    }
    let invalid_arg = context_str(err, ContextKind::InvalidArg).unwrap_or_default();
    match err.kind() {
        ErrorKind::UnknownArgument if invalid_arg.starts_with("--") => {
            let name = invalid_arg.split('=').next().unwrap_or(&invalid_arg);
            format!("unknown flag: {name}")
        }
        ErrorKind::UnknownArgument if invalid_arg.starts_with('-') && invalid_arg.len() > 1 => {
            // pflag names the first unknown letter of the cluster it was in.
            let cluster = argv
                .iter()
                .find(|a| {
                    a.starts_with('-') && !a.starts_with("--") && a.contains(&invalid_arg[1..])
                })
                .map(|a| a[1..].to_string())
                .unwrap_or_else(|| invalid_arg[1..].to_string());
            let letter = invalid_arg[1..].chars().next().unwrap_or('-');
            format!("unknown shorthand flag: '{letter}' in -{cluster}")
        }
        ErrorKind::InvalidSubcommand => {
            let word = context_str(err, ContextKind::InvalidSubcommand).unwrap_or_default();
            let suggestion = suggestions(cmd, argv, &word);
            format!(
                "unknown command {} for {}{suggestion}",
                go_quote(&word),
                go_quote(&command_path(argv))
            )
        }
        ErrorKind::UnknownArgument => format!(
            "unknown command {} for {}",
            go_quote(&invalid_arg),
            go_quote(&command_path(argv))
        ),
        ErrorKind::InvalidValue
            if context_str(err, ContextKind::InvalidValue).is_none_or(|v| v.is_empty()) =>
        {
            needs_argument(&invalid_arg, argv)
        }
        ErrorKind::MissingRequiredArgument => missing_positionals(err, argv, cmd),
        _ => first_line(err),
    }
}

/// pflag's `flag needs an argument`, naming the flag as it was typed.
fn needs_argument(invalid_arg: &str, argv: &[String]) -> String {
    // clap shows the flag as `--namespace <NAMESPACE>`, or `-n <NAMESPACE>` when it
    // has no long name.
    let shown = invalid_arg.split([' ', '=']).next().unwrap_or(invalid_arg);
    match argv.last() {
        Some(last) if last.starts_with('-') && !last.starts_with("--") && last.len() == 2 => {
            format!("flag needs an argument: '{}' in {last}", &last[1..])
        }
        _ => format!("flag needs an argument: {shown}"),
    }
}

/// cobra's `findSuggestions`: the visible sub-commands (not `help`) within two edits
/// of `typed`, or starting with it, ignoring case.
fn suggestions(root: &Command, argv: &[String], typed: &str) -> String {
    let path = command_path(argv);
    let level = path
        .split(' ')
        .skip(1)
        .fold(root, |c, name| c.find_subcommand(name).unwrap_or(c));
    suggestions_for(level, typed)
}

/// cobra's `findSuggestions` among the sub-commands of `level`.
pub(crate) fn suggestions_for(level: &Command, typed: &str) -> String {
    let typed_lower = typed.to_lowercase();
    let names: Vec<&str> = level
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
        .map(Command::get_name)
        .filter(|name| {
            let lower = name.to_lowercase();
            levenshtein(&typed_lower, &lower) <= 2 || lower.starts_with(&typed_lower)
        })
        .collect();
    if names.is_empty() {
        return String::new();
    }
    let mut out = "\n\nDid you mean this?\n".to_string();
    for n in names {
        out.push_str(&format!("\t{n}\n"));
    }
    out
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(cur).min(row[j])
            };
            prev = cur;
        }
    }
    row[b.len()]
}

/// `porchctl rpkg ...` up to the last word that names a command.
fn command_path(argv: &[String]) -> String {
    const COMMANDS: &[&str] = &["fn", "pkg", "repo", "repository", "rpkg", "rpackage"];
    let mut path = vec!["porchctl".to_string()];
    if let Some(first) = argv.iter().skip(1).find(|a| !a.starts_with('-'))
        && COMMANDS.contains(&first.as_str())
    {
        path.push(first.clone());
    }
    path.join(" ")
}

/// cobra's `MinimumNArgs` text for missing positional arguments (`fn sink` without its
/// DIR); clap's own text names the missing flags otherwise.
fn missing_positionals(err: &clap::Error, argv: &[String], root: &Command) -> String {
    let missing = match err.get(ContextKind::InvalidArg) {
        Some(ContextValue::Strings(v)) => v.clone(),
        _ => Vec::new(),
    };
    if missing.is_empty() || !missing.iter().all(|m| m.starts_with('<')) {
        let mut text = first_line(err);
        if !missing.is_empty() {
            text = format!("{} {}", text.trim_end_matches(':'), missing.join(", "));
        }
        return text;
    }
    let mut leaf = root;
    for word in argv.iter().skip(1).filter(|a| !a.starts_with('-')) {
        match leaf.find_subcommand(word) {
            Some(sub) => leaf = sub,
            None => break,
        }
    }
    let required = leaf
        .get_positionals()
        .filter(|a| a.is_required_set())
        .count()
        .max(missing.len());
    format!(
        "requires at least {required} arg(s), only received {}",
        required - missing.len()
    )
}

/// clap's message without its `error: ` prefix, usage and tips.
pub(crate) fn first_line(err: &clap::Error) -> String {
    let text = err.render().to_string();
    let line = text.lines().next().unwrap_or_default();
    line.strip_prefix("error: ").unwrap_or(line).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_bools() {
        for t in ["1", "t", "T", "TRUE", "true", "True"] {
            assert_eq!(parse_go_bool(t), Some(true), "{t}");
        }
        for f in ["0", "f", "F", "FALSE", "false", "False"] {
            assert_eq!(parse_go_bool(f), Some(false), "{f}");
        }
        for bad in ["", "yes", "tRUE", "2"] {
            assert_eq!(parse_go_bool(bad), None, "{bad}");
        }
    }

    #[test]
    fn edit_distance() {
        assert_eq!(levenshtein("gett", "get"), 1);
        assert_eq!(levenshtein("frobnicate", "fn"), 8);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
    }
}
