//! The functions a kubectl go-template can call: Go's builtins (`and or not len index slice
//! print printf println eq ne lt le gt ge html js urlquery call`) and the two kubectl adds
//! (`exists`, `base64decode`), with Go's argument types and error texts.

use std::cmp::Ordering;

use super::gofmt;
use super::value::{Conc, IntTy, Val};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Func {
    And,
    Or,
    Not,
    Len,
    Index,
    Slice,
    Print,
    Printf,
    Println,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Html,
    Js,
    Urlquery,
    Call,
    Exists,
    Base64decode,
}

/// A parameter's Go type: how an argument is evaluated and checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ty {
    /// `reflect.Value`: anything, a missing value included.
    Value,
    /// `interface{}`: anything; a missing value becomes nil.
    Any,
    Str,
    /// No type (the receiver of a chained field).
    Untyped,
}

impl Func {
    pub fn lookup(name: &str) -> Option<Func> {
        Some(match name {
            "and" => Func::And,
            "or" => Func::Or,
            "not" => Func::Not,
            "len" => Func::Len,
            "index" => Func::Index,
            "slice" => Func::Slice,
            "print" => Func::Print,
            "printf" => Func::Printf,
            "println" => Func::Println,
            "eq" => Func::Eq,
            "ne" => Func::Ne,
            "lt" => Func::Lt,
            "le" => Func::Le,
            "gt" => Func::Gt,
            "ge" => Func::Ge,
            "html" => Func::Html,
            "js" => Func::Js,
            "urlquery" => Func::Urlquery,
            "call" => Func::Call,
            "exists" => Func::Exists,
            "base64decode" => Func::Base64decode,
            _ => return None,
        })
    }

    /// The fixed parameters and the variadic one's element type.
    pub fn signature(self) -> (&'static [Ty], Option<Ty>) {
        use Ty::{Any, Str, Value};
        match self {
            Func::And | Func::Or | Func::Index | Func::Slice | Func::Call | Func::Eq => {
                (&[Value], Some(Value))
            }
            Func::Not | Func::Len => (&[Value], None),
            Func::Ne | Func::Lt | Func::Le | Func::Gt | Func::Ge => (&[Value, Value], None),
            Func::Print | Func::Println | Func::Html | Func::Js | Func::Urlquery => {
                (&[], Some(Any))
            }
            Func::Printf => (&[Str], Some(Any)),
            Func::Exists => (&[Any], Some(Any)),
            Func::Base64decode => (&[Str], None),
        }
    }

    /// Calls the function; `first` is how the first argument was written (for `call`).
    pub fn call<'a>(self, args: Vec<Val<'a>>, first: &str) -> Result<Val<'a>, String> {
        let str_arg = |i: usize| match args.get(i).map(Val::conc) {
            Some(Conc::Str(s)) => s.to_string(),
            _ => String::new(),
        };
        Ok(match self {
            // The engine evaluates and/or lazily; called eagerly they give the last argument.
            Func::And | Func::Or => args.last().cloned().unwrap_or(Val::Invalid),
            Func::Not => Val::Bool(!args.first().is_some_and(Val::truth)),
            Func::Len => len(args.first().unwrap_or(&Val::Invalid))?,
            Func::Index => index(args)?,
            Func::Slice => slice(args)?,
            Func::Print => Val::Str(gofmt::sprint(&args)),
            Func::Printf => Val::Str(gofmt::sprintf(&str_arg(0), &args[1.min(args.len())..])),
            Func::Println => Val::Str(gofmt::sprintln(&args)),
            Func::Eq => Val::Bool(eq(&args)?),
            Func::Ne => Val::Bool(!eq(&args)?),
            Func::Lt => Val::Bool(lt(&args[0], &args[1])?),
            Func::Le => Val::Bool(lt(&args[0], &args[1])? || eq(&args)?),
            Func::Gt => Val::Bool(!(lt(&args[0], &args[1])? || eq(&args)?)),
            Func::Ge => Val::Bool(!lt(&args[0], &args[1])?),
            Func::Html => Val::Str(html(&eval_args(&args))),
            Func::Js => Val::Str(js(&eval_args(&args))),
            Func::Urlquery => Val::Str(urlquery(&eval_args(&args))),
            Func::Call => {
                return Err(match args.first().map(Val::conc) {
                    None | Some(Conc::Invalid) => "call of nil".into(),
                    Some(c) => format!("non-function {first} of type {}", c.type_name()),
                });
            }
            Func::Exists => Val::Bool(exists(&args)),
            Func::Base64decode => Val::Str(base64decode(&str_arg(0))?),
        })
    }
}

