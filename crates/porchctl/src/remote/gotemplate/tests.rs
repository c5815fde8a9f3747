//! Unit tests of the go-template engine. Every expected text is what kubectl 1.32's
//! go-template printer wrote for the same template and object (`kubectl annotate --local
//! -f OBJ x- -o go-template=…`): output, `PARSE: ` and the parse error after kubectl's
//! "error parsing template TEMPLATE, ", or the output so far, `EXEC: ` and the execution
//! error.

use serde_json::Value;

use super::{GoTemplate, TemplateError};

/// What kubectl prints for `template` on `data`, in the form the tables use.
fn run(data: &Value, template: &str) -> String {
    let t = match GoTemplate::parse(template) {
        Ok(t) => t,
        Err(e) => return format!("PARSE: {e}"),
    };
    let mut out = String::new();
    match t.execute(data, &mut out) {
        Ok(()) => out,
        Err(e) => format!("{out}EXEC: {e}"),
    }
}

fn check(cases: &[(&str, &str)]) {
    let data: Value = serde_json::from_str(DATA).expect("test data is JSON");
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(t, want)| {
            let got = run(&data, t);
            (got != *want).then(|| format!("{t:?}\n  want {want:?}\n  got  {got:?}"))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn fields_literals_variables_and_trim_markers() {
    check(VALUES);
}

#[test]
fn range_if_with_break_continue() {
    check(CONTROL);
}

#[test]
fn print_printf_println_as_go_fmt() {
    check(FMT);
}

#[test]
fn builtin_and_kubectl_functions() {
    check(FUNCS);
}

#[test]
fn parse_errors_in_go_words() {
    check(PARSE);
}

#[test]
fn execution_errors_at_the_node() {
    check(EXEC);
}

#[test]
fn parse_and_exec_errors_are_told_apart() {
    assert!(matches!(
        GoTemplate::parse("{{.a"),
        Err(TemplateError::Parse(_))
    ));
    let t = GoTemplate::parse("a{{len 3}}").expect("parses");
    let mut out = String::new();
    let err = t
        .execute(&serde_json::json!({}), &mut out)
        .expect_err("len of an int");
    assert!(matches!(err, TemplateError::Exec(_)));
    assert_eq!(out, "a", "what was written before the error stays");
}

#[test]
fn deep_nesting_is_refused_not_overflowing() {
    let deep = format!("{{{{{}1{}}}}}", "(".repeat(500), ")".repeat(500));
    let err = GoTemplate::parse(&deep).expect_err("too deep");
    assert!(err.to_string().contains("nesting deeper than"), "{err}");
}

#[test]
fn character_constants_and_byte_columns() {
    check(&[
        (
            "{{'é'}} {{'\\n'}} {{'\\x41'}} {{'\\u00e9'}}",
            "233 10 65 233",
        ),
        (
            "é€ {{len 3}}",
            "é€ EXEC: template: output:1:8: executing \"output\" at <len 3>: error calling len: len of type int",
        ),
        (
            "x\né{{.a}}{{len 3}}",
            "x\né<no value>EXEC: template: output:2:10: executing \"output\" at <len 3>: error calling len: len of type int",
        ),
        (
            "{{\"é\" | printf \"%q %x %5.1s|\"}}",
            "\"é\" %!x(MISSING) %!s(MISSING)|",
        ),
    ]);
}

#[test]
fn printf_flags_widths_and_verbs_that_do_not_fit() {
    check(&[
        (
            "{{printf \"%x|%X|%.2x|%.0x|%b\" -2.5 1e300 1.5 1.5 100000.0}}",
            "-0x1.4p+01|0X1.7E43C8800759CP+996|0x1.80p+00|0x1p+01|6871947673600000p-36",
        ),
        (
            "{{printf \"%+.1t|%8d|%-6s|\" .spec.f .metadata.name .spec.replicas}}",
            "%!t(float64=+2)|%!d(string=       x)|%!s(int64=3     )|",
        ),
        (
            "{{printf \"%.6U|%U|%+q|%q|%.0d|%+.0d|\" 65 -7 255 1000000 0 0}}",
            "U+000041|U+FFFFFFFFFFFFFFF9|'\\u00ff'|'\\U000f4240'|||",
        ),
        (
            "{{printf \"%.3T|%8T|%T\" .metadata 1.5 nil}}",
            "map| float64|<nil>",
        ),
        (
            "{{printf \"%8.2X|%.1s|% x\" .spec.unicode .spec.unicode \"ab\"}}",
            "    68C3|h|61 62",
        ),
        (
            "{{printf \"%5v|%d\" .spec.mixed .spec.mixed}}",
            "[    1     a <nil>  true map[    k:[]]]|[1 %!d(string=a) <nil> %!d(bool=true) map[%!d(string=k):[]]]",
        ),
    ]);
}

#[test]
fn define_template_and_block() {
    check(&[
        (
            "{{define \"x\"}}X{{.metadata.name}}{{end}}A{{template \"x\" .}}B",
            "AXxB",
        ),
        ("{{block \"b\" .data}}[{{.n}}]{{end}}", "[1]"),
        (
            "{{template \"nope\"}}",
            "EXEC: template: output:1:11: executing \"output\" at <{{template \"nope\"}}>: template \"nope\" not defined",
        ),
        (
            "{{define \"x\"}}1{{end}}{{define \"x\"}}2{{end}}",
            "PARSE: template: output:1: template: multiple definition of template \"x\"",
        ),
        ("{{define \"output\"}}O{{.kind}}{{end}}", "OConfigMap"),
        (
            "{{define \"output\"}}O{{end}}text",
            "PARSE: template: output:1: template: multiple definition of template \"output\"",
        ),
        (
            "{{$x := 1}}{{block \"b\" .}}{{$x}}{{end}}",
            "PARSE: template: output:1: undefined variable \"$x\"",
        ),
        (
            "{{template \"x\" $y := 3}}{{$y}}{{define \"x\"}}{{.}}{{end}}",
            "33",
        ),
        (
            "{{template 1}}",
            "PARSE: template: output:1: unexpected \"1\" in template clause",
        ),
        (
            "{{define 1}}{{end}}",
            "PARSE: template: output:1: unexpected \"1\" in define clause",
        ),
        (
            "{{block \"a\"}}{{end}}",
            "PARSE: template: output:1: missing value for block clause",
        ),
        (
            "{{if 1}}{{define \"x\"}}{{end}}{{end}}",
            "PARSE: template: output:1: unexpected <define> in command",
        ),
        (
            "{{define \"x\"}}{{template \"y\"}}{{end}}{{template \"x\"}}",
            "EXEC: template: output:1:25: executing \"x\" at <{{template \"y\"}}>: template \"y\" not defined",
        ),
        (
            "{{define \"x\"}}[{{.}}]{{end}}{{template \"x\"}}",
            "[<no value>]",
        ),
        (
            "{{define \"x\"}}  {{end}}{{define \"x\"}}full{{end}}{{template \"x\"}}",
            "full",
        ),
    ]);
    // A template calling itself stops (Go at 100,000 levels, here at 1,000).
    let err = GoTemplate::parse("{{define \"r\"}}{{template \"r\" .}}{{end}}{{template \"r\" .}}")
        .expect("parses")
        .execute(&serde_json::json!({}), &mut String::new())
        .expect_err("too deep");
    assert!(
        err.to_string().starts_with(
            "template: output:1:25: executing \"r\" at <{{template \"r\" .}}>: exceeded maximum template depth"
        ),
        "{err}"
    );
}

const DATA: &str = r#"{"apiVersion":"v1","data":{"b64":"aGVsbG8gd29ybGQ=","n":"1"},"kind":"ConfigMap","metadata":{"annotations":{},"labels":{"app.kubernetes.io/name":"bp","team":"blue"},"name":"x"},"spec":{"big":1000000,"e300":1e+300,"empty":{},"emptyl":[],"emptys":"","f":1.5,"fz":0,"huge":18446744073709552000,"list":[1,2,3],"mixed":[1,"a",null,true,{"k":[]}],"neg":-2.5,"nested":[{"l":["a","b"]},{"l":["c"]}],"nl":"a\nb","replicas":3,"t":true,"tiny":1e-07,"unicode":"héllo wörld","z":null,"zero":0}}"#;
const PARSE: &[(&str, &str)] = &[
    (
        "{{.a, b}}",
        "PARSE: template: output:1: unexpected \",\" in operand",
    ),
    ("{{.a", "PARSE: template: output:1: unclosed action"),
    ("{{if .a}}x", "PARSE: template: output:1: unexpected EOF"),
    ("{{end}}", "PARSE: template: output:1: unexpected {{end}}"),
    ("{{else}}", "PARSE: template: output:1: unexpected {{else}}"),
    (
        "{{range $i, $e, $f := .a}}{{end}}",
        "PARSE: template: output:1: too many declarations in range",
    ),
    (
        "{{$x}}",
        "PARSE: template: output:1: undefined variable \"$x\"",
    ),
    (
        "{{foo}}",
        "PARSE: template: output:1: function \"foo\" not defined",
    ),
    (
        "{{\"abc}}",
        "PARSE: template: output:1: unterminated quoted string",
    ),
    ("{{/* x }}", "PARSE: template: output:1: unclosed comment"),
    (
        "{{/* x */ }}",
        "PARSE: template: output:1: comment ends before closing delimiter",
    ),
    (
        "{{.a.}}",
        "PARSE: template: output:1: unexpected <.> in operand",
    ),
    (
        "{{3.b}}",
        "PARSE: template: output:1: bad number syntax: \"3.b\"",
    ),
    (
        "{{.a | \"x\"}}",
        "PARSE: template: output:1: non executable command in pipeline stage 2",
    ),
    (
        "{{}}",
        "PARSE: template: output:1: missing value for command",
    ),
    (
        "{{if}}{{end}}",
        "PARSE: template: output:1: missing value for if",
    ),
    ("{{(.a}}", "PARSE: template: output:1: unclosed left paren"),
    (
        "{{.a\n.b",
        "PARSE: template: output:2: unclosed action started at output:1",
    ),
    (
        "{{break}}",
        "PARSE: template: output:1: {{break}} outside {{range}}",
    ),
    (
        "{{with $x := 3}}{{end}}{{$x}}",
        "PARSE: template: output:1: undefined variable \"$x\"",
    ),
    (
        "{{.a %}}",
        "PARSE: template: output:1: unexpected \"%\" in operand",
    ),
    (
        "{{'ab'}}",
        "PARSE: template: output:1: malformed character constant: 'ab'",
    ),
    ("{{\"\\q\"}}", "PARSE: template: output:1: invalid syntax"),
    (
        "{{99999999999999999999}}",
        "PARSE: template: output:1: integer overflow: \"99999999999999999999\"",
    ),
    (
        "{{1.5.x}}",
        "PARSE: template: output:1: unexpected . after term \"1.5\"",
    ),
    (
        "{{range .a}}{{else if .b}}{{end}}",
        "PARSE: template: output:1: unexpected <if> in input",
    ),
    (
        "{{if .a}}{{else}}{{else}}{{end}}",
        "PARSE: template: output:1: expected end; found {{else}}",
    ),
    (
        "{{range $x, 3}}{{end}}",
        "PARSE: template: output:1: range can only initialize variables",
    ),
    (
        "{{$x, $y := 3}}",
        "PARSE: template: output:1: too many declarations in command",
    ),
    (
        "{{range .spec.list}}{{$i := .}}{{end}}{{$i}}\n",
        "PARSE: template: output:1: undefined variable \"$i\"",
    ),
    (
        "{{.a)}}",
        "PARSE: template: output:1: unexpected right paren",
    ),
    (
        "{{ /* not a comment */ }}",
        "PARSE: template: output:1: unexpected \"/\" in command",
    ),
];
const EXEC: &[(&str, &str)] = &[
    (
        "{{.metadata.name.x}}",
        "EXEC: template: output:1:11: executing \"output\" at <.metadata.name.x>: can't evaluate field x in type interface {}",
    ),
    (
        "{{base64decode \"aGVsbG8\"}}",
        "EXEC: template: output:1:2: executing \"output\" at <base64decode \"aGVsbG8\">: error calling base64decode: base64 decode failed: illegal base64 data at input byte 4",
    ),
    (
        "{{base64decode \"a$\"}}",
        "EXEC: template: output:1:2: executing \"output\" at <base64decode \"a$\">: error calling base64decode: base64 decode failed: illegal base64 data at input byte 1",
    ),
    (
        "{{base64decode \"aGVsbG8=x\"}}",
        "EXEC: template: output:1:2: executing \"output\" at <base64decode \"aGVsbG8=x\">: error calling base64decode: base64 decode failed: illegal base64 data at input byte 8",
    ),
    (
        "{{base64decode \"a===\"}}",
        "EXEC: template: output:1:2: executing \"output\" at <base64decode \"a===\">: error calling base64decode: base64 decode failed: illegal base64 data at input byte 1",
    ),
    (
        "{{len .missing}}",
        "EXEC: template: output:1:2: executing \"output\" at <len .missing>: error calling len: reflect: call of reflect.Value.Type on zero Value",
    ),
    (
        "{{len .spec.z}}",
        "EXEC: template: output:1:2: executing \"output\" at <len .spec.z>: error calling len: len of nil pointer",
    ),
    (
        "{{len 3}}",
        "EXEC: template: output:1:2: executing \"output\" at <len 3>: error calling len: len of type int",
    ),
    (
        "{{.spec.z.x}}",
        "EXEC: template: output:1:7: executing \"output\" at <.spec.z.x>: nil pointer evaluating interface {}.x",
    ),
    (
        "{{range .spec.list}}{{.x}}{{end}}",
        "EXEC: template: output:1:22: executing \"output\" at <.x>: can't evaluate field x in type interface {}",
    ),
    (
        "{{$x := .metadata.name}}{{$x.y}}",
        "EXEC: template: output:1:28: executing \"output\" at <$x.y>: can't evaluate field y in type string",
    ),
    (
        "{{with .metadata.name}}{{.y}}{{end}}",
        "EXEC: template: output:1:25: executing \"output\" at <.y>: can't evaluate field y in type string",
    ),
    (
        "{{printf .spec.replicas}}",
        "EXEC: template: output:1:14: executing \"output\" at <.spec.replicas>: wrong type for value; expected string; got int64",
    ),
    (
        "{{printf .nope}}",
        "EXEC: template: output:1:9: executing \"output\" at <.nope>: invalid value; expected string",
    ),
    (
        "{{eq .metadata .metadata}}",
        "EXEC: template: output:1:2: executing \"output\" at <eq .metadata .metadata>: error calling eq: non-comparable type map[annotations:map[] labels:map[app.kubernetes.io/name:bp team:blue] name:x]: map[string]interface {}",
    ),
    (
        "{{eq 1 \"a\"}}",
        "EXEC: template: output:1:2: executing \"output\" at <eq 1 \"a\">: error calling eq: incompatible types for comparison",
    ),
    (
        "{{lt 1 2.5}}",
        "EXEC: template: output:1:2: executing \"output\" at <lt 1 2.5>: error calling lt: incompatible types for comparison",
    ),
    (
        "{{lt .spec.list 1}}",
        "EXEC: template: output:1:2: executing \"output\" at <lt .spec.list 1>: error calling lt: invalid type for comparison",
    ),
    (
        "{{and}}",
        "EXEC: template: output:1:2: executing \"output\" at <and>: wrong number of args for and: want at least 1 got 0",
    ),
    (
        "{{ne 1}}",
        "EXEC: template: output:1:2: executing \"output\" at <ne>: wrong number of args for ne: want 2 got 1",
    ),
    (
        "{{eq 1}}",
        "EXEC: template: output:1:2: executing \"output\" at <eq 1>: error calling eq: missing argument for comparison",
    ),
    (
        "{{call .x}}",
        "EXEC: template: output:1:2: executing \"output\" at <call .x>: error calling call: call of nil",
    ),
    (
        "{{call .metadata}}",
        "EXEC: template: output:1:2: executing \"output\" at <call .metadata>: error calling call: non-function .metadata of type map[string]interface {}",
    ),
    (
        "{{index .spec.list 3}}",
        "EXEC: template: output:1:2: executing \"output\" at <index .spec.list 3>: error calling index: reflect: slice index out of range",
    ),
    (
        "{{index .spec.list -1}}",
        "EXEC: template: output:1:2: executing \"output\" at <index .spec.list -1>: error calling index: index out of range: -1",
    ),
    (
        "{{index .metadata 1}}",
        "EXEC: template: output:1:2: executing \"output\" at <index .metadata 1>: error calling index: value has type int; should be string",
    ),
    (
        "{{index .spec.z}}",
        "EXEC: template: output:1:2: executing \"output\" at <index .spec.z>: error calling index: index of untyped nil",
    ),
    (
        "{{index .spec.f 1}}",
        "EXEC: template: output:1:2: executing \"output\" at <index .spec.f 1>: error calling index: can't index item of type float64",
    ),
    (
        "{{index .spec.list nil}}",
        "EXEC: template: output:1:2: executing \"output\" at <index .spec.list nil>: error calling index: cannot index slice/array with nil",
    ),
    (
        "{{range .spec.replicas}}{{.}}{{end}}",
        "EXEC: template: output:1:13: executing \"output\" at <.spec.replicas>: range can't iterate over 3",
    ),
    (
        "{{.metadata.name 1}}",
        "EXEC: template: output:1:11: executing \"output\" at <.metadata.name>: name is not a method but has arguments",
    ),
    (
        "{{1 2}}",
        "EXEC: template: output:1:2: executing \"output\" at <1>: can't give argument to non-function 1",
    ),
    (
        "{{nil}}",
        "EXEC: template: output:1:2: executing \"output\" at <nil>: nil is not a command",
    ),
    (
        "{{$x := 1}}{{$x = 2}}{{$y = 3}}",
        "EXEC: template: output:1:28: executing \"output\" at <3>: undefined variable: $y",
    ),
    (
        "a{{.metadata.name}}b{{index .spec.list 9}}c",
        "axbEXEC: template: output:1:22: executing \"output\" at <index .spec.list 9>: error calling index: index out of range: 9",
    ),
    (
        "line1\nline2 {{index .spec.list 7}}",
        "line1\nline2 EXEC: template: output:2:8: executing \"output\" at <index .spec.list 7>: error calling index: index out of range: 7",
    ),
    (
        "{{.spec.mixed.x}}",
        "EXEC: template: output:1:7: executing \"output\" at <.spec.mixed.x>: can't evaluate field x in type interface {}",
    ),
    (
        "{{index .spec.mixed 2 \"x\"}}",
        "EXEC: template: output:1:2: executing \"output\" at <index .spec.mixed 2 \"x\">: error calling index: index of nil pointer",
    ),
    (
        "{{.spec\n.replicas}}",
        "EXEC: template: output:1:2: executing \"output\" at <.spec>: spec is not a method but has arguments",
    ),
];
const FMT: &[(&str, &str)] = &[
    (
        "{{index .metadata.labels \"app.kubernetes.io/name\"}} {{len .spec.list}} {{printf \"%d-%s-%v-%q\" .spec.replicas .metadata.name .spec.f .metadata.name}}",
        "bp 3 3-x-1.5-\"x\"",
    ),
    (
        "{{.metadata.name | printf \"%s-%s\" \"a\"}} {{\"x\" | len}} {{.spec.list | len}}",
        "a-x 1 3",
    ),
    (
        "{{print 1 2 \"a\" 3 4}}|{{println 1 \"a\"}}|{{print .spec.z}}|{{print nil}}|{{print .missing}}",
        "1 2a3 4|1 a\n|<nil>|<nil>|<nil>",
    ),
    (
        "{{printf \"%5d|%-5d|%05d|%x|%X|%o|%b|%c|%q|%U|%+d\" 42 42 42 255 255 8 5 65 65 65 3}}",
        "   42|42   |00042|ff|FF|10|101|A|'A'|U+0041|+3",
    ),
    (
        "{{printf \"%f|%.2f|%e|%g|%v|%8.3f|%-8.2f|%G|%E\" 3.14159 3.14159 3.14159 3.14159 3.14159 3.14159 3.14159 1e21 1e21}}",
        "3.141590|3.14|3.141590e+00|3.14159|3.14159|   3.142|3.14    |1E+21|1.000000E+21",
    ),
    (
        "{{printf \"%s|%d|%v|%s\" 3 \"x\" nil nil}}",
        "%!s(int=3)|%!d(string=x)|<nil>|%!s(<nil>)",
    ),
    (
        "{{printf \"%d %d\" 1}}|{{printf \"%d\" 1 \"x\" 2.5}}",
        "1 %!d(MISSING)|1%!(EXTRA string=x, float64=2.5)",
    ),
    (
        "{{printf \"%s\" .metadata.labels}}|{{printf \"%d\" .spec.list}}|{{printf \"%q\" .spec.nested}}",
        "map[app.kubernetes.io/name:bp team:blue]|[1 2 3]|[map[\"l\":[\"a\" \"b\"]] map[\"l\":[\"c\"]]]",
    ),
    (
        "{{printf \"%x|% x|%q|%+q|%.2s|%10s|%-10s|\" \"hey\" \"hey\" \"a\\\"b\\n\\x01é\" \"é\" \"abcdef\" \"ab\" \"ab\"}}",
        "686579|68 65 79|\"a\\\"b\\n\\x01é\"|\"\\u00e9\"|ab|        ab|ab        |",
    ),
    (
        "{{printf \"%v %v %v %v %v %v\" 1000000.0 1e20 123456789.0 0.0001 0.00001 100000.0}}",
        "1e+06 1e+20 1.23456789e+08 0.0001 1e-05 100000",
    ),
    (
        "{{printf \"%T %T %T %T %T %T %T\" .spec.replicas .spec.f .metadata .spec.list \"s\" 1 .nope}}",
        "int64 float64 map[string]interface {} []interface {} string int <nil>",
    ),
    ("{{printf \"%%|%z|%\"}}", "%|%!z(MISSING)|%!(NOVERB)"),
    ("{{.metadata.name | len | printf \"%03d\"}}", "001"),
    (
        "{{printf \"%v|%d|%s|%q|%x\" .spec.mixed .spec.mixed .spec.mixed .spec.mixed .spec.mixed}}",
        "[1 a <nil> true map[k:[]]]|[1 %!d(string=a) <nil> %!d(bool=true) map[%!d(string=k):[]]]|[%!s(int64=1) a <nil> %!s(bool=true) map[k:[]]]|['\\x01' \"a\" <nil> %!q(bool=true) map[\"k\":[]]]|[1 61 <nil> %!x(bool=true) map[6b:[]]]",
    ),
    (
        "{{printf \"%g|%.3g|%.10g|%g|%g|%.0g|%#v\" 100000.0 1234.5678 1.0 1e-5 .spec.huge 7.5 .spec.f}}",
        "100000|1.23e+03|1|1e-05|1.8446744073709552e+19|8|1.5",
    ),
    (
        "{{printf \"%-8s|%8s|\" .spec.unicode .spec.unicode}}",
        "héllo wörld|héllo wörld|",
    ),
    (
        "{{ .metadata.name | printf \"%s\" | printf \"[%s]\" }}",
        "[x]",
    ),
    ("{{ printf \"%s=%s\" \"a\" }}", "a=%!s(MISSING)"),
    (
        "{{printf \"%6.2v|%.3v|%.0f|%.1e\" 3.14159 \"abcdef\" 2.5 12345.0}}",
        "   3.1|abc|2|1.2e+04",
    ),
    (
        "{{printf \"%!\"}} {{printf \"%[1]d %[1]d\" 5}} {{printf \"%[3]d\" 5}} {{printf \"%[2]d %d\" 1 2 3}}",
        "%!!(MISSING) 5 5 %!d(BADINDEX) 2 3",
    ),
    (
        "{{printf \"%v %v %v\" .spec.tiny .spec.e300 -0.0}}",
        "1e-07 1e+300 -0",
    ),
    (
        "{{\"€\"}} {{len \"€\"}} {{printf \"%c|%U\" 8364 8364}}",
        "€ 3 €|U+20AC",
    ),
    ("{{printf \"%s\" (printf \"%d\" 3)}}", "3"),
];
const FUNCS: &[(&str, &str)] = &[
    (
        "{{range .spec.list}}{{if eq . 2}}{{break}}{{end}}{{.}}{{end}}",
        "1",
    ),
    (
        "{{range .spec.list}}{{if eq . 2}}{{continue}}{{end}}{{.}}{{end}}",
        "13",
    ),
    (
        "{{and 1 0 2}} {{or 0 \"\" \"x\"}} {{and 1 2}} {{or 0 \"\"}} {{not 0}} {{not .spec.list}}",
        "0 x 2  true false",
    ),
    (
        "{{eq .missing \"x\"}} {{eq .spec.z nil}} {{eq .spec.replicas 3}} {{eq .spec.f 1.5}} {{eq \"a\" \"b\" \"a\"}} {{ne 1 2}} {{lt 1 2}} {{le 2 2}} {{gt \"b\" \"a\"}} {{ge 1 2}}",
        "false true true true true true true true true false",
    ),
    (
        "{{index .spec.list 1}} {{index .spec.nested 0 \"l\" 1}} {{index .metadata \"nope\"}} {{index \"abc\" 1}}",
        "2 b <no value> 98",
    ),
    (
        "{{slice .spec.list 1}} {{slice \"abcd\" 1 3}} {{slice .spec.list 0 2}}",
        "[2 3] bc [1 2]",
    ),
    (
        "{{exists .metadata \"name\"}} {{exists .metadata \"nope\"}} {{exists . \"metadata\" \"labels\" \"team\"}} {{exists .spec \"z\"}} {{exists .spec.list 2}} {{exists .spec.list 3}} {{exists .nope}}",
        "true false true false true false true",
    ),
    (
        "{{html \"<a href='x'>&\\\"\"}}|{{js \"a'b\\\"<>&=\\n\\\\\"}}|{{urlquery \"a b&c=d/é\"}}|{{html .missing}}|{{html 1 \"a\" 2}}",
        "&lt;a href=&#39;x&#39;&gt;&amp;&#34;|a\\'b\\\"\\u003C\\u003E\\u0026\\u003D\\u000A\\\\|a+b%26c%3Dd%2F%C3%A9|&lt;no value&gt;|1a2",
    ),
    (
        "{{base64decode \"aGVsbG8=\"}}|{{base64decode \"aGVs\\nbG8gd29ybGQ=\"}}|{{base64decode \"\"}}",
        "hello|hello world|",
    ),
    ("{{base64decode \"aG==\"}}", "h"),
    (
        "{{(index .spec.nested 0).l}} {{(.metadata).name}} {{(len .spec.list)}}",
        "[a b] x 3",
    ),
    ("{{base64decode .data.b64}}", "hello world"),
    (
        "{{ $n := len .spec.list }}{{ if gt $n 2 }}many{{ end }}",
        "many",
    ),
    (
        "{{eq .spec.huge .spec.huge}} {{lt .spec.replicas .spec.big}}",
        "true true",
    ),
    (
        "{{index .spec.mixed 4 \"k\"}}|{{len (index .spec.mixed 4 \"k\")}}",
        "[]|0",
    ),
    ("{{with index .spec.mixed 2}}a{{else}}b{{end}}", "b"),
    ("{{ .metadata.name | eq \"x\" | not }}", "false"),
];
const CONTROL: &[(&str, &str)] = &[
    ("{{range .spec.list}}{{.}},{{end}}", "1,2,3,"),
    (
        "{{range $i, $e := .spec.list}}{{$i}}={{$e}} {{end}}",
        "0=1 1=2 2=3 ",
    ),
    (
        "{{range $k, $v := .metadata.labels}}{{$k}}:{{$v}};{{end}}",
        "app.kubernetes.io/name:bp;team:blue;",
    ),
    (
        "{{range .spec.nested}}[{{range .l}}{{.}}{{end}}]{{end}}",
        "[ab][c]",
    ),
    ("{{range .nope}}x{{else}}empty{{end}}", "empty"),
    (
        "{{if .spec.t}}yes{{else}}no{{end}} {{if .spec.z}}yes{{else if .spec.f}}f{{else}}no{{end}}",
        "yes f",
    ),
    (
        "{{with .metadata}}{{.name}}{{end}} {{with .nope}}x{{else}}none{{end}}",
        "x none",
    ),
    (
        "{{range .spec.mixed}}{{.}}|{{end}}",
        "1|a|<no value>|true|map[k:[]]|",
    ),
    (
        "{{range $i, $v := .spec.mixed}}{{if $v}}{{$i}}{{end}}{{end}}",
        "0134",
    ),
    (
        "{{if .spec.empty}}a{{else if .spec.emptyl}}b{{else if .spec.emptys}}c{{else if .spec.zero}}d{{else if .spec.fz}}e{{else}}f{{end}}",
        "f",
    ),
    (
        "{{range .spec.empty}}x{{else}}none{{end}}{{range .spec.emptyl}}x{{else}}none{{end}}",
        "nonenone",
    ),
    (
        "{{ range $i, $e := .spec.list }}{{ if $i }},{{ end }}{{ $e }}{{ end }}",
        "1,2,3",
    ),
    (
        "{{range .spec.list}}{{$}}{{break}}{{end}}",
        "map[apiVersion:v1 data:map[b64:aGVsbG8gd29ybGQ= n:1] kind:ConfigMap metadata:map[annotations:map[] labels:map[app.kubernetes.io/name:bp team:blue] name:x] spec:map[big:1000000 e300:1e+300 empty:map[] emptyl:[] emptys: f:1.5 fz:0 huge:1.8446744073709552e+19 list:[1 2 3] mixed:[1 a <nil> true map[k:[]]] neg:-2.5 nested:[map[l:[a b]] map[l:[c]]] nl:a\nb replicas:3 t:true tiny:1e-07 unicode:héllo wörld z:<nil> zero:0]]",
    ),
    (
        "{{range .spec.nested}}{{range .l}}{{$.metadata.name}}{{.}}{{end}}{{end}}",
        "xaxbxc",
    ),
    ("{{range $e := .spec.list}}{{$e}}{{end}}", "123"),
    ("{{$x := 1}}{{if true}}{{$x = 2}}{{end}}{{$x}}", "2"),
    (
        "{{$x := 1}}{{range .spec.list}}{{$x = .}}{{end}}{{$x}}",
        "3",
    ),
    ("{{with $x := .spec.replicas}}{{$x}}{{.}}{{end}}", "33"),
];
const VALUES: &[(&str, &str)] = &[
    (
        "{{.metadata.name}} {{.spec.replicas}} {{.spec.big}} {{.spec.f}} {{.spec.missing}} {{.spec.z}} {{.spec.list}} {{.metadata.labels}} {{.spec.nested}} {{.spec.t}}",
        "x 3 1000000 1.5 <no value> <no value> [1 2 3] map[app.kubernetes.io/name:bp team:blue] [map[l:[a b]] map[l:[c]]] true",
    ),
    ("{{.spec.missing.deeper}}", "<no value>"),
    (
        "{{- /* comment */ -}}\n  a  {{- .metadata.name -}}  b",
        "axb",
    ),
    (
        "{{\"\\n\\t\\\"q\\\"\\x41\\u00e9\\101\"}}|{{`raw\\n`}}|{{'a'}}|{{1.5}}|{{1e3}}|{{0x10}}|{{-3}}|{{true}}|{{1_000}}",
        "\n\t\"q\"AéA|raw\\n|97|1.5|1000|16|-3|true|1000",
    ),
    ("{{$x := .metadata.name}}{{$x}}{{$x = \"y\"}}{{$x}}", "xy"),
    ("{{-3}}|{{- 3}}|{{3 -}}|", "-3|3|3|"),
    ("{{.metadata.name |}}", "x"),
    (
        "{{.spec.huge}} {{.spec.tiny}} {{.spec.neg}} {{.spec.zero}} {{.spec.fz}} {{.spec.e300}} {{.spec.mixed}} {{.spec.empty}} {{.spec.emptyl}} [{{.spec.emptys}}]",
        "1.8446744073709552e+19 1e-07 -2.5 0 0 1e+300 [1 a <nil> true map[k:[]]] map[] [] []",
    ),
    ("{{.spec.nl}}", "a\nb"),
    ("a\nb {{.x.y\n}}", "a\nb <no value>"),
    ("line1\n  {{- .metadata.name}}", "line1x"),
    ("{{.metadata.name -}}\n   \n\n  end", "xend"),
    ("{{- \"x\" -}}", "x"),
    (
        "{{ .metadata.labels.team }} {{ .metadata.labels.nope }}",
        "blue <no value>",
    ),
    ("{{/* multi\nline */}}ok", "ok"),
    ("{{\"a\"}}{{/*x*/}}{{\"b\"}}", "ab"),
    (
        "{{.metadata.name}}{{\"\\n\"}}{{.kind}}{{\"\\n\"}}\n",
        "x\nConfigMap\n\n",
    ),
];
