//! go.starlark.net's formatting of values, for the builtins that print them:
//! `str`, `repr`, `print` (with its `sep` argument), `fail` (with `sep`) and
//! `type`, which replace the Rust crate's.
//!
//! Where the crate's own text differs: floats use Go's shortest `%g`
//! (`2.5e-05`, `1.23456789e+08`; the crate rounds to 7 digits and writes
//! `0.000025`), printable non-ASCII characters stay as they are in string
//! literals (`"é"`, not `"\xe9"`), functions print as `<function f>` and
//! `<built-in function len>` and have type `builtin_function_or_method`, and
//! structs print their fields sorted as `struct(a = 1)`. The crate's `%`
//! operator and `str.format` keep its formatting.

use ::starlark::environment::GlobalsBuilder;
use ::starlark::starlark_module;
use ::starlark::values::dict::DictRef;
use ::starlark::values::float::StarlarkFloat;
use ::starlark::values::list::ListRef;
use ::starlark::values::none::NoneType;
use ::starlark::values::structs::StructRef;
use ::starlark::values::tuple::{TupleRef, UnpackTuple};
use ::starlark::values::{Heap, Value, ValueLike};

/// Nesting past which values are written by the crate (which has its own
/// depth handling), keeping this writer's recursion bounded.
const MAX_DEPTH: usize = 64;

/// The error `fail` raises; its text is the whole message (`fail: ...`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct GoFail(pub String);

