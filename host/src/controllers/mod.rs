//! Small built-in controllers that a cluster needs for the API to behave as
//! users expect without a kube-controller-manager.

pub mod bootstrap;
pub mod namespace;
pub mod rbac;
pub mod resource_quota;
pub mod service_account;
