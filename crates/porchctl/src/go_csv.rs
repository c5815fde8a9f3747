//! pflag's string-slice flags (`StringSliceVar`, e.g. `rpkg init --keywords`): each value
//! is one record of Go's `encoding/csv` (comma-separated, `"` quoting with `""` for a
//! quote, no trimming), so `--keywords '"a,b",c'` gives `a,b` and `c`; an empty value gives
//! no element. Errors read as `csv.ParseError`'s.

/// `csv.ErrBareQuote`.
const BARE_QUOTE: &str = "bare \" in non-quoted-field";
/// `csv.ErrQuote`.
const QUOTE: &str = "extraneous or missing \" in quoted-field";

/// `csv.ParseError.Error()`: the record's first line and the error's position.
fn parse_error(start_line: usize, line: usize, column: usize, err: &str) -> String {
    if start_line == line {
        format!("parse error on line {line}, column {column}: {err}")
    } else {
        format!("record on line {start_line}; parse error on line {line}, column {column}: {err}")
    }
}

/// The lines of `s` as `csv.Reader.readLine` hands them out: each with its `\n`, `\r\n`
/// made `\n`, a `\r` ending the input dropped.
fn lines(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        let (mut line, next) = match rest.find('\n') {
            Some(i) => (rest[..=i].to_string(), &rest[i + 1..]),
            None => (rest.to_string(), ""),
        };
        if next.is_empty() && !line.ends_with('\n') && line.ends_with('\r') {
            line.pop();
        }
        if line.ends_with("\r\n") {
            line.truncate(line.len() - 2);
            line.push('\n');
        }
        out.push(line);
        rest = next;
    }
    out
}

fn newline_len(s: &str) -> usize {
    usize::from(s.ends_with('\n'))
}

/// pflag's `readAsCSV`: the first record of `value`.
pub fn read_as_csv(value: &str) -> Result<Vec<String>, String> {
    if value.is_empty() {
        return Ok(Vec::new());
    }
    let mut input = lines(value).into_iter();
    let mut line_no = 0;
    // Empty lines before the record are skipped, as csv.Reader does.
    let mut line = loop {
        match input.next() {
            Some(l) => {
                line_no += 1;
                if l.len() != newline_len(&l) {
                    break l;
                }
            }
            None => return Err("EOF".into()),
        }
    };
    let start = line_no;
    let (mut pos_line, mut pos_col) = (line_no, 1usize);
    let mut fields = Vec::new();
    'field: loop {
        if !line.starts_with('"') {
            let comma = line.find(',');
            let field = match comma {
                Some(i) => &line[..i],
                None => &line[..line.len() - newline_len(&line)],
            };
            if let Some(j) = field.find('"') {
                return Err(parse_error(start, pos_line, pos_col + j, BARE_QUOTE));
            }
            fields.push(field.to_string());
            match comma {
                Some(i) => {
                    line = line[i + 1..].to_string();
                    pos_col += i + 1;
                    continue 'field;
                }
                None => break 'field,
            }
        }
        // A quoted field, perhaps over several lines.
        let mut field = String::new();
        line = line[1..].to_string();
        pos_col += 1;
        loop {
            if let Some(i) = line.find('"') {
                field.push_str(&line[..i]);
                line = line[i + 1..].to_string();
                pos_col += i + 1;
                if line.starts_with('"') {
                    field.push('"');
                    line = line[1..].to_string();
                    pos_col += 1;
                } else if line.starts_with(',') {
                    line = line[1..].to_string();
                    pos_col += 1;
                    fields.push(field);
                    continue 'field;
                } else if newline_len(&line) == line.len() {
                    fields.push(field);
                    break 'field;
                } else {
                    return Err(parse_error(start, pos_line, pos_col - 1, QUOTE));
                }
            } else if !line.is_empty() {
                field.push_str(&line);
                pos_col += line.len();
                line = input.next().unwrap_or_default();
                // Go moves the position on only when the next line has something in it:
                // a last line that was just the `\r` readLine drops leaves it where it was.
                if !line.is_empty() {
                    pos_line += 1;
                    pos_col = 1;
                }
            } else {
                return Err(parse_error(start, pos_line, pos_col, QUOTE));
            }
        }
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::read_as_csv;

    #[test]
    fn records_as_encoding_csv_reads_them() {
        let ok = |s: &str| read_as_csv(s).expect(s);
        assert_eq!(ok(""), Vec::<String>::new());
        assert_eq!(ok("a"), ["a"]);
        assert_eq!(ok("a,b"), ["a", "b"]);
        assert_eq!(ok("a,,b,"), ["a", "", "b", ""]);
        assert_eq!(ok(" a , b"), [" a ", " b"]);
        assert_eq!(ok("\"a,b\",c"), ["a,b", "c"]);
        assert_eq!(ok("\"say \"\"hi\"\"\""), ["say \"hi\""]);
        assert_eq!(ok("\"\""), [""]);
        // One record: a second line is not read; a quoted field may span lines.
        assert_eq!(ok("a,b\nc"), ["a", "b"]);
        assert_eq!(ok("\"x\ny\",z"), ["x\ny", "z"]);
        assert_eq!(ok("a\r\n"), ["a"]);
    }

    #[test]
    fn malformed_records_fail_with_go_texts() {
        let err = |s: &str| read_as_csv(s).expect_err(s);
        assert_eq!(
            err("a\"b"),
            "parse error on line 1, column 2: bare \" in non-quoted-field"
        );
        assert_eq!(
            err("x,a\""),
            "parse error on line 1, column 4: bare \" in non-quoted-field"
        );
        assert_eq!(
            err("\"a"),
            "parse error on line 1, column 3: extraneous or missing \" in quoted-field"
        );
        assert_eq!(
            err("\"a\"b"),
            "parse error on line 1, column 3: extraneous or missing \" in quoted-field"
        );
        assert_eq!(
            err("\"a\nb\"c"),
            "record on line 1; parse error on line 2, column 2: extraneous or missing \" in quoted-field"
        );
    }

    #[test]
    fn a_last_carriage_return_is_no_line() {
        // readLine drops a `\r` ending the input, leaving an empty line that Go does not
        // count: the open quote is reported where the text ran out.
        let err = |s: &str| read_as_csv(s).expect_err(s);
        assert_eq!(
            err("\"a\n\r"),
            "parse error on line 1, column 4: extraneous or missing \" in quoted-field"
        );
        assert_eq!(
            err("\",\n\n\r"),
            "record on line 1; parse error on line 2, column 2: extraneous or missing \" in quoted-field"
        );
        assert_eq!(read_as_csv("\"a\n\r\"").expect("closed"), ["a\n\r"]);
    }
}

