//! The PackageVariantSet controller (upstream `controllers/packagevariantsets/pkg/controllers/packagevariantset`).
