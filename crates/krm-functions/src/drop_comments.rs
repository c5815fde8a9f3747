//! `drop-comments`: a kpt test function that strips every comment from every
//! item. kpt's e2e tests use it to show that comment healing around function
//! calls restores what a function drops. No results.

use kpt::resource_list::ResourceList;
use kpt::yaml::{Node, NodeKind};

use crate::FnError;

/// Run the function.
pub fn run(list: &mut ResourceList) -> Result<(), FnError> {
    for item in &mut list.items {
        strip(item);
    }
    Ok(())
}

fn strip(node: &mut Node) {
    node.head_comment.clear();
    node.line_comment.clear();
    node.foot_comment.clear();
    match &mut node.kind {
        NodeKind::Mapping(entries) => {
            for (k, v) in entries {
                strip(k);
                strip(v);
            }
        }
        NodeKind::Sequence(items) => items.iter_mut().for_each(strip),
        NodeKind::Scalar(_) | NodeKind::Alias(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use crate::common::testing::run;

    #[test]
    fn removes_all_comments() {
        let input = "# head\napiVersion: v1 # line\nkind: ConfigMap\nmetadata:\n  # inner\n  name: a\ndata:\n  k: - # x\n";
        let input = input.replace("k: - # x", "k: v # x");
        let (out, results, err) = run(super::run, &input, None);
        assert!(err.is_none() && results.is_empty());
        assert_eq!(
            out,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n"
        );
    }
}
