//! The PackageVariant controller (upstream `controllers/packagevariants/pkg/controllers/packagevariant`).

pub mod mutate;
