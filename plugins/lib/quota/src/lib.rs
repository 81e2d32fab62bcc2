//! Kubernetes ResourceQuota semantics for Capstan, shared by the
//! `resource-quota` admission plugin (wasm32) and the host's quota
//! controller (native), with kube-apiserver's rules and messages:
//!
//! - [`Quantity`]: kube's resource quantities, exact arithmetic and
//!   canonical text ("1500m", "1Gi").
//! - [`resources_to_list`], [`usage`]: what a quota's `status.used` is, from
//!   the objects of the resources it names.
//! - [`handles`], [`applies`], [`check_constraints`], [`requested`],
//!   [`admit`]: whether a write is within a quota, with kube's
//!   `exceeded quota: ...` and `failed quota: ...` messages.
//!
//! Quotas and objects are `serde_json::Value`s as stored; resources are
//! named as kube prints a GroupResource (`pods`, `deployments.apps`).

mod admit;
mod evaluate;
mod group_resource;
mod json;
mod messages;
mod quantity;
pub mod resources;
mod spec;
mod time;
mod usage;

pub use admit::{admit, admit_at, applies, check_constraints, handles, requested};
pub use evaluate::Operation;
pub use group_resource::{is_ignored, GroupResource};
pub use quantity::{Format, ParseQuantityError, Quantity};
pub use resources::ResourceList;
pub use usage::{object_usage, resources_to_list, usage, usage_at};

#[cfg(test)]
mod tests;
