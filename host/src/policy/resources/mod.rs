//! PolicyBundles: `policies.capstan.dev/v1alpha1` resources that put the
//! policies of a bundle (`policy::bundles`) into the admission chain without a
//! restart, where the configuration's `policies: mutating|validating`
//! markers are, in Enforce, Warn or Audit mode.
//!
//! `resource.rs` declares the resource (served from the built-in
//! catalogue); `spec.rs` reads its spec; `paths.rs` confines bundle paths
//! (checked on write by `strategy.rs`, with symlinks resolved on load);
//! `source.rs` pulls registry bundles into a cache pinned by digest and
//! reads the keys they must be signed with; `load.rs` loads one bundle
//! within its bounds; `controller.rs` (every replica) loads each
//! PolicyBundle in a task of its own as they change and writes their
//! status (`conditions.rs`); `loaded.rs` holds the policies in effect and builds
//! their chain entries; `mode.rs` applies the mode to each answer;
//! `metrics.rs` counts and times every policy call for `/metrics`.

mod conditions;
pub mod controller;
mod load;
pub mod loaded;
pub mod metrics;
pub mod mode;
pub mod paths;
pub mod source;
pub mod spec;
pub mod strategy;

pub use controller::Controller;
pub use loaded::PolicySet;
