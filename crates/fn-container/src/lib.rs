//! Runs KRM function container images without a container daemon.
//!
//! A pipeline step naming an image that no built-in handles is resolved as kpt resolves it
//! ([`reference`]), pulled from its OCI registry ([`pull`]) into a content-addressed cache
//! of unpacked root filesystems ([`cache`], [`unpack`]), and its entrypoint run in a
//! bubblewrap sandbox ([`sandbox`]) speaking the ResourceList protocol on stdin/stdout.
//! The process handling (timeout, budget, output caps, stderr capture) is kpt's exec
//! runtime's, so container functions obey a render's budget exactly as exec functions do.

pub mod auth;
pub mod cache;
pub mod catalog;
pub mod image;
pub mod pull;
pub mod reference;
mod runtime;
pub mod sandbox;
pub mod unpack;

pub use runtime::{
    ContainerOptions, ContainerRuntime, ImagePull, LazyContainerRuntime, PullPolicy,
};

/// Why an image could not be made ready to run.
#[derive(Debug, thiserror::Error)]
pub enum ContainerError {
    /// The image name does not parse as a reference.
    #[error("invalid image reference {image:?}: {reason}")]
    Reference { image: String, reason: String },
    /// The registry refused or failed.
    #[error("pulling {image}: {reason}")]
    Registry { image: String, reason: String },
    /// The registry refused access to the image.
    #[error(
        "pulling {image}: registry {registry} denied access {with}: {reason}; hint: name a pull \
         Secret in the image's FunctionConfig (spec.imagePullSecrets) or add the registry to the \
         docker config"
    )]
    Denied {
        image: String,
        registry: String,
        with: &'static str,
        reason: String,
    },
    /// A layer's bytes do not match its digest.
    #[error("pulling {image}: layer digest mismatch: expected {expected}, got {actual}")]
    Digest {
        image: String,
        expected: String,
        actual: String,
    },
    /// A layer could not be applied.
    #[error("unpacking layer: {0}")]
    Unpack(String),
    /// The image config is unusable.
    #[error("image config: {0}")]
    Config(String),
    /// The cache's filesystem failed.
    #[error("function image cache: {0}")]
    Io(#[from] std::io::Error),
}
