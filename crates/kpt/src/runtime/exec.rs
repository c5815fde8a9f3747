//! `exec:` functions: a subprocess that reads a ResourceList on stdin and writes one on stdout.
//!
//! The command line is split like a shell would (quotes, backslashes) but no shell runs it.
//! stdout and stderr are drained on their own threads so a chatty function cannot deadlock,
//! and the process is killed when it exceeds the timeout.

use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use wait_timeout::ChildExt;

use super::{
    BudgetExceeded, FunctionOutput, FunctionRef, FunctionRuntime, RunOptions, RuntimeError,
};
use crate::resource_list::ResourceList;

/// How much of a function's stderr is kept.
const STDERR_LIMIT: usize = 1 << 20;

/// How often a waiting render looks at its budget.
const POLL: Duration = Duration::from_millis(50);

/// How a wait for the child ended.
enum Waited {
    Exited(std::process::ExitStatus),
    TimedOut,
    Stopped(BudgetExceeded),
}

/// Waits for the child, giving up at the timeout, when the budget says stop, or when the
/// stdout reader has stopped reading (the output limit was hit).
fn wait(
    child: &mut Child,
    options: &RunOptions,
    out_reader: &std::thread::JoinHandle<(Vec<u8>, bool)>,
) -> std::io::Result<Waited> {
    let deadline = Instant::now() + options.timeout;
    loop {
        if let Some(status) = child.wait_timeout(POLL)? {
            return Ok(Waited::Exited(status));
        }
        if let Err(reason) = options.budget.check() {
            return Ok(Waited::Stopped(reason));
        }
        if out_reader.is_finished()
            && let Some(limit) = options.budget.max_output_bytes
        {
            // The reader only finishes early when the output went over the limit (or the
            // child closed stdout, in which case it exits on its own shortly).
            if let Some(status) = child.wait_timeout(POLL)? {
                return Ok(Waited::Exited(status));
            }
            return Ok(Waited::Stopped(BudgetExceeded::Bytes(limit)));
        }
        if Instant::now() >= deadline {
            return Ok(Waited::TimedOut);
        }
    }
}

fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Reads `r` to its end keeping at most `limit` bytes; `true` when there was more. With
/// `stop`, the reader stops there (a flooding child then blocks on its full pipe until it is
/// killed); without, the rest is read and dropped.
fn read_capped(r: &mut impl Read, limit: Option<usize>, stop: bool) -> (Vec<u8>, bool) {
    let mut buf = Vec::new();
    let mut over = false;
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match r.read(&mut chunk) {
            Ok(0) | Err(_) => return (buf, over),
            Ok(n) => {
                let keep = limit.map_or(n, |l| n.min(l.saturating_sub(buf.len())));
                buf.extend_from_slice(&chunk[..keep]);
                if keep < n {
                    over = true;
                    if stop {
                        return (buf, over);
                    }
                }
            }
        }
    }
}

/// kpt's `errAllowedExecNotSpecified`.
pub const EXEC_NOT_ALLOWED: &str =
    "must run with `--allow-exec` option to allow running function binaries";

/// Runs `exec:` functions when allowed.
#[derive(Debug, Clone, Default)]
pub struct ExecRuntime {
    allow: bool,
}

impl ExecRuntime {
    /// A runtime that runs exec functions (kpt's `--allow-exec`).
    pub fn allowed() -> Self {
        ExecRuntime { allow: true }
    }
    /// A runtime that refuses them with a hint.
    pub fn denied() -> Self {
        ExecRuntime { allow: false }
    }
}

