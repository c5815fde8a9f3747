//! The package context of a deployable package: kpt's built-in `builtins/gen-pkg-context`
//! function and `kpt pkg get --for-deployment`, which runs it over the fetched package.
//!
//! The function drops every `kptfile.kpt.dev` ConfigMap from its input and generates a
//! fresh one next to each Kptfile (`package-context.yaml`, `data.name` = the Kptfile's
//! `metadata.name`). The installed kpt does this for sub-packages too, so we do.

use crate::package::PackageFiles;
use crate::package::resources::{self as res, set_annotation};
use crate::render::{self, EvalOptions, RenderOptions, RenderOutput};
use crate::resource_list::{FileRef, ResourceList, ResultItem};
use crate::runtime::{FunctionOutput, FunctionRef, FunctionRuntime, RunOptions, RuntimeError};
use crate::yaml::Node;

/// The image name kpt reserves for the generator.
pub const GEN_PKG_CONTEXT: &str = "builtins/gen-pkg-context";
/// File name of the package context, next to the Kptfile.
pub const PKG_CONTEXT_FILE: &str = "package-context.yaml";
/// Name of the package context ConfigMap.
pub const PKG_CONTEXT_NAME: &str = "kptfile.kpt.dev";

fn text<'a>(n: &'a Node, path: &[&str]) -> &'a str {
    n.get_path(path).and_then(Node::as_str).unwrap_or_default()
}

fn is_pkg_context(n: &Node) -> bool {
    text(n, &["apiVersion"]) == "v1"
        && text(n, &["kind"]) == "ConfigMap"
        && text(n, &["metadata", "name"]) == PKG_CONTEXT_NAME
}

fn is_kptfile(n: &Node) -> bool {
    text(n, &["apiVersion"]) == "kpt.dev/v1" && text(n, &["kind"]) == "Kptfile"
}

/// The context for one Kptfile item (kpt's `pkgContextResource`).
fn context_for(kptfile: &Node, package_path: Option<&str>) -> Node {
    let name = text(kptfile, &["metadata", "name"]);
    let mut cm = crate::yaml::parse_one(&super::init::package_context("example", None))
        .expect("the abstract package context is valid YAML");
    let dir = res::item_path(kptfile)
        .and_then(|p| p.rsplit_once('/'))
        .map_or("", |(d, _)| d);
    set_annotation(
        &mut cm,
        res::PATH,
        &crate::package::join(dir, PKG_CONTEXT_FILE),
    );
    // kyaml `SetDataMap`: the data map is replaced.
    let mut data = Node::mapping();
    data.set("name", Node::string(name));
    if let Some(p) = package_path.filter(|p| !p.is_empty()) {
        data.set("package-path", Node::string(p));
    }
    cm.set("data", data);
    cm
}

/// The generator over a ResourceList, in place.
pub fn generate(list: &mut ResourceList, package_path: Option<&str>) {
    let mut contexts = Vec::new();
    list.items.retain(|item| {
        if is_pkg_context(item) {
            return false;
        }
        if is_kptfile(item) {
            contexts.push(context_for(item, package_path));
        }
        true
    });
    for c in contexts {
        let mut r = ResultItem::info("generated package context");
        r.file = Some(FileRef {
            path: res::item_path(&c).unwrap_or_default().to_string(),
            index: 0,
        });
        list.results.push(r);
        list.items.push(c);
    }
}

/// The runtime that runs `builtins/gen-pkg-context` (any tag), with kpt's
/// `PackageConfig` (its `package-path`; kpt's own CLI leaves it empty, Porch sets it to the
/// new package's path when it clones into a deployment repository).
#[derive(Debug, Clone, Default)]
pub struct PkgContextRuntime {
    pub package_path: Option<String>,
}

impl FunctionRuntime for PkgContextRuntime {
    fn handles(&self, function: &FunctionRef) -> bool {
        matches!(function, FunctionRef::Image(i)
            if i.split([':', '@']).next() == Some(GEN_PKG_CONTEXT))
    }

