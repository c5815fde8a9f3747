//! `kpt::gofloat` and `kpt::goquote` against Go's own `strconv`: generated floats (random
//! bit patterns, integers, powers of ten and their neighbours, halfway cases, subnormals,
//! the extremes, the %e/%f switch points of %g) through `strconv.FormatFloat` in every
//! verb and many precisions, and generated strings (ASCII, controls, DEL, spaces and format
//! characters beyond ASCII, unassigned and private-use code points, astral characters,
//! U+FFFD) through `strconv.Quote`, `QuoteToASCII`, `QuoteRune` and `QuoteRuneToASCII`;
//! `strconv.IsPrint` is compared on every code point.
//!
//! Go 1.21 moved Go's Unicode tables from 13.0 to 15.0, and kpt and porchctl are built
//! with a later Go than this machine's 1.19: our `is_print` follows Unicode 15.0, so under
//! a Go older than 1.21 the characters that Unicode 14.0 and 15.0 assigned (unassigned in
//! that Go's tables) are allowed to differ, and are left out of the generated strings.

#[path = "support/go_oracle.rs"]
mod go_oracle;

use go_oracle::Rng;

use kpt::gofloat::{format_float, shortest_g, strconv_format_float};
use kpt::goquote::{go_quote, go_quote_with, is_print, push_escaped};

const PROGRAM: &str = r#"package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"unicode"
)

func main() {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for {
		line, err := in.ReadString(0)
		if err == io.EOF {
			return
		}
		in.ReadString('\n')
		f := strings.Fields(strings.TrimSuffix(line, "\x00"))
		switch f[0] {
		case "float":
			bits, _ := strconv.ParseUint(f[1], 16, 64)
			prec, _ := strconv.Atoi(f[3])
			out.WriteString(strconv.FormatFloat(math.Float64frombits(bits), f[2][0], prec, 64))
		case "quote":
			b, _ := hex.DecodeString(strings.TrimPrefix(f[1], "x"))
			s := string(b)
			out.WriteString(strconv.Quote(s) + "\t" + strconv.QuoteToASCII(s) + "\t")
			for _, r := range s {
				out.WriteString(strconv.QuoteRune(r) + strconv.QuoteRuneToASCII(r))
			}
		case "classes":
			// The Go version, then each run of code points of one class: printable,
			// not printable, or not assigned in this Go's Unicode tables.
			out.WriteString(runtime.Version() + "\n")
			last := byte(0)
			for r := rune(0); r <= unicode.MaxRune; r++ {
				c := byte('u')
				if strconv.IsPrint(r) {
					c = 'p'
				} else if unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.C) {
					c = 'n'
				}
				if c != last {
					fmt.Fprintf(out, "%x %c\n", r, c)
					last = c
				}
			}
		}
		out.WriteString("\x00\n")
	}
}
"#;

fn oracle(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    go_oracle::build(dir, PROGRAM, "gostrconv", "", "golang-go")
}

/// Fails with the first differing inputs when any answer differs.
fn compare(what: &str, inputs: &[String], ours: &[String], go: &[String]) {
    let mut differ = 0;
    for ((input, ours), go) in inputs.iter().zip(ours).zip(go) {
        if ours != go {
            differ += 1;
            if differ <= 20 {
                eprintln!("{input}\n  go:   {go}\n  ours: {ours}");
            }
        }
    }
    eprintln!("{} {what} compared", inputs.len());
    assert_eq!(differ, 0, "{differ} of {} {what} differ", inputs.len());
}

