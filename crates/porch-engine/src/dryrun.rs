//! Dry-run checks of a create: the refusals [`Engine::create`] answers before it touches a
//! task's sources, renders or writes, so a `dryRun=All` create refuses what the real one
//! refuses (unknown repository, invalid names, a taken workspace or package) and changes
//! nothing. Sources (clone/edit/upgrade upstreams) and the render are not tried.

use porch_core::names::RepositoryName;

use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::index::RepoId;
use crate::model::CreateRequest;

impl Engine {
    /// What [`Engine::create`] would refuse for `req` without running its task (the same
    /// checks in the same order as `create_now`).
    pub fn check_create(&self, req: &CreateRequest) -> Result<()> {
        let repository = RepositoryName::new(&req.repository)?;
        let id: RepoId = (req.namespace.clone(), repository);
        self.handle(&id)?;
        let (package, workspace, _) = crate::create::validate_request(&id, req)?;
        let task_type = req.tasks.first().map_or("init", |t| t.task_type.as_str());
        self.check_unique(&id, &package, &workspace, task_type)?;
        match task_type {
            "init" | "clone" | "edit" | "upgrade" => Ok(()),
            other => Err(EngineError::Invalid(format!(
                "task type {other:?} cannot create a package revision; use one of init, clone, edit, upgrade"
            ))),
        }
    }
}
