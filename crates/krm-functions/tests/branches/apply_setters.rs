//! apply-setters: setters from any config's `data`; errors are one
//! `failed to apply setters: ...` error result and exit 1.

use super::harness::{call, call_image, config_map};

const DEPLOY: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web # kpt-set: ${app}
spec:
  replicas: 1 # kpt-set: ${replicas}
  template:
    spec:
      containers:
      - name: c
        image: nginx:1.1 # kpt-set: ${image}:${tag}
  envs: # kpt-set: ${envs}
  - dev
";

#[test]
fn no_config_or_no_match_is_an_untyped_result() {
    for cfg in [None, Some(config_map(&[("other", "x")]))] {
        let o = call("apply-setters", DEPLOY, cfg.as_deref());
        assert_eq!(o.results(), vec!["-|no matches for input setter(s)"]);
        assert_eq!(o.exit_code, 0);
        assert_eq!(o.items, DEPLOY);
    }
}

#[test]
fn sets_scalars_and_arrays() {
    let o = call(
        "apply-setters",
        DEPLOY,
        Some(&config_map(&[
            ("app", "api"),
            ("tag", "2.0"),
            ("envs", "[prod, stage]"),
        ])),
    );
    assert_eq!(o.exit_code, 0);
    assert_eq!(
        o.results(),
        vec![
            // A mapping's list fields are visited before its children.
            "info|set field value to \"api\"",
            "info|set field value to \"[prod, stage]\"",
            "info|set field value to \"nginx:2.0\"",
        ]
    );
    assert!(o.items.contains("  name: api # kpt-set: ${app}\n"));
    assert!(
        o.items
            .contains("image: nginx:2.0 # kpt-set: ${image}:${tag}\n")
    );
    assert!(
        o.items
            .contains("  envs: # kpt-set: ${envs}\n  - prod\n  - stage\n")
    );
}

#[test]
fn errors() {
    let bad_pattern = DEPLOY.replace("# kpt-set: ${envs}", "# kpt-set: ${envs}-x");
    for (input, data, message) in [
        (
            DEPLOY.to_string(),
            vec![("envs", "prod")],
            "failed to apply setters: input to array setter must be an array of values, but found \"prod\"",
        ),
        (
            bad_pattern,
            vec![("envs", "[a]")],
            "failed to apply setters: invalid setter pattern for array node: \"${envs}-x\"",
        ),
    ] {
        let o = call("apply-setters", &input, Some(&config_map(&data)));
        assert_eq!(o.results(), vec![format!("error|{message}")]);
        assert_eq!(o.exit_code, 1);
    }
}

#[test]
fn unresolvable_setters() {
    // A setter that is neither given nor recoverable from the current value.
    let input = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: plain # kpt-set: ${image}-${tag}\n";
    let o = call("apply-setters", input, Some(&config_map(&[("image", "x")])));
    assert_eq!(
        o.results(),
        vec!["error|failed to apply setters: values for setters [${tag}] must be provided"]
    );
    assert_eq!(o.exit_code, 1);
    // Recoverable from the current value: only the given setter changes.
    let input = input.replace("plain", "nginx-1.1");
    let o = call(
        "apply-setters",
        &input,
        Some(&config_map(&[("image", "x")])),
    );
    assert_eq!(o.results(), vec!["info|set field value to \"x-1.1\""]);
    assert_eq!(o.exit_code, 0);
}

#[test]
fn configref_example_results() {
    // The catalog's `apply-setters-configref` example, minus the Kptfile.
    let input = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: my-nginx
  annotations:
    internal.config.kubernetes.io/path: resources.yaml
spec:
  replicas: 4 # kpt-set: ${nginx-replicas}
  template:
    spec:
      containers:
        - name: nginx
          image: \"nginx:1.16.1\" # kpt-set: nginx:${tag}
";
    let cfg = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: setters\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  nginx-replicas: \"3\"\n  tag: 1.16.2\n";
    let o = call("apply-setters", input, Some(cfg));
    assert_eq!(o.exit_code, 0);
    assert_eq!(
        o.results(),
        vec![
            "info|set field value to \"3\"",
            "info|set field value to \"nginx:1.16.2\""
        ]
    );
    let r = &o.results[1];
    let field = r.field.as_ref().expect("field");
    assert_eq!(field.path, "spec.template.spec.containers[0].image");
    assert_eq!(field.current_value.as_deref(), Some("nginx:1.16.1"));
    assert_eq!(field.proposed_value.as_deref(), Some("nginx:1.16.2"));
    assert_eq!(
        r.file.as_ref().map(|f| (f.path.as_str(), f.index)),
        Some(("resources.yaml", 0))
    );
    let rr = r.resource_ref.as_ref().expect("resourceRef");
    assert_eq!(
        (rr.kind.as_str(), rr.name.as_str()),
        ("Deployment", "my-nginx")
    );
    assert!(
        o.items
            .contains("  replicas: 3 # kpt-set: ${nginx-replicas}\n")
    );
    assert!(
        o.items
            .contains("image: \"nginx:1.16.2\" # kpt-set: nginx:${tag}\n"),
        "the quoting style is kept: {}",
        o.items
    );
}

