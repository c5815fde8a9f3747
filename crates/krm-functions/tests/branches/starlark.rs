//! starlark: a ConfigMap (`data.source`) or StarlarkRun config, matched the
//! SDK's way (unset parts are wildcards); decoding errors carry the SDK's
//! `As` wording; every failure is one error result and the SDK's stderr line.

use super::{SDK_FAILURE, call};

const F: &str = "starlark";

const INPUT: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n";
const SCRIPT: &str = "def run(items):\\n  for i in items:\\n    i[\\\"metadata\\\"][\\\"name\\\"] = \\\"b\\\"\\nrun(ctx.resource_list[\\\"items\\\"])\\n";

fn assert_fails(out: &super::Out, error: &str) {
    assert_eq!(out.exit_code, 1);
    assert_eq!(out.stderr, SDK_FAILURE);
    assert_eq!(out.results, vec![format!("error|{error}||")]);
}

#[test]
fn config_errors() {
    let run = "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: r\n";
    let cases: Vec<(Option<String>, &str)> = vec![
        (
            None,
            "FunctionConfig is missing. Expect `ConfigMap` or `StarlarkRun`",
        ),
        (
            Some("{}".into()),
            "FunctionConfig is missing. Expect `ConfigMap` or `StarlarkRun`",
        ),
        (
            Some("apiVersion: v1\nkind: Secret\nmetadata:\n  name: x\n".into()),
            "`functionConfig` must be either /v1, Kind=ConfigMap or fn.kpt.dev/v1alpha1, Kind=StarlarkRun, but we got: /v1, Kind=Secret",
        ),
        (
            Some("apiVersion: x.io/v1\nkind: StarlarkRun\n".into()),
            "`functionConfig` must be either /v1, Kind=ConfigMap or fn.kpt.dev/v1alpha1, Kind=StarlarkRun, but we got: x.io/v1, Kind=StarlarkRun",
        ),
        (Some(run.to_string()), "`source` must not be empty"),
        (
            Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n".into()),
            "`source` must not be empty",
        ),
        (
            Some(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  source: 1\n"
                    .into(),
            ),
            "unable to convert object to *v1.ConfigMap with error: json: cannot unmarshal number into Go struct field ConfigMap.data of type string",
        ),
        (
            Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: [a]\n".into()),
            "unable to convert object to *v1.ConfigMap with error: json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string",
        ),
        (
            Some(format!("{run}source: [a]\n")),
            "unable to convert object to *starlark.StarlarkRun with error: json: cannot unmarshal array into Go struct field StarlarkRun.source of type string",
        ),
        (
            Some(format!("{run}params: 3\nsource: x = 1\n")),
            "unable to convert object to *starlark.StarlarkRun with error: json: cannot unmarshal number into Go struct field StarlarkRun.params of type map[string]interface {}",
        ),
        // The whole struct is decoded: metadata fields fail too, named after
        // the innermost Go struct (apimachinery's or kyaml's ObjectMeta), and
        // the first bad field in sorted key order wins.
        (
            Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: [a]\ndata:\n  source: x = 1\n".into()),
            "unable to convert object to *v1.ConfigMap with error: json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string",
        ),
        (
            Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: 7\ndata:\n  source: [a]\n".into()),
            "unable to convert object to *v1.ConfigMap with error: json: cannot unmarshal array into Go struct field ConfigMap.data of type string",
        ),
        (
            Some("apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: r\n  annotations: {a: 1}\nsource: x = 1\n".into()),
            "unable to convert object to *starlark.StarlarkRun with error: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.annotations of type string",
        ),
        (
            Some("apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata: [a]\nsource: x = 1\n".into()),
            "unable to convert object to *starlark.StarlarkRun with error: json: cannot unmarshal array into Go struct field StarlarkRun.metadata of type yaml.ObjectMeta",
        ),
    ];
    for (config, error) in cases {
        let out = call(F, INPUT, config.as_deref());
        assert_fails(&out, error);
    }
}

#[test]
fn wildcard_kinds_and_empty_input() {
    // No kind: the SDK's IsGVK treats it as matching ConfigMap.
    let cfg = format!("apiVersion: v1\nmetadata:\n  name: x\ndata:\n  source: \"{SCRIPT}\"\n");
    let out = call(F, INPUT, Some(&cfg));
    assert_eq!(
        (out.exit_code, out.stderr.as_str()),
        (0, ""),
        "{:?}",
        out.results
    );
    assert!(out.items.contains("name: b"));
    // No apiVersion: any version of a StarlarkRun.
    let cfg = format!("kind: StarlarkRun\nmetadata:\n  name: x\nsource: \"{SCRIPT}\"\n");
    let out = call(F, INPUT, Some(&cfg));
    assert_eq!(out.exit_code, 0, "{:?}", out.results);
    let out = call(F, "", Some(&cfg));
    assert_eq!((out.exit_code, out.items.as_str()), (0, ""));
    assert!(out.results.is_empty());
}

