//! Package revision domain types: key, locks, tasks, metadata, UID (spec §2, §6).

use std::fmt;

use crate::lifecycle::Lifecycle;
use crate::names::{PackagePath, PackageRevisionName, RepositoryName, Revision, WorkspaceName};

/// Identifies one package revision inside one repository (spec §6.1).
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct PackageRevisionKey {
    /// Repository object name.
    pub repository: RepositoryName,
    /// Package path relative to the repository directory.
    pub package: PackagePath,
    /// Workspace name (branch name for the -1 placeholder).
    pub workspace: WorkspaceName,
    /// Revision number.
    pub revision: Revision,
}

impl PackageRevisionKey {
    /// The object name `<repo>.<dotted path>.<workspace>`.
    pub fn name(&self) -> PackageRevisionName {
        PackageRevisionName::compose(&self.repository, &self.package, &self.workspace)
    }
    /// The object UID in `namespace` (spec §6.4).
    pub fn uid(&self, namespace: &str) -> uuid::Uuid {
        package_revision_uid(namespace, self.name().as_str())
    }
}

impl fmt::Display for PackageRevisionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.name(), self.revision)
    }
}

/// Namespace UUID Porch derives object UIDs from.
pub const UID_NAMESPACE: uuid::Uuid = uuid::uuid!("aac71d91-5c67-456f-8fd2-902ef6da820e");

/// UUIDv5 of `packagerevision:porch.kpt.dev/v1alpha1/<lower ns>/<lower name>` (spec §6.4).
pub fn package_revision_uid(namespace: &str, name: &str) -> uuid::Uuid {
    let input = format!(
        "packagerevision:porch.kpt.dev/v1alpha1/{}/{}",
        namespace.to_lowercase(),
        name.to_lowercase()
    );
    uuid::Uuid::new_v5(&UID_NAMESPACE, input.as_bytes())
}

/// Seconds since the Unix epoch (UTC). Git author times have second precision.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// RFC 3339 in UTC, as Kubernetes prints `metav1.Time` (e.g. `2022-08-26T22:47:35Z`).
    pub fn to_rfc3339(self) -> String {
        let days = self.0.div_euclid(86_400);
        let secs = self.0.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        )
    }
}

/// Howard Hinnant's days-to-civil conversion.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// A git location: `{repo, directory, ref, commit}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GitLock {
    /// Repository URL.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub repo: String,
    /// Package directory inside the repository.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub directory: String,
    /// Short ref name (`basens/v1`, `drafts/pkg/ws`, `main`).
    #[serde(default, rename = "ref", skip_serializing_if = "String::is_empty")]
    pub git_ref: String,
    /// Commit SHA.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub commit: String,
}

/// `Locator`/`UpstreamLock`: `{type: git, git: {...}}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Locator {
    /// Origin type (`git` or `oci`).
    #[serde(default, rename = "type", skip_serializing_if = "String::is_empty")]
    pub origin_type: String,
    /// Git location.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<GitLock>,
}

impl Locator {
    /// A git locator.
    pub fn git(lock: GitLock) -> Self {
        Locator {
            origin_type: "git".into(),
            git: Some(lock),
        }
    }
}

/// Reference to another package revision by object name.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RevisionRef {
    /// Object name.
    #[serde(default)]
    pub name: String,
}

/// `init` task parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct InitTask {
    /// Initialise in a subdirectory.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub subpackage: String,
    /// Kptfile `info.description`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Kptfile `info.keywords`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<String>,
    /// Kptfile `info.site`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub site: String,
}

/// Secret reference inside an upstream git location.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SecretRef {
    /// Secret name.
    #[serde(default)]
    pub name: String,
}

/// Raw git upstream of a clone.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GitUpstream {
    /// Repository URL.
    #[serde(default)]
    pub repo: String,
    /// Ref (tag, branch or commit).
    #[serde(default, rename = "ref")]
    pub git_ref: String,
    /// Directory of the package.
    #[serde(default)]
    pub directory: String,
    /// Credentials secret.
    #[serde(default, rename = "secretRef")]
    pub secret_ref: SecretRef,
}

/// `UpstreamPackage`: a registered revision or a raw git/oci location.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct UpstreamPackage {
    /// `git` or `oci`.
    #[serde(default, rename = "type", skip_serializing_if = "String::is_empty")]
    pub origin_type: String,
    /// Raw git location.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<GitUpstream>,
    /// Registered package revision.
    #[serde(
        default,
        rename = "upstreamRef",
        skip_serializing_if = "Option::is_none"
    )]
    pub upstream_ref: Option<RevisionRef>,
}

