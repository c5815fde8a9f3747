//! Porch's executable evaluator: a configuration file maps images to binaries under the
//! functions directory, and a request for one of those images runs the binary (the
//! ResourceList protocol on stdin/stdout) instead of pulling the image.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use kpt::resource_list::ResourceList;
use kpt::runtime::exec::ExecRuntime;
use kpt::runtime::{FunctionOutput, FunctionRef, FunctionRuntime, RunOptions, RuntimeError};

#[derive(Debug, thiserror::Error)]
pub enum ExecConfigError {
    #[error("failed to read configuration file {path:?}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("failed to parse configuration file {path:?}: {source}")]
    Parse {
        path: PathBuf,
        source: serde_yaml::Error,
    },
}

#[derive(Debug, serde::Deserialize)]
struct Configuration {
    #[serde(default)]
    functions: Vec<Function>,
}

#[derive(Debug, serde::Deserialize)]
struct Function {
    function: String,
    #[serde(default)]
    images: Vec<String>,
}

/// Images mapped to executables.
#[derive(Debug)]
pub struct ExecEvaluator {
    binaries: HashMap<String, PathBuf>,
    exec: ExecRuntime,
}

impl ExecEvaluator {
    /// Reads Porch's `config.yaml`; binaries are `<functions>/<function>`.
    pub fn load(config: &Path, functions: &Path) -> Result<Self, ExecConfigError> {
        let text = std::fs::read_to_string(config).map_err(|source| ExecConfigError::Read {
            path: config.to_owned(),
            source,
        })?;
        let parsed: Configuration =
            serde_yaml::from_str(&text).map_err(|source| ExecConfigError::Parse {
                path: config.to_owned(),
                source,
            })?;
        let base = std::path::absolute(functions).unwrap_or_else(|_| functions.to_owned());
        let mut binaries = HashMap::new();
        for f in parsed.functions {
            for image in f.images {
                if binaries.contains_key(&image) {
                    tracing::warn!("Ignoring duplicate image {image:?} ({})", f.function);
                    continue;
                }
                let path = base.join(&f.function);
                tracing::info!("Caching {image} as {}", path.display());
                binaries.insert(image, path);
            }
        }
        Ok(ExecEvaluator {
            binaries,
            exec: ExecRuntime::allowed(),
        })
    }
}

impl FunctionRuntime for ExecEvaluator {
    fn handles(&self, function: &FunctionRef) -> bool {
        matches!(function, FunctionRef::Image(i) if self.binaries.contains_key(i))
    }

    fn run(
        &self,
        function: &FunctionRef,
        input: ResourceList,
        options: &RunOptions,
    ) -> Result<FunctionOutput, RuntimeError> {
        let binary = match function {
            FunctionRef::Image(i) => self.binaries.get(i),
            FunctionRef::Exec(_) => None,
        };
        let Some(binary) = binary else {
            return Err(RuntimeError::NotFound(format!(
                "function {:?} not found",
                function.display()
            )));
        };
        // Quoted for the exec runtime's shell-style split (paths may contain spaces).
        let command = format!("'{}'", binary.display().to_string().replace('\'', "'\\''"));
        self.exec.run(&FunctionRef::Exec(command), input, options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_map_to_binaries_under_the_functions_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("config.yaml");
        std::fs::write(
            &config,
            "functions:\n- function: apply-setters\n  images:\n  - a/apply-setters:v1\n  - b/apply-setters:v1\n- function: other\n  images:\n  - a/apply-setters:v1\n",
        )
        .expect("write");
        let eval = ExecEvaluator::load(&config, dir.path()).expect("load");
        assert!(eval.handles(&FunctionRef::Image("a/apply-setters:v1".into())));
        assert!(eval.handles(&FunctionRef::Image("b/apply-setters:v1".into())));
        assert!(!eval.handles(&FunctionRef::Image("c/apply-setters:v1".into())));
        // The first mapping of a duplicate image wins.
        assert_eq!(
            eval.binaries["a/apply-setters:v1"],
            dir.path().join("apply-setters")
        );
    }

    #[test]
    fn a_missing_configuration_is_an_error_naming_it() {
        let err = ExecEvaluator::load(Path::new("/nonexistent/config.yaml"), Path::new("."))
            .expect_err("missing");
        assert!(
            err.to_string().contains("/nonexistent/config.yaml"),
            "{err}"
        );
    }
}