fn len(v: &Val) -> Result<Val<'static>, String> {
    if matches!(v, Val::Nil) {
        return Err("len of nil pointer".into());
    }
    match v.conc() {
        Conc::Invalid => Err("reflect: call of reflect.Value.Type on zero Value".into()),
        Conc::Map(m) => Ok(Val::Int(m.len() as i64)),
        Conc::Slice(s) => Ok(Val::Int(s.len() as i64)),
        Conc::Str(s) => Ok(Val::Int(s.len() as i64)),
        c => Err(format!("len of type {}", c.type_name())),
    }
}

/// An index into something `len` long (Go's `indexArg`: `len` itself passes).
fn index_arg(index: &Val, len: usize) -> Result<usize, String> {
    let x = match index.conc() {
        Conc::Int(i, _) => i,
        Conc::Invalid => return Err("cannot index slice/array with nil".into()),
        c => {
            return Err(format!(
                "cannot index slice/array with type {}",
                c.type_name()
            ));
        }
    };
    match usize::try_from(x) {
        Ok(i) if i <= len => Ok(i),
        _ => Err(format!("index out of range: {x}")),
    }
}

fn index<'a>(args: Vec<Val<'a>>) -> Result<Val<'a>, String> {
    let mut args = args.into_iter();
    let mut item = args.next().unwrap_or(Val::Invalid).unboxed();
    if matches!(item, Val::Invalid) {
        return Err("index of untyped nil".into());
    }
    for i in args {
        if matches!(item, Val::Nil) {
            return Err("index of nil pointer".into());
        }
        item = if let Some(items) = item.array() {
            let x = index_arg(&i, items.len())?;
            Val::elem(items.get(x).ok_or("reflect: slice index out of range")?)
        } else if let Some(m) = item.object() {
            match i.conc() {
                Conc::Str(k) => m.get(k).map_or(Val::Nil, Val::elem),
                Conc::Invalid => return Err("value is nil; should be of type string".into()),
                c => {
                    return Err(format!(
                        "value has type {}; should be string",
                        c.type_name()
                    ));
                }
            }
        } else if let Conc::Str(s) = item.conc() {
            let x = index_arg(&i, s.len())?;
            Val::Byte(
                *s.as_bytes()
                    .get(x)
                    .ok_or("reflect: string index out of range")?,
            )
        } else {
            return Err(format!(
                "can't index item of type {}",
                item.conc().type_name()
            ));
        };
    }
    Ok(item)
}

