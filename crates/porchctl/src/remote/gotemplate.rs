//! kubectl's `-o go-template` engine: the part of Go's `text/template` kubectl users write,
//! executed the way kubectl's go-template printer runs it on an object.
//!
//! Supported: text, actions with pipelines (`|`), field chains (`.a.b`, on maps; a missing
//! key is "no value", printed `<no value>`), `.`, `$`, variables (`$x := …`, `$x = …`,
//! `range $i, $e := …`), parenthesised pipelines and fields chained to them,
//! `if`/`else if`/`else`, `with`/`else with`, `range`/`else` (maps in sorted key order),
//! `break`/`continue`, comments, trim markers (`{{-`, `-}}`), string, raw string, character,
//! number, boolean and nil literals, and the functions Go registers (`and or not len index
//! slice print printf println eq ne lt le gt ge html js urlquery call`) plus kubectl's
//! `exists` and `base64decode`. Values print as Go's `fmt` prints them: integers from the
//! object as `int64` (kubectl decodes with `UseNumber` and converts), other numbers as
//! `float64` (`%v`: shortest, `1e+06` style from an exponent of 6), maps as
//! `map[k:v …]` with sorted keys, slices as `[a b]`. Errors carry Go's texts and positions.
//! `{{define}}`, `{{template}}` and `{{block}}` as one `Parse` of the text sees them (a
//! second non-empty definition of a name is an error; a definition named `output` stands in
//! for an empty main text; a template runs with its argument as dot and `$`). Not supported:
//! complex numbers; a template calling itself stops at 1,000 levels (Go: 100,000), where
//! our stack would not reach Go's.

mod exec;
mod funcs;
mod gofmt;
mod lex;
mod node;
mod parse;
mod value;

#[cfg(test)]
mod tests;

use serde_json::Value;

/// Why a template failed, in Go's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// The template does not parse (`template: output:LINE: …`).
    #[error("{0}")]
    Parse(String),
    /// Executing it failed (`template: output:LINE:COL: executing "output" at <…>: …`).
    #[error("{0}")]
    Exec(String),
}

/// A parsed template.
#[derive(Debug, Clone)]
pub struct GoTemplate {
    text: String,
    root: Vec<node::Node>,
    /// The templates it defines.
    defs: parse::Defs,
    /// `missingkey=error` (kubectl's `--allow-missing-template-keys=false`).
    missing_key_error: bool,
}

/// Two templates are the same when their text is.
impl PartialEq for GoTemplate {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl GoTemplate {
    /// Parses `text` as kubectl does (template name `output`).
    pub fn parse(text: &str) -> Result<Self, TemplateError> {
        let (root, defs) = parse::parse(text).map_err(TemplateError::Parse)?;
        Ok(GoTemplate {
            text: text.to_string(),
            root,
            defs,
            missing_key_error: false,
        })
    }

    /// Go's `Option("missingkey=error")` when `yes` (kubectl's
    /// `--allow-missing-template-keys=false`), else `missingkey=default`.
    pub fn missing_keys_are_errors(mut self, yes: bool) -> Self {
        self.missing_key_error = yes;
        self
    }

    /// The template as given.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Executes the template with `data` as dot and `$`, appending to `out`. On an error
    /// `out` ends with what was written before it, as Go's writer would.
    pub fn execute(&self, data: &Value, out: &mut String) -> Result<(), TemplateError> {
        let mut state = exec::State::new(&self.text, data, self.missing_key_error, &self.defs);
        let result = state.walk_list(&value::Val::Data(data, false), &self.root);
        out.push_str(&state.out);
        match result {
            Err(exec::Stop::Err(e)) => Err(TemplateError::Exec(e)),
            // The parser keeps break and continue inside ranges.
            Ok(()) | Err(exec::Stop::Break | exec::Stop::Continue) => Ok(()),
        }
    }
}

/// `v` as Go's `fmt` prints the `map[string]interface{}` it decodes to (`map[k:v …]`).
pub fn go_value_text(v: &Value) -> String {
    gofmt::sprint(&[value::Val::Data(v, false)])
}

/// Go's `%q` of a string (`strconv.Quote`).
pub fn go_quote(s: &str) -> String {
    gofmt::quote(s, false)
}
