//! Conformance: the catalog's examples for set-namespace, set-labels,
//! set-annotations, set-image, ensure-name-substring, upsert-resource,
//! remove-local-config-resources, set-enforcement-action, apply-replacements,
//! search-replace, apply-setters, create-setters, delete-annotations and
//! starlark, run through `kpt::render` (or `kpt::render::eval` for
//! `testType: eval` examples) with the native functions and compared byte
//! for byte with what kpt produced
//! using the real catalog images: the example package with
//! `.expected/diff.patch` applied by `git apply`. Where the example has a
//! `.expected/results.yaml`, the result messages, severities and file paths
//! must match too.
//!
//! The upstream data lives in `../shared/conformance` (override with
//! `PORCH_CONFORMANCE_DIR`); when it is absent the test says how to get it and
//! passes as skipped. In render mode the Kptfile is not compared: its `status`
//! belongs to the render and is tested there.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use kpt::kptfile::Selector;
use kpt::package::PackageFiles;
use kpt::package::fs::read_dir;
use kpt::render::{EvalOptions, RenderOptions, RenderOutput, config_map, eval, render};
use kpt::resource_list::ResultItem;
use kpt::runtime::{FunctionRef, RunOptions, image_short_name};
use kpt::yaml::{self, Node};
use krm_functions::Builtins;

/// The functions this test covers.
const FUNCTIONS: [&str; 14] = [
    "apply-replacements",
    "delete-annotations",
    "apply-setters",
    "create-setters",
    "search-replace",
    "starlark",
    "set-namespace",
    "set-labels",
    "set-annotations",
    "set-image",
    "ensure-name-substring",
    "upsert-resource",
    "remove-local-config-resources",
    "set-enforcement-action",
];

fn conformance_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("PORCH_CONFORMANCE_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance"),
    };
    dir.join("catalog/examples").is_dir().then_some(dir)
}

