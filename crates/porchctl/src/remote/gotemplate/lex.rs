//! Go's `text/template` lexer, state by state: text, `{{`/`}}` with trim markers, comments,
//! and the tokens inside actions. Items carry their byte position and line; a lexing error
//! is an `Error` item holding the message, after which nothing more is read.

use std::fmt;

use super::gofmt::quote;

/// Item types, keywords last (Go's order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum T {
    Error,
    Bool,
    Char,
    CharConstant,
    Complex,
    Assign,
    Declare,
    Eof,
    Field,
    Identifier,
    LeftDelim,
    LeftParen,
    Number,
    Pipe,
    RawString,
    RightDelim,
    RightParen,
    Space,
    String,
    Text,
    Variable,
    // Keywords.
    Block,
    Break,
    Continue,
    Dot,
    Define,
    Else,
    End,
    If,
    Nil,
    Range,
    Template,
    With,
}

impl T {
    fn keyword(word: &str) -> Option<T> {
        Some(match word {
            "block" => T::Block,
            "break" => T::Break,
            "continue" => T::Continue,
            "define" => T::Define,
            "else" => T::Else,
            "end" => T::End,
            "if" => T::If,
            "nil" => T::Nil,
            "range" => T::Range,
            "template" => T::Template,
            "with" => T::With,
            _ => return None,
        })
    }

    fn is_keyword(self) -> bool {
        self >= T::Block
    }
}

#[derive(Debug, Clone)]
pub(super) struct Item {
    pub typ: T,
    pub pos: usize,
    pub val: String,
    pub line: usize,
}

/// How Go names a token in parse errors.
impl fmt::Display for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.typ {
            T::Eof => f.write_str("EOF"),
            T::Error => f.write_str(&self.val),
            t if t.is_keyword() => write!(f, "<{}>", self.val),
            _ if self.val.len() > 10 => {
                let head: String = self.val.chars().take(10).collect();
                write!(f, "{}...", quote(&head, false))
            }
            _ => f.write_str(&quote(&self.val, false)),
        }
    }
}

const LEFT: &str = "{{";
const RIGHT: &str = "}}";

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphabetic() || c.is_numeric()
}

fn has_left_trim(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && b[0] == b'-' && is_space(b[1] as char)
}

fn has_right_trim(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && is_space(b[0] as char) && b[1] == b'-'
}

/// `%#U`: `U+0029 ')'`.
fn sharp_u(c: Option<char>) -> String {
    match c {
        Some(c) if !c.is_control() => format!("U+{:04X} '{c}'", c as u32),
        Some(c) => format!("U+{:04X}", c as u32),
        None => "U+FFFFFFFFFFFFFFFF".into(),
    }
}

#[derive(Clone, Copy)]
enum State {
    Text,
    LeftDelim,
    Comment,
    RightDelim,
    InsideAction,
    Space,
    Identifier,
    Field,
    Variable,
    Char,
    Number,
    Quote,
    RawQuote,
}

struct Lexer<'s> {
    input: &'s str,
    pos: usize,
    start: usize,
    at_eof: bool,
    paren_depth: i32,
    line: usize,
    start_line: usize,
    items: Vec<Item>,
}

/// The items of `input`, ending with `Eof` or an `Error`.
pub(super) fn lex(input: &str) -> Vec<Item> {
    let mut l = Lexer {
        input,
        pos: 0,
        start: 0,
        at_eof: false,
        paren_depth: 0,
        line: 1,
        start_line: 1,
        items: Vec::new(),
    };
    let mut state = Some(State::Text);
    while let Some(s) = state {
        state = l.step(s);
    }
    l.items
}

