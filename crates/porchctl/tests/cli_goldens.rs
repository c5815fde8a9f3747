//! Porch's own CLI golden files (`cli-goldens/<case>/config.yaml`), one test per case,
//! replayed against the real porch-server binary and the smart-HTTP git fixture hosting
//! the blueprint bundle. See `common/golden.rs` for what is rewritten and normalised.
//!
//! Without the conformance data ($PORCH_CONFORMANCE_DIR or ../shared/conformance) every
//! case passes as skipped, printing how to get the data.

mod common;

/// Every case in the golden directory has a test below.
const CASES: &[&str] = &[
    "repo-register",
    "rpkg-clone",
    "rpkg-copy",
    "rpkg-init",
    "rpkg-init-deploy",
    "rpkg-lifecycle",
    "rpkg-push",
    "rpkg-push-on-render-failure",
    "rpkg-unready",
];

async fn golden(case: &str) {
    let Some(dir) = porch_testkit::conformance::dir() else {
        return;
    };
    let failures = match common::golden::run_case(&dir, case).await {
        Ok(f) => f,
        Err(why) => {
            eprintln!("skipped: {case}: {why}");
            return;
        }
    };
    if failures.is_empty() {
        return;
    }
    let report = failures.join("\n\n");
    panic!("golden case {case} failed:\n{report}");
}

#[test]
fn every_case_has_a_test() {
    let Some(dir) = porch_testkit::conformance::dir() else {
        return;
    };
    let mut found: Vec<String> = std::fs::read_dir(dir.join("porch/cli-goldens"))
        .expect("cli-goldens")
        .filter_map(Result::ok)
        .filter(|e| e.path().join("config.yaml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    found.sort();
    assert_eq!(found, CASES, "add a test per new golden case");
}

macro_rules! golden_tests {
    ($($test:ident => $case:literal),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $test() {
                golden($case).await;
            }
        )*
    };
}

golden_tests! {
    repo_register => "repo-register",
    rpkg_clone => "rpkg-clone",
    rpkg_copy => "rpkg-copy",
    rpkg_init => "rpkg-init",
    rpkg_init_deploy => "rpkg-init-deploy",
    rpkg_lifecycle => "rpkg-lifecycle",
    rpkg_push => "rpkg-push",
    rpkg_push_on_render_failure => "rpkg-push-on-render-failure",
    rpkg_unready => "rpkg-unready",
}
