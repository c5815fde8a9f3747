//! What kubectl's `--sort-by` makes of two strings that are both Kubernetes quantities
//! (`resource.ParseQuantity`, then `Quantity.Cmp`): `1.5` after `1.10`, `1Ki` after
//! `1k`. The grammar is apimachinery's, branch by branch (`-`, `.`, `k` alone are zero;
//! `e<n>` exponents wrap to 32 bits), and a value is what `ParseQuantity` keeps: exact,
//! rounded up to a multiple of 10⁻⁹ when finer, binary-suffixed ones capped at 2⁶³-1.
//! Only comparison is needed, so values stay decimal digits and an exponent.

use std::cmp::Ordering;

use num_bigint::BigUint;

/// A parsed quantity: sign, significant digits (no leading or trailing zeros; empty for
/// zero) and the power of ten of the last digit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Quantity {
    negative: bool,
    digits: String,
    exponent: i64,
}

const DECIMAL: &[(&str, i64)] = &[
    ("n", -9),
    ("u", -6),
    ("m", -3),
    ("", 0),
    ("k", 3),
    ("M", 6),
    ("G", 9),
    ("T", 12),
    ("P", 15),
    ("E", 18),
];

const BINARY: &[(&str, u32)] = &[
    ("Ki", 10),
    ("Mi", 20),
    ("Gi", 30),
    ("Ti", 40),
    ("Pi", 50),
    ("Ei", 60),
];

enum Suffix {
    /// A power of ten.
    Decimal(i64),
    /// A power of two.
    Binary(u32),
}

/// apimachinery's `suffixHandler.interpret`.
fn interpret(suffix: &str) -> Option<Suffix> {
    if let Some(&(_, e)) = DECIMAL.iter().find(|(s, _)| *s == suffix) {
        return Some(Suffix::Decimal(e));
    }
    if let Some(&(_, e)) = BINARY.iter().find(|(s, _)| *s == suffix) {
        return Some(Suffix::Binary(e));
    }
    let rest = suffix.strip_prefix(['e', 'E']).filter(|r| !r.is_empty())?;
    let parsed = kpt::gostrconv::parse_int(rest, 10, 64).ok()?;
    // Go's int32(parsed) keeps the low 32 bits.
    Some(Suffix::Decimal(i64::from(parsed as i32)))
}

/// The pieces `parseQuantityString` cuts: sign, numerator (leading zeros dropped),
/// denominator, suffix; `None` for `ErrFormatWrong`.
fn cut(s: &str) -> Option<(bool, &str, &str, &str)> {
    let b = s.as_bytes();
    let end = b.len();
    let mut pos = 0;
    let mut negative = false;
    match b.first() {
        Some(b'-') => {
            negative = true;
            pos = 1;
        }
        Some(b'+') => pos = 1,
        _ => {}
    }
    while pos < end && b[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        return Some((negative, "0", "", ""));
    }
    let start = pos;
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    let num = if pos == start { "0" } else { &s[start..pos] };
    if pos >= end {
        return Some((negative, num, "", ""));
    }
    let mut denom = "";
    if b[pos] == b'.' {
        pos += 1;
        let start = pos;
        while pos < end && b[pos].is_ascii_digit() {
            pos += 1;
        }
        denom = &s[start..pos];
        if pos >= end {
            return Some((negative, num, denom, ""));
        }
    }
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&b[pos]) {
        pos += 1;
    }
    if pos < end && matches!(b[pos], b'-' | b'+') {
        pos += 1;
    }
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return None;
    }
    Some((negative, num, denom, &s[suffix_start..]))
}

impl Quantity {
    /// `resource.ParseQuantity(s)`, or `None` where it fails.
    pub fn parse(s: &str) -> Option<Quantity> {
        if s.is_empty() {
            return None;
        }
        let (negative, num, denom, suffix_text) = cut(s)?;
        let suffix = interpret(suffix_text)?;
        // What ParseQuantity cannot keep in an int64 (its `precision` below zero, or finer
        // than 10⁻⁹) it reads back with inf.Dec, which wants a digit: `Ei` or `.e-10` alone
        // are no quantity, where `Ki` and `.` are zero.
        let exact = match suffix {
            Suffix::Decimal(e) => e - (denom.len() as i64) >= -9 && num.len() + denom.len() <= 18,
            Suffix::Binary(e) => {
                // Go: precision = 15 - len(num) - exponent*3/10 - 1, at least 0.
                denom.is_empty() && 15 - num.len() as i64 - i64::from(e) * 3 / 10 > 0
            }
        };
        let text = &s[..s.len() - suffix_text.len()];
        if !exact && !text.bytes().any(|c| c.is_ascii_digit()) {
            return None;
        }
        let mut digits = format!("{num}{denom}");
        let mut exponent = -(denom.len() as i64);
        let binary = matches!(suffix, Suffix::Binary(_));
        match suffix {
            Suffix::Decimal(e) => exponent += e,
            Suffix::Binary(e) => {
                let n: BigUint = digits.parse().unwrap_or_default();
                digits = (n << e).to_string();
            }
        }
        let mut q = Quantity {
            negative,
            digits,
            exponent,
        };
        q.normalize();
        q.round_up_to_nano();
        if binary && q.exceeds_int64() {
            q.digits = i64::MAX.to_string();
            q.exponent = 0;
            q.normalize();
        }
        Some(q)
    }

