//! kpt's test functions: no-op returns its input; drop-comments strips
//! comments. Neither reads a config or reports anything.

use super::call;

const INPUT: &str = "# head\napiVersion: v1 # line\nkind: ConfigMap\nmetadata:\n  name: a\n";

#[test]
fn no_op_and_drop_comments() {
    for config in [None, Some("apiVersion: v1\nkind: Anything\n")] {
        let out = call("no-op", INPUT, config);
        assert_eq!((out.exit_code, out.results.len()), (0, 0));
        assert_eq!(out.items, INPUT);
        let out = call("drop-comments", INPUT, config);
        assert_eq!((out.exit_code, out.results.len()), (0, 0));
        assert_eq!(
            out.items,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
        );
    }
    assert_eq!(call("no-op", "", None).items, "");
}
