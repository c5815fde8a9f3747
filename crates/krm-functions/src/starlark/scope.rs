//! go.starlark.net's name resolution where it differs from the Rust crate's.
//!
//! With `AllowGlobalReassign` (which the catalog sets), a name used at the top
//! level refers to what is bound *before* that point, as in Python: a use
//! before the first binding is the compile-time error `undefined: x`, raised
//! before anything runs (the crate instead fails when the use is reached,
//! with "referenced before assignment"). Go also words a global read before
//! its assignment differently from a local one, and suggests a similar name
//! it knows at that point (`undefined: itmes (did you mean items?)`).

use std::collections::HashSet;

use ::starlark::codemap::Span;
use ::starlark::syntax::AstModule;
use ::starlark::syntax::ast::{
    AssignP, AstAssignTarget, AstExpr, AstParameter, AstStmt, DefP, ExprP, ForP, ParameterP, StmtP,
};

/// The names a script binds and where.
#[derive(Debug, Default)]
pub(crate) struct Scopes {
    /// Top-level names with the offset of their first binding, in source order.
    globals: Vec<(String, usize)>,
    /// Each `def` (and `lambda`): its span and the names it binds.
    functions: Vec<(usize, usize, Vec<String>)>,
    /// Each comprehension's span.
    comprehensions: Vec<(usize, usize)>,
}

fn span(s: Span) -> (usize, usize) {
    (s.begin().get() as usize, s.end().get() as usize)
}

impl Scopes {
    pub(crate) fn of(ast: &AstModule) -> Scopes {
        let mut scopes = Scopes::default();
        let mut top = Vec::new();
        scopes.walk(ast.statement(), &mut top);
        // Lambdas are functions too.
        ast.statement().visit_expr(|e| scopes.lambdas(e));
        for (name, at) in top {
            if !scopes.globals.iter().any(|(n, _)| *n == name) {
                scopes.globals.push((name, at));
            }
        }
        scopes
    }

    /// Records the names `stmt` binds into `names`, and each function's scope.
    fn walk(&mut self, stmt: &AstStmt, names: &mut Vec<(String, usize)>) {
        match &stmt.node {
            StmtP::Assign(AssignP { lhs, .. }) | StmtP::AssignModify(lhs, _, _) => {
                bind_target(lhs, names);
            }
            StmtP::For(ForP { var, body, .. }) => {
                bind_target(var, names);
                self.walk(body, names);
            }
            StmtP::Def(def) => {
                names.push((def.name.node.ident.clone(), span(def.name.span).0));
                let mut locals = Vec::new();
                params(&def.params, &mut locals);
                self.walk(&def.body, &mut locals);
                // Defaults belong to the enclosing scope: the function's starts at its body.
                let (b, e) = span(def.body.span);
                self.functions
                    .push((b, e, locals.into_iter().map(|(n, _)| n).collect()));
            }
            StmtP::Load(load) => {
                for arg in &load.args {
                    names.push((arg.local.node.ident.clone(), span(arg.local.span).0));
                }
            }
            _ => stmt.visit_stmt(|s| self.walk(s, names)),
        }
    }

    fn lambdas(&mut self, e: &AstExpr) {
        match &e.node {
            ExprP::Lambda(l) => {
                let mut locals = Vec::new();
                params(&l.params, &mut locals);
                let (b, end) = span(l.body.span);
                self.functions
                    .push((b, end, locals.into_iter().map(|(n, _)| n).collect()));
            }
            ExprP::ListComprehension(..) | ExprP::DictComprehension(..) => {
                self.comprehensions.push(span(e.span));
            }
            _ => {}
        }
        e.node.visit_expr(|x| self.lambdas(x));
    }

    /// The functions whose body holds `pos`, outermost first.
    fn enclosing(&self, pos: usize) -> impl Iterator<Item = &Vec<String>> {
        let mut found: Vec<_> = self
            .functions
            .iter()
            .filter(|(b, e, _)| *b <= pos && pos < *e)
            .collect();
        found.sort_by_key(|(b, e, _)| (*b, std::cmp::Reverse(*e)));
        found.into_iter().map(|(_, _, names)| names)
    }

    /// Whether `pos` is in top-level code: in no function or comprehension.
    pub(crate) fn at_top_level(&self, pos: usize) -> bool {
        self.enclosing(pos).next().is_none()
            && !self
                .comprehensions
                .iter()
                .any(|(b, e)| *b <= pos && pos < *e)
    }

    /// Whether `name` is a top-level name (bound anywhere at the top level).
    pub(crate) fn is_global(&self, name: &str) -> bool {
        self.globals.iter().any(|(n, _)| n == name)
    }