#[test]
fn catalog_examples() -> Result<()> {
    let Some(root) = conformance_dir() else {
        eprintln!(
            "skipped: conformance data not found; put the upstream conformance data in \
             ../shared/conformance (catalog/examples/*) or set PORCH_CONFORMANCE_DIR"
        );
        return Ok(());
    };
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("catalog/examples"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let (mut passed, mut failures) = (Vec::new(), Vec::new());
    for dir in dirs {
        let example = Example::read(&dir)?;
        if example.exec_script || !FUNCTIONS.contains(&example.function.as_str()) {
            continue;
        }
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match check(&dir, &example) {
            Ok(()) => passed.push(name),
            Err(e) => failures.push(format!("{name}: {e:#}")),
        }
    }
    eprintln!("passed: {passed:?}");
    assert!(
        !passed.is_empty() || !failures.is_empty(),
        "no examples found"
    );
    assert!(
        failures.is_empty(),
        "{} example(s) differ:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    Ok(())
}

/// How an example is run, from `.expected/config.yaml` and the Kptfile.
struct Example {
    /// Short name of the function.
    function: String,
    /// `testType: eval`: the image, `args` and `fnConfig` of `kpt fn eval`.
    eval: Option<(String, BTreeMap<String, String>, Option<String>)>,
    exit_code: i32,
    /// Run by a script (`.expected/exec.sh`), not covered here.
    exec_script: bool,
}

impl Example {
    fn read(dir: &Path) -> Result<Example> {
        let config = match std::fs::read_to_string(dir.join(".expected/config.yaml")) {
            Ok(text) => yaml::parse_one(&text).context("config.yaml")?,
            Err(_) => Node::mapping(),
        };
        let s = |k: &str| {
            config
                .get(k)
                .and_then(Node::as_str)
                .unwrap_or("")
                .to_string()
        };
        let exit_code = s("exitCode").parse().unwrap_or(0);
        let exec_script = dir.join(".expected/exec.sh").is_file();
        if s("testType") == "eval" {
            let args = config
                .get("args")
                .map(|a| {
                    a.entries()
                        .iter()
                        .filter_map(|(k, v)| {
                            Some((k.as_str()?.to_string(), v.as_str()?.to_string()))
                        })
                        .collect()
                })
                .unwrap_or_default();
            let fn_config = Some(s("fnConfig")).filter(|c| !c.is_empty());
            return Ok(Example {
                function: image_short_name(&s("image")).to_string(),
                eval: Some((s("image"), args, fn_config)),
                exit_code,
                exec_script,
            });
        }
        let kptfile = std::fs::read_to_string(dir.join("Kptfile")).unwrap_or_default();
        let function = kptfile
            .lines()
            .filter_map(|l| l.trim().trim_start_matches("- ").strip_prefix("image:"))
            .map(|i| image_short_name(i.trim()).to_string())
            .next()
            .unwrap_or_default();
        Ok(Example {
            function,
            eval: None,
            exit_code,
            exec_script,
        })
    }
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == ".expected" || name == ".git" {
            continue;
        }
        let target = to.join(&name);
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

fn git(dir: &Path, args: &[&str]) -> Result<()> {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()?;
    if !out.status.success() {
        bail!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(())
}

/// The tree kpt produced: the example in a fresh repository with the diff applied.
fn expected_tree(dir: &Path, work: &Path) -> Result<PackageFiles> {
    copy_tree(dir, work)?;
    git(work, &["init", "-q"])?;
    git(work, &["add", "-A"])?;
    git(work, &["commit", "-q", "-m", "example"])?;
    let patch = dir.join(".expected/diff.patch");
    if patch.is_file() {
        git(
            work,
            &["apply", "--whitespace=nowarn", &patch.to_string_lossy()],
        )?;
    }
    std::fs::remove_dir_all(work.join(".git"))?;
    Ok(read_dir(work)?.0)
}

fn run_example(dir: &Path, example: &Example, input: &PackageFiles) -> Result<RenderOutput> {
    let runtime = Builtins;
    let opts = RenderOptions {
        runtime: &runtime,
        run: RunOptions::default(),
        root_name: dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        write_status: true,
    };
    let Some((image, args, fn_config)) = &example.eval else {
        return Ok(render(input, &opts));
    };
    let (function_config, config_in_package) = match fn_config {
        // Relative to `.expected/`, as kpt's e2e runner resolves it.
        Some(rel) => {
            let path = dir.join(".expected").join(rel);
            let text = std::fs::read_to_string(&path).with_context(|| format!("{path:?}"))?;
            let in_pkg = Path::new(rel)
                .strip_prefix("..")
                .ok()
                .map(|p| p.to_string_lossy().into_owned());
            (Some(yaml::parse_one(&text)?), in_pkg)
        }
        None => (Some(config_map(args)), None),
    };
    let eval_opts = EvalOptions {
        function: FunctionRef::Image(image.clone()),
        function_config,
        config_in_package,
        selector: Selector::default(),
        exclusion: Selector::default(),
    };
    Ok(eval(input, &opts, &eval_opts))
}

fn check(dir: &Path, example: &Example) -> Result<()> {
    let tmp = tempfile::tempdir()?;
    let expected = expected_tree(dir, &tmp.path().join("expected"))?;
    let input_dir = tmp.path().join("input");
    copy_tree(dir, &input_dir)?;
    let (input, _) = read_dir(&input_dir)?;
    let output = run_example(dir, example, &input)?;
    if (example.exit_code != 0) != output.error.is_some() {
        bail!(
            "expected exit code {}, got error {:?}; log:\n{}",
            example.exit_code,
            output.error,
            output.log.join("\n")
        );
    }
    let mut diffs = Vec::new();
    let paths: BTreeSet<&str> = output.files.paths().chain(expected.paths()).collect();
    for path in paths {
        if example.eval.is_none() && (path == "Kptfile" || path.ends_with("/Kptfile")) {
            continue;
        }
        let (ours, theirs) = (output.files.get_text(path), expected.get_text(path));
        if ours != theirs {
            diffs.push(format!(
                "--- {path} (expected)\n{}\n--- {path} (ours)\n{}",
                theirs.unwrap_or("<absent>"),
                ours.unwrap_or("<absent>")
            ));
        }
    }
    if let Some(want) = expected_results(dir)? {
        let got: Vec<String> = output
            .mutation_steps
            .iter()
            .chain(output.validation_steps.iter())
            .flat_map(|s| s.results.iter())
            .map(describe)
            .collect();
        if got != want {
            diffs.push(format!("results: expected {want:#?}\n got {got:#?}"));
        }
    }
    if !diffs.is_empty() {
        bail!("{}", diffs.join("\n"));
    }
    Ok(())
}

/// A result as `severity|message|file path`, for comparison.
fn describe(r: &ResultItem) -> String {
    let severity = r
        .severity
        .map(|s| format!("{s:?}").to_lowercase())
        .unwrap_or_default();
    let file = r.file.as_ref().map(|f| f.path.clone()).unwrap_or_default();
    format!("{severity}|{}|{file}", r.message)
}

/// The results of the (single) function from `.expected/results.yaml`.
fn expected_results(dir: &Path) -> Result<Option<Vec<String>>> {
    let Ok(text) = std::fs::read_to_string(dir.join(".expected/results.yaml")) else {
        return Ok(None);
    };
    let list = yaml::parse_one(&text)?;
    let mut out = Vec::new();
    for item in list.get("items").map(Node::items).unwrap_or_default() {
        for r in item.get("results").map(Node::items).unwrap_or_default() {
            let r = ResultItem::from_node(r).map_err(anyhow::Error::msg)?;
            out.push(describe(&r));
        }
    }
    Ok(Some(out))
}
