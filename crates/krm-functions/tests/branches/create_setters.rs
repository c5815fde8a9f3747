//! create-setters: finding nothing, an empty or unparsable config are errors.

use super::harness::{call, config_map};

const DEPLOY: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: c
        image: nginx:1.7.1
  envs:
  - stage
  - dev
";

fn error(config: Option<&str>, message: &str) {
    let o = call("create-setters", DEPLOY, config);
    assert_eq!(
        o.results(),
        vec![format!("error|failed to create setters: {message}")],
        "{config:?}"
    );
    assert_eq!(o.exit_code, 1);
    assert_eq!(o.items, DEPLOY);
}

#[test]
fn config_and_match_errors() {
    error(None, "config map cannot be empty");
    error(Some(&config_map(&[])), "config map cannot be empty");
    error(Some(&config_map(&[("x", "[a")])), "parsing error");
    error(
        Some(&config_map(&[("x", "absent")])),
        "no matches for the input list of setters",
    );
}

#[test]
fn comments_scalars_and_arrays() {
    let o = call(
        "create-setters",
        DEPLOY,
        Some(&config_map(&[
            ("image", "nginx"),
            ("tag", "1.7.1"),
            ("envs", "[dev, stage]"),
        ])),
    );
    assert_eq!(o.exit_code, 0);
    assert_eq!(
        o.results(),
        vec![
            // A mapping's list fields are visited before its children.
            "-|Added line comment \"kpt-set: ${envs}\" for field with value \"[dev stage]\"",
            "-|Added line comment \"kpt-set: ${image}:${tag}\" for field with value \"nginx:1.7.1\"",
        ]
    );
    assert!(
        o.items
            .contains("image: nginx:1.7.1 # kpt-set: ${image}:${tag}\n")
    );
    assert!(o.items.contains("  envs: # kpt-set: ${envs}\n"));
}

/// Setter values are read like kyaml's `yaml.Parse`: the first document
/// only; a value without any document (a comment) does not parse.
#[test]
fn values_are_read_up_to_their_first_document() {
    error(
        Some(&config_map(&[("image", "# nothing here")])),
        "parsing error",
    );
    let cfg = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  envs: |\n    [dev, stage]\n    ---\n    not: [read\n";
    let o = call("create-setters", DEPLOY, Some(cfg));
    assert_eq!(o.exit_code, 0, "{:?}", o.results());
    assert!(
        o.items.contains("  envs: # kpt-set: ${envs}\n"),
        "{}",
        o.items
    );
}