    /// Whether the innermost function around `pos` binds `name` itself.
    pub(crate) fn is_local(&self, name: &str, pos: usize) -> bool {
        self.enclosing(pos)
            .last()
            .is_some_and(|names| names.iter().any(|n| n == name))
    }

    /// Go's suggestion for an undefined `name` used at `pos`: the nearest of
    /// the enclosing functions' names and the top-level names (those bound
    /// before `pos` for a use at the top level).
    pub(crate) fn suggestion(&self, name: &str, pos: usize) -> Option<String> {
        let mut candidates: Vec<&str> = Vec::new();
        let mut in_function = false;
        for names in self.enclosing(pos) {
            in_function = true;
            candidates.extend(names.iter().map(String::as_str));
        }
        candidates.extend(
            self.globals
                .iter()
                .filter(|(_, at)| in_function || *at < pos)
                .map(|(n, _)| n.as_str()),
        );
        candidates.retain(|c| *c != name);
        candidates.sort_unstable();
        nearest(name, &candidates).map(str::to_string)
    }
}

fn params(ps: &[AstParameter], names: &mut Vec<(String, usize)>) {
    for p in ps {
        if let Some(id) = p.node.ident() {
            names.push((id.node.ident.clone(), span(id.span).0));
        }
    }
}

fn bind_target(t: &AstAssignTarget, names: &mut Vec<(String, usize)>) {
    use ::starlark::syntax::ast::AssignTargetP;
    match &t.node {
        AssignTargetP::Identifier(id) => names.push((id.node.ident.clone(), span(id.span).0)),
        AssignTargetP::Tuple(ts) => ts.iter().for_each(|t| bind_target(t, names)),
        AssignTargetP::Index(_) | AssignTargetP::Dot(..) => {}
    }
}

/// An assignment's first unbound use (its right side, then uses inside its
/// targets, such as an index); then its names are bound.
fn assignment(
    lhs: &AstAssignTarget,
    rhs: &AstExpr,
    known: &HashSet<String>,
    bound: &mut HashSet<String>,
) -> Option<(String, usize)> {
    unbound_use(rhs, known, bound).or_else(|| {
        let mut uses = None;
        lhs.visit_expr(|x| uses = uses.take().or_else(|| unbound_use(x, known, bound)));
        let mut names = Vec::new();
        bind_target(lhs, &mut names);
        bound.extend(names.into_iter().map(|(n, _)| n));
        uses
    })
}

/// The first top-level use of a name before anything binds it at the top
/// level (go.starlark.net's compile-time `undefined`): the name and its
/// offset. Names in `known` (the builtins and `ctx`) count as bound; uses in
/// functions, lambdas and comprehensions are left to the crate, as Go
/// resolves them once the whole file is read.
pub(crate) fn used_before_bound(
    ast: &AstModule,
    known: &HashSet<String>,
) -> Option<(String, usize)> {
    let mut bound: HashSet<String> = HashSet::new();
    first_unbound(ast.statement(), known, &mut bound)
}

fn first_unbound(
    stmt: &AstStmt,
    known: &HashSet<String>,
    bound: &mut HashSet<String>,
) -> Option<(String, usize)> {
    let check = |e: &AstExpr, bound: &HashSet<String>| unbound_use(e, known, bound);
    match &stmt.node {
        StmtP::Statements(stmts) => {
            for s in stmts {
                if let Some(found) = first_unbound(s, known, bound) {
                    return Some(found);
                }
            }
            None
        }
        StmtP::Expression(e) => check(e, bound),
        StmtP::Return(e) => e.as_ref().and_then(|e| check(e, bound)),
        StmtP::Assign(AssignP { lhs, rhs, .. }) => assignment(lhs, rhs, known, bound),
        StmtP::AssignModify(lhs, _, rhs) => assignment(lhs, rhs, known, bound),
        StmtP::If(cond, body) => check(cond, bound).or_else(|| first_unbound(body, known, bound)),
        StmtP::IfElse(cond, bodies) => check(cond, bound)
            .or_else(|| first_unbound(&bodies.0, known, bound))
            .or_else(|| first_unbound(&bodies.1, known, bound)),
        StmtP::For(ForP { var, over, body }) => check(over, bound).or_else(|| {
            let mut names = Vec::new();
            bind_target(var, &mut names);
            bound.extend(names.into_iter().map(|(n, _)| n));
            first_unbound(body, known, bound)
        }),
        StmtP::Def(DefP { name, params, .. }) => {
            for p in params {
                if let ParameterP::Normal(_, _, Some(default)) = &p.node
                    && let Some(found) = check(default, bound)
                {
                    return Some(found);
                }
            }
            bound.insert(name.node.ident.clone());
            None
        }
        StmtP::Load(load) => {
            bound.extend(load.args.iter().map(|a| a.local.node.ident.clone()));
            None
        }
        StmtP::Break | StmtP::Continue | StmtP::Pass => None,
    }
}

