//! `strconv.FormatFloat` for float64s, as Go's `fmt` and yaml.v3 use it: `%e`, `%f`, `%g`
//! (to a precision or the shortest that reads back, Go's choice between the exponent and
//! plain forms) and `%b`, `%x`. Checked against Go's own by
//! `tests/go_stdlib_differential.rs`.

/// strconv's `decimalSlice`: the decimal digits of a number, without leading or
/// trailing zeros (none for zero), and where the decimal point goes.
struct Digits {
    d: Vec<u8>,
    dp: i64,
}

/// The digits of Rust's `{:e}`-style text (`1.25e-7`).
fn scientific(s: &str) -> Digits {
    let (mantissa, exp) = s.split_once('e').unwrap_or((s, "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let mut d: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
    while d.last() == Some(&b'0') {
        d.pop();
    }
    if d.is_empty() {
        return Digits { d, dp: 0 };
    }
    Digits { d, dp: exp + 1 }
}

/// The fewest digits that read back as `a` (non-negative, finite) and, of that many, the
/// nearest to `a`, an exact tie going to the even one as Go's `roundShortest` rounds it
/// (Rust's own shortest formatting takes the upper one: 15.2458038330078125 is
/// 15.245803833007812 in Go, 15.245803833007813 in Rust).
fn shortest(a: f64) -> Digits {
    if a == 0.0 {
        return Digits {
            d: Vec::new(),
            dp: 0,
        };
    }
    let digits = scientific(&format!("{a:e}"));
    // Rust's formatting to a precision rounds the exact value half to even.
    let nearest = format!("{:.*e}", digits.d.len() - 1, a);
    if nearest.parse::<f64>() == Ok(a) {
        return scientific(&nearest);
    }
    digits
}

/// `a` rounded (half to even, on its exact value) to `n` significant digits.
fn significant(a: f64, n: usize) -> Digits {
    if a == 0.0 {
        return Digits {
            d: Vec::new(),
            dp: 0,
        };
    }
    scientific(&format!("{:.*e}", n.saturating_sub(1), a))
}

/// `a` rounded (half to even, on its exact value) to `prec` digits after the point.
fn fractional(a: f64, prec: usize) -> Digits {
    let s = format!("{a:.prec$}");
    let int_len = s.find('.').unwrap_or(s.len()) as i64;
    let all: Vec<u8> = s.bytes().filter(u8::is_ascii_digit).collect();
    let lead = all.iter().take_while(|&&b| b == b'0').count();
    let mut d = all[lead..].to_vec();
    while d.last() == Some(&b'0') {
        d.pop();
    }
    if d.is_empty() {
        return Digits { d, dp: 0 };
    }
    Digits {
        d,
        dp: int_len - lead as i64,
    }
}

/// `strconv.FormatFloat(f, fmt, prec, 64)`: `'e'`, `'E'`, `'f'`, `'g'`, `'G'` to `prec`
/// digits (after the point for `'e'` and `'f'`, significant ones for `'g'`) or, with a
/// negative `prec`, the fewest that read back as `f`; `'b'`, `'x'`, `'X'` in binary;
/// `NaN`, `+Inf`, `-Inf`; `%` and the verb for any other verb.
pub fn strconv_format_float(f: f64, fmt: char, prec: i32) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f < 0.0 { "-Inf" } else { "+Inf" }.into();
    }
    let sign = if f.is_sign_negative() { "-" } else { "" };
    let a = f.abs();
    if matches!(fmt, 'b' | 'x' | 'X') {
        let prec = usize::try_from(prec).ok();
        return format!("{sign}{}", binary_float(a, fmt, prec));
    }
    if !matches!(fmt, 'e' | 'E' | 'f' | 'g' | 'G') {
        return format!("%{fmt}");
    }
    let short = prec < 0;
    let mut prec = i64::from(prec);
    let digs = if short {
        let digs = shortest(a);
        let nd = digs.d.len() as i64;
        prec = match fmt {
            'e' | 'E' => (nd - 1).max(0),
            'f' => (nd - digs.dp).max(0),
            _ => nd,
        };
        digs
    } else {
        match fmt {
            'e' | 'E' => significant(a, prec as usize + 1),
            'f' => fractional(a, prec as usize),
            _ => {
                prec = prec.max(1);
                significant(a, prec as usize)
            }
        }
    };
    let body = match fmt {
        'e' | 'E' => fmt_e(&digs, prec, fmt),
        'f' => fmt_f(&digs, prec),
        _ => {
            // %e when the exponent is below -4 or reaches the precision (6 for the
            // shortest digits), else %f.
            let nd = digs.d.len() as i64;
            let mut eprec = prec;
            if eprec > nd && nd >= digs.dp {
                eprec = nd;
            }
            if short {
                eprec = 6;
            }
            let exp = digs.dp - 1;
            if exp < -4 || exp >= eprec {
                let e = if fmt == 'G' { 'E' } else { 'e' };
                fmt_e(&digs, prec.min(nd) - 1, e)
            } else {
                let p = if prec > digs.dp { nd } else { prec };
                fmt_f(&digs, (p - digs.dp).max(0))
            }
        }
    };
    format!("{sign}{body}")
}

