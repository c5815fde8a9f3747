//! JSON as Go's `encoding/json` Encoder writes it with `SetIndent("", "  ")`: object
//! keys sorted byte-wise, HTML-sensitive characters escaped, floats in Go's shortest
//! form, and a final line break. kyaml writes a lone resource of a `.json` file so.

use serde_json::Value;

/// `json.NewEncoder(w).SetIndent("", "  ").Encode(v)` for data decoded from YAML.
pub fn encode_indented(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, 0);
    out.push('\n');
    out
}

fn indent(out: &mut String, depth: usize) {
    out.push('\n');
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn write_value(out: &mut String, value: &Value, depth: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => out.push_str(&i.to_string()),
            (_, Some(u), _) => out.push_str(&u.to_string()),
            (_, _, Some(f)) => out.push_str(&encode_float(f)),
            _ => out.push_str(&n.to_string()),
        },
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                indent(out, depth + 1);
                write_value(out, item, depth + 1);
            }
            indent(out, depth);
            out.push(']');
        }
        Value::Object(map) => {
            if map.is_empty() {
                out.push_str("{}");
                return;
            }
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                indent(out, depth + 1);
                write_string(out, k);
                out.push_str(": ");
                write_value(out, &map[k], depth + 1);
            }
            indent(out, depth);
            out.push('}');
        }
    }
}

/// Go's `encodeState.string` with HTML escaping on: a string as `encoding/json` writes it
/// (`\b` and `\f` as Go 1.22 and later write them).
pub fn encode_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_string(&mut out, s);
    out
}

fn write_string(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{0}'..='\u{1f}' => {
                let b = c as u8;
                out.push_str("\\u00");
                out.push(HEX[(b >> 4) as usize] as char);
                out.push(HEX[(b & 0xf) as usize] as char);
            }
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Go's `floatEncoder` for float64: `strconv.AppendFloat(f, 'f', -1, 64)`, or `'e'` below
/// 1e-6 and from 1e21 on with `e-07` written `e-7`.
pub fn encode_float(f: f64) -> String {
    let abs = f.abs();
    let exponent = abs != 0.0 && !(1e-6..1e21).contains(&abs);
    let mut text = crate::gofloat::strconv_format_float(f, if exponent { 'e' } else { 'f' }, -1);
    let n = text.len();
    if exponent && n >= 4 && text.as_bytes()[n - 4..n - 1] == *b"e-0" {
        text.remove(n - 2);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_are_sorted_and_indented_like_go() {
        let v = json!({"metadata": {"name": "x"}, "apiVersion": "v1", "data": {}, "list": [1, "a", null, true], "e": []});
        assert_eq!(
            encode_indented(&v),
            "{\n  \"apiVersion\": \"v1\",\n  \"data\": {},\n  \"e\": [],\n  \"list\": [\n    1,\n    \"a\",\n    null,\n    true\n  ],\n  \"metadata\": {\n    \"name\": \"x\"\n  }\n}\n"
        );
    }

    #[test]
    fn strings_escape_as_go_does() {
        let v = json!("<a href=\"x\">&\u{1}\t\u{2028}é</a>");
        assert_eq!(
            encode_indented(&v),
            "\"\\u003ca href=\\\"x\\\"\\u003e\\u0026\\u0001\\t\\u2028é\\u003c/a\\u003e\"\n"
        );
    }

    #[test]
    fn floats_take_go_forms() {
        for (f, want) in [
            (1.5, "1.5"),
            (100.0, "100"),
            (0.000001, "0.000001"),
            (0.0000001, "1e-7"),
            (1e21, "1e+21"),
            (1.25e-10, "1.25e-10"),
            (-2e30, "-2e+30"),
            (0.0, "0"),
            // Go's shortest digits break the tie to even; Rust's `{}` does not.
            (f64::from_bits(0x402e7dda00000000), "15.245803833007812"),
        ] {
            assert_eq!(encode_float(f), want, "{f}");
        }
    }
}