fn slice<'a>(args: Vec<Val<'a>>) -> Result<Val<'a>, String> {
    let item = args.first().cloned().unwrap_or(Val::Invalid).unboxed();
    if matches!(item, Val::Invalid) {
        return Err("slice of untyped nil".into());
    }
    let indexes = &args[1..];
    if indexes.len() > 3 {
        return Err(format!("too many slice indexes: {}", indexes.len()));
    }
    let len = match (item.array(), item.conc()) {
        (Some(items), _) => items.len(),
        (None, Conc::Str(s)) => {
            if indexes.len() == 3 {
                return Err("cannot 3-index slice a string".into());
            }
            s.len()
        }
        (None, c) => return Err(format!("can't slice item of type {}", c.type_name())),
    };
    let mut idx = [0, len, len];
    for (i, v) in indexes.iter().enumerate() {
        idx[i] = index_arg(v, len)?;
    }
    if idx[0] > idx[1] {
        return Err(format!("invalid slice index: {} > {}", idx[0], idx[1]));
    }
    if indexes.len() == 3 && idx[1] > idx[2] {
        return Err(format!("invalid slice index: {} > {}", idx[1], idx[2]));
    }
    Ok(match (item.array(), item.conc()) {
        (Some(items), _) => Val::Slice(&items[idx[0]..idx[1]]),
        (None, Conc::Str(s)) => {
            Val::Str(String::from_utf8_lossy(&s.as_bytes()[idx[0]..idx[1]]).into_owned())
        }
        _ => Val::Invalid,
    })
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Basic {
    Invalid,
    Bool,
    Int,
    Uint,
    Float,
    Str,
}

fn basic(c: Conc) -> Basic {
    match c {
        Conc::Bool(_) => Basic::Bool,
        Conc::Int(_, IntTy::Uint8) => Basic::Uint,
        Conc::Int(..) => Basic::Int,
        Conc::Float(_) => Basic::Float,
        Conc::Str(_) => Basic::Str,
        _ => Basic::Invalid,
    }
}

