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

mod fuzz {
    use super::*;
    use kpt::runtime::Budget;
    use proptest::prelude::*;

    const SEEDS: &[&str] = &[
        "for r in ctx.resource_list[\"items\"]:\n  r[\"metadata\"][\"labels\"] = {\"a\": \"b\"}\n",
        "def f(n):\n  return [str(i) * 3 for i in range(n)]\nx = f(10)\n",
        "load('encoding/json.star', 'json')\nx = json.decode('{\"a\": [1, 2]}')\n",
        "s = set([1, 2])\nd = {k: v for k, v in [(1, 2)]}\nfail(\"%s\" % d)\n",
    ];

    fn script() -> impl Strategy<Value = String> {
        let punct = prop::sample::select(vec![
            "(", ")", "[", "]", "{", "}", ":", "\n", "  ", "\t", "\"", "'", "\\", "*", "**", "%",
            "lambda", "def", "for", "in", "if", "else", "return", "1e400", "-", "0x", "\u{0}",
        ]);
        prop_oneof![
            (0..SEEDS.len(), any::<prop::sample::Index>(), punct).prop_map(|(s, at, p)| {
                let seed = SEEDS[s];
                let mut i = at.index(seed.len() + 1);
                while !seed.is_char_boundary(i) {
                    i -= 1;
                }
                format!("{}{p}{}", &seed[..i], &seed[i..])
            }),
            "[ -~\n]{0,120}",
        ]
    }

    static RAN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]
        /// Whatever the script, the built-in runs it or reports its failure; it never panics.
        #[test]
        fn scripts_never_panic(src in script()) {
            let indented: String = src.lines().map(|l| format!("  {l}\n")).collect();
            let config = format!(
                "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: fuzz\nsource: |\n{indented}"
            );
            // Configs that do not parse are the YAML parser's business, not starlark's.
            if let Ok(fc) = yaml::parse_one(&config) {
                let list = ResourceList { function_config: Some(fc), ..ResourceList::default() };
                let budget = Budget { max_steps: Some(100_000), max_memory_bytes: Some(64 << 20), ..Budget::default() };
                let r = Builtins.run(
                    &FunctionRef::Image("starlark:v0.5".into()),
                    list,
                    &RunOptions { budget, ..RunOptions::default() },
                );
                prop_assert!(!matches!(r, Err(RuntimeError::Panicked { .. })), "{:?}", r.err());
                RAN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
    }

    #[test]
    fn the_script_fuzz_reaches_the_evaluator() {
        scripts_never_panic();
        assert!(RAN.load(std::sync::atomic::Ordering::Relaxed) > 100);
    }
}

#[test]
fn numbers_starlark_cannot_hold_are_an_error_not_a_panic() {
    let src = "load('encoding/json.star', 'json')\nx = json.decode('[1e4002]')\n";
    assert_eq!(starlark(src).expect("ran"), 1);
    let src = "load('encoding/yaml.star', 'yaml')\nx = yaml.loads('a: 1e4002')\n";
    assert!(starlark(src).is_ok(), "no panic");
}
