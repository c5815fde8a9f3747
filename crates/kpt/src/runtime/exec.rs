//! `exec:` functions: a subprocess that reads a ResourceList on stdin and writes one on stdout.
//!
//! The command line is split like a shell would (quotes, backslashes) but no shell runs it.
//! stdout and stderr are drained on their own threads so a chatty function cannot deadlock,
//! and the process is killed when it exceeds the timeout.

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use wait_timeout::ChildExt;

use super::{FunctionOutput, FunctionRef, FunctionRuntime, RunOptions, RuntimeError};
use crate::resource_list::ResourceList;

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
        let mut cmd = Command::new(program);
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
        let mut child = cmd.spawn().map_err(start_err)?;
        let stdin_text = input.to_yaml();
        let mut stdin = child.stdin.take().expect("stdin was piped");
        let writer = std::thread::spawn(move || {
            // A function may exit without reading its input: a broken pipe is not our error.
            let _ = stdin.write_all(stdin_text.as_bytes());
        });
        let mut stdout = child.stdout.take().expect("stdout was piped");
        let mut stderr = child.stderr.take().expect("stderr was piped");
        let out_reader = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = stdout.read_to_end(&mut buf);
            buf
        });
        let err_reader = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = stderr.read_to_end(&mut buf);
            buf
        });
        let status = match child.wait_timeout(options.timeout).map_err(start_err)? {
            Some(status) => status,
            None => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(RuntimeError::Timeout {
                    function: line.clone(),
                    seconds: options.timeout.as_secs(),
                });
            }
        };
        let _ = writer.join();
        let out = out_reader.join().unwrap_or_default();
        let err = err_reader.join().unwrap_or_default();
        let stderr = String::from_utf8_lossy(&err).into_owned();
        let exit_code = status.code().unwrap_or(1);
        let text = String::from_utf8_lossy(&out);
        let list = if text.trim().is_empty() {
            ResourceList::default()
        } else {
            match ResourceList::from_yaml(&text) {
                Ok(list) => list,
                Err(e) if exit_code == 0 => {
                    return Err(RuntimeError::BadOutput {
                        function: line.clone(),
                        reason: e.to_string(),
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