/// Go's `String()` of a float: the shortest representation, in exponent
/// form below 1e-4 and from 1e6 on (as `strconv`'s `%g` with precision -1),
/// and always with a `.` or an exponent.
pub(crate) fn float(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+inf" } else { "-inf" }.into();
    }
    let s = shortest_g(f);
    if s.contains(['.', 'e']) {
        s
    } else {
        format!("{s}.0")
    }
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)` of a finite float: the
/// shortest representation, in exponent form below 1e-4 and from 1e6 on.
pub(crate) fn shortest_g(f: f64) -> String {
    kpt::gofloat::shortest_g(f)
}

/// Go's `%q` of a string, as go.starlark.net writes string values.
pub(crate) fn quote(s: &str, out: &mut String) {
    out.push_str(&kpt::goquote::go_quote(s));
}

/// A value's text as the crate writes it (in its error messages) rewritten as
/// go.starlark.net writes it: a string literal's escapes of non-ASCII
/// characters (`"\xf6"`) undone and quoted as Go does (`"ö"`); other values
/// as they are.
pub(crate) fn requote(crate_repr: &str) -> String {
    let Some(body) = crate_repr
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
    else {
        return crate_repr.to_string();
    };
    let mut text = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            text.push(c);
            continue;
        }
        let digits = match chars.next() {
            Some('n') => {
                text.push('\n');
                continue;
            }
            Some('r') => {
                text.push('\r');
                continue;
            }
            Some('t') => {
                text.push('\t');
                continue;
            }
            Some(c @ ('\\' | '"')) => {
                text.push(c);
                continue;
            }
            Some('x') => 2,
            Some('u') => 4,
            Some('U') => 8,
            _ => return crate_repr.to_string(),
        };
        let hex: String = chars.by_ref().take(digits).collect();
        match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
            Some(c) => text.push(c),
            None => return crate_repr.to_string(),
        }
    }
    let mut out = String::new();
    quote(&text, &mut out);
    out
}

/// go.starlark.net's `String()` of a value (its `repr`).
pub(crate) fn repr<'v>(v: Value<'v>, heap: Heap<'v>, out: &mut String) {
    write(v, heap, out, &mut Vec::new());
}

/// go.starlark.net's `str()` of a value: a string as it is, others as `repr`.
pub(crate) fn str<'v>(v: Value<'v>, heap: Heap<'v>) -> String {
    match v.unpack_str() {
        Some(s) => s.to_string(),
        None => {
            let mut out = String::new();
            repr(v, heap, &mut out);
            out
        }
    }
}

/// A `def` or `lambda` (the crate names them `<module>.<name>`); `None` for
/// other values.
fn def_name(v: Value) -> Option<String> {
    if v.get_type() != "function" {
        return None;
    }
    let r = v.to_repr();
    r.rsplit_once('.').map(|(_, name)| name.to_string())
}

/// go.starlark.net's `type()` of a value.
pub(crate) fn type_name(v: Value) -> &'static str {
    match v.get_type() {
        "function" if def_name(v).is_none() => "builtin_function_or_method",
        t => t,
    }
}

/// Writes `items` separated by `, `, each through [`write`] with `v` on the path.
fn write_all<'v>(
    v: Value<'v>,
    items: impl Iterator<Item = Value<'v>>,
    heap: Heap<'v>,
    out: &mut String,
    path: &mut Vec<Value<'v>>,
) {
    path.push(v);
    for (i, x) in items.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write(x, heap, out, path);
    }
    path.pop();
}

fn write<'v>(v: Value<'v>, heap: Heap<'v>, out: &mut String, path: &mut Vec<Value<'v>>) {
    if path.len() > MAX_DEPTH {
        v.collect_repr(out);
        return;
    }
    let seen = path.iter().any(|p| p.ptr_eq(v));
    if let Some(s) = v.unpack_str() {
        quote(s, out);
    } else if let Some(f) = v.downcast_ref::<StarlarkFloat>() {
        out.push_str(&float(f.0));
    } else if let Some(list) = ListRef::from_value(v) {
        out.push('[');
        if seen {
            out.push_str("...");
        } else {
            write_all(v, list.iter(), heap, out, path);
        }
        out.push(']');
    } else if let Some(tuple) = TupleRef::from_value(v) {
        out.push('(');
        write_all(v, tuple.iter(), heap, out, path);
        if tuple.len() == 1 {
            out.push(',');
        }
        out.push(')');
    } else if let Some(dict) = DictRef::from_value(v) {
        out.push('{');
        if seen {
            out.push_str("...");
        } else {
            path.push(v);
            for (i, (k, x)) in dict.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write(k, heap, out, path);
                out.push_str(": ");
                write(x, heap, out, path);
            }
            path.pop();
        }
        out.push('}');
    } else if let Some(s) = StructRef::from_value(v) {
        let mut fields: Vec<_> = s.iter().collect();
        fields.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
        out.push_str("struct(");
        path.push(v);
        for (i, (name, x)) in fields.into_iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(name.as_str());
            out.push_str(" = ");
            write(x, heap, out, path);
        }
        path.pop();
        out.push(')');
    } else if v.get_type() == "set" {
        match v.iterate(heap) {
            Ok(items) => {
                out.push_str("set([");
                write_all(v, items, heap, out, path);
                out.push_str("])");
            }
            Err(_) => v.collect_repr(out),
        }
    } else if v.get_type() == "function" {
        match def_name(v) {
            Some(name) => out.push_str(&format!("<function {name}>")),
            None => out.push_str(&format!("<built-in function {}>", v.to_repr())),
        }
    } else {
        v.collect_repr(out);
    }
}

/// The Go builtins replacing the crate's.
#[starlark_module]
pub(crate) fn go_builtins(builder: &mut GlobalsBuilder) {
    fn print<'v>(
        #[starlark(args)] args: UnpackTuple<Value<'v>>,
        #[starlark(require = named, default = " ")] sep: &str,
        heap: Heap<'v>,
    ) -> ::starlark::Result<NoneType> {
        let text: Vec<String> = args.items.into_iter().map(|x| str(x, heap)).collect();
        crate::stderr::println(&text.join(sep));
        Ok(NoneType)
    }

    fn fail<'v>(
        #[starlark(args)] args: UnpackTuple<Value<'v>>,
        #[starlark(require = named, default = " ")] sep: &str,
        heap: Heap<'v>,
    ) -> ::starlark::Result<NoneType> {
        let text: Vec<String> = args.items.into_iter().map(|x| str(x, heap)).collect();
        Err(::starlark::Error::new_native(GoFail(format!(
            "fail: {}",
            text.join(sep)
        ))))
    }

    fn str<'v>(
        #[starlark(require = pos)] x: Value<'v>,
        heap: Heap<'v>,
    ) -> ::starlark::Result<Value<'v>> {
        if x.unpack_str().is_some() {
            return Ok(x);
        }
        Ok(heap.alloc(super::gofmt::str(x, heap)))
    }

    fn repr<'v>(
        #[starlark(require = pos)] x: Value<'v>,
        heap: Heap<'v>,
    ) -> ::starlark::Result<String> {
        let mut out = String::new();
        super::gofmt::repr(x, heap, &mut out);
        Ok(out)
    }

    fn r#type<'v>(#[starlark(require = pos)] x: Value<'v>) -> ::starlark::Result<&'static str> {
        Ok(type_name(x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_read_as_go_writes_them() {
        for (f, want) in [
            (1.0, "1.0"),
            (-0.0, "-0.0"),
            (0.5, "0.5"),
            (100000.0, "100000.0"),
            (1e6, "1e+06"),
            (1234567.0, "1.234567e+06"),
            (123456789.0, "1.23456789e+08"),
            (1e20, "1e+20"),
            (1e100, "1e+100"),
            (0.0001, "0.0001"),
            (2.5e-5, "2.5e-05"),
            (1.5e-7, "1.5e-07"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (0.1 + 0.2, "0.30000000000000004"),
            (f64::INFINITY, "+inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
        ] {
            assert_eq!(float(f), want, "{f:?}");
        }
        // yaml.v3 writes a Go float with the same digits, without the `.0`.
        for (f, want) in [(2.0, "2"), (-0.0, "-0"), (1e6, "1e+06"), (0.25, "0.25")] {
            assert_eq!(shortest_g(f), want, "{f:?}");
        }
    }

    #[test]
    fn crate_string_reprs_are_requoted() {
        assert_eq!(
            requote(r#""\xf6\u2192 \"a\"\n\x01""#),
            r#""ö→ \"a\"\n\x01""#
        );
        assert_eq!(requote("3"), "3");
        assert_eq!(requote(r#""bad \q""#), r#""bad \q""#);
    }

    #[test]
    fn strings_quote_as_go() {
        let mut out = String::new();
        quote("a \"b'c\n\t\\é\u{1}\u{7f}\u{200b}\u{a0}x", &mut out);
        assert_eq!(out, r#""a \"b'c\n\t\\é\x01\x7f\u200b\u00a0x""#);
    }
}
