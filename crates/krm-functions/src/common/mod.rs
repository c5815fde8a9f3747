//! Helpers shared by the native functions: KRM header access in the Go SDK's
//! terms, functionConfig parsing, the kustomize field-spec walker and the
//! built-in namespaced-kind table.

pub mod config;
pub mod fieldspec;
pub mod gojson;
pub mod gomsg;
pub mod gotypes;
pub mod legacy;
pub mod lookup;
pub mod meta;
pub mod plugin;
pub mod scope;
pub mod sdk;

#[cfg(test)]
pub mod testing;
