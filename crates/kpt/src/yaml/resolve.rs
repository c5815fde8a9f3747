//! yaml.v3 implicit tag resolution (`resolve.go`) and the "would this string
//! be read back as something else" checks the encoder uses to quote strings.

/// Short form of a tag: `tag:yaml.org,2002:str` → `!!str`.
pub fn short_tag(tag: &str) -> &str {
    if let Some(rest) = tag.strip_prefix("tag:yaml.org,2002:") {
        return match rest {
            "str" => "!!str",
            "int" => "!!int",
            "bool" => "!!bool",
            "float" => "!!float",
            "null" => "!!null",
            "map" => "!!map",
            "seq" => "!!seq",
            "timestamp" => "!!timestamp",
            "binary" => "!!binary",
            "merge" => "!!merge",
            _ => tag,
        };
    }
    tag
}

/// The tag yaml.v3 gives a plain scalar with this text.
pub fn resolve_plain(s: &str) -> &'static str {
    match s {
        "true" | "True" | "TRUE" | "false" | "False" | "FALSE" => return "!!bool",
        "" | "~" | "null" | "Null" | "NULL" => return "!!null",
        ".nan" | ".NaN" | ".NAN" | ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF"
        | "-.inf" | "-.Inf" | "-.INF" => return "!!float",
        "<<" => return "!!merge",
        _ => {}
    }
    match s.as_bytes().first().copied().unwrap_or(b'x') {
        b'.' if go_parse_float(s).is_some() => "!!float",
        b'0'..=b'9' | b'+' | b'-' => {
            if is_timestamp(s) {
                return "!!timestamp";
            }
            let plain: String = s.chars().filter(|c| *c != '_').collect();
            if go_parse_int(&plain).is_some() {
                return "!!int";
            }
            if is_yaml_style_float(&plain) && go_parse_float(&plain).is_some() {
                return "!!float";
            }
            "!!str"
        }
        _ => "!!str",
    }
}

/// Go `strconv.ParseInt(s, 0, 64)`, else `ParseUint(s, 0, 64)`, as yaml.v3 resolves a
/// plain scalar (its `_` already removed): the value, if either reads it.
pub fn go_parse_int(s: &str) -> Option<i128> {
    use crate::gostrconv::{parse_int, parse_uint};
    parse_int(s, 0, 64)
        .map(i128::from)
        .or_else(|_| parse_uint(s, 0, 64).map(i128::from))
        .ok()
}

/// yamlStyleFloat: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`
fn is_yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let st = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - st
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// A finite float per Go `strconv.ParseFloat` restricted to decimal syntax
/// (what can reach it after the yamlStyleFloat check or a leading `.`).
pub fn go_parse_float(s: &str) -> Option<f64> {
    if !s
        .bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    let f: f64 = s.parse().ok()?;
    f.is_finite().then_some(f)
}

/// yaml.v3 `parseTimestamp`: starts with `YYYY-` and parses as one of the
/// allowed layouts.
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    // Layouts: 2006-1-2T15:4:5.999999999Z07:00, same with 't', same with a
    // space and no zone, and 2006-1-2.
    let rest = &s[5..];
    let (date, time) = match rest.find(['T', 't', ' ']) {
        Some(i) => (&rest[..i], Some((&rest[i..i + 1], &rest[i + 1..]))),
        None => (rest, None),
    };
    let mut dp = date.split('-');
    let (Some(m), Some(d), None) = (dp.next(), dp.next(), dp.next()) else {
        return false;
    };
    let num = |x: &str, max: u32| {
        !x.is_empty() && x.len() <= 2 && x.bytes().all(|c| c.is_ascii_digit()) && {
            let v: u32 = x.parse().unwrap_or(99);
            v <= max
        }
    };
    if !num(m, 12) || !num(d, 31) || m == "0" || m == "00" || d == "0" || d == "00" {
        return false;
    }
    let Some((sep, t)) = time else { return true };
    let (clock, zone) = if sep == " " {
        (t, None)
    } else if let Some(c) = t.strip_suffix(['Z']) {
        (c, Some(""))
    } else if let Some(i) = t.rfind(['+', '-']) {
        (&t[..i], Some(&t[i..]))
    } else {
        return false;
    };
    if let Some(z) = zone
        && !z.is_empty()
    {
        let zb = z.as_bytes();
        if zb.len() != 6 || zb[3] != b':' || !num(&z[1..3], 23) || !num(&z[4..6], 59) {
            return false;
        }
    }
    let (hms, frac) = match clock.split_once('.') {
        Some((a, f)) => (a, Some(f)),
        None => (clock, None),
    };
    if let Some(f) = frac
        && (f.is_empty() || f.len() > 9 || !f.bytes().all(|c| c.is_ascii_digit()))
    {
        return false;
    }
    let mut p = hms.split(':');
    matches!(
        (p.next(), p.next(), p.next(), p.next()),
        (Some(h), Some(mi), Some(se), None) if num(h, 23) && num(mi, 59) && num(se, 59)
    )
}

