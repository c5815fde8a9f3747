//! Test helpers: run a function over literal YAML and get YAML back.

use kpt::resource_list::{ResourceList, ResultItem};
use kpt::yaml::{self, Document, Node};

use crate::FnError;

/// Parses a multi-document string into items.
pub fn items(text: &str) -> Vec<Node> {
    yaml::parse_stream(text)
        .expect("test input parses")
        .into_iter()
        .map(|d| d.root)
        .collect()
}

/// Parses one document.
pub fn node(text: &str) -> Node {
    yaml::parse_one(text).expect("test input parses")
}

/// Emits items as a multi-document string.
pub fn emit(items: &[Node]) -> String {
    let docs: Vec<Document> = items.iter().cloned().map(Document::new).collect();
    yaml::emit_stream(&docs)
}

/// Runs `f` on `input` with `config`; returns the emitted items, the results
/// and the error, if any.
pub fn run(
    f: fn(&mut ResourceList) -> Result<(), FnError>,
    input: &str,
    config: Option<&str>,
) -> (String, Vec<ResultItem>, Option<String>) {
    let mut list = ResourceList::new(items(input));
    list.function_config = config.map(node);
    let err = f(&mut list).err().map(|e| e.to_string());
    (emit(&list.items), list.results, err)
}

/// Runs `f` as the built-in called by `image` (for release-dependent behaviour, see
/// `image_tag`); returns the emitted items, the whole list and the error, if any.
pub fn run_as(
    image: &str,
    f: fn(&mut ResourceList) -> Result<(), FnError>,
    input: &str,
    config: Option<&str>,
) -> (String, ResourceList, Option<FnError>) {
    let mut list = ResourceList::new(items(input));
    list.function_config = config.map(node);
    let err = crate::image_tag::with(image, || f(&mut list)).err();
    (emit(&list.items), list, err)
}

/// Just the result messages.
pub fn messages(results: &[ResultItem]) -> Vec<String> {
    results.iter().map(|r| r.message.clone()).collect()
}