/// Emptying fields and filling them again round-trips their shapes: an empty
/// scalar is written double-quoted, an empty list as `[]` with the comment on
/// the value; a filled `[]` becomes a block list with the comment on its key.
#[test]
fn empty_values_and_back() {
    let input = "\
apiVersion: v1
kind: Service
metadata:
  name: svc # kpt-set: ${app}
  namespace: 'bar' # kpt-set: ${ns}
image: redis:7.0 # kpt-set: ${image}:${tag}
zones: # kpt-set: ${zones}
  - a
  - b
tiers: [web, db] # kpt-set: ${tiers}
";
    let empty = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  app: ''\n  ns: ~\n  image: \"\"\n  zones: ''\n  tiers: \"\"\n";
    let o = call("apply-setters", input, Some(empty));
    assert_eq!(o.exit_code, 0, "{:?}", o.results());
    let emptied = "\
apiVersion: v1
kind: Service
metadata:
  name: \"\" # kpt-set: ${app}
  namespace: \"\" # kpt-set: ${ns}
image: :7.0 # kpt-set: ${image}:${tag}
zones: [] # kpt-set: ${zones}
tiers: [] # kpt-set: ${tiers}
";
    assert_eq!(o.items, emptied);
    let full = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  app: svc\n  ns: bar\n  image: redis\n  tag: '7.2'\n  zones: '[a, b]'\n  tiers: |\n    - web\n    - db\n";
    let o = call("apply-setters", &o.items, Some(full));
    assert_eq!(o.exit_code, 0, "{:?}", o.results());
    assert_eq!(
        o.items,
        "\
apiVersion: v1
kind: Service
metadata:
  name: \"svc\" # kpt-set: ${app}
  namespace: \"bar\" # kpt-set: ${ns}
image: redis:7.2 # kpt-set: ${image}:${tag}
zones: # kpt-set: ${zones}
- a
- b
tiers: # kpt-set: ${tiers}
- web
- db
"
    );
}

#[test]
fn setter_names_with_punctuation() {
    let input = "apiVersion: v1\nkind: X\nmetadata:\n  name: a\nhost: old.example.com # kpt-set: ${sub-[.*+?]}.${zone}\n";
    let cfg = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  'sub-[.*+?]': new\n";
    let o = call("apply-setters", input, Some(cfg));
    // The recovered `${zone}` is what Go's leftmost-first `(.*)\.(.*)` leaves
    // after the greedy first group: `com`.
    assert_eq!(o.results(), vec!["info|set field value to \"new.com\""]);
    assert!(
        o.items
            .contains("host: new.com # kpt-set: ${sub-[.*+?]}.${zone}\n")
    );
}

/// A flow list turned into a block list keeps its line comment on the list
/// as well as getting it on its key, as the Go function leaves it (kpt issue
/// 3723): yaml.v3 then writes it at the next place that takes a line comment,
/// here after the following field, and only once.
#[test]
fn flow_list_comment_is_written_again_after_the_next_field() {
    let input = "\
apiVersion: v1
kind: Pod
metadata:
  name: p
zones: [] # kpt-set: ${zones}
owner: team-a
ports: [80] # kpt-set: ${ports}
tier: # note
";
    let cfg = config_map(&[("zones", "[eu, us]"), ("ports", "- 8080\n")]);
    let o = call("apply-setters", input, Some(&cfg));
    assert_eq!(o.exit_code, 0, "{:?}", o.results());
    assert_eq!(
        o.items,
        "\
apiVersion: v1
kind: Pod
metadata:
  name: p
zones: # kpt-set: ${zones}
- eu
- us
owner: team-a # kpt-set: ${zones}
ports: # kpt-set: ${ports}
- 8080
tier: # note
"
    );
}

