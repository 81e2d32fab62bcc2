//! Built-in objects as kube-apiserver stores and serves them: kube decodes
//! every written object into its Go struct and encodes the struct again
//! (to protobuf in etcd, to JSON for the client), so what a client reads is
//! Go's `encoding/json` of the typed object, not the JSON it sent
//! (`omitempty` fields with zero values gone, absent non-`omitempty`
//! fields written as zero values, quantities and times canonical).
//!
//! The facts about each Go type come from `types.txt`, generated from the
//! Kubernetes sources by `generate.py` (`table.rs`); `walk.rs` applies them
//! and `scalars.rs` writes the values with encoders of their own. The
//! registry applies [`encode`] to every write of a built-in resource before
//! it is stored; custom resources keep their JSON, as in kube.

mod scalars;
mod table;
mod walk;

use super::ResourceInfo;
use serde_json::Value;

/// The Go packages whose generated defaulters run core/v1's
/// `SetDefaults_ResourceList` (rounding quantities up to milli-units) on
/// the ResourceLists of their objects (kube's `pkg/apis/*/zz_generated.defaults.go`).
const ROUNDED_RESOURCE_LISTS: [&str; 10] = [
    "io.k8s.api.core.v1.",
    "io.k8s.api.apps.v1.",
    "io.k8s.api.apps.v1beta1.",
    "io.k8s.api.apps.v1beta2.",
    "io.k8s.api.batch.v1.",
    "io.k8s.api.batch.v1beta1.",
    "io.k8s.api.extensions.v1beta1.",
    "io.k8s.api.storage.v1.",
    "io.k8s.api.storage.v1alpha1.",
    "io.k8s.api.storage.v1beta1.",
];

/// Rewrites a built-in resource's object as kube's Go types encode it;
/// custom resources (and kinds without Go types) are left as they are.
pub fn encode(res: &ResourceInfo, obj: &mut Value) {
    if res.custom.is_none() {
        encode_as(&res.schema_name, obj);
    }
}

/// Rewrites `obj` as the Go struct named by the OpenAPI component
/// `component` (`io.k8s.api.core.v1.Pod`) encodes; unknown names change nothing.
pub fn encode_as(component: &str, obj: &mut Value) {
    encode_with(component, obj, false);
}

/// [`encode_as`] for an object kube never stores (a review, a
/// TokenRequest): as decoded from JSON, its empty slices and maps not nil.
pub fn encode_decoded_as(component: &str, obj: &mut Value) {
    encode_with(component, obj, true);
}

fn encode_with(component: &str, obj: &mut Value, decoded: bool) {
    let types = table::types();
    let Some(index) = types.lookup(component) else {
        return;
    };
    let encoder = walk::Encoder {
        types,
        round_milli: ROUNDED_RESOURCE_LISTS
            .iter()
            .any(|p| component.starts_with(p)),
        decoded,
    };
    let taken = obj.take();
    *obj = encoder.value(&table::Ty::Struct(index), taken);
}

#[cfg(test)]
mod tests;