/// Floats worth formatting: the specials, the extremes, powers of ten and their
/// neighbours, halfway cases, the points where %g switches between %e and %f, integers
/// random bit patterns (normal and subnormal) and float32 values.
fn floats(rng: &mut Rng) -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        f64::NAN,
        -f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MAX,
        f64::MIN,
        f64::MIN_POSITIVE,
        f64::EPSILON,
        5e-324,
        1e-323,
        f64::from_bits(0x000f_ffff_ffff_ffff),
        0.1 + 0.2,
        1.0 / 3.0,
        2.0 / 3.0,
        123456.7,
        999999.0,
        999999.5,
        9999995.0,
        0.000099999,
        0.0000999995,
    ];
    let neighbours = |v: &mut Vec<f64>, x: f64| {
        v.push(x);
        v.push(f64::from_bits(x.to_bits() + 1));
        v.push(f64::from_bits(x.to_bits() - 1));
    };
    for e in -323..=308 {
        let x: f64 = format!("1e{e}").parse().expect("a power of ten");
        neighbours(&mut v, x);
    }
    for x in [1e21, 1e20, 1e-4, 1e-5, 1e6, 1e15, 1e16, 1e17, 2f64.powi(53)] {
        neighbours(&mut v, x);
        neighbours(&mut v, -x);
    }
    // Halfway cases: k.5 at many scales, and decimal halves that are exact in binary.
    for _ in 0..600 {
        let width = 1 + rng.below(8) as u32;
        let k = rng.below(10usize.pow(width)) as f64;
        let scale = 2f64.powi(rng.below(30) as i32 - 15);
        v.push((k + 0.5) * scale);
        let s = 10f64.powi(rng.below(24) as i32 - 8);
        v.push((k + 0.5) * s);
        let digits = format!("{}5e{}", rng.below(1_000_000), rng.below(40) as i32 - 20);
        v.push(digits.parse().expect("a decimal"));
    }
    // Integers, small and large.
    for _ in 0..400 {
        let n = rng.next() >> rng.below(64);
        v.push(n as f64);
        v.push(-(rng.below(100_000) as f64));
    }
    // Short decimals: 0.1, 2.25, 1.5e-7, ...
    for _ in 0..400 {
        let s = format!("{}e{}", rng.below(100_000), rng.below(60) as i32 - 30);
        v.push(s.parse().expect("a decimal"));
    }
    // Random bit patterns, normal and subnormal.
    for _ in 0..2000 {
        v.push(f64::from_bits(rng.next()));
    }
    for _ in 0..200 {
        let sign = (rng.next() & 1) << 63;
        v.push(f64::from_bits(rng.next() >> 12 | sign));
    }
    // Float32 values: short binary mantissas, whose exact decimals often end in a 5 just
    // past the shortest digits (ties between two shortest candidates).
    for _ in 0..600 {
        let f = f32::from_bits(rng.next() as u32);
        if f.is_finite() {
            v.push(f64::from(f));
        }
        v.push(f64::from(rng.below(1 << 24) as f32) / 2f64.powi(rng.below(40) as i32));
    }
    v
}

#[test]
fn formats_floats_as_strconv_format_float() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(bin) = oracle(dir.path()) else {
        return;
    };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let precs = [
        -1, 0, 1, 2, 3, 4, 5, 6, 7, 10, 14, 15, 16, 17, 18, 19, 20, 25, 40,
    ];
    let verbs = ['e', 'E', 'f', 'g', 'G', 'b', 'x', 'X'];
    let mut cases: Vec<(f64, char, i32)> = Vec::new();
    for f in floats(&mut rng) {
        cases.push((f, 'g', -1));
        for _ in 0..5 {
            let verb = verbs[rng.below(verbs.len())];
            let prec = if rng.below(4) == 0 {
                rng.below(60) as i32
            } else {
                precs[rng.below(precs.len())]
            };
            cases.push((f, verb, prec));
        }
    }
    let inputs: Vec<String> = cases
        .iter()
        .map(|(f, verb, prec)| format!("float {:x} {verb} {prec}", f.to_bits()))
        .collect();
    let go = go_oracle::answers(&bin, &inputs);
    let ours: Vec<String> = cases
        .iter()
        .map(|&(f, verb, prec)| strconv_format_float(f, verb, prec))
        .collect();
    compare("FormatFloat results", &inputs, &ours, &go);

    // `shortest_g` is FormatFloat(f, 'g', -1, 64) of a finite float; `format_float` is it
    // for a non-negative finite float with fmt's default precisions.
    let mut differ = 0;
    for (&(f, verb, prec), go) in cases.iter().zip(&go) {
        if !f.is_finite() {
            continue;
        }
        if verb == 'g' && prec == -1 && shortest_g(f) != *go {
            differ += 1;
            eprintln!("shortest_g({f:e}): go {go}, ours {}", shortest_g(f));
        }
        if f.is_sign_positive() && prec >= 0 {
            let ours = format_float(f, verb, Some(prec as usize));
            if ours != *go {
                differ += 1;
                eprintln!("format_float({f:e}, {verb}, {prec}): go {go}, ours {ours}");
            }
        }
    }
    assert_eq!(differ, 0, "shortest_g or format_float differ");
}

