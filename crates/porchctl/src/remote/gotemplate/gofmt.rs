//! Go's `fmt` for template values: `Sprint`, `Sprintln`, `Sprintf` (flags, width, precision
//! and the verbs `v s d q t f e g x X o b c U T`, with Go's `%!verb(type=value)` for a verb
//! that does not fit), and `strconv`'s quoting.

use super::value::{Conc, IntTy, Val};
use kpt::gofloat::format_float;

/// A parsed `%` directive.
#[derive(Default, Clone, Copy)]
struct Spec {
    minus: bool,
    plus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    width: Option<usize>,
    prec: Option<usize>,
}

/// `fmt.Sprint`: spaces between operands when neither side is a string.
pub(super) fn sprint(args: &[Val]) -> String {
    let mut out = String::new();
    let mut prev_string = false;
    for (i, arg) in args.iter().enumerate() {
        let is_string = matches!(arg.conc(), Conc::Str(_));
        if i > 0 && !is_string && !prev_string {
            out.push(' ');
        }
        print_arg(&mut out, arg, 'v', Spec::default());
        prev_string = is_string;
    }
    out
}

/// `fmt.Sprintln`: spaces between all operands, a newline at the end.
pub(super) fn sprintln(args: &[Val]) -> String {
    let parts: Vec<String> = args
        .iter()
        .map(|a| sprint(std::slice::from_ref(a)))
        .collect();
    format!("{}\n", parts.join(" "))
}

/// `fmt.Sprintf`.
pub(super) fn sprintf(format: &str, args: &[Val]) -> String {
    let mut out = String::new();
    let mut arg_num = 0;
    let mut reordered = false;
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = Spec::default();
        while let Some(&f) = chars.peek() {
            match f {
                '-' => spec.minus = true,
                '+' => spec.plus = true,
                '#' => spec.sharp = true,
                ' ' => spec.space = true,
                '0' => spec.zero = true,
                _ => break,
            }
            chars.next();
        }
        let mut good_index = arg_index(&mut chars, args.len(), &mut arg_num, &mut reordered);
        spec.width = number(&mut chars, args, &mut arg_num);
        if chars.peek() == Some(&'.') {
            chars.next();
            good_index &= arg_index(&mut chars, args.len(), &mut arg_num, &mut reordered);
            spec.prec = Some(number(&mut chars, args, &mut arg_num).unwrap_or(0));
        }
        good_index &= arg_index(&mut chars, args.len(), &mut arg_num, &mut reordered);
        let Some(verb) = chars.next() else {
            out.push_str("%!(NOVERB)");
            break;
        };
        if verb == '%' {
            out.push('%');
            continue;
        }
        if !good_index {
            out.push_str(&format!("%!{verb}(BADINDEX)"));
            continue;
        }
        let Some(arg) = args.get(arg_num) else {
            out.push_str(&format!("%!{verb}(MISSING)"));
            continue;
        };
        arg_num += 1;
        if verb == 'v' {
            // `%+v` and `%#v` only change structs and Go syntax; plain values print alike.
            spec.plus = false;
        }
        print_arg(&mut out, arg, verb, spec);
    }
    if !reordered && arg_num < args.len() {
        let extra: Vec<String> = args[arg_num..]
            .iter()
            .map(|a| match a.conc() {
                Conc::Invalid => "<nil>".to_string(),
                c => format!("{}={}", c.type_name(), sprint(std::slice::from_ref(a))),
            })
            .collect();
        out.push_str(&format!("%!(EXTRA {})", extra.join(", ")));
    }
    out
}

/// An explicit argument index `[n]`: moves to argument n; false when it is out of range.
fn arg_index(
    chars: &mut std::iter::Peekable<std::str::Chars>,
    count: usize,
    arg_num: &mut usize,
    reordered: &mut bool,
) -> bool {
    if chars.peek() != Some(&'[') {
        return true;
    }
    chars.next();
    *reordered = true;
    let mut digits = String::new();
    for c in chars.by_ref() {
        if c == ']' {
            return match digits.parse::<usize>() {
                Ok(n) if (1..=count).contains(&n) => {
                    *arg_num = n - 1;
                    true
                }
                _ => false,
            };
        }
        digits.push(c);
    }
    false
}

