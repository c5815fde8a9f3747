//! `kpt::goregex::compile` against Go's own `regexp`: generated patterns (every escape,
//! class, group, flag and repetition form, valid and not) over generated inputs (ASCII,
//! non-ASCII digits, letters, spaces and case pairs) must compile or fail alike (with
//! Go's error text), and match and capture alike (`MatchString`,
//! `FindStringSubmatchIndex`), as search-replace's `by-value-regex` and a selector's
//! `resourceFileRegexp` use them.

#[path = "support/go_oracle.rs"]
mod go_oracle;

use go_oracle::Rng;

const ANSWER: &str = r#"
func answer(in string) string {
	var pair []string
	if err := json.Unmarshal([]byte(in), &pair); err != nil {
		panic(err)
	}
	re, err := regexp.Compile(pair[0])
	if err != nil {
		return fmt.Sprintf("ERR %s", err)
	}
	loc, _ := json.Marshal(re.FindStringSubmatchIndex(pair[1]))
	return fmt.Sprintf("OK %v %s", re.MatchString(pair[1]), loc)
}
"#;

/// Our answer in the program's words (byte offsets, `-1` for a group that took no part).
fn ours(pattern: &str, input: &str) -> String {
    let re = match kpt::goregex::compile(pattern) {
        Ok(re) => re,
        Err(e) => return format!("ERR {e}"),
    };
    let loc: Option<Vec<i64>> = re.captures(input).map(|caps| {
        (0..caps.len())
            .flat_map(|i| match caps.get(i) {
                Some(m) => [m.start() as i64, m.end() as i64],
                None => [-1, -1],
            })
            .collect()
    });
    let loc = match loc {
        Some(v) => serde_json::to_string(&v).expect("json"),
        None => "null".into(),
    };
    format!("OK {} {loc}", re.is_match(input))
}

/// What people write: literals, Perl and POSIX classes, Unicode classes, escapes, flags.
const ATOMS: &[&str] = &[
    "a",
    "b",
    "x",
    "1",
    "9",
    "é",
    "K",
    "k",
    "ß",
    "٣",
    " ",
    ".",
    "-",
    "_",
    "\\d",
    "\\D",
    "\\w",
    "\\W",
    "\\s",
    "\\S",
    "\\b",
    "\\B",
    "\\.",
    "\\*",
    "\\x41",
    "\\x{e9}",
    "\\012",
    "\\0",
    "\\1",
    "\\8",
    "\\pL",
    "\\PL",
    "\\p{Greek}",
    "\\pN",
    "\\p{Nd}",
    "\\p{Foo}",
    "\\z",
    "\\A",
    "\\Q.*\\E",
    "\\Qab",
    "\\v",
    "\\f",
    "\\t",
    "\\n",
    "\\a",
    "\\e",
    "\\C",
    "\\Z",
    "\\h",
    "\\-",
    "\\_",
    "\\é",
    "[a-z]",
    "[^a]",
    "[\\d]",
    "[\\w-]",
    "[^\\s]",
    "[[:alpha:]]",
    "[[:^digit:]]",
    "[[:word:]]",
    "[]a]",
    "[a-\\d]",
    "[z-a]",
    "[\\D]",
    "[\\pL]",
    "[é-ü]",
    "[[:foo:]]",
    "[a",
    "^",
    "$",
    "(?i)",
    "(?s)",
    "(?m)",
    "(?U)",
    "(?-i)",
    "(?x)",
    "(?i",
    ")",
    "\\",
    "\\x4",
    "\\x{}",
    "\\x{110000}",
    "{01}",
    "{,2}",
    "\\p{^Greek}",
    "\\P{^L}",
    "\\pZ",
    "[\\p{Greek}a]",
    "[\\x{10}-\\x{20}]",
    "(?P<>x)",
    "(?P<a-b>x)",
    "(?-)",
    "(?i-)",
    "(?ii)",
];

const REPEATS: &[&str] = &[
    "*", "+", "?", "*?", "+?", "??", "{2}", "{2,}", "{1,3}", "{0}", "{1001}", "{3,2}", "{,2}",
    "{2}?", "**", "{", "{x}", "{0,0}", "{1000}", "{01}",
];

fn piece(rng: &mut Rng, depth: usize) -> String {
    let mut s = match rng.below(10) {
        0 | 1 if depth < 3 => {
            let open = rng.pick(&["(", "(?:", "(?i:", "(?P<n>", "(?s:", "(?-i:"]);
            format!("{open}{})", pattern(rng, depth + 1))
        }
        2 if depth < 3 => format!("{}|{}", pattern(rng, depth + 1), pattern(rng, depth + 1)),
        _ => rng.pick(ATOMS).to_string(),
    };
    if rng.below(4) == 0 {
        let rep: &&str = rng.pick(REPEATS);
        s.push_str(rep);
    }
    s
}

fn pattern(rng: &mut Rng, depth: usize) -> String {
    (0..1 + rng.below(4)).map(|_| piece(rng, depth)).collect()
}

fn input(rng: &mut Rng) -> String {
    const CHARS: &[&str] = &[
        "a", "b", "x", "A", "1", "9", "é", "É", "K", "k", "\u{212a}", "ß", "ẞ", "٣", "²", " ",
        "\u{a0}", "\u{b}", "\n", "\t", ".", "-", "_", "*", "λ", "Λ", "\0",
    ];
    (0..rng.below(8)).map(|_| *rng.pick(CHARS)).collect()
}

#[test]
fn patterns_compile_and_match_as_gos_regexp() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(bin) = go_oracle::build(
        dir.path(),
        &go_oracle::program(&["encoding/json", "fmt", "regexp"], ANSWER),
        "goregex",
        "",
        "golang-go",
    ) else {
        return;
    };
    let mut rng = Rng(0x853c_49e6_748f_ea9b);
    let mut cases: Vec<(String, String)> = Vec::new();
    for _ in 0..12_000 {
        let p = pattern(&mut rng, 0);
        for _ in 0..2 {
            cases.push((p.clone(), input(&mut rng)));
        }
    }
    let inputs: Vec<String> = cases
        .iter()
        .map(|(p, i)| serde_json::to_string(&[p, i]).expect("json"))
        .collect();
    let answers = go_oracle::answers(&bin, &inputs);
    let differ: Vec<String> = cases
        .iter()
        .zip(&answers)
        .filter_map(|((p, i), want)| {
            let got = ours(p, i);
            (&got != want).then(|| format!("{p:?} on {i:?}\n  go:   {want}\n  ours: {got}"))
        })
        .collect();
    assert!(
        differ.is_empty(),
        "{} of {} differ:\n{}",
        differ.len(),
        cases.len(),
        differ[..differ.len().min(25)].join("\n")
    );
}