#[test]
fn print_goes_to_stderr() {
    let script = "s = set([\\\"foo\\\", \\\"bar\\\"])\\nprint(s)\\nprint(len(s))\\nfor i in ctx.resource_list[\\\"items\\\"]:\\n  i[\\\"metadata\\\"][\\\"namespace\\\"] = \\\"test\\\"\\n";
    let cfg = format!(
        "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: x\nsource: \"{script}\"\n"
    );
    let out = call(F, INPUT, Some(&cfg));
    assert_eq!(out.exit_code, 0, "{:?}", out.results);
    assert_eq!(out.stderr, "set([\"foo\", \"bar\"])\n2");
    assert!(out.items.contains("namespace: test"));
    // A failing script keeps what it printed before the SDK's line.
    let failing = cfg.replace("print(len(s))", "fail(\\\"no\\\")");
    let out = call(F, INPUT, Some(&failing));
    assert_eq!(out.exit_code, 1);
    assert_eq!(
        out.stderr,
        format!("set([\"foo\", \"bar\"])\n{SDK_FAILURE}")
    );
}

#[test]
fn while_loops_and_recursion_run() {
    let script =
        "def count(n):\\n  i = 0\\n  while i < n:\\n    i += 1\\n  return i\\nprint(count(3))\\n";
    let cfg = format!(
        "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: x\nsource: \"{script}\"\n"
    );
    let out = call(F, INPUT, Some(&cfg));
    assert_eq!(out.exit_code, 0, "{:?}", out.results);
    assert_eq!(out.stderr, "3");
    let top = "n = 0\\nwhile n < 2:\\n  n += 1\\nprint(n)\\n";
    let cfg = format!(
        "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: x\nsource: \"{top}\"\n"
    );
    let out = call(F, INPUT, Some(&cfg));
    assert_eq!(
        (out.exit_code, out.stderr.as_str()),
        (0, "2"),
        "{:?}",
        out.results
    );
    let rec = "def f(n):\\n  if n == 0:\\n    return 0\\n  return 1 + f(n - 1)\\nprint(f(4))\\n";
    let cfg = format!(
        "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: x\nsource: \"{rec}\"\n"
    );
    let out = call(F, INPUT, Some(&cfg));
    assert_eq!(
        (out.exit_code, out.stderr.as_str()),
        (0, "4"),
        "{:?}",
        out.results
    );
}

#[test]
fn go_dialect_options_are_on() {
    // AllowSet, AllowGlobalReassign (with top-level if/for) and AllowRecursion.
    let script = "x = 1\\nx = 2\\nif x == 2:\\n  x = x + 1\\nfor i in [1]:\\n  x += i\\ns = set([1, 2, 2])\\nprint(x, len(s))\\n";
    let cfg = format!(
        "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: x\nsource: \"{script}\"\n"
    );
    let out = call(F, INPUT, Some(&cfg));
    assert_eq!(
        (out.exit_code, out.stderr.as_str()),
        (0, "4 2"),
        "{:?}",
        out.results
    );
}

/// Every library of starlib loads (a script may load them all); `math`
/// computes; an unknown module fails the load.
#[test]
fn starlib_modules_load() {
    let modules = [
        ("bsoup.star", "bsoup"),
        ("encoding/base64.star", "base64"),
        ("encoding/csv.star", "csv"),
        ("encoding/json.star", "json"),
        ("encoding/yaml.star", "yaml"),
        ("geo.star", "geo"),
        ("hash.star", "hash"),
        ("html.star", "html"),
        ("http.star", "http"),
        ("math.star", "math"),
        ("re.star", "re"),
        ("time.star", "time"),
        ("xlsx.star", "xlsx"),
        ("zipfile.star", "ZipFile"),
    ];
    let mut source: String = modules
        .iter()
        .map(|(p, n)| format!("  load('{p}', '{n}')\n"))
        .collect();
    source.push_str("  for r in ctx.resource_list['items']:\n    r['metadata']['name'] = 'n' + str(int(math.sqrt(16.0)))\n");
    let config = format!(
        "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: r\nsource: |\n{source}"
    );
    let out = call(F, INPUT, Some(&config));
    assert_eq!(out.exit_code, 0, "{:?}", out.results);
    assert!(out.items.contains("name: n4\n"), "{}", out.items);

    let config = "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: r\nsource: |\n  load('nope.star', 'x')\n";
    let out = call(F, INPUT, Some(config));
    assert_eq!(out.exit_code, 1);
}