/// The current release's results hide values its secret scanner takes for
/// credentials (a connection string with a password), but not look-alikes
/// such as AWS's documentation key or a plain image reference.
#[test]
fn results_redact_credential_shaped_values() {
    let input = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
data:
  dsn: none # kpt-set: ${dsn}
  key: none # kpt-set: ${key}
  image: none # kpt-set: ${image}
";
    let cfg = config_map(&[
        ("dsn", "mysql://app:Wq93-zzK@db.local/shop"),
        ("key", "AKIAQX7TR2VNBEXAMPLE"),
        ("image", "registry.local/shop:1.4"),
    ]);
    let o = call("apply-setters", input, Some(&cfg));
    assert_eq!(o.exit_code, 0);
    let proposed: Vec<Option<&str>> = o
        .results
        .iter()
        .map(|r| r.field.as_ref().and_then(|f| f.proposed_value.as_deref()))
        .collect();
    assert_eq!(
        proposed,
        vec![
            Some("<redacted>"),
            Some("AKIAQX7TR2VNBEXAMPLE"),
            Some("registry.local/shop:1.4")
        ]
    );
    assert_eq!(o.results[0].message, "set field value to \"<redacted>\"");
    // The resource itself gets the value.
    assert!(
        o.items
            .contains("dsn: mysql://app:Wq93-zzK@db.local/shop # kpt-set: ${dsn}\n")
    );
}

/// A setter named twice in a pattern and recovered from the current value
/// takes what its last occurrence matched (Go keeps recovered values in a map).
#[test]
fn repeated_recovered_setter_takes_its_last_match() {
    let input = "apiVersion: v1\nkind: X\nmetadata:\n  name: a\nroute: blue.green.v1 # kpt-set: ${hue}.${hue}.${ver}\n";
    let o = call("apply-setters", input, Some(&config_map(&[("ver", "v2")])));
    assert_eq!(o.exit_code, 0, "{:?}", o.results());
    assert!(
        o.items
            .contains("route: green.green.v2 # kpt-set: ${hue}.${hue}.${ver}\n"),
        "{}",
        o.items
    );
}

/// The current release reports a list field's current value as the list
/// written out as YAML, a flow list with its line comment.
#[test]
fn list_current_value_is_the_list_as_yaml() {
    let input = "\
apiVersion: v1
kind: X
metadata:
  name: a
hosts: # kpt-set: ${hosts}
- one.local
- two.local
ports: [80, 443] # kpt-set: ${ports}
";
    let cfg = config_map(&[("hosts", "[three.local]"), ("ports", "[8443]")]);
    let o = call("apply-setters", input, Some(&cfg));
    assert_eq!(o.exit_code, 0, "{:?}", o.results());
    let current: Vec<Option<&str>> = o
        .results
        .iter()
        .map(|r| r.field.as_ref().and_then(|f| f.current_value.as_deref()))
        .collect();
    assert_eq!(
        current,
        vec![
            Some("- one.local\n- two.local\n"),
            Some("[80, 443] # kpt-set: ${ports}\n")
        ]
    );
}

/// Releases v0.1 and v0.2 had no redaction: their message shows the value
/// even where the current release hides it; nor did they set a severity.
#[test]
fn old_releases_show_values_the_current_one_redacts() {
    let input = "apiVersion: v1\nkind: X\nmetadata:\n  name: a\nspec:\n  dbPassword: x # kpt-set: ${db-pass}\n";
    let cfg = config_map(&[("db-pass", "open-sesame")]);
    let o = call("apply-setters", input, Some(&cfg));
    assert_eq!(o.results(), vec!["info|set field value to \"<redacted>\""]);
    for tag in ["v0.1", "v0.2.0"] {
        let image = format!("ghcr.io/kptdev/krm-functions-catalog/apply-setters:{tag}");
        let o = call_image(&image, input, Some(&cfg));
        assert_eq!(
            o.results(),
            vec!["-|set field value to \"open-sesame\""],
            "{tag}"
        );
    }
}

/// A list value is read like kyaml's `yaml.Parse`: the first document only,
/// whatever follows a `---`.
#[test]
fn list_value_takes_its_first_document() {
    let input =
        "apiVersion: v1\nkind: X\nmetadata:\n  name: a\nzones: # kpt-set: ${zones}\n- old\n";
    let cfg = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  zones: |\n    - north\n    ---\n    - [broken\n";
    let o = call("apply-setters", input, Some(cfg));
    assert_eq!(o.exit_code, 0, "{:?}", o.results());
    assert!(
        o.items.ends_with("zones: # kpt-set: ${zones}\n- north\n"),
        "{}",
        o.items
    );
}