impl Lexer<'_> {
    fn rest(&self) -> &str {
        &self.input[self.pos..]
    }

    fn next(&mut self) -> Option<char> {
        let Some(c) = self.rest().chars().next() else {
            self.at_eof = true;
            return None;
        };
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn peek(&mut self) -> Option<char> {
        let c = self.next();
        self.backup();
        c
    }

    fn backup(&mut self) {
        if !self.at_eof
            && let Some(c) = self.input[..self.pos].chars().next_back()
        {
            self.pos -= c.len_utf8();
            if c == '\n' {
                self.line -= 1;
            }
        }
    }

    fn emit(&mut self, typ: T) {
        self.items.push(Item {
            typ,
            pos: self.start,
            val: self.input[self.start..self.pos].to_string(),
            line: self.start_line,
        });
        self.start = self.pos;
        self.start_line = self.line;
    }

    fn ignore(&mut self) {
        self.line += self.input[self.start..self.pos].matches('\n').count();
        self.start = self.pos;
        self.start_line = self.line;
    }

    fn accept(&mut self, valid: &str) -> bool {
        match self.next() {
            Some(c) if valid.contains(c) => true,
            _ => {
                self.backup();
                false
            }
        }
    }

    fn accept_run(&mut self, valid: &str) {
        while matches!(self.next(), Some(c) if valid.contains(c)) {}
        self.backup();
    }

    fn errorf(&mut self, msg: String) -> Option<State> {
        self.items.push(Item {
            typ: T::Error,
            pos: self.start,
            val: msg,
            line: self.start_line,
        });
        None
    }

    fn at_right_delim(&self) -> (bool, bool) {
        let rest = self.rest();
        if has_right_trim(rest) && rest[2..].starts_with(RIGHT) {
            (true, true)
        } else {
            (rest.starts_with(RIGHT), false)
        }
    }

    /// Whether an identifier may end here (`.X.Y` splits into two fields).
    fn at_terminator(&mut self) -> bool {
        match self.peek() {
            None => true,
            Some(c) if is_space(c) || ".,|:)(".contains(c) => true,
            Some(_) => self.rest().starts_with(RIGHT),
        }
    }

    fn step(&mut self, state: State) -> Option<State> {
        match state {
            State::Text => self.text(),
            State::LeftDelim => self.left_delim(),
            State::Comment => self.comment(),
            State::RightDelim => self.right_delim(),
            State::InsideAction => self.inside_action(),
            State::Space => self.space(),
            State::Identifier => self.identifier(),
            State::Field => self.field_or_variable(T::Field),
            State::Variable => {
                if self.at_terminator() {
                    self.emit(T::Variable);
                    return Some(State::InsideAction);
                }
                self.field_or_variable(T::Variable)
            }
            State::Char => self.quoted('\'', "unterminated character constant", T::CharConstant),
            State::Number => self.number(),
            State::Quote => self.quoted('"', "unterminated quoted string", T::String),
            State::RawQuote => match self.rest().find('`') {
                Some(i) => {
                    let skipped = &self.input[self.pos..self.pos + i + 1];
                    self.line += skipped.matches('\n').count();
                    self.pos += i + 1;
                    self.emit(T::RawString);
                    Some(State::InsideAction)
                }
                None => self.errorf("unterminated raw quoted string".into()),
            },
        }
    }

    fn text(&mut self) -> Option<State> {
        if let Some(x) = self.rest().find(LEFT) {
            self.pos += x;
            let mut trim = 0;
            if has_left_trim(&self.input[self.pos + LEFT.len()..]) {
                let before = &self.input[self.start..self.pos];
                trim = before.len() - before.trim_end_matches(is_space).len();
            }
            self.pos -= trim;
            if self.pos > self.start {
                self.line += self.input[self.start..self.pos].matches('\n').count();
                self.emit(T::Text);
            }
            self.pos += trim;
            self.ignore();
            return Some(State::LeftDelim);
        }
        self.pos = self.input.len();
        if self.pos > self.start {
            self.line += self.input[self.start..self.pos].matches('\n').count();
            self.emit(T::Text);
        }
        self.emit(T::Eof);
        None
    }

    fn left_delim(&mut self) -> Option<State> {
        self.pos += LEFT.len();
        let after = if has_left_trim(self.rest()) { 2 } else { 0 };
        if self.input[self.pos + after..].starts_with("/*") {
            self.pos += after;
            self.ignore();
            return Some(State::Comment);
        }
        self.emit(T::LeftDelim);
        self.pos += after;
        self.ignore();
        self.paren_depth = 0;
        Some(State::InsideAction)
    }

    fn comment(&mut self) -> Option<State> {
        self.pos += 2;
        let Some(i) = self.rest().find("*/") else {
            return self.errorf("unclosed comment".into());
        };
        self.pos += i + 2;
        let (delim, trim) = self.at_right_delim();
        if !delim {
            return self.errorf("comment ends before closing delimiter".into());
        }
        if trim {
            self.pos += 2;
        }
        self.pos += RIGHT.len();
        if trim {
            self.pos += self.rest().len() - self.rest().trim_start_matches(is_space).len();
        }
        self.ignore();
        Some(State::Text)
    }

    fn right_delim(&mut self) -> Option<State> {
        let trim = has_right_trim(self.rest());
        if trim {
            self.pos += 2;
            self.ignore();
        }
        self.pos += RIGHT.len();
        self.emit(T::RightDelim);
        if trim {
            self.pos += self.rest().len() - self.rest().trim_start_matches(is_space).len();
            self.ignore();
        }
        Some(State::Text)
    }

    fn inside_action(&mut self) -> Option<State> {
        if self.at_right_delim().0 {
            if self.paren_depth == 0 {
                return Some(State::RightDelim);
            }
            return self.errorf("unclosed left paren".into());
        }
        let Some(c) = self.next() else {
            return self.errorf("unclosed action".into());
        };
        match c {
            _ if is_space(c) => {
                self.backup();
                return Some(State::Space);
            }
            '=' => self.emit(T::Assign),
            ':' => {
                if self.next() != Some('=') {
                    return self.errorf("expected :=".into());
                }
                self.emit(T::Declare);
            }
            '|' => self.emit(T::Pipe),
            '"' => return Some(State::Quote),
            '`' => return Some(State::RawQuote),
            '$' => return Some(State::Variable),
            '\'' => return Some(State::Char),
            '.' if !self.rest().starts_with(|d: char| d.is_ascii_digit())
                && !self.rest().is_empty() =>
            {
                return Some(State::Field);
            }
            '.' | '+' | '-' | '0'..='9' => {
                self.backup();
                return Some(State::Number);
            }
            _ if is_alphanumeric(c) => {
                self.backup();
                return Some(State::Identifier);
            }
            '(' => {
                self.emit(T::LeftParen);
                self.paren_depth += 1;
            }
            ')' => {
                self.paren_depth -= 1;
                if self.paren_depth < 0 {
                    return self.errorf("unexpected right paren".into());
                }
                self.emit(T::RightParen);
            }
            _ if c.is_ascii() && !c.is_ascii_control() => self.emit(T::Char),
            _ => {
                return self.errorf(format!(
                    "unrecognized character in action: {}",
                    sharp_u(Some(c))
                ));
            }
        }
        Some(State::InsideAction)
    }

    fn space(&mut self) -> Option<State> {
        let mut spaces = 0;
        while matches!(self.peek(), Some(c) if is_space(c)) {
            self.next();
            spaces += 1;
        }
        let last = &self.input[self.pos - 1..];
        if has_right_trim(last) && last[2..].starts_with(RIGHT) {
            self.backup();
            if spaces == 1 {
                return Some(State::RightDelim);
            }
        }
        self.emit(T::Space);
        Some(State::InsideAction)
    }

    fn identifier(&mut self) -> Option<State> {
        loop {
            let c = self.next();
            if matches!(c, Some(c) if is_alphanumeric(c)) {
                continue;
            }
            self.backup();
            if !self.at_terminator() {
                return self.errorf(format!("bad character {}", sharp_u(c)));
            }
            let word = &self.input[self.start..self.pos];
            let typ = match T::keyword(word) {
                Some(k) => k,
                None if word == "true" || word == "false" => T::Bool,
                None => T::Identifier,
            };
            self.emit(typ);
            return Some(State::InsideAction);
        }
    }

    fn field_or_variable(&mut self, typ: T) -> Option<State> {
        if self.at_terminator() {
            self.emit(if typ == T::Variable {
                T::Variable
            } else {
                T::Dot
            });
            return Some(State::InsideAction);
        }
        let mut c;
        loop {
            c = self.next();
            if !matches!(c, Some(c) if is_alphanumeric(c)) {
                self.backup();
                break;
            }
        }
        if !self.at_terminator() {
            return self.errorf(format!("bad character {}", sharp_u(c)));
        }
        self.emit(typ);
        Some(State::InsideAction)
    }

    /// A `"…"` or `'…'` literal (syntax checked by the parser); the quote is scanned.
    fn quoted(&mut self, quote: char, unterminated: &str, typ: T) -> Option<State> {
        loop {
            match self.next() {
                Some('\\') => {
                    if matches!(self.next(), Some(c) if c != '\n') {
                        continue;
                    }
                    return self.errorf(unterminated.into());
                }
                None | Some('\n') => return self.errorf(unterminated.into()),
                Some(c) if c == quote => break,
                Some(_) => {}
            }
        }
        self.emit(typ);
        Some(State::InsideAction)
    }

    fn number(&mut self) -> Option<State> {
        if !self.scan_number() {
            let bad = self.input[self.start..self.pos].to_string();
            return self.errorf(format!("bad number syntax: {}", quote(&bad, false)));
        }
        if matches!(self.peek(), Some('+' | '-')) {
            if !self.scan_number() || !self.input[..self.pos].ends_with('i') {
                let bad = self.input[self.start..self.pos].to_string();
                return self.errorf(format!("bad number syntax: {}", quote(&bad, false)));
            }
            self.emit(T::Complex);
        } else {
            self.emit(T::Number);
        }
        Some(State::InsideAction)
    }

    fn scan_number(&mut self) -> bool {
        self.accept("+-");
        let mut digits = "0123456789_";
        if self.accept("0") {
            if self.accept("xX") {
                digits = "0123456789abcdefABCDEF_";
            } else if self.accept("oO") {
                digits = "01234567_";
            } else if self.accept("bB") {
                digits = "01_";
            }
        }
        self.accept_run(digits);
        if self.accept(".") {
            self.accept_run(digits);
        }
        if digits.len() == 11 && self.accept("eE") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        if digits.len() == 23 && self.accept("pP") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        self.accept("i");
        if matches!(self.peek(), Some(c) if is_alphanumeric(c)) {
            self.next();
            return false;
        }
        true
    }
}
