//! `strconv`'s float formatting as Go's `fmt` uses it: `%e`, `%f`, `%g` (shortest or to a
//! precision, Go's choice between exponent and plain forms) and `%b`, `%x`.

/// The decimal digits of `f` (no leading zeros) and the position of the decimal point,
/// rounded to `sig` significant digits or the shortest that reads back as `f`.
fn decimal(f: f64, sig: Option<usize>) -> (Vec<u8>, i32) {
    if f == 0.0 {
        return (Vec::new(), 0);
    }
    let s = match sig {
        Some(n) => format!("{:.*e}", n.saturating_sub(1), f),
        None => format!("{f:e}"),
    };
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
    while digits.last() == Some(&b'0') {
        digits.pop();
    }
    (digits, exp + 1)
}

/// `strconv.FormatFloat(f, verb, prec, 64)` for a non-negative finite `f`, as Go's `fmt`
/// calls it: no `prec` is fmt's default (6 for `%e`/`%f`, the shortest for `%g`).
pub fn format_float(f: f64, verb: char, prec: Option<usize>) -> String {
    match verb {
        'e' | 'E' => {
            let p = prec.unwrap_or(6);
            let (d, dp) = decimal(f, Some(p + 1));
            fmt_e(&d, dp, p, verb)
        }
        'f' => format!("{:.*}", prec.unwrap_or(6), f),
        'b' | 'x' | 'X' => binary_float(f, verb, prec),
        _ => {
            let shortest = prec.is_none();
            let p = prec.map(|p| p.max(1));
            let (d, dp) = decimal(f, p);
            let nd = d.len();
            let mut eprec = p.unwrap_or(nd);
            if eprec > nd && nd as i32 >= dp {
                eprec = nd;
            }
            if shortest {
                eprec = 6;
            }
            let exp = dp - 1;
            let e = if verb == 'G' { 'E' } else { 'e' };
            if exp < -4 || exp >= eprec as i32 {
                let p = p.unwrap_or(nd).min(nd.max(1));
                fmt_e(&d, dp, p.saturating_sub(1), e)
            } else {
                let p = match p {
                    Some(p) if p as i32 > dp => nd,
                    Some(p) => p,
                    None => nd,
                };
                fmt_f(&d, dp, (p as i32 - dp).max(0) as usize)
            }
        }
    }
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

fn digit(d: &[u8], i: i32) -> char {
    usize::try_from(i)
        .ok()
        .and_then(|i| d.get(i))
        .map_or('0', |&b| b as char)
}

fn fmt_e(d: &[u8], dp: i32, prec: usize, e: char) -> String {
    let mut s = String::new();
    s.push(digit(d, 0));
    if prec > 0 {
        s.push('.');
        for i in 1..=prec {
            s.push(digit(d, i as i32));
        }
    }
    let exp = if d.is_empty() { 0 } else { dp - 1 };
    s.push(e);
    s.push(if exp < 0 { '-' } else { '+' });
    s.push_str(&format!("{:02}", exp.abs()));
    s
}

fn fmt_f(d: &[u8], dp: i32, prec: usize) -> String {
    let mut s = String::new();
    if dp > 0 {
        for i in 0..dp {
            s.push(digit(d, i));
        }
    } else {
        s.push('0');
    }
    if prec > 0 {
        s.push('.');
        for i in 0..prec as i32 {
            s.push(digit(d, dp + i));
        }
    }
    s
}

/// `strconv.FormatFloat(f, 'g', -1, 64)` of a finite `f`, sign included: the shortest
/// digits that read back as `f`, in exponent form below 1e-4 and from 1e+06 on (Go's `%v` of a float64, and what yaml.v3 writes).
pub fn shortest_g(f: f64) -> String {
    let sign = if f.is_sign_negative() { "-" } else { "" };
    format!("{sign}{}", format_float(f.abs(), 'g', None))
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
}