/// `clone` task parameters (note the double `upstreamRef` on the wire).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CloneTask {
    /// Where to clone from.
    #[serde(default, rename = "upstreamRef")]
    pub upstream: UpstreamPackage,
    /// How a later move to another upstream (a changed clone task, an appended `update`
    /// task) merges: `resource-merge` when empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub strategy: String,
    /// On a clone task appended to a Draft: the directory the upstream is cloned into as an
    /// independent subpackage (never recorded: the task is applied, not kept).
    #[serde(
        default,
        rename = "subpackageDir",
        skip_serializing_if = "String::is_empty"
    )]
    pub subpackage_dir: String,
}

/// `update` task parameters (older Porch): the upstream a Draft moves to.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct UpdateTask {
    /// The new upstream.
    #[serde(default, rename = "upstreamRef")]
    pub upstream: UpstreamPackage,
}

/// `edit` (copy) task parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EditTask {
    /// The published revision copied.
    #[serde(default, rename = "sourceRef")]
    pub source: RevisionRef,
}

/// `upgrade` task parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct UpgradeTask {
    /// Old upstream revision.
    #[serde(default, rename = "oldUpstreamRef")]
    pub old_upstream: RevisionRef,
    /// New upstream revision.
    #[serde(default, rename = "newUpstreamRef")]
    pub new_upstream: RevisionRef,
    /// Local revision being upgraded.
    #[serde(default, rename = "localPackageRevisionRef")]
    pub local: RevisionRef,
    /// Merge strategy (`resource-merge` default).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub strategy: String,
    /// On an upgrade task appended to a Draft: the independent subpackage upgraded in place.
    #[serde(
        default,
        rename = "subpackageDir",
        skip_serializing_if = "String::is_empty"
    )]
    pub subpackage_dir: String,
}

/// A task as recorded in `kpt:` commit annotations and shown in `spec.tasks`.
/// Unknown historical types (`eval`, `patch`) keep their `type` and drop their payload.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Task {
    /// `init`, `clone`, `edit`, `upgrade`, internal `render`/`push`, or a legacy type.
    #[serde(default, rename = "type")]
    pub task_type: String,
    /// Parameters of `init`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init: Option<InitTask>,
    /// Parameters of `clone`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clone: Option<CloneTask>,
    /// Parameters of `edit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit: Option<EditTask>,
    /// Parameters of `upgrade`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade: Option<UpgradeTask>,
    /// Parameters of `update` (older Porch; appended to a Draft cloned from an upstream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update: Option<UpdateTask>,
}

impl Task {
    /// `init`, `clone`, `edit` and `upgrade` may create a revision (Porch `IsValidFirstTaskType`).
    pub fn is_creation(&self) -> bool {
        matches!(
            self.task_type.as_str(),
            "init" | "clone" | "edit" | "upgrade"
        )
    }
    /// An `init` task.
    pub fn init(init: InitTask) -> Self {
        Task {
            task_type: "init".into(),
            init: Some(init),
            ..Task::default()
        }
    }
}

/// Who did something: name and email of a git signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Author {
    /// Display name.
    pub name: String,
    /// Email (for Kubernetes users Porch puts the user name here too).
    pub email: String,
}

impl Author {
    /// Porch's service identity, used when nobody else is known.
    pub fn porch() -> Self {
        Author {
            name: "Package Orchestration Service".into(),
            email: "porch@kpt.dev".into(),
        }
    }
}

/// Everything storage knows about one package revision, without its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageRevisionMeta {
    /// Identity.
    pub key: PackageRevisionKey,
    /// Current lifecycle.
    pub lifecycle: Lifecycle,
    /// Commit SHA of the revision's ref; the git-backed resourceVersion.
    pub commit: String,
    /// Where this revision itself lives (`status.selfLock`).
    pub self_lock: Locator,
    /// From the Kptfile `upstreamLock`, when it has `upstream.git` and `upstreamLock`.
    pub upstream_lock: Option<Locator>,
    /// Author email of the publishing commit (Published/DeletionProposed only).
    pub published_by: Option<String>,
    /// Author time of the publishing commit (Published/DeletionProposed only).
    pub publish_timestamp: Option<Timestamp>,
    /// Creation task history (normally one element); only filled when asked for.
    pub tasks: Vec<Task>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uid_matches_porch_goldens() {
        // test/e2e/cli/testdata/rpkg-init and rpkg-clone goldens.
        assert_eq!(
            package_revision_uid("rpkg-init", "git.init-package.init-1").to_string(),
            "45ee0692-730a-51b2-9a1d-ad4f4ad55dc8"
        );
        assert_eq!(
            package_revision_uid("rpkg-clone", "git.basens-clone.clone-2").to_string(),
            "710e4f9b-b21f-5786-bf04-1d1d9b32d57c"
        );
    }

    #[test]
    fn timestamp_format() {
        assert_eq!(Timestamp(0).to_rfc3339(), "1970-01-01T00:00:00Z");
        assert_eq!(
            Timestamp(1_661_554_055).to_rfc3339(),
            "2022-08-26T22:47:35Z"
        );
    }
}
