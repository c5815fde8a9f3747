//! Every decision branch of the built-in functions that reproduce catalog
//! functions, driven through the runtime's entry point (`Builtins::run`) the
//! way kpt calls them: the output items, the results (severity, message and
//! references), the exit code and stderr are what the Go function gives.

mod branches {
    pub mod apply_setters;
    pub mod create_setters;
    pub mod empty_input;
    pub mod harness;
    pub mod legacy_releases;
    pub mod render;
    pub mod set_annotations;
    pub mod set_image;
    pub mod set_labels;
    pub mod set_namespace;
}