/// A width or precision: digits, or `*` taking an int argument.
fn number(
    chars: &mut std::iter::Peekable<std::str::Chars>,
    args: &[Val],
    arg_num: &mut usize,
) -> Option<usize> {
    if chars.peek() == Some(&'*') {
        chars.next();
        let n = match args.get(*arg_num).map(Val::conc) {
            Some(Conc::Int(i, _)) => usize::try_from(i).ok(),
            _ => None,
        };
        *arg_num += 1;
        return n;
    }
    let mut n: Option<usize> = None;
    while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
        n = Some(n.unwrap_or(0).saturating_mul(10).saturating_add(d as usize));
        chars.next();
    }
    n
}

fn print_arg(out: &mut String, arg: &Val, verb: char, spec: Spec) {
    let c = arg.conc();
    match (verb, c) {
        ('T', Conc::Invalid) => pad(out, "<nil>", spec),
        ('T', c) => pad(out, truncate(c.type_name(), spec.prec), spec),
        _ => print_conc(out, c, verb, spec),
    }
}

fn print_conc(out: &mut String, c: Conc, verb: char, spec: Spec) {
    match c {
        Conc::Invalid => match verb {
            'v' => pad(out, "<nil>", spec),
            _ => out.push_str(&format!("%!{verb}(<nil>)")),
        },
        Conc::Bool(b) => match verb {
            't' | 'v' => pad(out, if b { "true" } else { "false" }, spec),
            _ => bad_verb(out, c, verb, spec),
        },
        Conc::Str(s) => match verb {
            'v' | 's' => pad(out, truncate(s, spec.prec), spec),
            'q' => pad(out, &quote(truncate(s, spec.prec), spec.plus), spec),
            'x' | 'X' => {
                let bytes = s.as_bytes();
                let bytes = &bytes[..spec.prec.map_or(bytes.len(), |p| p.min(bytes.len()))];
                let hex: Vec<String> = bytes
                    .iter()
                    .map(|b| {
                        if verb == 'x' {
                            format!("{b:02x}")
                        } else {
                            format!("{b:02X}")
                        }
                    })
                    .collect();
                pad(out, &hex.join(if spec.space { " " } else { "" }), spec);
            }
            _ => bad_verb(out, c, verb, spec),
        },
        Conc::Int(i, ty) => fmt_integer(out, i, ty, verb, spec),
        Conc::Float(f) => match verb {
            'v' => fmt_float(out, f, 'g', spec.prec, spec),
            'g' | 'G' | 'e' | 'E' => fmt_float(out, f, verb, spec.prec, spec),
            'f' | 'F' => fmt_float(out, f, 'f', Some(spec.prec.unwrap_or(6)), spec),
            'b' => fmt_float(out, f, verb, None, spec),
            'x' | 'X' => fmt_float(out, f, verb, spec.prec, spec),
            _ => bad_verb(out, c, verb, spec),
        },
        Conc::Map(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push_str("map[");
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                print_conc(out, Conc::Str(k), verb, spec);
                out.push(':');
                print_element(out, &m[k], verb, spec);
            }
            out.push(']');
        }
        Conc::Slice(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                print_element(out, item, verb, spec);
            }
            out.push(']');
        }
    }
}

/// An element of a map or slice; a nil one prints `<nil>` whatever the verb.
fn print_element(out: &mut String, v: &serde_json::Value, verb: char, spec: Spec) {
    match Val::elem(v).conc() {
        Conc::Invalid => out.push_str("<nil>"),
        c => print_conc(out, c, verb, spec),
    }
}

/// `%!verb(type=value)`, the value printed with `%v` and the directive's flags.
fn bad_verb(out: &mut String, c: Conc, verb: char, spec: Spec) {
    out.push_str(&format!("%!{verb}({}=", c.type_name()));
    print_conc(out, c, 'v', spec);
    out.push(')');
}

