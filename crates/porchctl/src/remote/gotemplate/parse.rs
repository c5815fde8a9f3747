//! Go's `text/template` parser over the lexer's items, with its three-token look-ahead,
//! variable scoping and error texts (`template: output:LINE: …`). `{{define}}`,
//! `{{template}}` and `{{block}}` are refused.

use std::fmt;

use super::funcs::Func;
use super::gofmt::quote;
use super::lex::{Item, T, lex};
use super::node::{
    Arg, Command, Control, Node, Pipe, TemplateCall, is_empty_tree, parse_number, unquote,
};

/// How deep parentheses and control structures may nest (Go has no limit; this keeps
/// the recursion well inside a thread's stack).
const MAX_DEPTH: usize = 100;

/// A parsed item of a list, `{{end}}` and `{{else}}` included.
enum Parsed {
    Node(Node),
    End,
    Else,
}

impl fmt::Display for Parsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Parsed::End => f.write_str("{{end}}"),
            Parsed::Else => f.write_str("{{else}}"),
            Parsed::Node(_) => f.write_str("node"),
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    If,
    With,
    Range,
}

struct Parser {
    items: std::vec::IntoIter<Item>,
    last: Item,
    token: [Item; 3],
    peek_count: usize,
    vars: Vec<String>,
    range_depth: usize,
    action_line: usize,
    depth: usize,
    /// The templates `{{define}}` and `{{block}}` name (Go's tree set).
    defs: Defs,
}

/// Named templates by name.
pub(super) type Defs = std::collections::BTreeMap<String, Vec<Node>>;

/// The nodes of `text` and the templates it defines, or Go's parse error.
pub(super) fn parse(text: &str) -> Result<(Vec<Node>, Defs), String> {
    let none = Item {
        typ: T::Eof,
        pos: 0,
        val: String::new(),
        line: 1,
    };
    let mut p = Parser {
        items: lex(text).into_iter(),
        last: none.clone(),
        token: [none.clone(), none.clone(), none],
        peek_count: 0,
        vars: vec!["$".into()],
        range_depth: 0,
        action_line: 0,
        depth: 0,
        defs: Defs::new(),
    };
    let root = p.root()?;
    // text/template adds the main tree ("output") last: a definition of that name stands
    // in for an empty main text, and is a second definition of a non-empty one.
    p.add("output", root.clone())?;
    let main = p.defs.remove("output").unwrap_or(root);
    Ok((main, p.defs))
}

impl Parser {
    fn lex_next(&mut self) -> Item {
        if let Some(item) = self.items.next() {
            self.last = item;
        }
        self.last.clone()
    }

    fn next(&mut self) -> Item {
        if self.peek_count > 0 {
            self.peek_count -= 1;
        } else {
            self.token[0] = self.lex_next();
        }
        self.token[self.peek_count].clone()
    }

    fn backup(&mut self) {
        self.peek_count += 1;
    }

    fn backup2(&mut self, t1: Item) {
        self.token[1] = t1;
        self.peek_count = 2;
    }

    fn backup3(&mut self, t2: Item, t1: Item) {
        self.token[1] = t1;
        self.token[2] = t2;
        self.peek_count = 3;
    }

    fn peek(&mut self) -> Item {
        if self.peek_count > 0 {
            return self.token[self.peek_count - 1].clone();
        }
        self.peek_count = 1;
        self.token[0] = self.lex_next();
        self.token[0].clone()
    }

    fn next_non_space(&mut self) -> Item {
        loop {
            let t = self.next();
            if t.typ != T::Space {
                return t;
            }
        }
    }

    fn peek_non_space(&mut self) -> Item {
        let t = self.next_non_space();
        self.backup();
        t
    }

    fn errorf(&self, msg: impl fmt::Display) -> String {
        format!("template: output:{}: {msg}", self.token[0].line)
    }

    fn unexpected(&self, token: &Item, context: &str) -> String {
        if token.typ == T::Error {
            let mut extra = String::new();
            if self.action_line != 0 && self.action_line != token.line {
                extra = format!(" in action started at output:{}", self.action_line);
                if token.val.ends_with(" action") {
                    extra = extra[" in action".len()..].to_string();
                }
            }
            return self.errorf(format!("{token}{extra}"));
        }
        self.errorf(format!("unexpected {token} in {context}"))
    }

    fn expect(&mut self, typ: T, context: &str) -> Result<Item, String> {
        let token = self.next_non_space();
        if token.typ != typ {
            return Err(self.unexpected(&token, context));
        }
        Ok(token)
    }

    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.errorf(format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        Ok(())
    }

