//! The parts of kube's `ValidatePodSpec` beyond containers' names, images
//! and ports (which `pods.rs` checks): volumes and what mounts them, env,
//! resources, probes, security contexts, scheduling constraints and DNS.

mod containers;
mod scheduling;
mod volumes;

pub use containers::{container_extras, probes, Stage};
pub use scheduling::pod_level;
pub use volumes::volumes;
