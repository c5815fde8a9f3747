//! Which render failures are the package's own content (so a server answers
//! 422 with the cause) and which are a function failing.

use super::RenderError;

impl RenderError {
    /// A short machine-readable kind:
    /// - `"invalid-input"`: the package content cannot be read or is not
    ///   acceptable (malformed YAML, control characters, too deep nesting,
    ///   excessive aliasing, a non-KRM document, an unknown Kptfile field, an
    ///   old Kptfile apiVersion, binary garbage in a resource file, a bad
    ///   function config, no Kptfile);
    /// - `"function-failed"`: a pipeline step failed or could not run (its
    ///   results or message say why).
    pub fn kind(&self) -> &'static str {
        match self {
            RenderError::MissingKptfile(_)
            | RenderError::Kptfile { .. }
            | RenderError::SubpackageKptfile { .. }
            | RenderError::Resources(_)
            | RenderError::Config(_)
            | RenderError::Input(_)
            | RenderError::Package { .. } => "invalid-input",
            RenderError::Pipeline { .. } => "function-failed",
            RenderError::TopDown { source, .. } => source.kind(),
        }
    }

    /// True when the failure is the content's fault ([`RenderError::kind`] is
    /// `"invalid-input"`).
    pub fn is_invalid_input(&self) -> bool {
        self.kind() == "invalid-input"
    }
}
