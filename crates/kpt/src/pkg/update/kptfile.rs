//! The Kptfile merge every strategy starts with (`kptfileutil.UpdateKptfile`): a
//! 3-way merge of the marshalled Kptfiles with list-key inference, of which only
//! `annotations`, `labels`, `info`, `pipeline`, `inventory` and `status` are kept.

use super::UpdateError;
use crate::kptfile::{Function, Kptfile};
use crate::pkg::merge3::{MergeOptions, SchemaRegistry, merge_nodes};

const TMP_PREFIX: &str = "_kpt-merge_";

/// Merge `updated` (and `origin`) into `local`. With `take_upstream`, `upstream` and
/// `upstreamLock` are replaced by updated's when it has them.
pub fn merge_kptfiles(
    local: &Kptfile,
    updated: &Kptfile,
    origin: Option<&Kptfile>,
    take_upstream: bool,
    path: &str,
) -> Result<Kptfile, UpdateError> {
    let mut l = local.clone();
    let mut u = updated.clone();
    let mut o = origin.cloned();
    let named = needs_temp_names(&l, &u, o.as_ref());
    if named {
        for k in [Some(&mut l), Some(&mut u), o.as_mut()]
            .into_iter()
            .flatten()
        {
            set_temp_names(k);
        }
    }
    let opts = MergeOptions {
        keep_tagged_null: false,
        infer_lists: true,
        ignore_crd_schemas: true,
        ..MergeOptions::default()
    };
    let on = o.as_ref().map(Kptfile::to_node);
    let merged = merge_nodes(
        Some(&l.to_node()),
        on.as_ref(),
        Some(&u.to_node()),
        &SchemaRegistry::default(),
        &opts,
    )
    .map_err(|e| UpdateError::Merge {
        path: path.to_string(),
        source: e,
    })?;
    let mut m = match merged {
        Some(n) => Kptfile::from_node(&n).map_err(|e| UpdateError::Kptfile {
            path: path.to_string(),
            source: e,
        })?,
        None => Kptfile::default(),
    };
    if named {
        clear_temp_names(&mut m);
    }
    let mut out = local.clone();
    out.metadata.annotations = m.metadata.annotations;
    out.metadata.labels = m.metadata.labels;
    out.info = m.info;
    out.pipeline = m.pipeline;
    out.inventory = m.inventory;
    out.status = m.status;
    if take_upstream {
        if updated.upstream.is_some() {
            out.upstream = updated.upstream.clone();
        }
        if updated.upstream_lock.is_some() {
            out.upstream_lock = updated.upstream_lock.clone();
        }
    }
    Ok(out)
}

fn functions(k: &Kptfile) -> impl Iterator<Item = &Function> {
    k.pipeline
        .iter()
        .flat_map(|p| p.mutators.iter().chain(p.validators.iter()))
}

fn temp_name(f: &Function) -> String {
    if !f.exec.is_empty() {
        return format!("{TMP_PREFIX}{}", f.exec);
    }
    // kpt's `addName` keys on the text before the image's first `:`, so images of
    // one registry with a port (`host:5000/a`, `host:5000/b`) share the key
    // `host`, and then no function is named (the keys are not unique).
    let image = f.image.split(':').next().unwrap_or_default();
    format!("{TMP_PREFIX}{image}")
}

/// kpt names functions after their image only when no function has a name and the
/// generated names are unique within each list.
fn needs_temp_names(l: &Kptfile, u: &Kptfile, o: Option<&Kptfile>) -> bool {
    let all = [Some(l), Some(u), o];
    if all
        .iter()
        .flatten()
        .any(|k| functions(k).any(|f| !f.name.is_empty()))
    {
        return false;
    }
    all.iter().flatten().all(|k| {
        k.pipeline.iter().all(|p| {
            [&p.mutators, &p.validators].iter().all(|list| {
                let mut names: Vec<String> = list.iter().map(temp_name).collect();
                let n = names.len();
                names.sort();
                names.dedup();
                names.len() == n
            })
        })
    })
}

fn set_temp_names(k: &mut Kptfile) {
    if let Some(p) = &mut k.pipeline {
        for f in p.mutators.iter_mut().chain(p.validators.iter_mut()) {
            f.name = temp_name(f);
        }
    }
}

fn clear_temp_names(k: &mut Kptfile) {
    if let Some(p) = &mut k.pipeline {
        for f in p.mutators.iter_mut().chain(p.validators.iter_mut()) {
            if f.name.starts_with(TMP_PREFIX) {
                f.name.clear();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kf(images: &[&str]) -> Kptfile {
        let mut text = String::from(
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: shop\npipeline:\n  mutators:\n",
        );
        for i in images {
            text.push_str(&format!("    - image: {i}\n"));
        }
        Kptfile::parse(&text).expect("kptfile")
    }

    fn images(k: &Kptfile) -> Vec<String> {
        k.pipeline
            .iter()
            .flat_map(|p| p.mutators.iter().map(|f| f.image.clone()))
            .collect()
    }

    #[test]
    fn images_of_one_registry_port_share_a_key_so_the_list_is_not_keyed() {
        let origin = kf(&["registry.local:5443/team/lint:v1"]);
        let updated = kf(&["registry.local:5443/team/lint:v2"]);
        let local = kf(&[
            "registry.local:5443/team/lint:v1",
            "registry.local:5443/team/fmt:v1",
        ]);
        let out = merge_kptfiles(&local, &updated, Some(&origin), false, "Kptfile").expect("merge");
        // Without merge keys the changed list is taken from upstream whole.
        assert_eq!(images(&out), ["registry.local:5443/team/lint:v2"]);
    }

    #[test]
    fn images_without_a_port_are_keyed_by_name_before_the_tag() {
        let origin = kf(&["example.org/team/lint:v1"]);
        let updated = kf(&["example.org/team/lint:v2"]);
        let local = kf(&["example.org/team/lint:v1", "example.org/team/fmt:v1"]);
        let out = merge_kptfiles(&local, &updated, Some(&origin), false, "Kptfile").expect("merge");
        assert_eq!(
            images(&out),
            ["example.org/team/lint:v2", "example.org/team/fmt:v1"]
        );
        assert!(
            out.pipeline
                .iter()
                .flat_map(|p| p.mutators.iter())
                .all(|f| f.name.is_empty()),
            "temporary names are removed"
        );
    }
}
