//! Custom resources: what a CustomResourceDefinition adds to the server at
//! run time. `resource` reads a CRD as catalogue entries, `served` keeps the
//! live catalogue in step with the stored CRDs, `strategy` is their write
//! rules (with `schema`, the structural-schema engine: validation, pruning,
//! defaulting, and `rules`, their CEL validation rules), `versions` and
//! `conversion` move objects between a CRD's versions, `table` prints them,
//! `cleanup` removes them with their CRD.

pub mod api_services;
pub mod cleanup;
pub mod conversion;
pub mod json_path;
pub mod resource;
pub mod rules;
pub mod schema;
pub mod served;
pub mod strategy;
pub mod table;
pub mod versions;

pub use resource::CustomResource;
