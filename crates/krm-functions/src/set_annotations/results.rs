//! set-annotations' results: one per (file, index, field path), listing the
//! annotations set there as JSON, sorted by file, index, then text.

use std::collections::BTreeMap;

use kpt::resource_list::{FieldRef, FileRef, ResultItem};

/// Annotations recorded per location.
#[derive(Default)]
pub struct Collected {
    by_location: BTreeMap<(String, i64, String), BTreeMap<String, String>>,
}

impl Collected {
    pub fn record(&mut self, file: Option<&FileRef>, field_path: &str, key: &str, value: &str) {
        let (path, index) = file.map_or((String::new(), 0), |f| (f.path.clone(), f.index));
        self.by_location
            .entry((path, index, field_path.to_string()))
            .or_default()
            .insert(key.to_string(), value.to_string());
    }

    pub fn into_results(self) -> Vec<ResultItem> {
        if self.by_location.is_empty() {
            return vec![ResultItem {
                message: "no annotations applied".to_string(),
                ..Default::default()
            }];
        }
        self.by_location
            .into_iter()
            .map(|((path, index, field), values)| ResultItem {
                message: format!("set annotations: {}", go_json(&values)),
                field: Some(FieldRef {
                    path: field,
                    ..Default::default()
                }),
                file: Some(FileRef { path, index }),
                ..Default::default()
            })
            .collect()
    }
}

/// Go's `json.Marshal` of a string map: sorted keys, HTML characters escaped.
fn go_json(values: &BTreeMap<String, String>) -> String {
    let text = serde_json::to_string(values).unwrap_or_default();
    text.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}
