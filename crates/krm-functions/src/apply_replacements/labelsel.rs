//! Label and annotation selector strings as kyaml reads them (its copy of
//! apimachinery v0.17's `labels.Parse`): a lexer, a recursive-descent parser
//! with apimachinery's error texts, key and value validation, and matching
//! against a string map.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use kpt::goquote::go_quote;
use regex::Regex;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    End,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// The tokens of `s`, ending with [`Tok::End`]. A NUL byte ends the input,
/// as the Go lexer reads it.
fn lex(s: &str) -> Vec<(Tok, String)> {
    let b = s.as_bytes();
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        while is_whitespace(at(i)) {
            i += 1;
        }
        let c = at(i);
        if c == 0 {
            out.push((Tok::End, String::new()));
            return out;
        }
        if is_special(c) {
            // The longest operator: only `==` and `!=` have two characters.
            let (tok, len) = match (c, at(i + 1)) {
                (b'=', b'=') => (Tok::DoubleEquals, 2),
                (b'!', b'=') => (Tok::NotEquals, 2),
                (b'=', _) => (Tok::Equals, 1),
                (b'!', _) => (Tok::DoesNotExist, 1),
                (b'(', _) => (Tok::OpenPar, 1),
                (b')', _) => (Tok::ClosedPar, 1),
                (b',', _) => (Tok::Comma, 1),
                (b'>', _) => (Tok::GreaterThan, 1),
                _ => (Tok::LessThan, 1),
            };
            out.push((tok, s[i..i + len].to_string()));
            i += len;
            continue;
        }
        let start = i;
        while !matches!(at(i), 0) && !is_special(at(i)) && !is_whitespace(at(i)) {
            i += 1;
        }
        // Both ends sit at ASCII bytes (or the end), so this is a char boundary.
        let lit = s.get(start..i).unwrap_or_default().to_string();
        let tok = match lit.as_str() {
            "in" => Tok::In,
            "notin" => Tok::NotIn,
            _ => Tok::Identifier,
        };
        out.push((tok, lit));
    }
}

/// A requirement's operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    In,
    NotIn,
    Equals,
    NotEquals,
    Exists,
    DoesNotExist,
    GreaterThan,
    LessThan,
}

/// One parsed requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Requirement {
    key: String,
    op: Op,
    values: Vec<String>,
}

impl Requirement {
    /// Whether a label map (`get` gives a key's value, `None` when absent)
    /// satisfies the requirement.
    fn matches<'a>(&self, get: &impl Fn(&str) -> Option<&'a str>) -> bool {
        let has = |v: &str| self.values.iter().any(|x| x == v);
        match (self.op, get(&self.key)) {
            (Op::In | Op::Equals, Some(v)) => has(v),
            (Op::In | Op::Equals, None) => false,
            (Op::NotIn | Op::NotEquals, Some(v)) => !has(v),
            (Op::NotIn | Op::NotEquals, None) => true,
            (Op::Exists, v) => v.is_some(),
            (Op::DoesNotExist, v) => v.is_none(),
            (Op::GreaterThan | Op::LessThan, None) => false,
            (op, Some(v)) => {
                let (Ok(actual), Some(Ok(bound))) = (
                    v.parse::<i64>(),
                    self.values.first().map(|b| b.parse::<i64>()),
                ) else {
                    return false;
                };
                if op == Op::GreaterThan {
                    actual > bound
                } else {
                    actual < bound
                }
            }
        }
    }
}

/// Whether every requirement holds.
pub(crate) fn matches_all<'a>(reqs: &[Requirement], get: impl Fn(&str) -> Option<&'a str>) -> bool {
    reqs.iter().all(|r| r.matches(&get))
}

struct Parser {
    items: Vec<(Tok, String)>,
    pos: usize,
}

/// Where a token is read: `in` and `notin` are plain identifiers among values.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    KeyAndOperator,
    Values,
}

impl Parser {
    fn peek(&self, ctx: Ctx) -> (Tok, String) {
        let (tok, lit) = self
            .items
            .get(self.pos)
            .cloned()
            .unwrap_or((Tok::End, String::new()));
        match tok {
            Tok::In | Tok::NotIn if ctx == Ctx::Values => (Tok::Identifier, lit),
            _ => (tok, lit),
        }
    }