/// [`read_as_csv`] against pflag's `readAsCSV` over Go's own `encoding/csv`: generated
/// strings of `a`, `b`, commas, quotes, spaces, `\n` and `\r`; the fields or the error
/// text must agree.
#[cfg(test)]
mod go_differential {
    use super::read_as_csv;
    use crate::go_oracle;

    const ANSWER: &str = r#"
// pflag's readAsCSV, as its stringSlice flags call it.
func readAsCSV(val string) ([]string, error) {
	if val == "" {
		return []string{}, nil
	}
	stringReader := strings.NewReader(val)
	csvReader := csv.NewReader(stringReader)
	return csvReader.Read()
}

func answer(in string) string {
	b, _ := hex.DecodeString(strings.TrimPrefix(in, "x"))
	fields, err := readAsCSV(string(b))
	if err != nil {
		return fmt.Sprintf("err %s", err)
	}
	out := "ok"
	for _, f := range fields {
		out += fmt.Sprintf(" [%x]", f)
	}
	return out
}
"#;

    fn hex(s: &str) -> String {
        s.bytes().map(|b| format!("{b:02x}")).collect()
    }

    fn ours(s: &str) -> String {
        match read_as_csv(s) {
            Ok(fields) => {
                let mut out = String::from("ok");
                for f in fields {
                    out.push_str(&format!(" [{}]", hex(&f)));
                }
                out
            }
            Err(e) => format!("err {e}"),
        }
    }

    fn inputs() -> Vec<String> {
        let mut v: Vec<String> = [
            "",
            "\n",
            "\r",
            "\r\n",
            "\n\n",
            "\r\r",
            "\n\r",
            "a",
            "a\r",
            "a\r\r",
            "a\n",
            "a\r\n",
            "\na",
            "\r\na",
            "\n\na,b",
            "\"",
            "\"\"",
            "\"\"\"",
            "\"\"\"\"",
            "\"a",
            "\"a\n",
            "\"a\r\n",
            "\"a\n\r",
            "\"a\n\n",
            "\"a\nb",
            "\"a\nb\"",
            "\"a\nb\"c",
            "\"a\n\"c",
            "\"a\r\nb\"",
            "\"a\rb\"",
            "\"a\"\r",
            "\"a\"\r\n",
            "\"a\" ",
            " \"a\"",
            "a,\"b",
            "a,\"b\"",
            "a,\"b\"c",
            "a\"b",
            "a,b\"",
            ",",
            ",,",
            "\",\"",
            "\"a\",",
            "\"a\",\"",
            "\"\n\"",
            "\"\n\n\"",
            "\"\n\n\"x",
            "\"\r\"",
            "\"a\"\"",
            "\"a\n\"\"",
            "a,b\nc\"",
            "\n\"a\n\nb\"x",
            "\"\r\r",
            "\"a\n\r\r",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        // Weighted towards the characters that steer the reader.
        let alphabet = ['a', 'b', ',', ',', '"', '"', '"', ' ', '\n', '\n', '\r'];
        for _ in 0..5000 {
            let len = next() % 14;
            v.push(
                (0..len)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                    .collect(),
            );
        }
        v
    }

    #[test]
    fn reads_as_pflags_read_as_csv() {
        let dir = tempfile::tempdir().expect("tempdir");
        let Some(bin) = go_oracle::build(
            dir.path(),
            &go_oracle::program(&["encoding/csv", "encoding/hex", "fmt"], ANSWER),
            "gocsv",
            "",
            "golang-go",
        ) else {
            return;
        };
        let inputs = inputs();
        let encoded: Vec<String> = inputs.iter().map(|s| format!("x{}", hex(s))).collect();
        let go = go_oracle::answers(&bin, &encoded);
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
        assert_eq!(differ, 0, "{differ} of {} values differ", inputs.len());
    }
}
