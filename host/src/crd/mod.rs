//! Custom resources at run time: `served` keeps the live catalogue in step
//! with the stored CustomResourceDefinitions (and says when a CRD's
//! revision is served), `strategy` is their write rules in the registry.
//! What a CRD *is* (its catalogue entries, structural schema, CEL rules and
//! conversion) is the catalogue's (`catalogue::custom`).

pub mod served;
pub mod strategy;
