use crate::yaml::{SeqIndent, emit_node, parse_one};

fn canon(s: &str) -> String {
    emit_node(&parse_one(s).expect("parses"), SeqIndent::Compact)
}

#[test]
fn simple_mapping() {
    let s = "a: 1\nb:\n  c: x\n";
    assert_eq!(canon(s), s);
}
