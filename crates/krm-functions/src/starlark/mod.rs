//! `starlark`: run a Starlark script over the resource list.
//!
//! Mirrors the catalog function (`starlark/config.go` + the vendored kyaml
//! starlark runtime): the config is a `StarlarkRun` (`source`, `params`) or a
//! ConfigMap (`data.source`); the script sees the whole list as plain data in
//! `ctx.resource_list` (`items`, `functionConfig`) and edits
//! `ctx.resource_list["items"]` in place. Errors (syntax errors, `fail()`)
//! become one error result with the Go runtime's wording ([`errors`]
//! translates the Rust crate's messages). `print` (with
//! `sep`), `fail`, `str`, `repr` and `type` are go.starlark.net's, so values
//! print as there ([`gofmt`]); type annotations, which go.starlark.net lacks,
//! are a syntax error; a top-level use of a name before its first binding is
//! refused before the script runs, with Go's `did you mean` hint ([`scope`]).
//!
//! Unlike the Go function, items the script did not change keep their
//! original nodes and changed ones are patched into them ([`merge`]), which
//! yields what kpt's comment healing would restore anyway. Only the
//! `encoding/json`, `encoding/yaml`, `encoding/base64` and `krmfn` libraries
//! can be loaded; `ctx.open_api` and `ctx.environment` are empty; `while`
//! loops (which go.starlark.net allows here) are rewritten into breaking
//! `for` loops ([`dialect`]); a script is stopped after 5 minutes.

mod config;
mod dialect;
mod errors;
mod eval;
mod gofmt;
mod merge;
mod modules;
mod parse_errors;
mod runtime_errors;
mod scan;
mod scope;
mod starlib;
mod unmarshal;

use kpt::resource_list::ResourceList;
use serde_json::{Map, Value};

use crate::FnError;

/// Run the function.
pub fn run(list: &mut ResourceList) -> Result<(), FnError> {
    let program = config::program(list.function_config.as_ref()).map_err(FnError::Config)?;
    let mut rl = Map::new();
    rl.insert(
        "apiVersion".into(),
        Value::String("config.kubernetes.io/v1".into()),
    );
    rl.insert("kind".into(), Value::String("ResourceList".into()));
    // Conversion refuses alias bombs and data nested past the safe depth (with the error,
    // not a silent null).
    let items = list
        .items
        .iter()
        .map(|n| n.try_to_value().map_err(|e| FnError::Failed(e.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    rl.insert("items".into(), Value::Array(items));
    if let Some(fc) = &list.function_config {
        let fc = fc
            .try_to_value()
            .map_err(|e| FnError::Failed(e.to_string()))?;
        rl.insert("functionConfig".into(), fc);
    }
    let rl = eval::execute(&program, &Value::Object(rl)).map_err(FnError::Failed)?;
    let items = unmarshal::items_of(rl).map_err(FnError::Failed)?;
    list.items = merge::reconcile(&list.items, &items).map_err(FnError::Failed)?;
    Ok(())
}

#[cfg(test)]
mod tests;
