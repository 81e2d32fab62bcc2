//! PolicyBundles: `policies.capstan.dev/v1alpha1` resources that put the
//! policies of a bundle (`bundles/`) into the admission chain without a
//! restart, where the configuration's `policies: mutating|validating`
//! markers are, in Enforce, Warn or Audit mode.
//!
//! `resource.rs` declares the resource (served from the built-in
//! catalogue); `spec.rs` reads its spec and resolves the bundle's path;
//! `source.rs` pulls registry bundles into a cache pinned by digest and
//! reads the keys they must be signed with;
//! `controller.rs` (every replica) loads bundles as PolicyBundles change and
//! writes their status; `loaded.rs` holds the policies in effect and builds
//! their chain entries; `mode.rs` applies the mode to each answer;
//! `metrics.rs` counts and times every policy call for `/metrics`.

pub mod controller;
pub mod loaded;
pub mod metrics;
pub mod mode;
pub mod resource;
pub mod source;
pub mod spec;

pub use controller::Controller;
pub use loaded::PolicySet;
