//! Custom resources as the catalogue holds them: `resource` reads a
//! CustomResourceDefinition as catalogue entries ([`CustomResource`]: its
//! versions, scope, subresources, printer columns), `schema` is the
//! structural-schema engine (validation, pruning, defaulting), `rules` its
//! CEL validation rules, `versions` and `conversion` move objects between a
//! CRD's versions (None, a webhook, or a converter plugin).

pub mod conversion;
pub mod resource;
pub mod rules;
pub mod schema;
pub mod versions;

pub use resource::CustomResource;
