//! `ssh://` remotes with a private key, against OpenSSH's `sshd` (porch-testkit).

use porch_core::lifecycle::Lifecycle;
use porch_core::names::Revision;
use porch_core::repository::{Repository, RepositoryError};
use porch_git::{GitAuth, RepoSpec};
use porch_testkit::{SshServer, repos};

use crate::common::{init_tracing, list, open, publish_req, repo_name, summary};

struct SshRemote {
    tmp: tempfile::TempDir,
    server: SshServer,
}

impl SshRemote {
    /// A server over a bare repo `ssh.git` whose `main` holds a README and package `base`.
    fn new() -> anyhow::Result<SshRemote> {
        init_tracing();
        let tmp = tempfile::tempdir()?;
        let srv = tmp.path().join("srv");
        std::fs::create_dir_all(&srv)?;
        let repo = repos::init_bare(&srv.join("ssh.git"), "main")?;
        repos::commit_files(
            &repo,
            "main",
            &repos::files(&[
                ("README.md", "# ssh\n"),
                (
                    "base/Kptfile",
                    "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: base\n",
                ),
            ]),
            "Initial commit",
        )?;
        let server = SshServer::start(&srv)?;
        Ok(SshRemote { tmp, server })
    }

    fn spec(&self, auth: GitAuth) -> RepoSpec {
        let mut s = RepoSpec::new(repo_name("over-ssh"), self.server.url_for("ssh.git"));
        s.auth = auth;
        s
    }

    fn key_auth(&self) -> GitAuth {
        GitAuth::SshKeyKnownHosts {
            private_key: self.server.client_key(),
            known_hosts: self.server.known_hosts(),
        }
    }
}

#[tokio::test]
async fn opens_lists_and_publishes_over_ssh_with_a_key() -> anyhow::Result<()> {
    let remote = SshRemote::new()?;
    let (_pa, a) = open(&remote.tmp.path().join("a"), remote.spec(remote.key_auth()))?;
    a.sync().await?;
    assert!(a.status().ready, "{:?}", a.status());
    assert_eq!(summary(&list(&a).await?), ["base -1 main Published"]);

    let published = a.publish(publish_req("net/upf", "ws1")).await?;
    assert_eq!(published.key.revision, Revision::from_raw(1));
    assert_eq!(published.lifecycle, Lifecycle::Published);

    // The remote itself moved: tag and branch at the approval commit.
    let bare = git2::Repository::open_bare(remote.server.root().join("ssh.git"))?;
    let tag = bare.refname_to_id("refs/tags/net/upf/v1")?;
    assert_eq!(tag, bare.refname_to_id("refs/heads/main")?);
    assert_eq!(tag.to_string(), published.commit);

    // A fresh clone over ssh discovers the same revisions.
    let (_pb, b) = open(&remote.tmp.path().join("b"), remote.spec(remote.key_auth()))?;
    assert_eq!(summary(&list(&b).await?), summary(&list(&a).await?));
    Ok(())
}

#[tokio::test]
async fn unknown_host_key_marks_the_repository_not_ready() -> anyhow::Result<()> {
    let remote = SshRemote::new()?;
    let empty_known_hosts = remote.tmp.path().join("known_hosts");
    std::fs::write(&empty_known_hosts, "")?;
    let auth = GitAuth::SshKeyKnownHosts {
        private_key: remote.server.client_key(),
        known_hosts: empty_known_hosts,
    };
    let (_p, r) = open(&remote.tmp.path().join("a"), remote.spec(auth))?;
    let err = r
        .sync()
        .await
        .expect_err("an unpinned host key must be refused");
    assert!(matches!(err, RepositoryError::Unavailable(_)), "{err}");
    assert!(!r.status().ready);
    Ok(())
}
