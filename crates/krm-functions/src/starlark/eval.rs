//! Running a script with the `starlark` crate in the dialect kpt uses
//! (go.starlark.net with `set`, top-level statements and global reassignment
//! allowed), exposing `ctx.resource_list`, `ctx.open_api` and
//! `ctx.environment`, and reporting errors the way the Go runtime prints
//! them (`name:line:col: message` for syntax errors, `fail: ...`).

use ::starlark::environment::{GlobalsBuilder, LibraryExtension, Module};
use ::starlark::eval::Evaluator;
use ::starlark::syntax::{AstModule, Dialect, DialectTypes};
use ::starlark::values::dict::DictRef;
use ::starlark::values::list::ListRef;
use ::starlark::values::structs::AllocStruct;
use serde_json::Value;
use std::time::{Duration, Instant};

use super::config::Program;
use super::errors::{Probed, Source, go_error, go_index_error};
use super::merge::sort_keys;
use super::modules::Loader;
use super::parse_errors::{invalid_escape, line_col};
use super::scope::{Scopes, used_before_bound};
use std::collections::HashSet;

/// How long a script may run: a native function runs inside the server, so
/// a runaway loop must not hang it (kpt gives exec functions 5 minutes).
const TIME_LIMIT: Duration = Duration::from_secs(300);

/// Runs `program` with `resource_list` as `ctx.resource_list` and returns
/// the resource list as the script left it, converted as starlib's
/// `util.Unmarshal` converts it (object keys sorted, as Go's marshalling
/// does).
pub(crate) fn execute(program: &Program, resource_list: &Value) -> Result<Value, String> {
    execute_with_limit(program, resource_list, TIME_LIMIT)
}

/// [`execute`] with an explicit time limit.
pub(crate) fn execute_with_limit(
    program: &Program,
    resource_list: &Value,
    limit: Duration,
) -> Result<Value, String> {
    super::merge::check_numbers(resource_list)?;
    let budget = crate::budget::current();
    let limit = budget.remaining().map_or(limit, |left| left.min(limit));
    let deadline = Instant::now() + limit;
    // go.starlark.net has no type annotations: `def f(x: int)` is a syntax error there.
    let dialect = Dialect {
        enable_top_level_stmt: true,
        enable_types: DialectTypes::Disable,
        ..Dialect::Extended
    };
    let (source, lines) = super::dialect::rewrite(&program.source);
    let parse_src = Source {
        name: &program.name,
        text: &source,
        scopes: None,
        lines: &lines,
    };
    let ast = AstModule::parse(&program.name, source.clone(), &dialect)
        .map_err(|e| go_error(&e, &parse_src))?;
    if let Some(e) = invalid_escape(&parse_src) {
        return Err(e);
    }
    // go.starlark.net's `print` (to the function's stderr, as the Go function's default
    // thread does), `fail`, `str`, `repr` and `type` replace the crate's.
    let globals = GlobalsBuilder::extended_by(&[LibraryExtension::SetType])
        .with(super::gofmt::go_builtins)
        .build();
    let scopes = Scopes::of(&ast);
    let src = Source {
        scopes: Some(&scopes),
        ..parse_src
    };
    let render_error = |e: &::starlark::Error| go_error(e, &src);
    // go.starlark.net refuses a top-level use of a name before its first binding
    // before anything runs.
    let mut known: HashSet<String> = globals.names().map(|n| n.as_str().to_string()).collect();
    known.insert("ctx".into());
    if let Some((name, at)) = used_before_bound(&ast, &known) {
        let (line, col) = line_col(&source, at);
        let (line, col) = lines.original(line, col);
        let hint = scopes
            .suggestion(&name, at)
            .map(|n| format!(" (did you mean {n}?)"))
            .unwrap_or_default();
        return Err(format!(
            "{}:{line}:{col}: undefined: {name}{hint}",
            program.name
        ));
    }
    let loader = Loader;
    Module::with_temp_heap(|module| {
        let heap = module.heap();
        let rl = heap.alloc(resource_list);
        // kyaml exposes the OpenAPI schema and the process environment; the
        // native runtime has neither a schema bundle nor a container
        // environment to give, so both are empty dicts.
        let empty = Value::Object(serde_json::Map::new());
        let ctx = heap.alloc(AllocStruct([
            ("resource_list", rl),
            ("open_api", heap.alloc(&empty)),
            ("environment", heap.alloc(&empty)),
        ]));
        module.set("ctx", ctx);
        {
            let mut eval = Evaluator::new(&module);
            eval.set_loader(&loader);
            if let Some(bytes) = budget.max_memory_bytes.filter(|b| *b > 0) {
                eval.set_max_heap_size(bytes)
                    .map_err(|e| format!("starlark: {e}"))?;
            }
            if let Some(steps) = budget.max_steps.filter(|s| *s > 0) {
                eval.set_max_tick_count(steps)
                    .map_err(|e| format!("starlark: {e}"))?;
            }
            let cancel = budget.clone();
            eval.set_check_cancelled(Box::new(move || {
                Instant::now() > deadline || cancel.check().is_err()
            }));
            let result = eval.eval_module(ast, &globals);
            if let Err(e) = result {
                return Err(if let Err(stop) = budget.check() {
                    stop.to_string()
                } else if Instant::now() > deadline {
                    format!(
                        "starlark program exceeded the time limit of {}s",
                        limit.as_secs()
                    )
                } else if let Some(bytes) = budget.max_memory_bytes.filter(|b| {
                    heap.peak_allocated_bytes() > *b
                        || e.to_string().starts_with("Heap memory limit")
                }) {
                    format!("starlark program exceeded the memory limit of {bytes} bytes")
                } else if let Some(steps) = budget
                    .max_steps
                    .filter(|s| eval.get_total_tick_count() > *s)
                {
                    format!("starlark program exceeded the limit of {steps} steps")
                } else {
                    // Go names an index error's sequence type and length.
                    let mut probe = |text: &str| {
                        let ast =
                            AstModule::parse("probe", text.to_string(), &Dialect::Standard).ok()?;
                        let v = Evaluator::new(&module).eval_module(ast, &globals).ok()?;
                        Some(Probed {
                            ty: v.get_type().to_string(),
                            len: v.length().ok().and_then(|n| usize::try_from(n).ok()),
                            int: v.unpack_i32().map(i64::from),
                        })
                    };
                    go_index_error(&e, &src, &mut probe).unwrap_or_else(|| render_error(&e))
                });
            }
        }
        // Re-read the list through the module: evaluation may have run the garbage
        // collector, which moves every value and leaves Rust-held ones (`rl` above)
        // dangling. Reading through `rl` here crashed the server (SIGSEGV) once a script
        // allocated enough to trigger a collection (~90 ConfigMaps).
        let ctx = module.get("ctx").ok_or("ctx is not defined")?;
        let rl = ctx
            .get_attr("resource_list", heap)
            .map_err(|e| render_error(&e))?
            .ok_or("ctx has no resource_list")?;
        // Refuse an oversized output before converting it (the conversion would double
        // what the script already allocated).
        if let Some(items) = DictRef::from_value(rl).and_then(|d| d.get_str("items"))
            && let (Some(list), Some(limit)) = (ListRef::from_value(items), budget.max_output_items)
            && list.len() > limit
        {
            return Err(kpt::runtime::BudgetExceeded::Items {
                count: list.len(),
                limit,
            }
            .to_string());
        }
        Ok(sort_keys(super::unmarshal::unmarshal(rl)?))
    })
}
