//! Hostile pipelines through the built-in runtime: a function's failure, a panic included,
//! is that call's error and never takes the process down.

use kpt::resource_list::ResourceList;
use kpt::runtime::{FunctionRef, FunctionRuntime, RunOptions, RuntimeError};
use kpt::yaml;
use krm_functions::Builtins;

fn starlark(source: &str) -> Result<i32, RuntimeError> {
    let indented: String = source.lines().map(|l| format!("  {l}\n")).collect();
    let config = format!(
        "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: hostile\nsource: |\n{indented}"
    );
    let list = ResourceList {
        function_config: Some(yaml::parse_one(&config).expect("config parses")),
        ..ResourceList::default()
    };
    Builtins
        .run(
            &FunctionRef::Image("starlark:v0.5".into()),
            list,
            &RunOptions::default(),
        )
        .map(|o| o.exit_code)
}

#[test]
fn string_blow_up_is_an_error_not_a_crash() {
    // starlark-rust panics on the length overflow ("len overflow"); the runtime turns the
    // panic into this call's error.
    match starlark("x = \"ab\" * 4611686018427387904\n") {
        Err(RuntimeError::Panicked { function, .. }) => assert_eq!(function, "starlark:v0.5"),
        Ok(code) => assert_eq!(code, 1, "a refused blow-up must fail the step"),
        Err(other) => panic!("unexpected error {other}"),
    }
}

#[test]
fn a_failing_script_fails_its_step() {
    assert_eq!(starlark("fail(\"no\")\n").expect("ran"), 1);
    assert_eq!(starlark("pass\n").expect("ran"), 0);
}
