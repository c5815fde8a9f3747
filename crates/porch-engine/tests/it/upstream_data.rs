//! Porch's own task test data (`conformance/porch/task/*`, `conformance/porch/update`) run
//! with the rules of the Go tests that use it: `TestPackageContext` (the package-context
//! generator with a package path, every file compared), `TestPkgUpdate` (the engine's
//! resource merge, every file but the Kptfile compared) and `TestInit` (the init task's
//! Kptfile, README.md and package-context.yaml). The data is read from
//! `../shared/conformance` or `$PORCH_CONFORMANCE_DIR`; when absent the tests say so and
//! pass as skipped.

use std::collections::BTreeMap;
use std::path::Path;

use kpt::package::PackageFiles;
use kpt::pkg::update::{Strategy, UpdateOptions, update_package};
use porch_core::revision::{InitTask, Task};
use porch_engine::CreateRequest;

use crate::common::{NS, World};

fn read(dir: &Path) -> PackageFiles {
    kpt::package::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .0
}

fn text(files: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, String> {
    files
        .iter()
        .map(|(k, v)| (k.clone(), String::from_utf8_lossy(v).into_owned()))
        .collect()
}

#[test]
fn package_context_of_porch_task_data() {
    let Some(root) = porch_testkit::conformance::dir() else {
        return;
    };
    let case = root.join("porch/task/context");
    let input = read(&case.join("input"));
    let out = kpt::pkg::context::generate_package_context(
        &input,
        "input",
        Some("parent1/parent1.2/parent1.2.3/me"),
    );
    assert!(out.error.is_none(), "{:?}", out.error);
    let want = read(&case.join("expected")).into_map();
    assert_eq!(text(&out.files.into_map()), text(&want));
}

#[test]
fn resource_merge_of_porch_update_data() {
    let Some(root) = porch_testkit::conformance::dir() else {
        return;
    };
    let case = root.join("porch/update");
    let merged = update_package(
        &read(&case.join("original")),
        &read(&case.join("upstream")),
        &read(&case.join("local")),
        Strategy::ResourceMerge,
        &UpdateOptions::default(),
    )
    .expect("update");
    let want = text(&read(&case.join("updated")).into_map());
    let got = text(&merged.into_map());
    // As the Go test: every merged file but the Kptfile equals the expected one.
    for (path, content) in &got {
        if path != "Kptfile" {
            assert_eq!(Some(content), want.get(path), "{path}");
        }
    }
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn init_of_porch_task_data() -> anyhow::Result<()> {
    let Some(root) = porch_testkit::conformance::dir() else {
        return Ok(());
    };
    let want = root.join("porch/task/init/testpkg");
    let w = World::new()?;
    let url = w.empty_remote("r.git")?;
    w.register("r", &url).await?;
    w.engine
        .create(CreateRequest {
            namespace: NS.into(),
            repository: "r".into(),
            package: "testpkg".into(),
            workspace: "ws".into(),
            tasks: vec![Task::init(InitTask {
                description: "test package".into(),
                keywords: vec!["test".into(), "kpt".into(), "pkg".into()],
                site: "http://kpt.dev/testpkg".into(),
                ..InitTask::default()
            })],
            ..CreateRequest::default()
        })
        .await?;
    let (_, files) = w.engine.read_resources(NS, "r.testpkg.ws").await?;
    let got = text(&files);
    for name in ["README.md", "package-context.yaml"] {
        let expected = std::fs::read_to_string(want.join(name))?;
        assert_eq!(got[name], expected, "{name}");
    }
    // The engine renders after init, which records the Rendered condition and writes the
    // Kptfile as kpt's render does (Porch's server too; the Go test looks at the init
    // mutation alone): apart from the status, the content is init's.
    let mut kptfile = kpt::yaml::parse_one(&got["Kptfile"])?;
    assert!(kptfile.get_path(&["status", "conditions"]).is_some());
    kptfile.remove("status");
    let expected = kpt::yaml::parse_one(&std::fs::read_to_string(want.join("Kptfile"))?)?;
    assert_eq!(
        kpt::yaml::emit_node(&kptfile, kpt::yaml::SeqIndent::Compact),
        kpt::yaml::emit_node(&expected, kpt::yaml::SeqIndent::Compact)
    );
    Ok(())
}