/// `strconv.FormatFloat(f, verb, prec, 64)` as Go's `fmt` calls it: no `prec` is fmt's
/// default (6 for `%e`/`%f`, the shortest for `%g`, `%b` and `%x`).
pub fn format_float(f: f64, verb: char, prec: Option<usize>) -> String {
    let prec = match prec {
        Some(p) => i32::try_from(p).unwrap_or(i32::MAX),
        None if matches!(verb, 'e' | 'E' | 'f') => 6,
        None => -1,
    };
    strconv_format_float(f, verb, prec)
}

/// `%b` (`mantissa p exponent`) and `%x`/`%X` (hexadecimal, shortest or `prec` digits
/// rounded half to even) of a non-negative float.
fn binary_float(f: f64, verb: char, prec: Option<usize>) -> String {
    let bits = f.to_bits();
    let exp_bits = ((bits >> 52) & 0x7ff) as i64;
    let mut mant = bits & ((1u64 << 52) - 1);
    let mut exp = exp_bits - 1075;
    if exp_bits == 0 {
        exp = -1074;
    } else {
        mant |= 1 << 52;
    }
    if verb == 'b' {
        return format!("{mant}p{exp:+}");
    }
    let (mut frac, mut e) = (0u64, 0i64);
    if mant != 0 {
        // 1.frac × 2^e, 52 fraction bits.
        let shift = i64::from(mant.leading_zeros()) - 11;
        frac = (mant << shift) & ((1u64 << 52) - 1);
        e = exp + 52 - shift;
    }
    let digits = match prec {
        None => {
            let d = format!("{frac:013x}");
            d.trim_end_matches('0').to_string()
        }
        Some(p) if p >= 13 => format!("{frac:013x}{}", "0".repeat(p - 13)),
        Some(p) => {
            // Round 1.frac to p hex digits, half to even (the leading 1 counts at p = 0).
            let drop = 52 - 4 * p as u32;
            let full = if mant == 0 { 0 } else { (1u64 << 52) | frac };
            let rem = full & ((1u64 << drop) - 1);
            let half = 1u64 << (drop - 1);
            let mut kept = full >> drop;
            if rem > half || (rem == half && kept & 1 == 1) {
                kept += 1;
            }
            if mant != 0 && kept >> (4 * p + 1) != 0 {
                kept >>= 1;
                e += 1;
            }
            let frac = kept & ((1u64 << (4 * p)) - 1);
            if p == 0 {
                String::new()
            } else {
                format!("{frac:0p$x}")
            }
        }
    };
    let lead = if mant == 0 { '0' } else { '1' };
    let dot = if digits.is_empty() { "" } else { "." };
    let sign = if e < 0 { '-' } else { '+' };
    let s = format!("0x{lead}{dot}{digits}p{sign}{:02}", e.abs());
    if verb == 'X' { s.to_uppercase() } else { s }
}

/// The digit at `i`, a zero outside the digits.
fn digit(d: &Digits, i: i64) -> char {
    usize::try_from(i)
        .ok()
        .and_then(|i| d.d.get(i))
        .map_or('0', |&b| b as char)
}

/// strconv's `fmtE`: `d.ddde±dd` with `prec` digits after the point.
fn fmt_e(d: &Digits, prec: i64, e: char) -> String {
    let mut s = String::new();
    s.push(digit(d, 0));
    if prec > 0 {
        s.push('.');
        for i in 1..=prec {
            s.push(digit(d, i));
        }
    }
    let exp = if d.d.is_empty() { 0 } else { d.dp - 1 };
    s.push(e);
    s.push(if exp < 0 { '-' } else { '+' });
    s.push_str(&format!("{:02}", exp.abs()));
    s
}

