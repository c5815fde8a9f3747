//! Go's `strconv.ParseUint` and `strconv.ParseInt`, branch by branch, with their errors:
//! what yaml.v3 makes of a plain scalar and pflag (porchctl) of an integer flag value
//! (`0x`, `0o`, `0b` and
//! leading-`0` octal prefixes and `_` separators in base 0 only; an overflow reported as
//! soon as the digits read so far overflow, even before a bad digit).

use std::fmt;

/// Why a number did not parse (Go's `ErrSyntax` / `ErrRange`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumErrorKind {
    Syntax,
    Range,
}

/// Go's `*strconv.NumError`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumError {
    pub func: &'static str,
    pub num: String,
    pub kind: NumErrorKind,
}

impl fmt::Display for NumError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = match self.kind {
            NumErrorKind::Syntax => "invalid syntax",
            NumErrorKind::Range => "value out of range",
        };
        write!(
            f,
            "strconv.{}: parsing {}: {why}",
            self.func,
            crate::goquote::go_quote(&self.num)
        )
    }
}

fn error(func: &'static str, num: &str, kind: NumErrorKind) -> NumError {
    NumError {
        func,
        num: num.to_string(),
        kind,
    }
}

fn lower(c: u8) -> u8 {
    c | 0x20
}

/// `strconv.ParseUint(s, base, bits)` for base 0 or 2..=36 and bits 1..=64 (0 is 64).
pub fn parse_uint(s0: &str, base: u32, bits: u32) -> Result<u64, NumError> {
    const FN: &str = "ParseUint";
    let syntax = || error(FN, s0, NumErrorKind::Syntax);
    if s0.is_empty() {
        return Err(syntax());
    }
    let base0 = base == 0;
    let b = s0.as_bytes();
    let (base, digits): (u64, &[u8]) = if base0 {
        if b[0] == b'0' {
            match b.get(1).map(|&c| lower(c)) {
                Some(b'b') if b.len() >= 3 => (2, &b[2..]),
                Some(b'o') if b.len() >= 3 => (8, &b[2..]),
                Some(b'x') if b.len() >= 3 => (16, &b[2..]),
                _ => (8, &b[1..]),
            }
        } else {
            (10, b)
        }
    } else {
        (u64::from(base), b)
    };
    let bits = if bits == 0 { 64 } else { bits.min(64) };
    // The smallest number such that cutoff * base overflows a u64.
    let cutoff = u64::MAX / base + 1;
    let max = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let mut n: u64 = 0;
    let mut underscores = false;
    for &c in digits {
        let d = match c {
            b'_' if base0 => {
                underscores = true;
                continue;
            }
            b'0'..=b'9' => c - b'0',
            _ if lower(c).is_ascii_lowercase() => lower(c) - b'a' + 10,
            _ => return Err(syntax()),
        };
        if u64::from(d) >= base {
            return Err(syntax());
        }
        if n >= cutoff {
            return Err(error(FN, s0, NumErrorKind::Range));
        }
        n *= base;
        match n.checked_add(u64::from(d)) {
            Some(n1) if n1 <= max => n = n1,
            _ => return Err(error(FN, s0, NumErrorKind::Range)),
        }
    }
    if underscores && !underscore_ok(s0) {
        return Err(syntax());
    }
    Ok(n)
}

/// `strconv.ParseInt(s, base, bits)`.
pub fn parse_int(s0: &str, base: u32, bits: u32) -> Result<i64, NumError> {
    const FN: &str = "ParseInt";
    if s0.is_empty() {
        return Err(error(FN, s0, NumErrorKind::Syntax));
    }
    let (neg, s) = match s0.as_bytes()[0] {
        b'+' => (false, &s0[1..]),
        b'-' => (true, &s0[1..]),
        _ => (false, s0),
    };
    // ParseUint's range error is not final: the value it stops at is checked below.
    let un = match parse_uint(s, base, bits) {
        Ok(n) => n,
        Err(e) if e.kind == NumErrorKind::Range => u64::MAX,
        Err(_) => return Err(error(FN, s0, NumErrorKind::Syntax)),
    };
    let bits = if bits == 0 { 64 } else { bits.min(64) };
    let cutoff = 1u64 << (bits - 1);
    if (!neg && un >= cutoff) || (neg && un > cutoff) {
        return Err(error(FN, s0, NumErrorKind::Range));
    }
    // `un` fits: below 2^63, or exactly 2^63 when negative.
    let n = un as i64;
    Ok(if neg { n.wrapping_neg() } else { n })
}

