//! `porchctl fn list` against the real porch-server: the built-in functions with their
//! image, types and description, filtered by type and keyword on the server.

mod common;

use common::Server;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fn_list_shows_builtins_and_filters_by_type_and_keyword() {
    let s = Server::start();
    let all = s.porchctl_ok(&["fn", "list", "--namespace=default"]);
    let header = all.lines().next().unwrap_or_default();
    for column in [
        "NAME",
        "CREATED AT",
        "IMAGE",
        "FUNCTION TYPES",
        "DESCRIPTION",
    ] {
        assert!(header.contains(column), "{header}");
    }
    assert!(
        all.contains("ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.1"),
        "{all}"
    );
    assert!(
        all.contains("ghcr.io/kptdev/krm-functions-catalog/delete-annotations:v0.1"),
        "{all}"
    );
    assert_eq!(all.lines().count(), 1 + 16, "{all}");

    let validators = s.porchctl_ok(&[
        "fn",
        "list",
        "--namespace=default",
        "--type=validator",
        "-o",
        "name",
    ]);
    assert_eq!(
        validators.trim(),
        "function.porch.kpt.dev/builtin:starlark:v0.5.0"
    );
    let by_keyword = s.porchctl_ok(&[
        "fn",
        "list",
        "--namespace=default",
        "--keyword=namespace",
        "-o",
        "jsonpath={.spec.image}",
    ]);
    assert_eq!(
        by_keyword.trim(),
        "ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.1"
    );
}
