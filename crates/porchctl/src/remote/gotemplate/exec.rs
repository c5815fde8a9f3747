//! Executing a parsed template, as Go's `text/template` `state` walks the tree: dot and
//! variables, field chains on maps (a missing key is no value), pipelines that pass each
//! result as the next command's last argument, `if`/`with`/`range` with Go's truth and
//! map order, and errors placed at the node being evaluated, in Go's words.

use serde_json::Value;

use super::funcs::{Func, Ty};
use super::gofmt;
use super::node::{Arg, Command, Control, Node, Pipe, TemplateCall};
use super::parse::Defs;
use super::value::Val;

/// The node an error is reported at (Go's `state.at`).
#[derive(Clone, Copy)]
enum At<'t> {
    Pipe(&'t Pipe),
    Cmd(&'t Command),
    Arg(&'t Arg),
    Template(&'t TemplateCall),
}

/// How deep templates may call templates (Go allows 100,000; see the module notes).
const MAX_TEMPLATE_DEPTH: usize = 1000;

/// Why a walk stopped early.
pub(super) enum Stop {
    Break,
    Continue,
    Err(String),
}

impl From<String> for Stop {
    fn from(e: String) -> Self {
        Stop::Err(e)
    }
}

pub(super) struct State<'t, 'a> {
    text: &'t str,
    pub out: String,
    vars: Vec<(&'t str, Val<'a>)>,
    node: Option<At<'t>>,
    /// `missingkey=error`.
    missing_error: bool,
    /// The named templates, the one running, and how deep calls go.
    defs: &'t Defs,
    name: &'t str,
    depth: usize,
}

type Res<T> = Result<T, String>;

impl<'t, 'a> State<'t, 'a> {
    pub fn new(text: &'t str, root: &'a Value, missing_error: bool, defs: &'t Defs) -> Self {
        State {
            text,
            out: String::new(),
            vars: vec![("$", Val::Data(root, false))],
            node: None,
            missing_error,
            defs,
            name: "output",
            depth: 0,
        }
    }

    fn at(&mut self, node: At<'t>) {
        self.node = Some(node);
    }

    /// Go's `state.errorf`: the message placed at the current node.
    fn errorf(&self, msg: impl std::fmt::Display) -> String {
        let Some(node) = self.node else {
            return format!("template: output: {msg}");
        };
        let (pos, context) = match node {
            At::Pipe(p) => (p.pos, p.to_string()),
            At::Cmd(c) => (c.pos, c.to_string()),
            At::Arg(a) => (a.pos(), a.to_string()),
            At::Template(t) => (t.pos, t.to_string()),
        };
        let before = &self.text[..pos.min(self.text.len())];
        let line = 1 + before.matches('\n').count();
        let col = before.rfind('\n').map_or(pos, |i| pos - i - 1);
        let name = super::go_quote(self.name);
        format!("template: output:{line}:{col}: executing {name} at <{context}>: {msg}")
    }

    pub fn walk_list(&mut self, dot: &Val<'a>, list: &'t [Node]) -> Result<(), Stop> {
        for node in list {
            self.walk(dot, node)?;
        }
        Ok(())
    }

    fn walk(&mut self, dot: &Val<'a>, node: &'t Node) -> Result<(), Stop> {
        match node {
            Node::Text(t) => self.out.push_str(t),
            Node::Action(pipe) => {
                let v = self.eval_pipeline(dot, pipe)?;
                if pipe.decl.is_empty() {
                    match v {
                        Val::Invalid => self.out.push_str("<no value>"),
                        v => self.out.push_str(&gofmt::sprint(&[v])),
                    }
                }
            }
            Node::If(c) => self.walk_if_or_with(false, dot, c)?,
            Node::With(c) => self.walk_if_or_with(true, dot, c)?,
            Node::Range(c) => self.walk_range(dot, c)?,
            Node::Break => return Err(Stop::Break),
            Node::Continue => return Err(Stop::Continue),
            Node::Template(t) => self.walk_template(dot, t)?,
        }
        Ok(())
    }

    /// Go's `walkTemplate`: the named template with the pipeline's value as dot and `$`,
    /// no other variables; variables the pipeline declares stay with the caller.
    fn walk_template(&mut self, dot: &Val<'a>, t: &'t TemplateCall) -> Result<(), Stop> {
        self.at(At::Template(t));
        let defs = self.defs;
        let Some(list) = defs.get(&t.name) else {
            let name = super::go_quote(&t.name);
            return Err(self.errorf(format!("template {name} not defined")).into());
        };
        if self.depth == MAX_TEMPLATE_DEPTH {
            return Err(self
                .errorf(format!(
                    "exceeded maximum template depth ({MAX_TEMPLATE_DEPTH})"
                ))
                .into());
        }
        let dot = match &t.pipe {
            Some(p) => self.eval_pipeline(dot, p)?,
            None => Val::Invalid,
        };
        let vars = std::mem::replace(&mut self.vars, vec![("$", dot.clone())]);
        let name = std::mem::replace(&mut self.name, t.name.as_str());
        self.depth += 1;
        let result = self.walk_list(&dot, list);
        self.depth -= 1;
        self.name = name;
        self.vars = vars;
        result
    }

    fn walk_if_or_with(&mut self, with: bool, dot: &Val<'a>, c: &'t Control) -> Result<(), Stop> {
        let mark = self.vars.len();
        let val = self.eval_pipeline(dot, &c.pipe)?;
        let result = if val.truth() {
            self.walk_list(if with { &val } else { dot }, &c.list)
        } else if let Some(e) = &c.else_list {
            self.walk_list(dot, e)
        } else {
            Ok(())
        };
        self.vars.truncate(mark);
        result
    }

    fn walk_range(&mut self, dot: &Val<'a>, c: &'t Control) -> Result<(), Stop> {
        let mark = self.vars.len();
        let result = self.range_over(dot, c);
        self.vars.truncate(mark);
        match result {
            Err(Stop::Break) => Ok(()),
            other => other,
        }
    }

    fn range_over(&mut self, dot: &Val<'a>, c: &'t Control) -> Result<(), Stop> {
        let val = self.eval_pipeline(dot, &c.pipe)?;
        let mark = self.vars.len();
        if let Some(items) = val.array()
            && !items.is_empty()
        {
            for (i, item) in items.iter().enumerate() {
                if !self.once(c, mark, Val::Int(i as i64), Val::elem(item))? {
                    break;
                }
            }
            return Ok(());
        }
        if let Some(m) = val.object()
            && !m.is_empty()
        {
            let mut keys: Vec<&'a String> = m.keys().collect();
            keys.sort();
            for k in keys {
                if !self.once(c, mark, Val::Str(k.clone()), Val::elem(&m[k]))? {
                    break;
                }
            }
            return Ok(());
        }
        if val.array().is_none() && val.object().is_none() && !matches!(val, Val::Invalid) {
            let shown = gofmt::sprint(std::slice::from_ref(&val));
            return Err(self
                .errorf(format!("range can't iterate over {shown}"))
                .into());
        }
        if let Some(e) = &c.else_list {
            self.walk_list(dot, e)?;
        }
        Ok(())
    }

    /// One iteration of a range; false after `{{break}}`.
    fn once(
        &mut self,
        c: &'t Control,
        mark: usize,
        index: Val<'a>,
        elem: Val<'a>,
    ) -> Result<bool, Stop> {
        let n = c.pipe.decl.len();
        if n > 0 {
            self.vars[mark - 1].1 = elem.clone();
        }
        if n > 1 {
            self.vars[mark - 2].1 = index;
        }
        let result = self.walk_list(&elem, &c.list);
        self.vars.truncate(mark);
        match result {
            Ok(()) | Err(Stop::Continue) => Ok(true),
            Err(Stop::Break) => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn eval_pipeline(&mut self, dot: &Val<'a>, pipe: &'t Pipe) -> Res<Val<'a>> {
        self.at(At::Pipe(pipe));
        let mut value: Option<Val<'a>> = None;
        for cmd in &pipe.cmds {
            value = Some(self.eval_command(dot, cmd, value.take())?.unboxed());
        }
        let value = value.unwrap_or(Val::Invalid);
        for name in &pipe.decl {
            if pipe.is_assign {
                match self.vars.iter_mut().rev().find(|(n, _)| n == name) {
                    Some(slot) => slot.1 = value.clone(),
                    None => return Err(self.errorf(format!("undefined variable: {name}"))),
                }
            } else {
                self.vars.push((name, value.clone()));
            }
        }
        Ok(value)
    }

    fn not_a_function(&self, args: &[Arg], fin: &Option<Val<'a>>) -> Res<()> {
        if args.len() > 1 || fin.is_some() {
            return Err(self.errorf(format!("can't give argument to non-function {}", args[0])));
        }
        Ok(())
    }

    fn eval_command(
        &mut self,
        dot: &Val<'a>,
        cmd: &'t Command,
        fin: Option<Val<'a>>,
    ) -> Res<Val<'a>> {
        let first = &cmd.args[0];
        match first {
            Arg::Field { idents, .. } => {
                self.at(At::Arg(first));
                return self.eval_field_chain(dot.clone(), idents, &cmd.args, fin);
            }
            Arg::Chain { .. } => return self.eval_chain(dot, first, &cmd.args, fin),
            Arg::Identifier { name, .. } => {
                return self.eval_function(dot, first, name, At::Cmd(cmd), &cmd.args[1..], fin);
            }
            Arg::Pipe(p) => {
                self.not_a_function(&cmd.args, &fin)?;
                return self.eval_pipeline(dot, p);
            }
            Arg::Variable { .. } => return self.eval_variable(first, &cmd.args, fin),
            _ => {}
        }
        self.at(At::Arg(first));
        self.not_a_function(&cmd.args, &fin)?;
        match first {
            Arg::Nil { .. } => Err(self.errorf("nil is not a command")),
            other => self.literal(dot, other),
        }
    }

    /// A literal where any type goes (Go's `evalEmptyInterface` and `idealConstant`).
    fn literal(&self, dot: &Val<'a>, arg: &Arg) -> Res<Val<'a>> {
        Ok(match arg {
            Arg::Bool { val, .. } => Val::Bool(*val),
            Arg::Dot { .. } => dot.clone(),
            Arg::String { text, .. } => Val::Str(text.clone()),
            Arg::Number { num, .. } => {
                let rune = num.text.starts_with('\'');
                let hex_int = num.text.len() > 2
                    && num
                        .text
                        .get(..2)
                        .is_some_and(|p| p.eq_ignore_ascii_case("0x"))
                    && !num.text.contains(['p', 'P']);
                match (num.float, num.int) {
                    (Some(f), _)
                        if !hex_int && !rune && num.text.contains(['.', 'e', 'E', 'p', 'P']) =>
                    {
                        Val::Float(f)
                    }
                    (_, Some(i)) => Val::Int(i),
                    _ if num.uint => return Err(self.errorf(format!("{} overflows int", num.text))),
                    _ => Val::Invalid,
                }
            }
            other => return Err(self.errorf(format!("can't evaluate command {other}"))),
        })
    }

    fn eval_variable(
        &mut self,
        var: &'t Arg,
        args: &'t [Arg],
        fin: Option<Val<'a>>,
    ) -> Res<Val<'a>> {
        self.at(At::Arg(var));
        let Arg::Variable { idents, .. } = var else {
            return Ok(Val::Invalid);
        };
        let name = idents[0].as_str();
        let Some(value) = self
            .vars
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
        else {
            return Err(self.errorf(format!("undefined variable: {name}")));
        };
        if idents.len() == 1 {
            self.not_a_function(args, &fin)?;
            return Ok(value);
        }
        self.eval_field_chain(value, &idents[1..], args, fin)
    }

    fn eval_chain(
        &mut self,
        dot: &Val<'a>,
        chain: &'t Arg,
        args: &'t [Arg],
        fin: Option<Val<'a>>,
    ) -> Res<Val<'a>> {
        self.at(At::Arg(chain));
        let Arg::Chain { node, fields, .. } = chain else {
            return Ok(Val::Invalid);
        };
        let receiver = self.eval_arg(dot, Ty::Untyped, node)?;
        self.eval_field_chain(receiver, fields, args, fin)
    }

    /// `.a.b.c` from `receiver`; only the last field may get arguments (an error on maps).
    fn eval_field_chain(
        &mut self,
        receiver: Val<'a>,
        idents: &'t [String],
        args: &'t [Arg],
        fin: Option<Val<'a>>,
    ) -> Res<Val<'a>> {
        let mut receiver = receiver;
        let last = idents.len() - 1;
        for (i, name) in idents.iter().enumerate() {
            let has_args = i == last && (args.len() > 1 || fin.is_some());
            receiver = self.eval_field(name, has_args, receiver)?;
        }
        Ok(receiver)
    }

    fn eval_field(&self, name: &str, has_args: bool, receiver: Val<'a>) -> Res<Val<'a>> {
        if matches!(receiver, Val::Invalid) {
            if self.missing_error {
                return Err(self.errorf(format!(
                    "nil data; no entry for key {}",
                    super::go_quote(name)
                )));
            }
            return Ok(Val::Invalid);
        }
        if matches!(receiver, Val::Nil) {
            return Err(self.errorf(format!("nil pointer evaluating interface {{}}.{name}")));
        }
        let Some(m) = receiver.object() else {
            let typ = receiver.static_type();
            return Err(self.errorf(format!("can't evaluate field {name} in type {typ}")));
        };
        if has_args {
            return Err(self.errorf(format!("{name} is not a method but has arguments")));
        }
        match m.get(name) {
            Some(v) => Ok(Val::elem(v)),
            None if self.missing_error => Err(self.errorf(format!(
                "map has no entry for key {}",
                super::go_quote(name)
            ))),
            None => Ok(Val::Invalid),
        }
    }

    fn eval_function(
        &mut self,
        dot: &Val<'a>,
        ident: &'t Arg,
        name: &str,
        call_node: At<'t>,
        args: &'t [Arg],
        fin: Option<Val<'a>>,
    ) -> Res<Val<'a>> {
        self.at(At::Arg(ident));
        let Some(func) = Func::lookup(name) else {
            return Err(self.errorf(format!(
                "{} is not a defined function",
                gofmt::quote(name, false)
            )));
        };
        let (fixed, variadic) = func.signature();
        let num_in = args.len() + usize::from(fin.is_some());
        if variadic.is_some() {
            if num_in < fixed.len() {
                return Err(self.errorf(format!(
                    "wrong number of args for {name}: want at least {} got {}",
                    fixed.len(),
                    args.len()
                )));
            }
        } else if num_in != fixed.len() {
            return Err(self.errorf(format!(
                "wrong number of args for {name}: want {} got {num_in}",
                fixed.len()
            )));
        }
        let ty = |i: usize| fixed.get(i).copied().or(variadic).unwrap_or(Ty::Any);
        if matches!(func, Func::And | Func::Or) {
            let mut v = Val::Invalid;
            for arg in args {
                v = self.eval_arg(dot, Ty::Value, arg)?;
                if v.truth() == (func == Func::Or) {
                    return Ok(v);
                }
            }
            if let Some(f) = fin {
                v = self.validate_type(f, Ty::Value)?;
            }
            return Ok(v);
        }
        let mut argv = Vec::with_capacity(num_in);
        for (i, arg) in args.iter().enumerate() {
            argv.push(self.eval_arg(dot, ty(i), arg)?);
        }
        if let Some(f) = fin {
            argv.push(self.validate_type(f, ty(num_in - 1))?);
        }
        let first = args.first().map(ToString::to_string).unwrap_or_default();
        func.call(argv, &first).map_err(|e| {
            self.at(call_node);
            self.errorf(format!("error calling {name}: {e}"))
        })
    }

    /// An argument evaluated for a parameter of type `ty` (Go's `evalArg`).
    fn eval_arg(&mut self, dot: &Val<'a>, ty: Ty, arg: &'t Arg) -> Res<Val<'a>> {
        self.at(At::Arg(arg));
        let value = match arg {
            Arg::Dot { .. } => dot.clone(),
            Arg::Nil { .. } => {
                return match ty {
                    Ty::Value | Ty::Untyped => Ok(Val::Invalid),
                    Ty::Any => Ok(Val::Nil),
                    Ty::Str => Err(self.errorf("cannot assign nil to string")),
                };
            }
            Arg::Field { idents, .. } => {
                self.eval_field_chain(dot.clone(), idents, std::slice::from_ref(arg), None)?
            }
            Arg::Variable { .. } => self.eval_variable(arg, &[], None)?,
            Arg::Pipe(p) => self.eval_pipeline(dot, p)?,
            Arg::Identifier { name, .. } => {
                self.eval_function(dot, arg, name, At::Arg(arg), &[], None)?
            }
            Arg::Chain { .. } => self.eval_chain(dot, arg, &[], None)?,
            Arg::String { text, .. } if ty == Ty::Str => return Ok(Val::Str(text.clone())),
            other if ty == Ty::Str => {
                return Err(self.errorf(format!("expected string; found {other}")));
            }
            other => return self.literal(dot, other),
        };
        self.validate_type(value, ty)
    }

    /// Go's `validateType`: a missing value where one is needed, a string that is not.
    fn validate_type(&self, value: Val<'a>, ty: Ty) -> Res<Val<'a>> {
        match (&value, ty) {
            (Val::Invalid, Ty::Any) => Ok(Val::Nil),
            (Val::Invalid, Ty::Str) => Err(self.errorf("invalid value; expected string")),
            (_, Ty::Str) if !matches!(value.conc(), super::value::Conc::Str(_)) => {
                let got = match value {
                    Val::Nil => "interface {}",
                    _ => value.conc().type_name(),
                };
                Err(self.errorf(format!("wrong type for value; expected string; got {got}")))
            }
            _ => Ok(value),
        }
    }
}