/// YAML 1.1 booleans yaml.v3 (and kyaml's FieldSetter) quote when encoding
/// a string.
pub fn is_old_bool(s: &str) -> bool {
    matches!(
        s,
        "y" | "Y"
            | "yes"
            | "Yes"
            | "YES"
            | "on"
            | "On"
            | "ON"
            | "n"
            | "N"
            | "no"
            | "No"
            | "NO"
            | "off"
            | "Off"
            | "OFF"
    )
}

/// `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`
pub fn is_base60_float(s: &str) -> bool {
    if !s.contains(':') {
        return false;
    }
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    if !b.get(i).is_some_and(u8::is_ascii_digit) {
        return false;
    }
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while b.get(i) == Some(&b':') {
        i += 1;
        let st = i;
        while i < b.len() && b[i].is_ascii_digit() && i - st < 2 {
            i += 1;
        }
        let g = &b[st..i];
        let ok = match g.len() {
            1 => true,
            2 => g[0] <= b'5',
            _ => false,
        };
        if !ok {
            return false;
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

/// Whether a string value, encoded without a tag, must be quoted so that it
/// reads back as a string (yaml.v3 `stringv` / kyaml `IsYaml1_1NonString`).
pub fn string_needs_quotes(s: &str) -> bool {
    resolve_plain(s) != "!!str" || is_old_bool(s) || is_base60_float(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolution_matches_yaml_v3() {
        for (s, t) in [
            ("true", "!!bool"),
            ("False", "!!bool"),
            ("yes", "!!str"),
            ("null", "!!null"),
            ("~", "!!null"),
            ("", "!!null"),
            ("3", "!!int"),
            ("-3", "!!int"),
            ("+3", "!!int"),
            ("0755", "!!int"),
            ("08", "!!float"),
            ("0x1F", "!!int"),
            ("0o17", "!!int"),
            ("0b101", "!!int"),
            ("1_000", "!!int"),
            ("18446744073709551615", "!!int"),
            ("1.5", "!!float"),
            (".5", "!!float"),
            ("1e3", "!!float"),
            ("1.", "!!float"),
            (".inf", "!!float"),
            (".foo", "!!str"),
            ("1e400", "!!str"),
            ("2001-12-14", "!!timestamp"),
            ("2001-12-14t21:59:43.10-05:00", "!!timestamp"),
            ("2001-12-14 21:59:43.10", "!!timestamp"),
            ("2001-13-14", "!!str"),
            ("1.2.3", "!!str"),
            ("-", "!!str"),
            ("v1", "!!str"),
            ("<<", "!!merge"),
        ] {
            assert_eq!(resolve_plain(s), t, "{s}");
        }
    }

    #[test]
    fn quoting_checks() {
        assert!(string_needs_quotes("yes"));
        assert!(string_needs_quotes("on"));
        assert!(string_needs_quotes("1:20"));
        assert!(string_needs_quotes("80"));
        assert!(!string_needs_quotes("1:60"));
        assert!(!string_needs_quotes("nginx"));
        assert_eq!(short_tag("tag:yaml.org,2002:str"), "!!str");
        assert_eq!(short_tag("!foo"), "!foo");
    }
}
