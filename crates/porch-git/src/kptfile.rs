//! The little of the Kptfile discovery needs: the upstream lock (spec §2.2).

use porch_core::revision::{GitLock, Locator};

#[derive(serde::Deserialize)]
struct Kptfile {
    #[serde(default)]
    upstream: Option<Upstream>,
    #[serde(default, rename = "upstreamLock")]
    upstream_lock: Option<LockYaml>,
}

#[derive(serde::Deserialize)]
struct Upstream {
    #[serde(default)]
    git: Option<serde_yaml::Value>,
}

#[derive(serde::Deserialize)]
struct LockYaml {
    #[serde(default, rename = "type")]
    origin_type: String,
    #[serde(default)]
    git: Option<GitLock>,
}

/// `status.upstreamLock` from a Kptfile: present only when the Kptfile has both
/// `upstream.git` and an `upstreamLock` with `git` (as Porch). Unparseable Kptfiles yield `None`.
pub fn upstream_lock(kptfile: &[u8]) -> Option<Locator> {
    // Most Kptfiles have no lock; skipping the YAML parse for them is most of discovery's
    // CPU on large repositories. A key can only avoid this spelling through escape
    // sequences in a quoted key, which kpt never writes.
    if !contains(kptfile, b"upstreamLock") {
        return None;
    }
    let kf: Kptfile = match serde_yaml::from_slice(kptfile) {
        Ok(k) => k,
        Err(e) => {
            tracing::debug!(error = %e, "cannot parse Kptfile for its upstream lock");
            return None;
        }
    };
    kf.upstream.as_ref()?.git.as_ref()?;
    let lock = kf.upstream_lock?;
    let git = lock.git?;
    Some(Locator {
        origin_type: lock.origin_type,
        git: Some(git),
    })
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_lock_only_with_upstream_git() {
        let kf = b"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: x\nupstream:\n  type: git\n  git:\n    repo: https://r\n    directory: basens\n    ref: basens/v1\nupstreamLock:\n  type: git\n  git:\n    repo: https://r\n    directory: basens\n    ref: basens/v1\n    commit: abc\n";
        let l = upstream_lock(kf).expect("test value");
        assert_eq!(l.origin_type, "git");
        let g = l.git.expect("test value");
        assert_eq!(
            (
                g.repo.as_str(),
                g.directory.as_str(),
                g.git_ref.as_str(),
                g.commit.as_str()
            ),
            ("https://r", "basens", "basens/v1", "abc")
        );
        assert_eq!(
            upstream_lock(b"apiVersion: kpt.dev/v1\nkind: Kptfile\n"),
            None
        );
        assert_eq!(upstream_lock(b": : not yaml ["), None);
    }
}
