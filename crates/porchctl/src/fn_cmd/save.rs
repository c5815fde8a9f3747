//! `fn eval --save --type mutator|validator`: after a successful eval, record the
//! function (image or exec, selectors, exclusions, and its `configPath` or
//! `configMap`) in the package's Kptfile pipeline, as kpt's `SaveFnToKptfile` does.
//! A step for the same image (or exec) is replaced in place; otherwise it is appended.

use std::collections::BTreeMap;
use std::path::Path;

use kpt::kptfile::{Function, KPTFILE, Kptfile, Selector};

/// What `--save` records.
pub struct SavedFunction {
    /// The resolved image (empty for exec).
    pub image: String,
    /// The exec command (empty for images).
    pub exec: String,
    pub selector: Selector,
    pub exclusion: Selector,
    /// `--fn-config`, relative to the package.
    pub config_path: Option<String>,
    /// `-- key=value` data (a leading bare kind is not data).
    pub data: Vec<String>,
}

impl SavedFunction {
    fn function(&self) -> Function {
        let mut f = Function {
            image: self.image.clone(),
            exec: if self.image.is_empty() {
                self.exec.clone()
            } else {
                String::new()
            },
            ..Default::default()
        };
        if !self.selector.is_empty() {
            f.selectors.push(self.selector.clone());
        }
        if !self.exclusion.is_empty() {
            f.exclusions.push(self.exclusion.clone());
        }
        if let Some(p) = &self.config_path {
            f.config_path = p.clone();
        } else {
            let mut data = BTreeMap::new();
            for (i, item) in self.data.iter().enumerate() {
                match item.split_once('=') {
                    Some((k, v)) => {
                        data.insert(k.to_string(), v.to_string());
                    }
                    None if i == 0 => {}
                    None => {}
                }
            }
            f.config_map = data;
        }
        f
    }

    /// The new step list and kpt's message for it.
    fn update(&self, old: Vec<Function>, fn_type: &str) -> (Vec<Function>, String) {
        let new = self.function();
        let who = if self.image.is_empty() {
            &self.exec
        } else {
            &self.image
        };
        let mut found = false;
        let mut out = Vec::with_capacity(old.len() + 1);
        for f in old {
            let same = (!f.image.is_empty() && f.image == self.image)
                || (!f.exec.is_empty() && f.exec == self.exec);
            if same {
                out.push(new.clone());
                found = true;
            } else {
                out.push(f);
            }
        }
        if found {
            (out, format!("Updated {who:?} as {fn_type} in the Kptfile."))
        } else {
            out.push(new);
            (out, format!("Added {who:?} as {fn_type} in the Kptfile."))
        }
    }
}

/// Save `saved` into `pkg`'s Kptfile; returns the line kpt prints.
pub fn save(pkg: &Path, saved: &SavedFunction, fn_type: &str) -> String {
    let path = pkg.join(KPTFILE);
    let Some(mut kf) = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| Kptfile::parse(&t).ok())
    else {
        return "function not added: Kptfile not exists".to_string();
    };
    let mut pipeline = kf.pipeline.take().unwrap_or_default();
    let message = if fn_type == "validator" {
        let (list, m) = saved.update(std::mem::take(&mut pipeline.validators), fn_type);
        pipeline.validators = list;
        m
    } else {
        let (list, m) = saved.update(std::mem::take(&mut pipeline.mutators), fn_type);
        pipeline.mutators = list;
        m
    };
    kf.pipeline = Some(pipeline);
    if let Err(e) = std::fs::write(&path, with_comments_of(&path, &kf)) {
        return format!("function is not added to Kptfile: {e}");
    }
    message
}

/// The updated Kptfile with the comments and field order of the file on disk, as kpt's
/// `preserveCommentsAndFieldOrder` (kyaml's CopyComments, then SyncOrder) keeps them.
fn with_comments_of(path: &Path, kf: &Kptfile) -> String {
    let mut node = kf.to_node();
    if let Some(old) = std::fs::read_to_string(path)
        .ok()
        .and_then(|t| kpt::yaml::parse_one(&t).ok())
    {
        kpt::render::heal(&old, &mut node);
    }
    kpt::yaml::emit_node(&node, kpt::yaml::SeqIndent::Wide)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saved(image: &str, data: &[&str]) -> SavedFunction {
        SavedFunction {
            image: image.into(),
            exec: String::new(),
            selector: Selector::default(),
            exclusion: Selector::default(),
            config_path: None,
            data: data.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn appends_a_new_step_and_replaces_the_same_image() {
        let s = saved("ghcr.io/x/set-namespace:v1", &["namespace=a"]);
        let (list, m) = s.update(Vec::new(), "mutator");
        assert_eq!(list.len(), 1);
        assert_eq!(
            list[0].config_map.get("namespace").map(String::as_str),
            Some("a")
        );
        assert_eq!(
            m,
            "Added \"ghcr.io/x/set-namespace:v1\" as mutator in the Kptfile."
        );
        let old = vec![
            Function {
                image: "other".into(),
                ..Default::default()
            },
            Function {
                image: "ghcr.io/x/set-namespace:v1".into(),
                name: "kept?".into(),
                ..Default::default()
            },
        ];
        let s = saved("ghcr.io/x/set-namespace:v1", &["ConfigMap", "namespace=b"]);
        let (list, m) = s.update(old, "mutator");
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].image, "other");
        // The replacement is the new step as a whole (kpt drops the old name).
        assert!(list[1].name.is_empty());
        assert_eq!(
            list[1].config_map.get("namespace").map(String::as_str),
            Some("b")
        );
        assert!(m.starts_with("Updated "));
    }

    #[test]
    fn saving_keeps_the_kptfiles_comments_and_field_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        let original = "# header comment\napiVersion: kpt.dev/v1\nkind: Kptfile # comment 1\nmetadata:\n  # comment 2\n  name: app # comment 3\n  namespace: staging\ninfo:\n  description: d # why\n";
        std::fs::write(dir.path().join(KPTFILE), original).expect("write");
        let m = save(dir.path(), &saved("img:v1", &["a=b"]), "mutator");
        assert_eq!(m, "Added \"img:v1\" as mutator in the Kptfile.");
        let text = std::fs::read_to_string(dir.path().join(KPTFILE)).expect("read");
        assert_eq!(
            text,
            format!(
                "{original}pipeline:\n  mutators:\n    - image: img:v1\n      configMap:\n        a: b\n"
            )
        );
    }

    #[test]
    fn a_missing_kptfile_is_reported_not_created() {
        let dir = tempfile::tempdir().expect("tempdir");
        let m = save(dir.path(), &saved("img", &[]), "mutator");
        assert_eq!(m, "function not added: Kptfile not exists");
        assert!(!dir.path().join(KPTFILE).exists());
    }
}
