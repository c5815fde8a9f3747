//! What `rpkg clone SOURCE` names: an OCI image, a git location (`<url>.git/<dir>@<ref>`
//! or a URL plus `--directory/--ref`), or a registered package revision — and the clone
//! task upstream porchctl sends for each.

use porch_api::tasks::{
    GitPackage, OciPackage, PackageCloneTaskSpec, PackageRevisionRef, UpstreamPackage,
};
use porch_api::{SecretRef, Task};

use crate::remote::RemoteError;

/// The upstream of a clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CloneSource {
    Oci {
        image: String,
    },
    Git {
        repo: String,
        directory: String,
        git_ref: String,
        secret_ref: String,
    },
    Revision {
        name: String,
    },
}

/// kpt's `parse.URL` on a URL containing `.git` (followed by `/` or the end): the repo up
/// to `.git` (without it), the directory after it (with a leading `/`) and the ref after `@`.
pub fn split_git_url(url: &str) -> Option<(String, String, String)> {
    let at = git_suffix_at(url)?;
    let repo = url[..at].to_string();
    let rest = url[at + ".git".len()..]
        .strip_prefix('/')
        .unwrap_or_default();
    if rest.is_empty() {
        return Some((repo, String::new(), String::new()));
    }
    match rest.split_once('@') {
        Some((dir, git_ref)) => {
            // kpt splits on every `@` and keeps the second piece only.
            let git_ref = git_ref.split('@').next().unwrap_or_default();
            Some((
                repo,
                format!("/{dir}"),
                git_ref.trim_end_matches('/').to_string(),
            ))
        }
        None => Some((repo, format!("/{rest}"), String::new())),
    }
}

/// Where the first `.git` that ends the string or is followed by `/` starts.
fn git_suffix_at(url: &str) -> Option<usize> {
    url.match_indices(".git")
        .map(|(i, _)| i)
        .find(|&i| matches!(url.as_bytes().get(i + 4), None | Some(b'/')))
}

impl CloneSource {
    /// Interprets SOURCE and the git flags as upstream does: `oci://` prefix, else
    /// anything with a `/` is git (directory defaults to `/`, ref to `main`), else a
    /// package revision name.
    pub fn parse(
        source: &str,
        directory: &str,
        git_ref: &str,
        secret_ref: &str,
    ) -> Result<Self, RemoteError> {
        if source.starts_with("oci://") {
            return Ok(CloneSource::Oci {
                image: source.to_string(),
            });
        }
        if !source.contains('/') {
            return Ok(CloneSource::Revision {
                name: source.to_string(),
            });
        }
        let mut repo = source.to_string();
        let mut directory = directory.to_string();
        let mut git_ref = git_ref.to_string();
        if let Some((url_repo, dir, r)) = split_git_url(source) {
            if !directory.is_empty() && !dir.is_empty() && directory != dir {
                return Err(RemoteError::Usage(format!(
                    "directory {directory} specified by --directory contradicts directory {dir} specified by SOURCE_PACKAGE"
                )));
            }
            if !git_ref.is_empty() && !r.is_empty() && git_ref != r {
                return Err(RemoteError::Usage(format!(
                    "ref {git_ref} specified by --ref contradicts ref {r} specified by SOURCE_PACKAGE"
                )));
            }
            if directory.is_empty() {
                directory = dir;
            }
            if git_ref.is_empty() {
                git_ref = r;
            }
            // The parser drops the suffix; the repository URL keeps it.
            repo = format!("{url_repo}.git");
        }
        if git_ref.is_empty() {
            git_ref = "main".into();
        }
        if directory.is_empty() {
            directory = "/".into();
        }
        Ok(CloneSource::Git {
            repo,
            directory,
            git_ref,
            secret_ref: secret_ref.to_string(),
        })
    }