    fn run(
        &self,
        _function: &FunctionRef,
        mut input: ResourceList,
        _options: &RunOptions,
    ) -> Result<FunctionOutput, RuntimeError> {
        input.results.clear();
        generate(&mut input, self.package_path.as_deref());
        Ok(FunctionOutput {
            list: input,
            exit_code: 0,
            stderr: String::new(),
        })
    }

    fn builtin_names(&self) -> Vec<String> {
        vec![GEN_PKG_CONTEXT.to_string()]
    }
}

/// `kpt pkg get --for-deployment`'s customization: the generator run over every
/// resource of the package (sub-packages included), as `fn eval` would.
pub fn customize_for_deployment(files: &PackageFiles, root_name: &str) -> RenderOutput {
    generate_package_context(files, root_name, None)
}

/// The generator over every resource of the package with `package_path` as
/// `PackageConfig.PackagePath`: every `kptfile.kpt.dev` ConfigMap is dropped and a fresh
/// `package-context.yaml` written next to each Kptfile (Porch's clone into a deployment
/// repository, `newPackageContextGeneratorMutation`).
pub fn generate_package_context(
    files: &PackageFiles,
    root_name: &str,
    package_path: Option<&str>,
) -> RenderOutput {
    let runtime = PkgContextRuntime {
        package_path: package_path.map(str::to_owned),
    };
    let opts = RenderOptions {
        runtime: &runtime,
        run: RunOptions::default(),
        root_name: root_name.to_string(),
        write_status: false,
    };
    let eval = EvalOptions {
        function: FunctionRef::Image(GEN_PKG_CONTEXT.to_string()),
        function_config: None,
        config_in_package: None,
        selector: Default::default(),
        exclusion: Default::default(),
    };
    render::eval(files, &opts, &eval)
}

/// [`customize_for_deployment`] on a package directory: writes what changed and
/// returns the console lines; on failure nothing is written.
pub fn customize_dir(dir: &std::path::Path, root_name: &str) -> Result<Vec<String>, ContextError> {
    let io = |source| ContextError::Io {
        path: dir.display().to_string(),
        source,
    };
    let (before, _) = crate::package::fs::read_dir(dir).map_err(io)?;
    let out = customize_for_deployment(&before, root_name);
    if let Some(e) = out.error {
        return Err(ContextError::Function(e));
    }
    crate::package::fs::write_changes(dir, &before, &out.files).map_err(io)?;
    Ok(out.log)
}

/// Errors customizing a package for deployment.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Function(#[from] render::RenderError),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkg() -> PackageFiles {
        let mut f = PackageFiles::new();
        f.insert(
            "Kptfile",
            b"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n".to_vec(),
        );
        f.insert(
            "package-context.yaml",
            super::super::init::package_context("example", None).into_bytes(),
        );
        f.insert(
            "sub/Kptfile",
            b"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: db\n".to_vec(),
        );
        f.insert(
            "cm.yaml",
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm # keep\n".to_vec(),
        );
        f
    }

    #[test]
    fn every_kptfile_gets_a_fresh_context() {
        let out = customize_for_deployment(&pkg(), "app");
        assert!(out.is_ok(), "{:?}", out.error);
        let ctx = |p: &str| String::from_utf8(out.files.get(p).expect(p).to_vec()).expect("utf8");
        assert_eq!(
            ctx("package-context.yaml"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  name: app\n"
        );
        assert!(ctx("sub/package-context.yaml").ends_with("data:\n  name: db\n"));
        assert_eq!(
            ctx("cm.yaml"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm # keep\n"
        );
        let infos = out
            .log
            .iter()
            .filter(|l| l.contains("[info]: generated package context"))
            .count();
        assert_eq!(infos, 2, "{:?}", out.log);
    }

    #[test]
    fn package_path_is_written_when_configured() {
        let mut list = ResourceList::new(vec![
            crate::yaml::parse_one("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: a\n")
                .expect("yaml"),
        ]);
        generate(&mut list, Some("team/a"));
        assert_eq!(list.items.len(), 2);
        assert_eq!(
            list.items[1]
                .get_path(&["data", "package-path"])
                .and_then(Node::as_str),
            Some("team/a")
        );
    }
}
