//! Go's `time.ParseDuration`, with its error texts: what pflag's duration flags accept.

/// Nanoseconds per unit, as Go's `unitMap`.
fn unit_nanos(unit: &str) -> Option<u64> {
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

/// 2^63, the magnitude of the most negative duration.
const LIMIT: u64 = 1 << 63;

/// Go's `leadingInt`: the leading digits of `s` and the rest, `None` past 2^63.
fn leading_int(s: &str) -> Option<(u64, &str)> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let mut x: u64 = 0;
    for c in s[..digits].bytes() {
        if x > LIMIT / 10 {
            return None;
        }
        x = x * 10 + u64::from(c - b'0');
        if x > LIMIT {
            return None;
        }
    }
    Some((x, &s[digits..]))
}

/// Go's `leadingFraction`: the leading digits of `s` as `x / scale`, digits past what a
/// u64 holds read but dropped, and the rest.
fn leading_fraction(s: &str) -> (u64, f64, &str) {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let (mut x, mut scale, mut overflow) = (0u64, 1f64, false);
    for c in s[..digits].bytes() {
        if overflow {
            continue;
        }
        if x > (LIMIT - 1) / 10 {
            overflow = true;
            continue;
        }
        let y = x * 10 + u64::from(c - b'0');
        if y > LIMIT {
            overflow = true;
            continue;
        }
        x = y;
        scale *= 10.0;
    }
    (x, scale, &s[digits..])
}

/// `time.ParseDuration(s)` as signed nanoseconds, or Go's error text: Go's steps and
/// arithmetic, the fraction through a float64 as Go computes it, the sum in a u64 that
/// is checked against 2^63 only after each term (so a term that takes it to 2^64 wraps
/// it to zero, as in Go), errors in the order Go meets them.
pub fn parse(orig: &str) -> Result<i64, String> {
    let invalid = || format!("time: invalid duration {}", quote(orig));
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
    let mut d: u64 = 0;
    while !s.is_empty() {
        // The next character must be [0-9.].
        if !s.starts_with(|c: char| c == '.' || c.is_ascii_digit()) {
            return Err(invalid());
        }
        let (v, rest) = leading_int(s).ok_or_else(invalid)?;
        let pre = rest.len() != s.len();
        s = rest;
        let (mut f, mut scale, mut post) = (0u64, 1f64, false);
        if let Some(rest) = s.strip_prefix('.') {
            let rest_of_fraction;
            (f, scale, rest_of_fraction) = leading_fraction(rest);
            post = rest_of_fraction.len() != rest.len();
            s = rest_of_fraction;
        }
        if !pre && !post {
            // No digits: "." or ".s".
            return Err(invalid());
        }
        let unit_end = s
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(s.len());
        let unit = &s[..unit_end];
        s = &s[unit_end..];
        if unit.is_empty() {
            return Err(format!("time: missing unit in duration {}", quote(orig)));
        }
        let Some(per) = unit_nanos(unit) else {
            return Err(format!(
                "time: unknown unit {} in duration {}",
                quote(unit),
                quote(orig)
            ));
        };
        if v > LIMIT / per {
            return Err(invalid());
        }
        let mut v = v * per;
        if f > 0 {
            // Go's float64 arithmetic, truncated as Go converts it.
            v += (f as f64 * (per as f64 / scale)) as u64;
            if v > LIMIT {
                return Err(invalid());
            }
        }
        d = d.wrapping_add(v);
        if d > LIMIT {
            return Err(invalid());
        }
    }
    if neg {
        // -Duration(d): 2^63 becomes the most negative duration.
        return Ok((d as i64).wrapping_neg());
    }
    i64::try_from(d).map_err(|_| invalid())
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

    #[test]
    fn gos_arithmetic_and_error_order() {
        // A number past 2^63 fails where it is read, before its unit is looked at.
        assert_eq!(
            parse("99999999999999999999x"),
            Err("time: invalid duration \"99999999999999999999x\"".into())
        );
        assert_eq!(
            parse("1s99999999999999999999"),
            Err("time: invalid duration \"1s99999999999999999999\"".into())
        );
        // Past 2^63 - 1 but not 2^63 is refused only at the end, after the later terms.
        assert_eq!(
            parse("9223372036854775808ns1x"),
            Err("time: unknown unit \"x\" in duration \"9223372036854775808ns1x\"".into())
        );
        assert_eq!(parse("-9223372036854775808ns"), Ok(i64::MIN));
        // Go's u64 sum wraps from 2^64 to zero.
        assert_eq!(parse("9223372036854775808ns9223372036854775808ns"), Ok(0));
        // Fractions go through a float64, as Go computes them.
        assert_eq!(parse(".99999999999999999999999h"), Ok(3_600_000_000_000));
        assert_eq!(parse("0.3333333333333333333333h"), Ok(1_200_000_000_000));
        assert_eq!(parse("1.9999999999999999999999ns"), Ok(2));
    }
}

/// [`parse`] against Go's own `time.ParseDuration`: generated mixtures of digits, points,
/// signs, every unit, bad units, spaces and non-ASCII, values around 2^63 nanoseconds in
/// each unit, long fractions; the value or the error text must agree.
#[cfg(test)]
mod go_differential {
    use super::parse;
    use crate::go_oracle;

