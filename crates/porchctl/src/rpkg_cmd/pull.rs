//! `rpkg pull PACKAGE [DIR]`: the revision's files plus `.KptRevisionMetadata`, into a new
//! directory or as a ResourceList on stdout.

use std::collections::BTreeMap;
use std::path::Path;

use clap::Args;
use serde_json::Value;

use super::resources::{self, REVISION_METADATA_FILE};
use crate::remote::api::PACKAGE_REVISION_RESOURCES;
use crate::remote::{self, ConnectionFlags, RemoteError};

/// Flags of `rpkg pull`.
#[derive(Debug, Args)]
pub struct PullArgs {
    /// The package revision, then optionally the directory to write it to.
    #[arg(value_name = "PACKAGE_REV_NAME [DIR]")]
    pub args: Vec<String>,
    /// Overwrite DIR if it exists (it is replaced by the pulled revision).
    #[arg(short = 'f', long)]
    pub force: bool,
}

/// `spec.resources` of a PackageRevisionResources object.
pub fn resources_of(prr: &Value) -> BTreeMap<String, String> {
    prr.pointer("/spec/resources")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

pub async fn run(conn: &ConnectionFlags, a: PullArgs) -> Result<(), RemoteError> {
    // Upstream's preRunE builds the client before runE looks at the arguments.
    let remote = conn.connect().await?;
    let Some(name) = a.args.first() else {
        return Err(RemoteError::Usage(
            "PACKAGE is a required positional argument".into(),
        ));
    };
    let prr = PACKAGE_REVISION_RESOURCES
        .get(&remote.client, &remote.namespace, name)
        .await?;
    let mut files = resources_of(&prr);
    files.insert(
        REVISION_METADATA_FILE.to_string(),
        resources::revision_metadata(&prr),
    );
    match a.args.get(1) {
        Some(dir) => resources::write_dir(&files, Path::new(dir), a.force),
        None => remote::out(&resources::to_resource_list(&files)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: PullArgs,
    }

    fn args(v: &[&str]) -> PullArgs {
        T::parse_from(std::iter::once("t").chain(v.iter().copied())).a
    }

    #[test]
    fn force_has_upstreams_shorthand() {
        assert!(!args(&["p", "dir"]).force);
        assert!(args(&["p", "dir", "--force"]).force);
        let short = args(&["-f", "p", "dir"]);
        assert!(short.force);
        assert_eq!(short.args, ["p", "dir"]);
    }
}