fn unbound_use(
    e: &AstExpr,
    known: &HashSet<String>,
    bound: &HashSet<String>,
) -> Option<(String, usize)> {
    match &e.node {
        ExprP::Identifier(id) => {
            let name = &id.node.ident;
            (!bound.contains(name) && !known.contains(name))
                .then(|| (name.clone(), span(id.span).0))
        }
        // Resolved with the whole file in Go (the first iterable aside, which
        // this leaves to the crate too).
        ExprP::Lambda(_) | ExprP::ListComprehension(..) | ExprP::DictComprehension(..) => None,
        node => {
            let mut found = None;
            node.visit_expr(|x| {
                if found.is_none() {
                    found = unbound_use(x, known, bound);
                }
            });
            found
        }
    }
}

/// go.starlark.net's `spell.Nearest`: the candidate closest to `x` by edit
/// distance, ignoring case and underscores, within half of `x`'s length;
/// ties go to the first candidate.
pub(crate) fn nearest<'c>(x: &str, candidates: &[&'c str]) -> Option<&'c str> {
    let fold = |s: &str| -> Vec<char> {
        s.chars()
            .filter(|c| *c != '_')
            .flat_map(char::to_lowercase)
            .collect()
    };
    let x = fold(x);
    let mut best = None;
    let mut best_d = x.len().div_ceil(2); // up to 50% typos
    for c in candidates {
        let d = levenshtein(&x, &fold(c), best_d);
        if d < best_d {
            best_d = d;
            best = Some(*c);
        }
    }
    best
}

/// Edit distance, giving up (with a value above `max`) once it exceeds `max`.
fn levenshtein(x: &[char], y: &[char], max: usize) -> usize {
    let (mut x, mut y) = if x.len() > y.len() { (y, x) } else { (x, y) };
    // Remove the common prefix.
    let common = x.iter().zip(y).take_while(|(a, b)| a == b).count();
    if common == x.len() {
        return y.len() - x.len();
    }
    x = &x[common..];
    y = &y[common..];
    if y.len() - x.len() > max {
        return y.len() - x.len();
    }
    let mut row: Vec<usize> = (0..=y.len()).collect();
    for i in 1..=x.len() {
        row[0] = i;
        let mut best = i;
        let mut prev = i - 1;
        for j in 1..=y.len() {
            let a = prev + usize::from(x[i - 1] != y[j - 1]);
            let b = 1 + row[j - 1];
            let c = 1 + row[j];
            let k = a.min(b).min(c);
            prev = row[j];
            row[j] = k;
            best = best.min(k);
        }
        if best > max {
            return best;
        }
    }
    row[y.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::starlark::syntax::Dialect;

    fn parse(src: &str) -> AstModule {
        AstModule::parse("t", src.to_string(), &Dialect::Extended).expect("parses")
    }

    #[test]
    fn nearest_is_gos() {
        assert_eq!(nearest("itmes", &["items", "x"]), Some("items"));
        assert_eq!(nearest("foo", &["bool", "len"]), None);
        assert_eq!(nearest("Item_Count", &["itemcount"]), Some("itemcount"));
        assert_eq!(nearest("ab", &["xy"]), None);
    }

    #[test]
    fn top_level_uses_before_binding_are_found() {
        let known: HashSet<String> = ["print", "False"].map(String::from).into_iter().collect();
        let src = "print(1)\nprint(z)\nz = 1\n";
        assert_eq!(
            used_before_bound(&parse(src), &known),
            Some(("z".into(), 15))
        );
        // Inside a function, or bound (even conditionally) before: not this error.
        let src = "def f():\n  return z\nif False:\n  z = 1\nprint(z)\nx = [y for y in []]\n";
        assert_eq!(used_before_bound(&parse(src), &known), None);
        assert_eq!(
            used_before_bound(&parse("x = x + 1\n"), &known),
            Some(("x".into(), 4))
        );
    }

    #[test]
    fn scopes_know_locals_and_suggest_names() {
        let src = "items = []\ndef f(count):\n  total = cuont\n  return total\nx = itmes\n";
        let scopes = Scopes::of(&parse(src));
        let use_in_f = src.find("cuont").expect("use");
        assert!(scopes.is_local("total", use_in_f));
        assert!(!scopes.is_local("items", use_in_f));
        assert!(scopes.is_global("items"));
        assert_eq!(
            scopes.suggestion("cuont", use_in_f).as_deref(),
            Some("count")
        );
        let top = src.find("itmes").expect("use");
        assert_eq!(scopes.suggestion("itmes", top).as_deref(), Some("items"));
        // At the top level only names bound before the use are candidates.
        assert_eq!(scopes.suggestion("xx", 0), None);
    }
}
