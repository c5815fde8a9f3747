//! Go's `time.ParseDuration`, with its error texts: what pflag's duration flags accept.

/// Nanoseconds per unit, as Go's `unitMap`.
fn unit_nanos(unit: &str) -> Option<u128> {
    Some(match unit {
        "ns" => 1,
        "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return None,
    })
}

/// The time package's own `quote`: bytes of non-ASCII or control characters as `\xNN`
/// (not strconv's `%q`), `"` and `\\` escaped.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if !c.is_ascii() || c < ' ' {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        } else {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out.push('"');
    out
}

/// `time.ParseDuration(s)` as signed nanoseconds, or Go's error text.
pub fn parse(orig: &str) -> Result<i64, String> {
    let quoted = quote(orig);
    let invalid = || format!("time: invalid duration {quoted}");
    let (neg, mut s) = match orig.as_bytes().first() {
        Some(b'-') => (true, &orig[1..]),
        Some(b'+') => (false, &orig[1..]),
        _ => (false, orig),
    };
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut total: u128 = 0;
    while !s.is_empty() {
        // The next character must be [0-9.].
        if !s.starts_with(|c: char| c == '.' || c.is_ascii_digit()) {
            return Err(invalid());
        }
        let int_end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let int_part = &s[..int_end];
        s = &s[int_end..];
        let mut frac_part = "";
        if let Some(rest) = s.strip_prefix('.') {
            let frac_end = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            frac_part = &rest[..frac_end];
            s = &rest[frac_end..];
        }
        if int_part.is_empty() && frac_part.is_empty() {
            // No digits: "." or ".s".
            return Err(invalid());
        }
        let unit_end = s
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(s.len());
        let unit = &s[..unit_end];
        s = &s[unit_end..];
        if unit.is_empty() {
            return Err(format!("time: missing unit in duration {quoted}"));
        }
        let Some(per) = unit_nanos(unit) else {
            return Err(format!(
                "time: unknown unit {} in duration {quoted}",
                quote(unit)
            ));
        };
        let whole: u128 = if int_part.is_empty() {
            0
        } else {
            int_part.parse().map_err(|_| invalid())?
        };
        let mut nanos = whole.checked_mul(per).ok_or_else(invalid)?;
        // The fraction, scaled the way Go does it: digits beyond what the unit can
        // hold are dropped.
        let mut scale = per;
        for d in frac_part.bytes() {
            scale /= 10;
            if scale == 0 {
                break;
            }
            nanos += u128::from(d - b'0') * scale;
        }
        total = total.checked_add(nanos).ok_or_else(invalid)?;
        if total > i64::MAX as u128 + u128::from(neg) {
            return Err(invalid());
        }
    }
    let signed = i128::try_from(total).map_err(|_| invalid())?;
    let signed = if neg { -signed } else { signed };
    i64::try_from(signed).map_err(|_| invalid())
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn accepted_spellings() {
        assert_eq!(parse("0"), Ok(0));
        assert_eq!(parse("-0"), Ok(0));
        assert_eq!(parse("5s"), Ok(5_000_000_000));
        assert_eq!(parse("+5s"), Ok(5_000_000_000));
        assert_eq!(parse("-1m"), Ok(-60_000_000_000));
        assert_eq!(parse("1h30m"), Ok(5_400_000_000_000));
        assert_eq!(parse("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse(".5ms"), Ok(500_000));
        assert_eq!(parse("2.s"), Ok(2_000_000_000));
        assert_eq!(parse("3\u{b5}s"), Ok(3_000));
        assert_eq!(parse("3\u{3bc}s"), Ok(3_000));
        assert_eq!(parse("10ns"), Ok(10));
    }

    #[test]
    fn gos_error_texts() {
        assert_eq!(parse(""), Err("time: invalid duration \"\"".into()));
        // The time package quotes bytes, not characters.
        assert_eq!(
            parse("\u{e9}"),
            Err("time: invalid duration \"\\xc3\\xa9\"".into())
        );
        assert_eq!(parse("x"), Err("time: invalid duration \"x\"".into()));
        assert_eq!(parse("."), Err("time: invalid duration \".\"".into()));
        assert_eq!(parse("-"), Err("time: invalid duration \"-\"".into()));
        assert_eq!(
            parse("1"),
            Err("time: missing unit in duration \"1\"".into())
        );
        assert_eq!(
            parse("1s2"),
            Err("time: missing unit in duration \"1s2\"".into())
        );
        assert_eq!(
            parse("3d"),
            Err("time: unknown unit \"d\" in duration \"3d\"".into())
        );
        assert_eq!(
            parse("9999999999h"),
            Err("time: invalid duration \"9999999999h\"".into())
        );
    }
}