    const ANSWER: &str = r#"
func answer(in string) string {
	b, _ := hex.DecodeString(strings.TrimPrefix(in, "x"))
	d, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Sprintf("err %s", err)
	}
	return fmt.Sprintf("ok %d", int64(d))
}
"#;

    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        /// `min` digits and fewer than `spread` more.
        fn digits(&mut self, min: u64, spread: u64) -> String {
            let n = min + self.below(spread);
            (0..n)
                .map(|_| char::from(b'0' + self.below(10) as u8))
                .collect()
        }
    }

    const UNITS: [&str; 8] = ["ns", "us", "\u{b5}s", "\u{3bc}s", "ms", "s", "m", "h"];
    const BAD: [&str; 14] = [
        "d", "x", "S", "H", "sm", "hh", "mss", "\u{b5}", "\u{e9}", " ", "\t", "\"", "\\", "\u{1}",
    ];

    /// One term: digits, a point, a fraction, a unit, each perhaps missing or odd.
    fn term(rng: &mut Rng) -> String {
        let mut t = String::new();
        match rng.below(8) {
            0 => {}
            1 => t.push_str(&rng.digits(15, 8)),
            _ => t.push_str(&rng.digits(1, 4)),
        }
        if rng.below(3) == 0 {
            t.push('.');
            let fraction = if rng.below(4) == 0 {
                rng.digits(10, 20)
            } else {
                rng.digits(0, 4)
            };
            t.push_str(&fraction);
        }
        match rng.below(10) {
            0 => {}
            1 => t.push_str(BAD[rng.below(BAD.len() as u64) as usize]),
            _ => t.push_str(UNITS[rng.below(UNITS.len() as u64) as usize]),
        }
        t
    }

    fn inputs() -> Vec<String> {
        let mut v: Vec<String> = [
            "",
            "0",
            "+0",
            "-0",
            "00",
            "0.0",
            "-",
            "+",
            ".",
            "-.",
            ".s",
            "1",
            "1.",
            "1.s",
            ".5s",
            "1s1",
            "1 s",
            " 1s",
            "1s ",
            "1s.",
            "1e3s",
            "1_000s",
            "--1s",
            "+-1s",
            "0x10s",
            "1.5.5s",
            "1..5s",
            "9223372036854775807ns",
            "9223372036854775808ns",
            "-9223372036854775808ns",
            "-9223372036854775809ns",
            "9223372036854775809ns",
            "18446744073709551616ns",
            "92233720368547758070ns",
            "9223372036854775808ns9223372036854775808ns",
            "-9223372036854775808ns9223372036854775808ns",
            "9223372036854775807ns1ns",
            "9223372036854775808ns1x",
            "9223372036854775808ns1",
            "2562047h47m16.854775807s",
            "2562047h47m16.854775808s",
            "-2562047h47m16.854775808s",
            "2562047h47m16.854775809s",
            "2562048h",
            "2562047.8h",
            "-2562047.788015215h",
            "153722867m",
            "153722868m",
            "9223372036.854775807s",
            "9223372036.854775808s",
            "9223372036854.775807ms",
            "9223372036854775.807us",
            "0.1234567890123456789012345h",
            "1.00000000000000000001h",
            ".99999999999999999999999h",
            "0.000000001s",
            "0.0000000001s",
            "0.3333333333333333333333h",
            "1.9999999999999999999999ns",
            "\u{fffd}",
            "1\u{fffd}",
            "\u{3bc}",
            "1\u{3bc}",
            "1\u{b5}s",
            "1\u{3bc}s",
            "1\u{e9}",
            "5\u{1b}",
            "5\u{7f}",
            "1h\u{2028}",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut rng = Rng(0x5851_f42d_4c95_7f2d);
        // Around the largest whole number of each unit.
        for unit in UNITS {
            let per = super::unit_nanos(unit).expect("a unit");
            for n in [(1u64 << 63) / per - 1, (1 << 63) / per, (1 << 63) / per + 1] {
                for sign in ["", "-"] {
                    v.push(format!("{sign}{n}{unit}"));
                    v.push(format!("{sign}{n}.{}{unit}", rng.digits(1, 12)));
                    v.push(format!("{sign}{n}{unit}{}ns", rng.below(1_000_000_000)));
                }
            }
        }
        for _ in 0..4000 {
            let mut s = String::new();
            match rng.below(6) {
                0 => s.push('-'),
                1 => s.push('+'),
                _ => {}
            }
            for _ in 0..1 + rng.below(4) {
                s.push_str(&term(&mut rng));
            }
            v.push(s);
        }
        v
    }

    fn ours(s: &str) -> String {
        match parse(s) {
            Ok(n) => format!("ok {n}"),
            Err(e) => format!("err {e}"),
        }
    }

    #[test]
    fn parses_as_gos_time_parse_duration() {
        let dir = tempfile::tempdir().expect("tempdir");
        let Some(bin) = go_oracle::build(
            dir.path(),
            &go_oracle::program(&["encoding/hex", "fmt", "time"], ANSWER),
            "goduration",
            "",
            "golang-go",
        ) else {
            return;
        };
        let inputs = inputs();
        let hex: Vec<String> = inputs
            .iter()
            .map(|s| {
                format!(
                    "x{}",
                    s.bytes().map(|b| format!("{b:02x}")).collect::<String>()
                )
            })
            .collect();
        let go = go_oracle::answers(&bin, &hex);
        let mut differ = 0;
        for (input, go) in inputs.iter().zip(&go) {
            let ours = ours(input);
            if &ours != go {
                differ += 1;
                if differ <= 20 {
                    eprintln!("{input:?}\n  go:   {go}\n  ours: {ours}");
                }
            }
        }
        assert_eq!(differ, 0, "{differ} of {} durations differ", inputs.len());
    }
}
