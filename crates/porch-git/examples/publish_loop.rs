//! Publishes revisions in a loop, printing `published <name> <revision>` after each one the
//! remote confirmed. The fault tests kill it with SIGKILL mid-publish and check that the
//! mirror and the remote are consistent afterwards and that nothing printed was lost.
//!
//! Usage: `publish_loop <data-dir> <url> <user> <password> <count>`

use std::io::Write;

use porch_core::names::{PackagePath, RepositoryName, WorkspaceName};
use porch_core::repository::{PublishContent, PublishRequest, Repository};
use porch_core::revision::{Author, InitTask, Task};
use porch_git::{GitAuth, GitOptions, GitRepository, MirrorPool, RepoSpec};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, data, url, user, pass, count] = args.as_slice() else {
        anyhow::bail!("usage: publish_loop <data-dir> <url> <user> <password> <count>");
    };
    let count: usize = count.parse()?;
    let opts = GitOptions::new(data);
    let pool = MirrorPool::new(&opts.data_dir);
    let mut spec = RepoSpec::new(RepositoryName::new("loop")?, url.clone());
    spec.auth = GitAuth::Basic {
        username: user.clone(),
        password: pass.clone(),
    };
    let repo = GitRepository::open(&pool, &opts, spec)?;
    repo.sync().await?;
    let mut out = std::io::stdout().lock();
    for i in 0..count {
        let files = [
            (
                "Kptfile".to_owned(),
                format!("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p{i}\n")
                    .into_bytes(),
            ),
            ("data.yaml".to_owned(), format!("i: {i}\n").into_bytes()),
        ];
        let req = PublishRequest {
            package: PackagePath::new(&format!("p{}", i % 5))?,
            workspace: WorkspaceName::new(&format!("ws-{i}"))?,
            content: PublishContent::Files {
                files: files.into_iter().collect(),
                task: Some(Task::init(InitTask::default())),
            },
            published_by: Author {
                name: "loop".into(),
                email: "loop@example.com".into(),
            },
        };
        match repo.publish(req).await {
            Ok(m) => writeln!(out, "published {} {}", m.key.name(), m.key.revision)?,
            // Published by an earlier (killed) run of this loop: skip it.
            Err(e) if e.kind() == porch_core::ErrorKind::Conflict => {
                writeln!(out, "skipped ws-{i}")?
            }
            Err(e) => return Err(e.into()),
        }
        out.flush()?;
    }
    Ok(())
}
