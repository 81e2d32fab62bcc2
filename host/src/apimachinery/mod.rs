//! kube's wire formats and their errors, shared by every layer (the Rust
//! side of k8s.io/apimachinery): `metav1.Status`, JSON as kube encodes it,
//! Go's JSON syntax errors, YAML as kube reads it, label and field selectors.
//! It imports nothing of the server.

pub mod conditions;
pub mod go_json;
pub mod gofmt;
pub mod kube_json;
pub mod meta;
pub mod names;
pub mod request_info;
pub mod selectors;
pub mod status;
pub mod user;
pub mod version;
pub mod yaml;
