//! Custom resources: what a CustomResourceDefinition adds to the server at
//! run time. `schema` is the structural-schema engine (validation, pruning,
//! defaulting), `conversion` turns objects between a CRD's versions.

pub mod cleanup;
pub mod conversion;
pub mod json_path;
pub mod resource;
pub mod schema;
pub mod served;
pub mod strategy;
pub mod table;
pub mod versions;

pub use resource::CustomResource;
