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
                if let Some(next) = input.next() {
                    line = next;
                    pos_line += 1;
                    pos_col = 1;
                } else {
                    line = String::new();
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
}