    fn next(&mut self, ctx: Ctx) -> (Tok, String) {
        let item = self.peek(ctx);
        self.pos += 1;
        item
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut reqs = Vec::new();
        loop {
            let (tok, lit) = self.peek(Ctx::Values);
            match tok {
                Tok::Identifier | Tok::DoesNotExist => {
                    let r = self
                        .requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    reqs.push(r);
                    let (t, l) = self.next(Ctx::Values);
                    match t {
                        Tok::End => return Ok(reqs),
                        Tok::Comma => {
                            let (t2, l2) = self.peek(Ctx::Values);
                            if t2 != Tok::Identifier && t2 != Tok::DoesNotExist {
                                return Err(format!(
                                    "found '{l2}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => return Err(format!("found '{l}', expected: ',' or 'end of string'")),
                    }
                }
                Tok::End => return Ok(reqs),
                _ => {
                    return Err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    ));
                }
            }
        }
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let (key, op) = self.key_and_inferred_operator()?;
        if let Some(op @ (Op::Exists | Op::DoesNotExist)) = op {
            return new_requirement(key, op, Vec::new());
        }
        let op = self.operator()?;
        let values = match op {
            Op::In | Op::NotIn => self.values()?,
            _ => self.exact_value()?,
        };
        new_requirement(key, op, values.into_iter().collect())
    }

    fn key_and_inferred_operator(&mut self) -> Result<(String, Option<Op>), String> {
        let mut op = None;
        let (mut tok, mut lit) = self.next(Ctx::Values);
        if tok == Tok::DoesNotExist {
            op = Some(Op::DoesNotExist);
            (tok, lit) = self.next(Ctx::Values);
        }
        if tok != Tok::Identifier {
            return Err(format!("found '{lit}', expected: identifier"));
        }
        validate_key(&lit)?;
        if matches!(self.peek(Ctx::Values).0, Tok::End | Tok::Comma) && op.is_none() {
            op = Some(Op::Exists);
        }
        Ok((lit, op))
    }

    fn operator(&mut self) -> Result<Op, String> {
        let (tok, lit) = self.next(Ctx::KeyAndOperator);
        Ok(match tok {
            Tok::In => Op::In,
            Tok::Equals | Tok::DoubleEquals => Op::Equals,
            Tok::GreaterThan => Op::GreaterThan,
            Tok::LessThan => Op::LessThan,
            Tok::NotIn => Op::NotIn,
            Tok::NotEquals => Op::NotEquals,
            _ => {
                return Err(format!(
                    "found '{lit}', expected: '=', '!=', '==', 'in', notin'"
                ));
            }
        })
    }

    /// `(a,b,...)`; empty members are "".
    fn values(&mut self) -> Result<BTreeSet<String>, String> {
        let (tok, lit) = self.next(Ctx::Values);
        if tok != Tok::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (tok, lit) = self.peek(Ctx::Values);
        match tok {
            Tok::Identifier | Tok::Comma => {
                let set = self.identifiers()?;
                if self.next(Ctx::Values).0 != Tok::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(set)
            }
            Tok::ClosedPar => {
                self.next(Ctx::Values);
                Ok(BTreeSet::from([String::new()]))
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    fn identifiers(&mut self) -> Result<BTreeSet<String>, String> {
        let mut set = BTreeSet::new();
        loop {
            let (tok, lit) = self.next(Ctx::Values);
            match tok {
                Tok::Identifier => {
                    set.insert(lit);
                    let (t2, l2) = self.peek(Ctx::Values);
                    match t2 {
                        Tok::Comma => continue,
                        Tok::ClosedPar => return Ok(set),
                        _ => return Err(format!("found '{l2}', expected: ',' or ')'")),
                    }
                }
                Tok::Comma => {
                    set.insert(String::new());
                    match self.peek(Ctx::Values).0 {
                        Tok::ClosedPar => return Ok(set),
                        Tok::Comma => {
                            self.next(Ctx::Values);
                        }
                        _ => {}
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    fn exact_value(&mut self) -> Result<BTreeSet<String>, String> {
        if matches!(self.peek(Ctx::Values).0, Tok::End | Tok::Comma) {
            return Ok(BTreeSet::from([String::new()]));
        }
        match self.next(Ctx::Values) {
            (Tok::Identifier, lit) => Ok(BTreeSet::from([lit])),
            (_, lit) => Err(format!("found '{lit}', expected: identifier")),
        }
    }
}

/// apimachinery `NewRequirement`'s checks (the parser only builds valid
/// shapes, so what remains are the integer bound and the values).
fn new_requirement(key: String, op: Op, values: Vec<String>) -> Result<Requirement, String> {
    validate_key(&key)?;
    if matches!(op, Op::GreaterThan | Op::LessThan)
        && values.iter().any(|v| v.parse::<i64>().is_err())
    {
        return Err("for 'Gt', 'Lt' operators, the value must be an integer".into());
    }
    for v in &values {
        let errs = label_value_errors(v);
        if !errs.is_empty() {
            return Err(format!(
                "invalid label value: {}: at key: {}: {}",
                go_quote(v),
                go_quote(&key),
                errs.join("; ")
            ));
        }
    }
    Ok(Requirement { key, op, values })
}

/// Parses a selector string (`labels.Parse`).
pub(crate) fn parse(s: &str) -> Result<Vec<Requirement>, String> {
    let mut p = Parser {
        items: lex(s),
        pos: 0,
    };
    p.parse()
}

const QNAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QNAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_MSG: &str = "a DNS-1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

/// A format matched against the whole text (the formats are constant and
/// compile; were one not to, nothing would match it).
struct Whole(LazyLock<Option<Regex>>);

impl Whole {
    const fn new(init: fn() -> Option<Regex>) -> Whole {
        Whole(LazyLock::new(init))
    }

    fn is_match(&self, s: &str) -> bool {
        self.0.as_ref().is_some_and(|re| re.is_match(s))
    }
}

fn whole(fmt: &str) -> Option<Regex> {
    Regex::new(&format!("\\A(?:{fmt})\\z")).ok()
}

static QNAME: Whole = Whole::new(|| whole(QNAME_FMT));
static LABEL_VALUE: Whole = Whole::new(|| whole(LABEL_VALUE_FMT));
static DNS1123_SUBDOMAIN: Whole = Whole::new(|| whole(DNS1123_SUBDOMAIN_FMT));

/// apimachinery `RegexError`: the message, the examples, the format.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let examples: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{msg} (e.g. {}regex used for validation is '{fmt}')",
        examples.join(" or ")
    )
}

fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

fn validate_key(k: &str) -> Result<(), String> {
    let errs = qualified_name_errors(k);
    if errs.is_empty() {
        return Ok(());
    }
    Err(format!(
        "invalid label key {}: {}",
        go_quote(k),
        errs.join("; ")
    ))
}

/// apimachinery `IsQualifiedName`.
fn qualified_name_errors(value: &str) -> Vec<String> {
    let qname_error = || regex_error(QNAME_MSG, QNAME_FMT, &["MyName", "my.name", "123-abc"]);
    let parts: Vec<&str> = value.split('/').collect();
    let mut errs = Vec::new();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                if prefix.len() > 253 {
                    errs.push(format!("prefix part {}", max_len_error(253)));
                }
                if !DNS1123_SUBDOMAIN.is_match(prefix) {
                    errs.push(format!(
                        "prefix part {}",
                        regex_error(
                            DNS1123_SUBDOMAIN_MSG,
                            DNS1123_SUBDOMAIN_FMT,
                            &["example.com"]
                        )
                    ));
                }
            }
            *name
        }
        _ => {
            return vec![format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                qname_error()
            )];
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len_error(63)));
    }
    if !QNAME.is_match(name) {
        errs.push(format!("name part {}", qname_error()));
    }
    errs
}

/// apimachinery `IsValidLabelValue`.
fn label_value_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !LABEL_VALUE.is_match(value) {
        errs.push(regex_error(
            LABEL_VALUE_MSG,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(s: &str, labels: &[(&str, &str)]) -> Result<bool, String> {
        let reqs = parse(s)?;
        Ok(matches_all(&reqs, |k| {
            labels.iter().find(|(key, _)| *key == k).map(|(_, v)| *v)
        }))
    }

    #[test]
    fn parses_and_matches_like_apimachinery() {
        let l = [("app", "web"), ("tier", "fe"), ("n", "7")];
        assert_eq!(check("", &l), Ok(true));
        assert_eq!(check("app=web", &l), Ok(true));
        assert_eq!(check("app == web , tier", &l), Ok(true));
        assert_eq!(check("app!=web", &l), Ok(false));
        assert_eq!(check("app in(api,web)", &l), Ok(true));
        assert_eq!(check("app notin (web)", &l), Ok(false));
        assert_eq!(check("!missing", &l), Ok(true));
        assert_eq!(check("missing", &l), Ok(false));
        assert_eq!(check("n>5,n<8", &l), Ok(true));
        assert_eq!(check("x in (in, notin)", &l), Ok(false));
        assert_eq!(check("missing=", &l), Ok(false));
        assert_eq!(check("missing notin ()", &l), Ok(true));
    }

    #[test]
    fn errors_read_as_apimachinery_writes_them() {
        let err = |s: &str| parse(s).err().unwrap_or_default();
        assert_eq!(
            err("a b"),
            "unable to parse requirement: found 'b', expected: '=', '!=', '==', 'in', notin'"
        );
        assert_eq!(
            err("=a"),
            "found '=', expected: !, identifier, or 'end of string'"
        );
        assert_eq!(err("a,"), "found '', expected: identifier after ','");
        assert_eq!(
            err("a in b"),
            "unable to parse requirement: found 'b' expected: '('"
        );
        assert_eq!(
            err("n>x"),
            "unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer"
        );
        assert_eq!(err("a=b c"), "found 'c', expected: ',' or 'end of string'");
        assert_eq!(err("a=b!"), "found '!', expected: ',' or 'end of string'");
        assert_eq!(
            err("a=-x"),
            "unable to parse requirement: invalid label value: \"-x\": at key: \"a\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        );
        assert_eq!(
            err("/a"),
            "unable to parse requirement: invalid label key \"/a\": prefix part must be non-empty"
        );
    }
}