    fn root(&mut self) -> Result<Vec<Node>, String> {
        let mut root = Vec::new();
        while self.peek().typ != T::Eof {
            if self.peek().typ == T::LeftDelim {
                let delim = self.next();
                if self.next_non_space().typ == T::Define {
                    self.define()?;
                    continue;
                }
                self.backup2(delim);
            }
            match self.text_or_action()? {
                Parsed::Node(n) => root.push(n),
                other => return Err(self.errorf(format!("unexpected {other}"))),
            }
        }
        Ok(root)
    }

    /// The nodes up to `{{end}}` or `{{else}}`, which is returned too.
    fn item_list(&mut self) -> Result<(Vec<Node>, Parsed), String> {
        let mut list = Vec::new();
        while self.peek_non_space().typ != T::Eof {
            match self.text_or_action()? {
                Parsed::Node(n) => list.push(n),
                end => return Ok((list, end)),
            }
        }
        Err(self.errorf("unexpected EOF"))
    }

    fn text_or_action(&mut self) -> Result<Parsed, String> {
        let token = self.next_non_space();
        match token.typ {
            T::Text => Ok(Parsed::Node(Node::Text(token.val))),
            T::LeftDelim => {
                self.action_line = token.line;
                let action = self.action();
                self.action_line = 0;
                action
            }
            _ => Err(self.unexpected(&token, "input")),
        }
    }

    fn action(&mut self) -> Result<Parsed, String> {
        let token = self.next_non_space();
        match token.typ {
            T::Block => self.block(),
            T::Template => {
                // Go places the node at its name.
                let name_token = self.next_non_space();
                let name = self.template_name(&name_token, "template clause")?;
                let pipe = if self.next_non_space().typ == T::RightDelim {
                    None
                } else {
                    self.backup();
                    // Variables it declares persist until `end`, as Go's do.
                    Some(self.pipeline("template clause", T::RightDelim)?)
                };
                Ok(Parsed::Node(Node::Template(TemplateCall {
                    pos: name_token.pos,
                    name,
                    pipe,
                })))
            }
            T::Break | T::Continue => {
                let word = token.val;
                let close = self.next_non_space();
                if close.typ != T::RightDelim {
                    return Err(self.unexpected(&close, &format!("{{{{{word}}}}}")));
                }
                if self.range_depth == 0 {
                    return Err(self.errorf(format!("{{{{{word}}}}} outside {{{{range}}}}")));
                }
                Ok(Parsed::Node(if word == "break" {
                    Node::Break
                } else {
                    Node::Continue
                }))
            }
            T::Else => {
                // `{{else if …}}` and `{{else with …}}` leave the keyword for the caller.
                let peek = self.peek_non_space();
                if peek.typ != T::If && peek.typ != T::With {
                    self.expect(T::RightDelim, "else")?;
                }
                Ok(Parsed::Else)
            }
            T::End => {
                self.expect(T::RightDelim, "end")?;
                Ok(Parsed::End)
            }
            T::If => Ok(Parsed::Node(Node::If(self.control(Kind::If)?))),
            T::With => Ok(Parsed::Node(Node::With(self.control(Kind::With)?))),
            T::Range => Ok(Parsed::Node(Node::Range(self.control(Kind::Range)?))),
            _ => {
                self.backup();
                Ok(Parsed::Node(Node::Action(
                    self.pipeline("command", T::RightDelim)?,
                )))
            }
        }
    }

    /// Go's `parseTemplateName`: a quoted string.
    fn template_name(&self, token: &Item, context: &str) -> Result<String, String> {
        match token.typ {
            T::String | T::RawString => {
                unquote(&token.val).ok_or_else(|| self.errorf("invalid syntax"))
            }
            _ => Err(self.unexpected(token, context)),
        }
    }

    /// A named template's body, parsed as Go parses a new tree: its own variables (only
    /// `$`) and range depth, up to its `{{end}}`.
    fn body(&mut self, context: &str) -> Result<Vec<Node>, String> {
        let vars = std::mem::replace(&mut self.vars, vec!["$".into()]);
        let ranges = std::mem::replace(&mut self.range_depth, 0);
        let result = self.item_list();
        self.vars = vars;
        self.range_depth = ranges;
        let (list, end) = result?;
        if !matches!(end, Parsed::End) {
            return Err(self.errorf(format!("unexpected {end} in {context}")));
        }
        Ok(list)
    }

