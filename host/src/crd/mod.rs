//! Custom resources: what a CustomResourceDefinition adds to the server at
//! run time. `schema` is the structural-schema engine (validation, pruning,
//! defaulting), `conversion` turns objects between a CRD's versions.

pub mod conversion;
pub mod schema;
#[cfg(test)]
mod validation_rules;
