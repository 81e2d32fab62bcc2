//! Policies as a security team ships them: bundles (OCI artifacts of Wasm
//! components and CEL admission policies), their cosign-compatible
//! signatures, the PolicyBundle resources that load them into the admission
//! chain at run time, and the background audit into PolicyReports.

pub mod bundles;
pub mod reports;
pub mod resources;