    /// `{{define "name"}} … {{end}}` (the keyword read).
    fn define(&mut self) -> Result<(), String> {
        const CONTEXT: &str = "define clause";
        let token = self.next_non_space();
        if token.typ != T::String && token.typ != T::RawString {
            return Err(self.unexpected(&token, CONTEXT));
        }
        let name = unquote(&token.val).ok_or_else(|| self.errorf("invalid syntax"))?;
        self.expect(T::RightDelim, CONTEXT)?;
        let list = self.body(CONTEXT)?;
        self.add(&name, list)
    }

    /// `{{block "name" pipeline}} … {{end}}`: defines the template and calls it.
    fn block(&mut self) -> Result<Parsed, String> {
        const CONTEXT: &str = "block clause";
        let token = self.next_non_space();
        let pos = token.pos;
        let name = self.template_name(&token, CONTEXT)?;
        let pipe = self.pipeline(CONTEXT, T::RightDelim)?;
        let list = self.body(CONTEXT)?;
        self.add(&name, list)?;
        Ok(Parsed::Node(Node::Template(TemplateCall {
            pos,
            name,
            pipe: Some(pipe),
        })))
    }

    /// Go's `Tree.add`: a definition replaces an empty one; two that are not empty are
    /// an error.
    fn add(&mut self, name: &str, list: Vec<Node>) -> Result<(), String> {
        match self.defs.get(name) {
            Some(old) if !is_empty_tree(old) => {
                if !is_empty_tree(&list) {
                    return Err(self.errorf(format!(
                        "template: multiple definition of template {}",
                        super::go_quote(name)
                    )));
                }
            }
            _ => {
                self.defs.insert(name.to_string(), list);
            }
        }
        Ok(())
    }

    fn control(&mut self, kind: Kind) -> Result<Control, String> {
        self.enter()?;
        let mark = self.vars.len();
        let context = match kind {
            Kind::If => "if",
            Kind::With => "with",
            Kind::Range => "range",
        };
        let pipe = self.pipeline(context, T::RightDelim)?;
        if kind == Kind::Range {
            self.range_depth += 1;
        }
        let (list, next) = self.item_list()?;
        if kind == Kind::Range {
            self.range_depth -= 1;
        }
        let mut else_list = None;
        if let Parsed::Else = next {
            let chained = match kind {
                Kind::If if self.peek().typ == T::If => Some(Kind::If),
                Kind::With if self.peek().typ == T::With => Some(Kind::With),
                _ => None,
            };
            if let Some(k) = chained {
                // `{{if a}}…{{else if b}}…{{end}}` is `{{if a}}…{{else}}{{if b}}…{{end}}{{end}}`.
                self.next();
                let inner = self.control(k)?;
                else_list = Some(vec![if k == Kind::If {
                    Node::If(inner)
                } else {
                    Node::With(inner)
                }]);
            } else {
                let (l, end) = self.item_list()?;
                if !matches!(end, Parsed::End) {
                    return Err(self.errorf(format!("expected end; found {end}")));
                }
                else_list = Some(l);
            }
        }
        self.vars.truncate(mark);
        self.depth -= 1;
        Ok(Control {
            pipe,
            list,
            else_list,
        })
    }

    fn pipeline(&mut self, context: &str, end: T) -> Result<Pipe, String> {
        self.enter()?;
        let token = self.peek_non_space();
        let mut pipe = Pipe {
            pos: token.pos,
            is_assign: false,
            decl: Vec::new(),
            cmds: Vec::new(),
        };
        loop {
            let v = self.peek_non_space();
            if v.typ != T::Variable {
                break;
            }
            self.next();
            let after = self.peek();
            let next = self.peek_non_space();
            if next.typ == T::Assign || next.typ == T::Declare {
                pipe.is_assign = next.typ == T::Assign;
                self.next_non_space();
                pipe.decl.push(v.val.clone());
                self.vars.push(v.val);
            } else if next.typ == T::Char && next.val == "," {
                self.next_non_space();
                pipe.decl.push(v.val.clone());
                self.vars.push(v.val);
                if context == "range" && pipe.decl.len() < 2 {
                    match self.peek_non_space().typ {
                        T::Variable | T::RightDelim | T::RightParen => continue,
                        _ => return Err(self.errorf("range can only initialize variables")),
                    }
                }
                return Err(self.errorf(format!("too many declarations in {context}")));
            } else if after.typ == T::Space {
                self.backup3(v, after);
            } else {
                self.backup2(v);
            }
            break;
        }
        loop {
            let token = self.next_non_space();
            if token.typ == end {
                self.check_pipeline(&pipe, context)?;
                self.depth -= 1;
                return Ok(pipe);
            }
            match token.typ {
                T::Bool
                | T::CharConstant
                | T::Complex
                | T::Dot
                | T::Field
                | T::Identifier
                | T::Number
                | T::Nil
                | T::RawString
                | T::String
                | T::Variable
                | T::LeftParen => {
                    self.backup();
                    let cmd = self.command()?;
                    pipe.cmds.push(cmd);
                }
                _ => return Err(self.unexpected(&token, context)),
            }
        }
    }

