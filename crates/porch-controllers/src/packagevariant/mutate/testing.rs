//! Test helpers: PackageVariants from YAML, package files, and an in-memory cluster
//! holding upstream's fake ConfigMaps and Teams.

use std::collections::BTreeMap;

use async_trait::async_trait;
use porch_core::repository::PackageFiles;
use serde_json::Value;

use crate::objects::{Gvr, ObjectError, Objects};

pub(crate) fn pv_from_yaml(text: &str) -> porch_api::PackageVariant {
    let node = kpt::yaml::parse_one(text).expect("PackageVariant YAML parses");
    serde_json::from_value(node.to_value()).expect("a PackageVariant")
}

pub(crate) fn files_of(files: &[(&str, &str)]) -> PackageFiles {
    files
        .iter()
        .map(|(p, t)| (p.to_string(), t.as_bytes().to_vec()))
        .collect()
}

pub(crate) fn text_of(files: &PackageFiles, path: &str) -> String {
    String::from_utf8(files.get(path).cloned().unwrap_or_default()).expect("UTF-8")
}

/// Objects by (apiVersion, kind), all in namespace `default`; `resolve` knows every kind
/// stored plus those in `known`. Listing a kind in `failing` fails.
#[derive(Default)]
pub(crate) struct Cluster {
    objects: BTreeMap<(String, String), Vec<Value>>,
    pub known: Vec<(String, String)>,
    pub failing: Vec<String>,
}

impl Cluster {
    pub fn add(&mut self, yaml: &str) {
        for doc in kpt::yaml::parse_stream(yaml).expect("objects parse") {
            let v = doc.root.to_value();
            let key = (
                v["apiVersion"].as_str().unwrap_or_default().to_string(),
                v["kind"].as_str().unwrap_or_default().to_string(),
            );
            self.objects.entry(key).or_default().push(v);
        }
    }

    /// Upstream's `fakeClient` list contents.
    pub fn upstream_fake() -> Cluster {
        let mut c = Cluster::default();
        for (region, n) in [("us-east1", 1), ("us-east2", 2), ("us-east3", 3)] {
            c.add(&format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {region}-endpoints\n  namespace: default\ndata:\n  db: db.us-east{n}.example.com\n"
            ));
        }
        for (name, code) in [
            ("dev-team-alpha", "ab"),
            ("dev-team-beta", "cd"),
            ("prod-team", "ef"),
        ] {
            c.add(&format!(
                "apiVersion: hr.example.com/v1alpha1\nkind: Team\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  chargeCode: {code}\n"
            ));
        }
        c
    }

    fn key_of(r: &Gvr) -> (String, String) {
        let api_version = if r.group.is_empty() {
            r.version.clone()
        } else {
            format!("{}/{}", r.group, r.version)
        };
        (api_version, r.plural.clone())
    }
}

#[async_trait]
impl Objects for Cluster {
    async fn get(&self, _: &Gvr, _: &str, _: &str) -> Result<Option<Value>, ObjectError> {
        unreachable!("mutations only list")
    }

    async fn list(
        &self,
        r: &Gvr,
        namespace: Option<&str>,
        _label_selector: &str,
    ) -> Result<Vec<Value>, ObjectError> {
        // The "plural" of this fake is the kind itself.
        let key = Cluster::key_of(r);
        if self.failing.contains(&key.1) {
            return Err(ObjectError {
                kind: porch_core::ErrorKind::Unavailable,
                message: format!("listing {} failed", key.1),
            });
        }
        Ok(self
            .objects
            .get(&key)
            .into_iter()
            .flatten()
            .filter(|o| namespace.is_none_or(|ns| o["metadata"]["namespace"] == ns))
            .cloned()
            .collect())
    }

    fn resolve(&self, api_version: &str, kind: &str) -> Option<Gvr> {
        let key = (api_version.to_string(), kind.to_string());
        if !self.objects.contains_key(&key) && !self.known.contains(&key) {
            return None;
        }
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        Some(Gvr::new(group, version, kind))
    }

    async fn create(&self, _: &Gvr, _: &str, _: Value) -> Result<Value, ObjectError> {
        unreachable!("mutations only list")
    }

    async fn update(&self, _: &Gvr, _: &str, _: Value) -> Result<Value, ObjectError> {
        unreachable!("mutations only list")
    }

    async fn update_status(&self, _: &Gvr, _: &str, _: Value) -> Result<Value, ObjectError> {
        unreachable!("mutations only list")
    }

    async fn delete(&self, _: &Gvr, _: &str, _: &str) -> Result<(), ObjectError> {
        unreachable!("mutations only list")
    }
}