    fn normalize(&mut self) {
        let trimmed = self.digits.trim_start_matches('0');
        let zeros = trimmed.len() - trimmed.trim_end_matches('0').len();
        self.digits = trimmed[..trimmed.len() - zeros].to_string();
        self.exponent += zeros as i64;
        if self.digits.is_empty() {
            self.exponent = 0;
            self.negative = false;
        }
    }

    /// inf.RoundUp at scale 9 on the magnitude: a non-zero value finer than 10⁻⁹ goes up
    /// to the next multiple of 10⁻⁹.
    fn round_up_to_nano(&mut self) {
        if self.digits.is_empty() || self.exponent >= -9 {
            return;
        }
        let keep = self.digits.len() as i64 + self.exponent + 9;
        if keep <= 0 {
            self.digits = "1".into();
        } else {
            let kept: BigUint = self.digits[..keep as usize].parse().unwrap_or_default();
            self.digits = (kept + 1u32).to_string();
        }
        self.exponent = -9;
        self.normalize();
    }

    fn exceeds_int64(&self) -> bool {
        let max = Quantity {
            negative: false,
            digits: i64::MAX.to_string(),
            exponent: 0,
        };
        magnitude(self, &max) == Ordering::Greater
    }

    /// `Quantity.Cmp`.
    pub fn cmp(&self, other: &Quantity) -> Ordering {
        let sign = |q: &Quantity| match (q.digits.is_empty(), q.negative) {
            (true, _) => 0,
            (false, true) => -1,
            (false, false) => 1,
        };
        match sign(self).cmp(&sign(other)) {
            Ordering::Equal if sign(self) < 0 => magnitude(other, self),
            Ordering::Equal => magnitude(self, other),
            ord => ord,
        }
    }
}

/// Compares |a| and |b|.
fn magnitude(a: &Quantity, b: &Quantity) -> Ordering {
    match (a.digits.is_empty(), b.digits.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Less,
        (false, true) => return Ordering::Greater,
        _ => {}
    }
    // The power of ten of the leading digit decides first.
    let lead = |q: &Quantity| q.digits.len() as i64 + q.exponent;
    lead(a).cmp(&lead(b)).then_with(|| {
        let width = a.digits.len().max(b.digits.len());
        format!("{:0<width$}", a.digits).cmp(&format!("{:0<width$}", b.digits))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap_or_else(|| panic!("{s} is a quantity"))
    }

    #[test]
    fn what_parses() {
        for s in [
            "0", "1", "-1", "+1", "1.5", ".5", "5.", "1k", "1Ki", "1e3", "1E", "1e+3",
        ] {
            assert!(Quantity::parse(s).is_some(), "{s}");
        }
        // apimachinery's grammar takes these as zero.
        for s in ["-", "+", ".", "k", "Ki", "Ti", "00"] {
            assert_eq!(q(s).cmp(&q("0")), Ordering::Equal, "{s}");
        }
        for s in [
            "", "v1", "1K", "1KiB", "1e", "0x10", "1.5.5", " 1", "1m5", "1+5", "abc",
        ] {
            assert!(Quantity::parse(s).is_none(), "{s}");
        }
    }

    #[test]
    fn compares_values() {
        let less = |a: &str, b: &str| q(a).cmp(&q(b)) == Ordering::Less;
        assert!(less("1.10", "1.5"));
        assert!(less("1k", "1Ki"));
        assert!(less("999", "1k"));
        assert!(less("-2", "-1"));
        assert!(less("500m", "1"));
        assert!(less("1e-3", "2m"));
        assert_eq!(q("1000").cmp(&q("1k")), Ordering::Equal);
        assert_eq!(q("1.0").cmp(&q("1")), Ordering::Equal);
        // Finer than a nano rounds up to the next nano.
        assert_eq!(q("0.0000000001").cmp(&q("1n")), Ordering::Equal);
        assert_eq!(q("1.0000000001").cmp(&q("1.000000001")), Ordering::Equal);
        // Binary quantities stop at 2^63-1.
        assert_eq!(q("16Ei").cmp(&q("9223372036854775807")), Ordering::Equal);
        assert!(less("9223372036854775807", "16E"));
        // Exponents wrap to 32 bits.
        assert_eq!(q("1e4294967296").cmp(&q("1")), Ordering::Equal);
    }
}