/// strconv's `fmtF`: `ddd.ddd` with `prec` digits after the point.
fn fmt_f(d: &Digits, prec: i64) -> String {
    let mut s = String::new();
    if d.dp > 0 {
        for i in 0..d.dp {
            s.push(digit(d, i));
        }
    } else {
        s.push('0');
    }
    if prec > 0 {
        s.push('.');
        for i in 0..prec {
            s.push(digit(d, d.dp + i));
        }
    }
    s
}

/// `strconv.FormatFloat(f, 'g', -1, 64)` of a finite `f`, sign included: the shortest
/// digits that read back as `f`, in exponent form below 1e-4 and from 1e+06 on (Go's `%v`
/// of a float64, and what yaml.v3 writes).
pub fn shortest_g(f: f64) -> String {
    strconv_format_float(f, 'g', -1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortest_g_is_go_percent_v_of_a_float64() {
        for (f, want) in [
            (0.0, "0"),
            (-0.0, "-0"),
            (1.5, "1.5"),
            (-2.25, "-2.25"),
            (123456.7, "123456.7"),
            (999999.0, "999999"),
            (1e6, "1e+06"),
            (4e6, "4e+06"),
            (1.23456789e8, "1.23456789e+08"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (2.5e-5, "2.5e-05"),
            (1e21, "1e+21"),
            (0.1 + 0.2, "0.30000000000000004"),
        ] {
            assert_eq!(shortest_g(f), want, "{f:?}");
        }
    }

    #[test]
    fn precision_verbs_as_strconv() {
        assert_eq!(format_float(1.23456, 'f', Some(2)), "1.23");
        assert_eq!(format_float(1234.5678, 'e', Some(3)), "1.235e+03");
        assert_eq!(format_float(1234.5678, 'g', Some(3)), "1.23e+03");
        assert_eq!(format_float(0.000012345, 'g', Some(2)), "1.2e-05");
        // No precision is fmt's default: six digits for `%e`/`%f`, the shortest for `%g`.
        assert_eq!(format_float(2.0, 'f', None), "2.000000");
        assert_eq!(format_float(2.0, 'g', None), "2");
    }

    #[test]
    fn shortest_ties_go_to_the_even_digit() {
        // 15.2458038330078125 is exactly halfway between the two 17-digit candidates; Go
        // rounds to even where Rust's `{}` takes the upper one.
        let f = f64::from_bits(0x402e_7dda_0000_0000);
        assert_eq!(format!("{f:.16}"), "15.2458038330078125");
        assert_eq!(shortest_g(f), "15.245803833007812");
        // 601.77056884765625 and 1658206780088562.25.
        assert_eq!(
            shortest_g(f64::from_bits(0x4082_ce2a_2000_0000)),
            "601.7705688476562"
        );
        assert_eq!(
            strconv_format_float(f64::from_bits(0x4317_9085_685d_83c9), 'g', -1),
            "1.6582067800885622e+15"
        );
        // Ties that the shortest digits do not reach stay as they are.
        assert_eq!(shortest_g(0.125), "0.125");
    }

    #[test]
    fn strconv_format_float_in_every_verb() {
        assert_eq!(strconv_format_float(f64::NAN, 'g', -1), "NaN");
        assert_eq!(strconv_format_float(f64::INFINITY, 'e', 3), "+Inf");
        assert_eq!(strconv_format_float(f64::NEG_INFINITY, 'f', -1), "-Inf");
        assert_eq!(strconv_format_float(-0.0, 'e', -1), "-0e+00");
        assert_eq!(strconv_format_float(1234.5, 'e', -1), "1.2345e+03");
        assert_eq!(
            strconv_format_float(1e21, 'f', -1),
            "1000000000000000000000"
        );
        assert_eq!(strconv_format_float(1e-7, 'f', -1), "0.0000001");
        assert_eq!(strconv_format_float(2.5, 'f', 0), "2");
        assert_eq!(strconv_format_float(0.0, 'g', 0), "0");
        assert_eq!(strconv_format_float(100.0, 'G', 2), "1E+02");
        assert_eq!(strconv_format_float(-1.0, 'x', -1), "-0x1p+00");
        assert_eq!(strconv_format_float(1.0, 'b', -1), "4503599627370496p-52");
        assert_eq!(strconv_format_float(1.0, 'v', -1), "%v");
    }
}