    /// The `clone` task (`upstreamRef` wraps the whole UpstreamPackage). A git source always
    /// names a `secretRef`, empty or not, as Go's non-pointer struct field does.
    pub fn task(&self) -> Task {
        let upstream = match self {
            CloneSource::Oci { image } => UpstreamPackage {
                type_: Some("oci".into()),
                oci: Some(OciPackage {
                    image: image.clone(),
                }),
                ..Default::default()
            },
            CloneSource::Git {
                repo,
                directory,
                git_ref,
                secret_ref,
            } => UpstreamPackage {
                type_: Some("git".into()),
                git: Some(GitPackage {
                    repo: repo.clone(),
                    ref_: git_ref.clone(),
                    directory: directory.clone(),
                    secret_ref: Some(SecretRef {
                        name: secret_ref.clone(),
                    }),
                }),
                ..Default::default()
            },
            CloneSource::Revision { name } => UpstreamPackage {
                upstream_ref: Some(PackageRevisionRef { name: name.clone() }),
                ..Default::default()
            },
        };
        Task {
            type_: "clone".into(),
            clone: Some(PackageCloneTaskSpec {
                upstream: Some(upstream),
                ..Default::default()
            }),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn git(repo: &str, directory: &str, git_ref: &str) -> CloneSource {
        CloneSource::Git {
            repo: repo.into(),
            directory: directory.into(),
            git_ref: git_ref.into(),
            secret_ref: String::new(),
        }
    }

    #[test]
    fn url_forms() {
        assert_eq!(
            split_git_url("http://h:3000/nephio/test-blueprints.git/basens@basens/v1"),
            Some((
                "http://h:3000/nephio/test-blueprints".into(),
                "/basens".into(),
                "basens/v1".into()
            ))
        );
        assert_eq!(
            split_git_url("https://h/r.git"),
            Some(("https://h/r".into(), String::new(), String::new()))
        );
        assert_eq!(
            split_git_url("https://h/r.git/a/b"),
            Some(("https://h/r".into(), "/a/b".into(), String::new()))
        );
        assert_eq!(
            split_git_url("https://h/r.git/d@v1/"),
            Some(("https://h/r".into(), "/d".into(), "v1".into()))
        );
        // `.github` is not the suffix.
        assert_eq!(split_git_url("https://h/x.github/r"), None);
    }

    #[test]
    fn sources() {
        let u = "http://h/nephio/test-blueprints.git/basens@basens/v1";
        assert_eq!(
            CloneSource::parse(u, "", "", "").expect("ok"),
            git(
                "http://h/nephio/test-blueprints.git",
                "/basens",
                "basens/v1"
            )
        );
        assert_eq!(
            CloneSource::parse("http://h/bp.git", "basens", "basens/v1", "").expect("ok"),
            git("http://h/bp.git", "basens", "basens/v1")
        );
        assert_eq!(
            CloneSource::parse("http://h/bp", "", "", "").expect("ok"),
            git("http://h/bp", "/", "main")
        );
        assert!(CloneSource::parse(u, "/other", "", "").is_err());
        assert!(CloneSource::parse(u, "", "basens/v2", "").is_err());
        assert_eq!(
            CloneSource::parse("oci://r/p", "", "", "").expect("ok"),
            CloneSource::Oci {
                image: "oci://r/p".into()
            }
        );
        assert_eq!(
            CloneSource::parse("bp.basens.v1", "", "", "").expect("ok"),
            CloneSource::Revision {
                name: "bp.basens.v1".into()
            }
        );
    }

    #[test]
    fn tasks_on_the_wire() {
        let t = CloneSource::Revision {
            name: "bp.basens.v1".into(),
        }
        .task();
        let t = serde_json::to_value(t).expect("json");
        assert_eq!(
            t,
            json!({"type": "clone", "clone": {"upstreamRef": {"upstreamRef": {"name": "bp.basens.v1"}}}})
        );
        let t = serde_json::to_value(git("https://h/bp.git", "basens", "basens/v1").task())
            .expect("json");
        assert_eq!(
            t["clone"]["upstreamRef"],
            json!({"type": "git", "git": {"repo": "https://h/bp.git", "ref": "basens/v1",
                "directory": "basens", "secretRef": {"name": ""}}})
        );
    }
}