/// A StarlarkRun config running `body` (plain lines, indented here).
fn run_config(body: &str) -> String {
    let source: String = body.lines().map(|l| format!("  {l}\n")).collect();
    format!(
        "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: r\nsource: |\n{source}"
    )
}

/// The runtime converts the whole `ctx.resource_list` back as starlib's
/// `util.Unmarshal` does: a value it cannot convert fails the function
/// wherever it sits, wrapped once per dict level.
#[test]
fn values_starlib_cannot_convert_fail_the_function() {
    let cases = [
        (
            "ctx.resource_list['items'][0]['spec'] = {'tags': set(['a'])}",
            "unmarshaling starlark value: unmarshaling starlark value: unmarshaling starlark value: sets aren't yet supported",
        ),
        (
            "ctx.resource_list['functionConfig']['extra'] = len",
            "unmarshaling starlark value: unmarshaling starlark value: unrecognized starlark type: builtin_function_or_method",
        ),
        (
            "ctx.resource_list['note'] = lambda: 0",
            "unmarshaling starlark value: unrecognized starlark type: function",
        ),
        (
            "ctx.resource_list['items'][0]['n'] = [2 << 80]",
            "unmarshaling starlark value: unmarshaling starlark value: 2417851639229258349412352 out of range (want value in signed 64-bit range)",
        ),
        (
            "ctx.resource_list['items'][0]['c'] = ctx",
            "unmarshaling starlark value: unmarshaling starlark value: constructor object from *starlarkstruct.Struct not supported Marshaler to starlark object: string",
        ),
        (
            "ctx.resource_list['items'][0]['k'] = {str: 1}",
            "unmarshaling starlark value: unmarshaling starlark value: unmarshaling starlark key: unrecognized starlark type: builtin_function_or_method",
        ),
    ];
    for (script, error) in cases {
        let out = call(F, INPUT, Some(&run_config(script)));
        assert_fails(&out, error);
        assert_eq!(out.items, INPUT, "{script}");
    }
    // Go's recursion overflows on a list holding itself; here the walk stops.
    let script = "loop = ['x']\nloop.append(loop)\nctx.resource_list['items'][0]['l'] = loop";
    let out = call(F, INPUT, Some(&run_config(script)));
    assert_fails(&out, "exceeded max depth of 1000");
}

/// kyaml looks `items` up after the script: gone or None is no items, any
/// other kind is its `ErrorIfInvalid` text; each element must be a mapping.
#[test]
fn items_are_read_back_as_kyaml_and_the_sdk_do() {
    for script in [
        "ctx.resource_list.pop('items')",
        "ctx.resource_list['items'] = None",
    ] {
        let out = call(F, INPUT, Some(&run_config(script)));
        assert_eq!((out.exit_code, out.items.as_str()), (0, ""), "{script}");
    }
    let cases = [
        (
            "ctx.resource_list['items'] = {'q': 1, 'p': 'two'}",
            "wrong Node Kind for items expected: SequenceNode was MappingNode: value: {p: two\nq: 1}",
        ),
        (
            "ctx.resource_list['items'] = 'none'",
            "wrong Node Kind for items expected: SequenceNode was ScalarNode: value: {none}",
        ),
        (
            "ctx.resource_list['items'].append('extra')",
            "failed to extract objects: unhandled node kind 8",
        ),
        (
            "ctx.resource_list['items'][0] = None",
            "failed to extract objects: unhandled node kind 8",
        ),
        (
            "ctx.resource_list['items'] = [['a']]",
            "failed to extract objects: unhandled node kind 2",
        ),
    ];
    for (script, error) in cases {
        let out = call(F, INPUT, Some(&run_config(script)));
        assert_fails(&out, error);
    }
    // A tuple is a list to starlib.
    let out = call(
        F,
        INPUT,
        Some(&run_config(
            "ctx.resource_list['items'] = tuple(ctx.resource_list['items'])",
        )),
    );
    assert_eq!((out.exit_code, out.items.as_str()), (0, INPUT));
}

/// New floats are written as yaml.v3 writes a Go float64 (`%g`, shortest).
#[test]
fn floats_are_written_as_go_writes_them() {
    let script =
        "ctx.resource_list['items'][0]['data'] = {'a': 3.0, 'b': 4e6, 'c': 3e19, 'd': 0.125}";
    let out = call(F, INPUT, Some(&run_config(script)));
    assert_eq!(out.exit_code, 0, "{:?}", out.results);
    assert!(
        out.items
            .ends_with("data:\n  a: 3\n  b: 4e+06\n  c: 3e+19\n  d: 0.125\n"),
        "{}",
        out.items
    );
}
