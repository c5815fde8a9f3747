//! YAML as the Go setter functions read it. Setter values go through kyaml's
//! `yaml.Parse`: yaml.v3's decoder reads the first document only, so what
//! follows a `---` (another document, or text that would not parse) is never
//! looked at, and text without any document (empty, comments only) is an
//! error (`EOF`). Their output is YAML that kpt reads back ([`reread`]).

use kpt::yaml::{self, Node};

/// The first document of `text`, or `None` where kyaml fails.
pub(crate) fn parse(text: &str) -> Option<Node> {
    let first = first_document(text)?;
    let docs = yaml::parse_stream(first).ok()?;
    docs.into_iter().next().map(|d| d.root)
}

/// `text` up to the marker that ends its first document: a `---` after the
/// document began (with content or its own `---`), or a `...`; `None` when
/// no document begins (blank lines, comments and directives only).
fn first_document(text: &str) -> Option<&str> {
    let mut begun = false;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim_end_matches(['\n', '\r']);
        let marker = |m: &str| {
            t.strip_prefix(m)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
        };
        if marker("...") || (marker("---") && begun) {
            return begun.then_some(&text[..offset]);
        }
        let trimmed = t.trim_start();
        if marker("---") || !(trimmed.is_empty() || trimmed.starts_with(['#', '%'])) {
            begun = true;
        }
        offset += line.len();
    }
    begun.then_some(text)
}

/// A Go function writes its items out as YAML that kpt parses back, and
/// yaml.v3 writes a block list's own line comment at the next place that
/// takes a line comment (after the following field, say), so that is where
/// kpt finds the comment. Writing and reading the item the same way puts it
/// there for later functions too. (Past the item's end Go would carry it into
/// the next item; one item at a time it is dropped instead.) Should the text
/// not parse back, the item stays as it is: written out, it reads the same.
pub(crate) fn reread(item: &mut Node) {
    let text = yaml::emit_node(item, yaml::SeqIndent::Compact);
    if let Ok(parsed) = yaml::parse_one(&text) {
        *item = parsed;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(text: &str) -> Option<Vec<String>> {
        let n = parse(text)?;
        Some(
            n.items()
                .iter()
                .map(|i| i.as_str().unwrap_or_default().to_string())
                .collect(),
        )
    }

    #[test]
    fn only_the_first_document_counts() {
        assert_eq!(items("- x\n---\n- y\n"), Some(vec!["x".to_string()]));
        assert_eq!(items("- x\n---\n"), Some(vec!["x".to_string()]));
        assert_eq!(
            items("# note\n---\n- x\n--- [oops\n"),
            Some(vec!["x".to_string()])
        );
        assert_eq!(items("- x\n...\n: junk ["), Some(vec!["x".to_string()]));
        assert_eq!(
            items("[x, y]"),
            Some(vec!["x".to_string(), "y".to_string()])
        );
    }

    #[test]
    fn no_document_or_a_broken_first_one_fails() {
        assert!(parse("").is_none());
        assert!(parse("# only a comment\n").is_none());
        assert!(parse("[x\n---\n- y\n").is_none());
        // An empty explicit document is a document (null).
        assert!(parse("---\n---\n- y\n").is_some_and(|n| n.is_null()));
    }
}