/// Compares two basic values of one kind.
fn compare(a: Conc, b: Conc) -> Option<Ordering> {
    match (a, b) {
        (Conc::Bool(x), Conc::Bool(y)) => Some(x.cmp(&y)),
        (Conc::Int(x, _), Conc::Int(y, _)) => Some(x.cmp(&y)),
        (Conc::Float(x), Conc::Float(y)) => x.partial_cmp(&y),
        (Conc::Str(x), Conc::Str(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// `eq arg1 arg2...`: whether arg1 equals any of the others.
fn eq(args: &[Val]) -> Result<bool, String> {
    let a = args[0].conc();
    if args.len() < 2 {
        return Err("missing argument for comparison".into());
    }
    let ka = basic(a);
    for arg in &args[1..] {
        let b = arg.conc();
        let kb = basic(b);
        let truth = if ka != kb {
            match (ka, kb) {
                (Basic::Int | Basic::Uint, Basic::Int | Basic::Uint) => {
                    compare(a, b) == Some(Ordering::Equal)
                }
                _ if matches!(a, Conc::Invalid) || matches!(b, Conc::Invalid) => false,
                _ => return Err("incompatible types for comparison".into()),
            }
        } else if ka == Basic::Invalid {
            match (a, b) {
                (Conc::Invalid, Conc::Invalid) => true,
                (Conc::Invalid, _) | (_, Conc::Invalid) => false,
                (Conc::Map(_), Conc::Map(_)) | (Conc::Slice(_), Conc::Slice(_)) => {
                    return Err(format!(
                        "non-comparable type {}: {}",
                        gofmt::sprintf("%s", std::slice::from_ref(arg)),
                        b.type_name()
                    ));
                }
                _ => {
                    return Err(format!(
                        "non-comparable types {}: {}, {}: {}",
                        gofmt::sprintf("%s", &args[..1]),
                        a.type_name(),
                        b.type_name(),
                        gofmt::sprint(std::slice::from_ref(arg))
                    ));
                }
            }
        } else {
            compare(a, b) == Some(Ordering::Equal)
        };
        if truth {
            return Ok(true);
        }
    }
    Ok(false)
}

fn lt(a: &Val, b: &Val) -> Result<bool, String> {
    let (a, b) = (a.conc(), b.conc());
    let (ka, kb) = (basic(a), basic(b));
    if ka == Basic::Invalid || kb == Basic::Invalid {
        return Err("invalid type for comparison".into());
    }
    let int_like = |k| matches!(k, Basic::Int | Basic::Uint);
    if ka != kb && !(int_like(ka) && int_like(kb)) {
        return Err("incompatible types for comparison".into());
    }
    if ka == Basic::Bool {
        return Err("invalid type for comparison".into());
    }
    Ok(compare(a, b) == Some(Ordering::Less))
}

/// The text `html`, `js` and `urlquery` work on: a lone string, else `fmt.Sprint`.
fn eval_args(args: &[Val]) -> String {
    if let [v] = args
        && let Conc::Str(s) = v.conc()
    {
        return s.to_string();
    }
    let printable: Vec<Val> = args
        .iter()
        .map(|a| match a {
            Val::Nil | Val::Invalid => Val::Str("<no value>".into()),
            other => other.clone(),
        })
        .collect();
    gofmt::sprint(&printable)
}

fn html(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\0' => out.push('\u{FFFD}'),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

fn js(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u00{:02X}", c as u32)),
            c if !c.is_ascii() && c.is_control() => {
                out.push_str(&format!("\\u{:04X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// `url.QueryEscape`.
fn urlquery(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char);
            }
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// kubectl's `exists item key...`: whether `index` would find a non-nil value.
fn exists(args: &[Val]) -> bool {
    let mut item = args[0].clone().unboxed();
    for i in &args[1..] {
        if matches!(item, Val::Nil) {
            return false;
        }
        item = if let Some(items) = item.array() {
            match i.conc() {
                Conc::Int(x, _) if usize::try_from(x).is_ok_and(|x| x < items.len()) => {
                    Val::elem(&items[x as usize])
                }
                _ => return false,
            }
        } else if let Some(m) = item.object() {
            match i.conc() {
                Conc::Str(k) => m.get(k).map_or(Val::Nil, Val::elem),
                _ => return false,
            }
        } else if let Conc::Str(s) = item.conc() {
            match i.conc() {
                Conc::Int(x, _) if usize::try_from(x).is_ok_and(|x| x < s.len()) => {
                    Val::Byte(s.as_bytes()[x as usize])
                }
                _ => return false,
            }
        } else {
            return false;
        };
    }
    !matches!(item, Val::Nil)
}

/// kubectl's `base64decode`: standard encoding with padding, line breaks ignored, Go's
/// error offsets.
fn base64decode(s: &str) -> Result<String, String> {
    let bad = |at: usize| format!("base64 decode failed: illegal base64 data at input byte {at}");
    let value = |b: u8| -> Option<u32> {
        Some(match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let src = s.as_bytes();
    let skip_newlines = |mut i: usize| {
        while i < src.len() && (src[i] == b'\n' || src[i] == b'\r') {
            i += 1;
        }
        i
    };
    let mut out = Vec::new();
    let mut si = 0;
    'quanta: loop {
        let mut buf = [0u32; 4];
        let mut j = 0;
        let mut n = 4;
        while j < 4 {
            if si == src.len() {
                match j {
                    0 => break 'quanta,
                    _ => return Err(bad(si - j)),
                }
            }
            let c = src[si];
            si += 1;
            if let Some(v) = value(c) {
                buf[j] = v;
                j += 1;
                continue;
            }
            if c == b'\n' || c == b'\r' {
                continue;
            }
            if c != b'=' || j < 2 {
                return Err(bad(si - 1));
            }
            if j == 2 {
                si = skip_newlines(si);
                if si == src.len() {
                    return Err(bad(src.len()));
                }
                if src[si] != b'=' {
                    return Err(bad(si - 1));
                }
                si += 1;
            }
            si = skip_newlines(si);
            if si < src.len() {
                return Err(bad(si));
            }
            n = j;
            break;
        }
        let v = buf[0] << 18 | buf[1] << 12 | buf[2] << 6 | buf[3];
        let bytes = [(v >> 16) as u8, (v >> 8) as u8, v as u8];
        out.extend_from_slice(&bytes[..n - 1]);
        if n < 4 {
            break;
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}