fn truncate(s: &str, prec: Option<usize>) -> &str {
    match prec.and_then(|p| s.char_indices().nth(p)) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Pads to the width in runes: spaces on the left, on the right with `-`, zeros with `0`.
fn pad(out: &mut String, s: &str, spec: Spec) {
    let n = s.chars().count();
    let fill = spec.width.map_or(0, |w| w.saturating_sub(n));
    if spec.minus {
        out.push_str(s);
        out.extend(std::iter::repeat_n(' ', fill));
    } else {
        let c = if spec.zero { '0' } else { ' ' };
        out.extend(std::iter::repeat_n(c, fill));
        out.push_str(s);
    }
}

/// Pads a number: zeros go between the sign and the digits.
fn pad_number(out: &mut String, sign: &str, digits: &str, spec: Spec) {
    if spec.zero && !spec.minus && spec.width.is_some() {
        let n = sign.chars().count() + digits.chars().count();
        let fill = spec.width.map_or(0, |w| w.saturating_sub(n));
        out.push_str(sign);
        out.extend(std::iter::repeat_n('0', fill));
        out.push_str(digits);
    } else {
        pad(
            out,
            &format!("{sign}{digits}"),
            Spec {
                zero: false,
                ..spec
            },
        );
    }
}

fn sign(negative: bool, spec: Spec) -> &'static str {
    if negative {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    }
}

fn fmt_integer(out: &mut String, i: i64, ty: IntTy, verb: char, spec: Spec) {
    let abs = i.unsigned_abs();
    let mut digits = match verb {
        'v' | 'd' => abs.to_string(),
        'b' => format!("{abs:b}"),
        'o' | 'O' => format!("{abs:o}"),
        'x' => format!("{abs:x}"),
        'X' => format!("{abs:X}"),
        'c' => {
            let c = u32::try_from(i)
                .ok()
                .and_then(char::from_u32)
                .unwrap_or('\u{FFFD}');
            return pad(out, &c.to_string(), spec);
        }
        'q' => {
            let c = u32::try_from(i)
                .ok()
                .and_then(char::from_u32)
                .unwrap_or('\u{FFFD}');
            return pad(out, &quote_rune(c, spec.plus), spec);
        }
        'U' => {
            let digits = spec.prec.unwrap_or(4).max(4);
            let spec = Spec {
                zero: false,
                ..spec
            };
            return pad(out, &format!("U+{:0digits$X}", i as u64), spec);
        }
        _ => return bad_verb(out, Conc::Int(i, ty), verb, spec),
    };
    if let Some(p) = spec.prec {
        if p == 0 && i == 0 {
            // Nothing but the padding, not even a sign.
            return pad(
                out,
                "",
                Spec {
                    zero: false,
                    ..spec
                },
            );
        } else if digits.len() < p {
            digits = format!("{}{digits}", "0".repeat(p - digits.len()));
        }
    }
    let prefix = match (spec.sharp, verb) {
        (true, 'x') => "0x",
        (true, 'X') => "0X",
        (true, 'o') => "0",
        (true, 'b') => "0b",
        (_, 'O') => "0o",
        _ => "",
    };
    let spec = if spec.prec.is_some() {
        Spec {
            zero: false,
            ..spec
        }
    } else {
        spec
    };
    let sign = format!("{}{prefix}", sign(i < 0, spec));
    pad_number(out, &sign, &digits, spec);
}

fn fmt_float(out: &mut String, f: f64, verb: char, prec: Option<usize>, spec: Spec) {
    if f.is_nan() {
        let s = if spec.plus { "+NaN" } else { "NaN" };
        return pad(
            out,
            s,
            Spec {
                zero: false,
                ..spec
            },
        );
    }
    let negative = f.is_sign_negative();
    if f.is_infinite() {
        let s = format!(
            "{}Inf",
            if negative {
                "-"
            } else {
                sign(false, spec).trim()
            }
        );
        let s = if s == "Inf" { "+Inf".to_string() } else { s };
        return pad(
            out,
            &s,
            Spec {
                zero: false,
                ..spec
            },
        );
    }
    let digits = format_float(f.abs(), verb, prec);
    pad_number(out, sign(negative, spec), &digits, spec);
}

/// `strconv.Quote` (`QuoteToASCII` with `ascii_only`).
pub(super) fn quote(s: &str, ascii_only: bool) -> String {
    kpt::goquote::go_quote_with(s, ascii_only)
}

/// `strconv.QuoteRune` (`QuoteRuneToASCII` with `ascii_only`).
fn quote_rune(c: char, ascii_only: bool) -> String {
    let mut out = String::from("'");
    kpt::goquote::push_escaped(&mut out, c, '\'', ascii_only);
    out.push('\'');
    out
}