/// Go's `underscoreOK`: underscores only between digits, or between a base prefix and a
/// digit.
fn underscore_ok(s: &str) -> bool {
    let mut s = s.as_bytes();
    if let Some(b'-' | b'+') = s.first() {
        s = &s[1..];
    }
    // What came last: '^' the start, '0' a digit or base prefix, '_', '!' anything else.
    let mut saw = b'^';
    let mut i = 0;
    let mut hex = false;
    if s.len() >= 2 && s[0] == b'0' && matches!(lower(s[1]), b'b' | b'o' | b'x') {
        i = 2;
        saw = b'0';
        hex = lower(s[1]) == b'x';
    }
    while i < s.len() {
        let c = s[i];
        i += 1;
        if c.is_ascii_digit() || (hex && (b'a'..=b'f').contains(&lower(c))) {
            saw = b'0';
            continue;
        }
        if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
            continue;
        }
        if saw == b'_' {
            return false;
        }
        saw = b'!';
    }
    saw != b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(s: &str, base: u32, bits: u32) -> Result<i64, String> {
        parse_int(s, base, bits).map_err(|e| e.to_string())
    }

    #[test]
    fn base_zero_prefixes_and_separators() {
        assert_eq!(int("42", 0, 64), Ok(42));
        assert_eq!(int("-1", 0, 64), Ok(-1));
        assert_eq!(int("+7", 0, 64), Ok(7));
        assert_eq!(int("0x1F", 0, 64), Ok(31));
        assert_eq!(int("010", 0, 64), Ok(8));
        assert_eq!(int("0", 0, 64), Ok(0));
        assert_eq!(int("0b1_01", 0, 64), Ok(5));
        assert_eq!(int("1_0", 0, 64), Ok(10));
        assert_eq!(int("0x_1", 0, 64), Ok(1));
        assert_eq!(int("0_7", 0, 64), Ok(7));
        assert_eq!(int("-9223372036854775808", 0, 64), Ok(i64::MIN));
        for bad in ["", "-", "x", "_1", "1_", "1__0", "0x", "08", "0b2", "1_0x"] {
            assert_eq!(
                int(bad, 0, 64),
                Err(format!(
                    "strconv.ParseInt: parsing {}: invalid syntax",
                    crate::goquote::go_quote(bad)
                )),
                "{bad}"
            );
        }
    }

    #[test]
    fn ranges_by_bit_size() {
        let range = |s: &str| format!("strconv.ParseInt: parsing {s:?}: value out of range");
        assert_eq!(
            int("9223372036854775808", 0, 64),
            Err(range("9223372036854775808"))
        );
        assert_eq!(int("2147483647", 10, 32), Ok(2_147_483_647));
        assert_eq!(int("2147483648", 10, 32), Err(range("2147483648")));
        assert_eq!(int("-2147483648", 10, 32), Ok(-2_147_483_648));
        // The overflow is seen before the bad digit after it.
        assert_eq!(int("99999999999x", 10, 32), Err(range("99999999999x")));
        assert_eq!(
            int("99999999999999999999x", 0, 64),
            Err(range("99999999999999999999x"))
        );
    }

    #[test]
    fn base_ten_takes_no_prefix_or_separator() {
        assert!(int("0x10", 10, 32).is_err());
        assert!(int("1_000", 10, 32).is_err());
        assert_eq!(int("010", 10, 32), Ok(10));
    }

    #[test]
    fn unsigned_refuses_a_sign() {
        assert_eq!(parse_uint("18446744073709551615", 0, 64), Ok(u64::MAX));
        assert_eq!(
            parse_uint("+1", 0, 64).map_err(|e| e.to_string()),
            Err("strconv.ParseUint: parsing \"+1\": invalid syntax".into())
        );
        assert_eq!(
            parse_uint("18446744073709551616", 0, 64)
                .map(|_| ())
                .map_err(|e| e.kind),
            Err(NumErrorKind::Range)
        );
    }
}
