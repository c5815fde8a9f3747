//! Conformance: the catalog's examples for apply-replacements, apply-setters,
//! create-setters, search-replace and starlark, rendered (or, where the
//! example runs `kpt fn eval`, evaluated) with the native functions and
//! compared byte for byte with what kpt produced using the real catalog
//! images (the example package with `.expected/diff.patch` applied).
//!
//! The upstream data lives in `../shared/conformance` (override with
//! `PORCH_CONFORMANCE_DIR`); when it is absent the test says how to get it
//! and passes as skipped. The Kptfile is not compared: its `status` is the
//! render's business and is tested with the render.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use kpt::kptfile::Selector;
use kpt::package::PackageFiles;
use kpt::package::fs::read_dir;
use kpt::render::{EvalOptions, RenderOptions, config_map, eval, render};
use kpt::runtime::{FunctionRef, RunOptions, image_short_name};
use krm_functions::Builtins;

/// The functions this test covers.
const FUNCTIONS: [&str; 5] = [
    "apply-replacements",
    "apply-setters",
    "create-setters",
    "search-replace",
    "starlark",
];

fn conformance_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("PORCH_CONFORMANCE_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance"),
    };
    dir.join("catalog/examples").is_dir().then_some(dir)
}

#[test]
fn catalog_examples_b() -> Result<()> {
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
    let mut ran = Vec::new();
    let mut failures = Vec::new();
    for dir in dirs {
        let Some(function) = example_function(&dir)? else {
            continue;
        };
        if !FUNCTIONS.contains(&function.as_str()) {
            continue;
        }
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match check_example(&dir) {
            Ok(()) => ran.push(name),
            Err(e) => failures.push(format!("{name}: {e:#}")),
        }
    }
    eprintln!("passed: {ran:?}");
    assert!(!ran.is_empty() || !failures.is_empty(), "no examples found");
    assert!(
        failures.is_empty(),
        "{} example(s) differ:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    Ok(())
}

/// The catalog function an example exercises (from `exec.sh` or the Kptfile).
fn example_function(dir: &Path) -> Result<Option<String>> {
    if let Some(cmd) = eval_command(dir)? {
        return Ok(Some(image_short_name(&cmd.image).to_string()));
    }
    let Ok(kptfile) = std::fs::read_to_string(dir.join("Kptfile")) else {
        return Ok(None);
    };
    Ok(kptfile
        .lines()
        .filter_map(|l| l.trim().trim_start_matches("- ").strip_prefix("image:"))
        .map(|i| image_short_name(i.trim()).to_string())
        .next())
}

/// A `kpt fn eval --image X -- k=v ...` line from `.expected/exec.sh`.
struct EvalCommand {
    image: String,
    /// The shell text after `--`.
    args: String,
}

fn eval_command(dir: &Path) -> Result<Option<EvalCommand>> {
    let Ok(script) = std::fs::read_to_string(dir.join(".expected/exec.sh")) else {
        return Ok(None);
    };
    let joined = script.replace("\\\n", " ");
    let Some(line) = joined
        .lines()
        .find(|l| l.trim_start().starts_with("kpt fn eval"))
    else {
        return Ok(None);
    };
    let (flags, args) = line.split_once(" -- ").unwrap_or((line, ""));
    let mut words = flags.split_whitespace();
    let mut image = None;
    while let Some(w) = words.next() {
        if w == "--image" || w == "-i" {
            image = words.next().map(str::to_string);
        }
    }
    let image = image.context("exec.sh has no --image")?;
    Ok(Some(EvalCommand {
        image,
        args: args.to_string(),
    }))
}

/// Lets bash expand the `-- k=v` words (they use `$(cat file)`), run in the
/// example directory.
fn expand_args(dir: &Path, args: &str) -> Result<BTreeMap<String, String>> {
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("printf '%s\\0' {args}"))
        .current_dir(dir)
        .output()?;
    if !out.status.success() {
        bail!(
            "expanding {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = String::from_utf8(out.stdout)?;
    let mut map = BTreeMap::new();
    for word in text.split('\0').filter(|w| !w.is_empty()) {
        let (k, v) = word.split_once('=').context("argument without =")?;
        map.insert(k.to_string(), v.to_string());
    }
    Ok(map)
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
            let mut perm = std::fs::metadata(&target)?.permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perm.set_readonly(false);
            std::fs::set_permissions(&target, perm)?;
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

/// The package tree kpt produced: the example with the expected diff applied.
fn expected_tree(dir: &Path, work: &Path) -> Result<PackageFiles> {
    copy_tree(dir, work)?;
    let patch = dir.join(".expected/diff.patch");
    if patch.is_file() {
        git(work, &["init", "-q"])?;
        git(work, &["add", "-A"])?;
        git(work, &["commit", "-q", "-m", "example"])?;
        let patch = patch.to_string_lossy().into_owned();
        git(work, &["apply", "--whitespace=nowarn", &patch])?;
    }
    Ok(read_dir(work)?.0)
}

/// `exitCode` from `.expected/config.yaml` (0 when absent).
fn expected_exit_code(dir: &Path) -> i32 {
    std::fs::read_to_string(dir.join(".expected/config.yaml"))
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                l.strip_prefix("exitCode:")
                    .map(|v| v.trim().parse().unwrap_or(0))
            })
        })
        .unwrap_or(0)
}

fn check_example(dir: &Path) -> Result<()> {
    let tmp = tempfile::tempdir()?;
    let expected = expected_tree(dir, &tmp.path().join("expected"))?;
    let input_dir = tmp.path().join("input");
    copy_tree(dir, &input_dir)?;
    let (input, _) = read_dir(&input_dir)?;
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
    let output = match eval_command(dir)? {
        Some(cmd) => {
            let data = expand_args(dir, &cmd.args)?;
            let eval_opts = EvalOptions {
                function: FunctionRef::Image(cmd.image),
                function_config: Some(config_map(&data)),
                config_in_package: None,
                selector: Selector::default(),
                exclusion: Selector::default(),
            };
            eval(&input, &opts, &eval_opts)
        }
        None => render(&input, &opts),
    };
    let want_fail = expected_exit_code(dir) != 0;
    if want_fail != output.error.is_some() {
        bail!(
            "expected exit code {}, got error {:?}; log:\n{}",
            expected_exit_code(dir),
            output.error,
            output.log.join("\n")
        );
    }
    let mut diffs = Vec::new();
    let paths: std::collections::BTreeSet<&str> =
        output.files.paths().chain(expected.paths()).collect();
    for path in paths {
        if path == "Kptfile" || path.ends_with("/Kptfile") {
            continue;
        }
        let ours = output.files.get_text(path);
        let theirs = expected.get_text(path);
        if ours != theirs {
            diffs.push(format!(
                "--- {path} (expected)\n{}\n--- {path} (ours)\n{}",
                theirs.unwrap_or("<absent>"),
                ours.unwrap_or("<absent>")
            ));
        }
    }
    if !diffs.is_empty() {
        bail!("{}", diffs.join("\n"));
    }
    Ok(())
}
