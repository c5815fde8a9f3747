//! Large Porch-shaped repositories for benchmarks, written with `git fast-import` (seconds
//! for thousands of revisions, where committing one by one would take minutes).
//!
//! Shape, as Go Porch writes it: per published revision a draft commit carrying the `kpt:`
//! annotation of its init task, a two-parent approval commit on `main`, and the tag
//! `<path>/v<N>`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::TestkitError;

/// What to generate.
#[derive(Debug, Clone)]
pub struct Shape {
    /// Number of packages (`pkg-0000`, … under `g<NN>/` groups).
    pub packages: usize,
    /// Published revisions per package.
    pub revisions: usize,
    /// ConfigMaps per package revision besides the Kptfile.
    pub resources: usize,
}

/// The package path of package `p`.
pub fn package_path(p: usize) -> String {
    format!("g{:02}/pkg-{p:04}", p % 25)
}

fn stream(shape: &Shape) -> String {
    let mut s = String::new();
    let mut mark = 1usize;
    let mut main = 1usize;
    let mut t = 1_600_000_000u64;
    let readme = "generated repository\n";
    let _ = write!(
        s,
        "commit refs/heads/main\nmark :{mark}\ncommitter Gen <gen@example.com> {t} +0000\ndata 7\nInitial\nM 100644 inline README.md\ndata {}\n{readme}\n",
        readme.len()
    );
    mark += 1;
    for rev in 1..=shape.revisions {
        for p in 0..shape.packages {
            t += 1;
            let path = package_path(p);
            let name = format!("pkg-{p:04}");
            let ws = format!("ws{rev}");
            let mut files = vec![(
                format!("{path}/Kptfile"),
                format!(
                    "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ninfo:\n  description: revision {rev}\n"
                ),
            )];
            for r in 0..shape.resources {
                files.push((
                    format!("{path}/cm-{r}.yaml"),
                    format!(
                        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}-{r}\ndata:\n  rev: \"{rev}\"\n"
                    ),
                ));
            }
            let mut inline = String::new();
            for (f, text) in &files {
                let _ = write!(inline, "M 100644 inline {f}\ndata {}\n{text}\n", text.len());
            }
            let task = r#"{"type":"init","init":{"description":"generated"}}"#;
            let dmsg = format!(
                "Creating new empty revision\n\n\nkpt:{{\"package\":\"{path}\",\"workspaceName\":\"{ws}\",\"revision\":\"0\",\"task\":{task}}}\n"
            );
            let amsg = format!(
                "Approving package revision {path}/{rev}\n\nkpt:{{\"package\":\"{path}\",\"workspaceName\":\"{ws}\",\"revision\":\"{rev}\"}}\n"
            );
            let (base, draft, approval) = (main, mark, mark + 1);
            let _ = write!(
                s,
                "commit refs/heads/draft\nmark :{draft}\nauthor Alice <alice@example.com> {t} +0000\ncommitter Package Orchestration Service <porch@kpt.dev> {t} +0000\ndata {}\n{dmsg}from :{base}\n{inline}",
                dmsg.len()
            );
            let _ = write!(
                s,
                "commit refs/heads/main\nmark :{approval}\nauthor Alice <alice@example.com> {t} +0000\ncommitter Package Orchestration Service <porch@kpt.dev> {t} +0000\ndata {}\n{amsg}from :{base}\nmerge :{draft}\n{inline}",
                amsg.len()
            );
            let _ = write!(s, "reset refs/tags/{path}/v{rev}\nfrom :{approval}\n\n");
            main = approval;
            mark += 2;
        }
    }
    // The scratch branch is not part of Porch's layout.
    s.push_str("reset refs/heads/draft\nfrom 0000000000000000000000000000000000000000\n\n");
    s
}

/// Creates the bare repository `dest` with `shape`.
pub fn porch_repository(dest: &Path, shape: &Shape) -> Result<(), TestkitError> {
    crate::repos::init_bare(dest, "main")?;
    let mut child = Command::new("git")
        .arg("-C")
        .arg(dest)
        .args(["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    child
        .stdin
        .take()
        .ok_or_else(|| std::io::Error::other("fast-import has no stdin"))?
        .write_all(stream(shape).as_bytes())?;
    let out = child.wait_with_output()?;
    if !out.status.success() {
        return Err(TestkitError::Command {
            command: "git fast-import".into(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    Ok(())
}

/// Maintains `dest` as a hosting service does (`git gc`/`git maintenance`): one pack with a
/// bitmap, packed refs and a commit-graph. A push's connectivity check on the server walks
/// the 5,000 tags of a large remote; without a commit-graph that is most of a publish.
pub fn maintain(dest: &Path) -> Result<(), TestkitError> {
    for args in [
        &["repack", "-adq", "--write-bitmap-index"][..],
        &["pack-refs", "--all"],
        &["commit-graph", "write", "--reachable"],
    ] {
        let out = Command::new("git")
            .arg("-C")
            .arg(dest)
            .args(args)
            .output()?;
        if !out.status.success() {
            return Err(TestkitError::Command {
                command: format!("git {}", args.join(" ")),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_tags_and_main() {
        let bare =
            std::env::temp_dir().join(format!("porch-testkit-gen-{}.git", std::process::id()));
        let _ = std::fs::remove_dir_all(&bare);
        porch_repository(
            &bare,
            &Shape {
                packages: 3,
                revisions: 2,
                resources: 2,
            },
        )
        .expect("generate");
        let refs: Vec<String> = crate::repos::list_refs(&bare)
            .expect("refs")
            .into_iter()
            .map(|(r, _)| r)
            .collect();
        assert!(
            refs.contains(&"refs/tags/g01/pkg-0001/v2".to_owned()),
            "{refs:?}"
        );
        assert!(refs.contains(&"refs/heads/main".to_owned()));
        assert!(!refs.iter().any(|r| r == "refs/heads/draft"), "{refs:?}");
        assert_eq!(
            refs.iter().filter(|r| r.starts_with("refs/tags/")).count(),
            6
        );
        std::fs::remove_dir_all(&bare).expect("clean up");
    }
}