/// Go's class of every code point: 'p' printable, 'n' not, 'u' not assigned in the
/// Unicode tables of the Go that answered; and that Go's minor version.
fn go_classes(bin: &std::path::Path) -> (Vec<u8>, u32) {
    let answer = go_oracle::answers(bin, &["classes".to_string()]).remove(0);
    let mut lines = answer.lines();
    let version = lines.next().expect("version");
    let minor = version
        .strip_prefix("go1.")
        .and_then(|v| v.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(u32::MAX);
    let runs: Vec<(usize, u8)> = lines
        .map(|l| {
            let (at, class) = l.split_once(' ').expect("run");
            (
                usize::from_str_radix(at, 16).expect("hex"),
                class.as_bytes()[0],
            )
        })
        .collect();
    let mut classes = vec![0u8; 0x11_0000];
    for (i, &(at, class)) in runs.iter().enumerate() {
        let end = runs.get(i + 1).map_or(classes.len(), |r| r.0);
        classes[at..end].fill(class);
    }
    (classes, minor)
}

/// The code points where our Unicode 15.0 `is_print` may differ from the answering Go's:
/// none from Go 1.21 on; before it, those that Go's Unicode 13.0 had not assigned.
fn newer_unicode(classes: &[u8], minor: u32) -> Vec<bool> {
    (0..classes.len() as u32)
        .map(|u| {
            minor < 21 && classes[u as usize] == b'u' && char::from_u32(u).is_some_and(is_print)
        })
        .collect()
}

#[test]
fn is_print_is_strconv_is_print_on_every_code_point() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(bin) = oracle(dir.path()) else {
        return;
    };
    let (classes, minor) = go_classes(&bin);
    let newer = newer_unicode(&classes, minor);
    let mut differ = 0;
    for u in 0..0x11_0000u32 {
        let Some(c) = char::from_u32(u) else {
            continue;
        };
        if is_print(c) != (classes[u as usize] == b'p') && !newer[u as usize] {
            differ += 1;
            if differ <= 20 {
                eprintln!(
                    "U+{u:04X}: go {}, ours {}",
                    classes[u as usize] as char,
                    is_print(c)
                );
            }
        }
    }
    let allowed = newer.iter().filter(|&&n| n).count();
    eprintln!("go1.{minor}: {allowed} code points assigned after Unicode 13.0 allowed to differ");
    assert_eq!(differ, 0, "{differ} code points differ");
}

#[test]
fn quotes_as_strconv_quote() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(bin) = oracle(dir.path()) else {
        return;
    };
    let (classes, minor) = go_classes(&bin);
    let newer = newer_unicode(&classes, minor);
    // Characters at the edges of Go's printable ranges, and the interesting ones.
    let mut edges: Vec<u32> = vec![
        0, 7, 8, 9, 10, 11, 12, 13, 0x1b, 0x1f, 0x20, 0x22, 0x27, 0x5c, 0x7e, 0x7f, 0x80, 0x85,
        0x9f, 0xa0, 0xa1, 0xad, 0xff, 0x100, 0x61c, 0x180e, 0x1680, 0x2000, 0x200b, 0x200d, 0x2028,
        0x2029, 0x202f, 0x205f, 0x2060, 0x3000, 0xd7ff, 0xe000, 0xf8ff, 0xfeff, 0xfff9, 0xfffc,
        0xfffd, 0xfffe, 0xffff, 0x10000, 0x1f600, 0x1f9d1, 0xe0001, 0xe0100, 0xf0000, 0x10ffff,
    ];
    for u in 1..0x11_0000u32 {
        if classes[u as usize] != classes[u as usize - 1] {
            edges.extend([u - 1, u]);
        }
    }
    let mut rng = Rng(0xd1b5_4a32_d192_ed03);
    let pick = |rng: &mut Rng| -> char {
        loop {
            let u = match rng.below(10) {
                0..=2 => 0x20 + rng.below(0x5f) as u32,
                3 => rng.below(0x20) as u32,
                4 => 0x7f + rng.below(0x81) as u32,
                5 => edges[rng.below(edges.len())],
                6 | 7 => rng.below(0x1_0000) as u32,
                _ => rng.below(0x11_0000) as u32,
            };
            if let Some(c) = char::from_u32(u)
                && !newer[u as usize]
            {
                return c;
            }
        }
    };
    let mut strings: Vec<String> = vec![String::new()];
    strings.extend(
        edges
            .iter()
            .filter_map(|&u| char::from_u32(u))
            .filter(|&c| !newer[c as usize])
            .map(String::from),
    );
    for _ in 0..4000 {
        let len = 1 + rng.below(12);
        strings.push((0..len).map(|_| pick(&mut rng)).collect());
    }
    let inputs: Vec<String> = strings
        .iter()
        .map(|s| {
            let hex: String = s.bytes().map(|b| format!("{b:02x}")).collect();
            format!("quote x{hex}")
        })
        .collect();
    let go = go_oracle::answers(&bin, &inputs);
    let ours: Vec<String> = strings
        .iter()
        .map(|s| {
            let mut out = format!("{}\t{}\t", go_quote(s), go_quote_with(s, true));
            for c in s.chars() {
                for ascii_only in [false, true] {
                    out.push('\'');
                    push_escaped(&mut out, c, '\'', ascii_only);
                    out.push('\'');
                }
            }
            out
        })
        .collect();
    let shown: Vec<String> = strings.iter().map(|s| format!("{s:?}")).collect();
    compare("quotings", &shown, &ours, &go);
}