/// Split a command line into words: single quotes, double quotes and backslash escapes.
pub fn split_command(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(x) => cur.push(x),
                        None => return Err(format!("unterminated single quote in {line:?}")),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(x @ ('"' | '\\' | '$' | '`')) => cur.push(x),
                            Some(x) => {
                                cur.push('\\');
                                cur.push(x);
                            }
                            None => return Err(format!("unterminated double quote in {line:?}")),
                        },
                        Some(x) => cur.push(x),
                        None => return Err(format!("unterminated double quote in {line:?}")),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(x) = chars.next() {
                    cur.push(x);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

impl FunctionRuntime for ExecRuntime {
    fn handles(&self, function: &FunctionRef) -> bool {
        matches!(function, FunctionRef::Exec(_))
    }

    fn refusal(&self, function: &FunctionRef) -> Option<String> {
        (!self.allow && self.handles(function)).then(|| EXEC_NOT_ALLOWED.to_string())
    }

    fn run(
        &self,
        function: &FunctionRef,
        input: ResourceList,
        options: &RunOptions,
    ) -> Result<FunctionOutput, RuntimeError> {
        let FunctionRef::Exec(line) = function else {
            return Err(RuntimeError::NotFound(format!(
                "{} is not an exec function",
                function.display()
            )));
        };
        if !self.allow {
            return Err(RuntimeError::ExecNotAllowed(line.clone()));
        }
        let words = split_command(line).map_err(|reason| RuntimeError::Start {
            function: line.clone(),
            reason,
        })?;
        let Some((program, args)) = words.split_first() else {
            return Err(RuntimeError::Start {
                function: line.clone(),
                reason: "empty command".into(),
            });
        };
        // Go's `exec.Command`: a bare name is looked up in $PATH first, and a failed
        // start is `fork/exec <path>: <errno>` (kpt wraps both as unexpected errors).
        let path = if program.contains('/') {
            program.clone()
        } else {
            look_path(program).ok_or_else(|| RuntimeError::Start {
                function: line.clone(),
                reason: format!("exec: {program:?}: executable file not found in $PATH"),
            })?
        };
        let mut cmd = Command::new(&path);
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = &options.working_dir {
            cmd.current_dir(dir);
        }
        let start_err = |e: std::io::Error| RuntimeError::Start {
            function: line.clone(),
            reason: e.to_string(),
        };
        let mut child = cmd.spawn().map_err(|e| RuntimeError::Start {
            function: line.clone(),
            reason: format!("fork/exec {path}: {}", go_errno(&e)),
        })?;
        let stdin_text = input.to_yaml();
        let mut stdin = child.stdin.take().expect("stdin was piped");
        let writer = std::thread::spawn(move || {
            // A function may exit without reading its input: a broken pipe is not our error.
            let _ = stdin.write_all(stdin_text.as_bytes());
        });
        let mut stdout = child.stdout.take().expect("stdout was piped");
        let mut stderr = child.stderr.take().expect("stderr was piped");
        // A flooding function is cut off at the budget's byte limit (and then killed);
        // stderr is kept only as far as a render status can show it.
        let out_limit = options.budget.max_output_bytes;
        let out_reader = std::thread::spawn(move || read_capped(&mut stdout, out_limit, true));
        let err_reader =
            std::thread::spawn(move || read_capped(&mut stderr, Some(STDERR_LIMIT), false));
        let status = match wait(&mut child, options, &out_reader).map_err(start_err)? {
            Waited::Exited(status) => status,
            Waited::TimedOut => {
                kill(&mut child);
                return Err(RuntimeError::Timeout {
                    function: line.clone(),
                    seconds: options.timeout.as_secs(),
                });
            }
            Waited::Stopped(reason) => {
                kill(&mut child);
                return Err(RuntimeError::Budget {
                    function: line.clone(),
                    reason,
                });
            }
        };
        let _ = writer.join();
        let (out, flooded) = out_reader.join().unwrap_or_default();
        let (err, _) = err_reader.join().unwrap_or_default();
        if flooded && let Some(limit) = out_limit {
            return Err(RuntimeError::Budget {
                function: line.clone(),
                reason: BudgetExceeded::Bytes(limit),
            });
        }
        let stderr = String::from_utf8_lossy(&err).into_owned();
        let exit_code = status.code().unwrap_or(1);
        let text = String::from_utf8_lossy(&out);
        let list = if text.trim().is_empty() {
            ResourceList::default()
        } else {
            match ResourceList::from_function_output(&text) {
                Ok(list) => list,
                Err(e) if exit_code == 0 => {
                    return Err(RuntimeError::BadOutput {
                        function: line.clone(),
                        reason: ResourceList::kyaml_read_error(&text)
                            .unwrap_or_else(|| e.to_string()),
                    });
                }
                // A failing function's garbage output is not the interesting error.
                Err(_) => ResourceList::default(),
            }
        };
        Ok(FunctionOutput {
            list,
            exit_code,
            stderr,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::{Budget, CancelToken};
    use crate::yaml::Node;

    fn run(cmd: &str, budget: Budget) -> Result<FunctionOutput, RuntimeError> {
        ExecRuntime::allowed().run(
            &FunctionRef::Exec(cmd.into()),
            ResourceList::default(),
            &RunOptions {
                budget,
                ..RunOptions::default()
            },
        )
    }

    #[test]
    fn a_flooding_function_is_cut_off_and_killed() {
        let started = Instant::now();
        let err = run(
            "yes",
            Budget {
                max_output_bytes: Some(1 << 20),
                ..Budget::default()
            },
        )
        .expect_err("flooding");
        assert!(
            matches!(
                err,
                RuntimeError::Budget {
                    reason: BudgetExceeded::Bytes(1_048_576),
                    ..
                }
            ),
            "{err}"
        );
        assert!(started.elapsed() < Duration::from_secs(30));
    }

    #[test]
    fn a_hanging_function_stops_at_the_deadline_or_when_cancelled() {
        let err = run(
            "sleep 30",
            Budget::default().with_time_limit(Duration::from_millis(200)),
        )
        .expect_err("deadline");
        assert!(
            matches!(
                err,
                RuntimeError::Budget {
                    reason: BudgetExceeded::Time(_),
                    ..
                }
            ),
            "{err}"
        );

        let token = CancelToken::new();
        let canceller = token.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            canceller.cancel();
        });
        let started = Instant::now();
        let err = run(
            "sleep 30",
            Budget {
                cancel: token,
                ..Budget::default()
            },
        )
        .expect_err("cancelled");
        t.join().expect("join");
        assert!(
            matches!(
                err,
                RuntimeError::Budget {
                    reason: BudgetExceeded::Cancelled,
                    ..
                }
            ),
            "{err}"
        );
        assert!(started.elapsed() < Duration::from_secs(20));
    }

    #[test]
    fn a_chatty_stderr_does_not_block_the_function() {
        // 4 MiB on stderr (more than is kept) and a normal exit.
        let out = run(
            "sh -c 'head -c 4194304 /dev/zero >&2; exit 0'",
            Budget::default(),
        )
        .expect("ran");
        assert_eq!(out.exit_code, 0);
        assert_eq!(out.stderr.len(), STDERR_LIMIT);
    }

    #[test]
    fn output_is_read_as_kyamls_byte_reader_reads_it() {
        let out = |text: &str| {
            let dir = tempfile::tempdir().expect("dir");
            let path = dir.path().join("out.yaml");
            std::fs::write(&path, text).expect("write");
            let r = run(&format!("cat {}", path.display()), Budget::default());
            drop(dir);
            r
        };
        let names = |o: FunctionOutput| -> Vec<String> {
            o.list
                .items
                .iter()
                .map(|n| {
                    n.get_path(&["metadata", "name"])
                        .and_then(Node::as_str)
                        .unwrap_or_default()
                        .to_owned()
                })
                .collect()
        };
        // Bare resources, several documents: each an item (an empty one is skipped).
        let two = out(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
        );
        assert_eq!(names(two.expect("two documents")), ["a", "b"]);
        // One bare resource: an item, not a refusal.
        let one = out("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n");
        assert_eq!(names(one.expect("one resource")), ["c"]);
        // A lone ResourceList is unwrapped.
        let list = out(
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: d\n",
        );
        assert_eq!(names(list.expect("a list")), ["d"]);
        // A ResourceList among other documents is a resource like the others (kyaml unwraps
        // only a lone one).
        let mixed = out(
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nmetadata:\n  name: e\nitems: []\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: f\n",
        );
        assert_eq!(names(mixed.expect("mixed")), ["e", "f"]);
        // A scalar document is refused in kyaml's words.
        match out("just text\n") {
            Err(RuntimeError::BadOutput { reason, .. }) => {
                assert!(reason.contains("wrong node kind"), "{reason}")
            }
            other => panic!("a scalar document: {other:?}"),
        }
    }

    #[test]
    fn splits_like_a_shell() {
        assert_eq!(
            split_command(r#"sed -e 's/foo/bar/' "a b" c\ d"#).expect("valid"),
            vec!["sed", "-e", "s/foo/bar/", "a b", "c d"]
        );
        assert!(split_command("echo 'oops").is_err());
        assert_eq!(split_command("  ").expect("valid"), Vec::<String>::new());
    }
}

/// Go's `exec.LookPath` on Unix: the first `$PATH` entry holding an executable regular
/// file of that name (an empty entry is the working directory, which Go refuses).
fn look_path(name: &str) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let dirs = std::env::var_os("PATH")?;
    std::env::split_paths(&dirs)
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .map(|p| p.to_string_lossy().into_owned())
}

/// An OS error as Go's `syscall.Errno` prints it: the C library's text with a lower-case
/// first letter and no `(os error N)`.
pub fn go_errno(e: &std::io::Error) -> String {
    let text = e.to_string();
    let text = text
        .rsplit_once(" (os error ")
        .map_or(text.as_str(), |(t, _)| t)
        .to_string();
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => text,
    }
}

/// A start failure worded as Go's `exec` package words it (`fork/exec ...`, `exec: ...`).
pub fn is_go_start_error(reason: &str) -> bool {
    reason.starts_with("fork/exec ") || reason.starts_with("exec: ")
}

#[cfg(test)]
mod go_exec_tests {
    use super::*;

    #[test]
    fn errno_text_is_gos() {
        let e = std::io::Error::from_raw_os_error(2);
        assert_eq!(go_errno(&e), "no such file or directory");
        let e = std::io::Error::from_raw_os_error(13);
        assert_eq!(go_errno(&e), "permission denied");
    }

    #[test]
    fn look_path_finds_executables_only() {
        assert!(look_path("sh").is_some_and(|p| p.ends_with("/sh")));
        assert_eq!(look_path("porch-no-such-command-xyz"), None);
    }

    #[test]
    fn start_errors_in_gos_words_are_recognised() {
        assert!(is_go_start_error("fork/exec /x: no such file or directory"));
        assert!(is_go_start_error(
            "exec: \"x\": executable file not found in $PATH"
        ));
        assert!(!is_go_start_error("empty command"));
    }
}
