//! Background audit into PolicyReports: the `wgpolicyk8s.io/v1alpha2`
//! PolicyReport and ClusterPolicyReport resources (`resource.rs`, served
//! from the built-in catalogue), the reports the audit writes
//! (`report.rs`), what it evaluates and how (`scan.rs`), the leader's
//! controller that scans and writes (`audit.rs`), and who reads them
//! (`rbac.rs`).

pub mod rbac;
pub mod report;
pub mod scan;