    fn check_pipeline(&self, pipe: &Pipe, context: &str) -> Result<(), String> {
        if pipe.cmds.is_empty() {
            return Err(self.errorf(format!("missing value for {context}")));
        }
        for (i, c) in pipe.cmds.iter().enumerate().skip(1) {
            if matches!(
                c.args.first(),
                Some(
                    Arg::Bool { .. }
                        | Arg::Dot { .. }
                        | Arg::Nil { .. }
                        | Arg::Number { .. }
                        | Arg::String { .. }
                )
            ) {
                return Err(self.errorf(format!(
                    "non executable command in pipeline stage {}",
                    i + 1
                )));
            }
        }
        Ok(())
    }

    fn command(&mut self) -> Result<Command, String> {
        let pos = self.peek_non_space().pos;
        let mut args = Vec::new();
        loop {
            self.peek_non_space();
            if let Some(op) = self.operand()? {
                args.push(op);
            }
            let token = self.next();
            match token.typ {
                T::Space => continue,
                T::RightDelim | T::RightParen => self.backup(),
                T::Pipe => {}
                _ => return Err(self.unexpected(&token, "operand")),
            }
            break;
        }
        if args.is_empty() {
            return Err(self.errorf("empty command"));
        }
        Ok(Command { pos, args })
    }

    /// A term and the fields chained to it.
    fn operand(&mut self) -> Result<Option<Arg>, String> {
        let Some(node) = self.term()? else {
            return Ok(None);
        };
        if self.peek().typ != T::Field {
            return Ok(Some(node));
        }
        let pos = self.peek().pos;
        let mut fields = Vec::new();
        while self.peek().typ == T::Field {
            fields.push(self.next().val[1..].to_string());
        }
        Ok(Some(match node {
            Arg::Field { mut idents, .. } => {
                idents.extend(fields);
                Arg::Field { pos, idents }
            }
            Arg::Variable { mut idents, .. } => {
                idents.extend(fields);
                Arg::Variable { pos, idents }
            }
            Arg::Bool { .. }
            | Arg::String { .. }
            | Arg::Number { .. }
            | Arg::Nil { .. }
            | Arg::Dot { .. } => {
                let term = quote(&node.to_string(), false);
                return Err(self.errorf(format!("unexpected . after term {term}")));
            }
            other => Arg::Chain {
                pos,
                node: Box::new(other),
                fields,
            },
        }))
    }

    fn term(&mut self) -> Result<Option<Arg>, String> {
        let token = self.next_non_space();
        let pos = token.pos;
        Ok(Some(match token.typ {
            T::Identifier => {
                if Func::lookup(&token.val).is_none() {
                    let name = quote(&token.val, false);
                    return Err(self.errorf(format!("function {name} not defined")));
                }
                Arg::Identifier {
                    pos,
                    name: token.val,
                }
            }
            T::Dot => Arg::Dot { pos },
            T::Nil => Arg::Nil { pos },
            T::Variable => {
                if !self.vars.contains(&token.val) {
                    let name = quote(&token.val, false);
                    return Err(self.errorf(format!("undefined variable {name}")));
                }
                Arg::Variable {
                    pos,
                    idents: vec![token.val],
                }
            }
            T::Field => Arg::Field {
                pos,
                idents: vec![token.val[1..].to_string()],
            },
            T::Bool => Arg::Bool {
                pos,
                val: token.val == "true",
            },
            T::CharConstant | T::Complex | T::Number => Arg::Number {
                pos,
                num: parse_number(&token.val, token.typ == T::CharConstant)
                    .map_err(|e| self.errorf(e))?,
            },
            T::LeftParen => Arg::Pipe(Box::new(
                self.pipeline("parenthesized pipeline", T::RightParen)?,
            )),
            T::String | T::RawString => {
                let text = unquote(&token.val).ok_or_else(|| self.errorf("invalid syntax"))?;
                Arg::String {
                    pos,
                    quoted: token.val,
                    text,
                }
            }
            _ => {
                self.backup();
                return Ok(None);
            }
        }))
    }
}
