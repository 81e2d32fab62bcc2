//! kube's `IsOnlyMutatingGCFields` (`pkg/registry/rbac/helpers.go`): an
//! update that changes only what the garbage collector changes (owner
//! references, finalizers) is not checked for escalation. Fields that never
//! grant anything and that the server itself moves on every write
//! (resourceVersion, managedFields, generation) are ignored as well.

use capstan_plugin_sdk::{AdmissionRequest, Operation, Value};

/// `metadata` fields that do not take part in the comparison.
const IGNORED: [&str; 6] = [
    "ownerReferences",
    "finalizers",
    "selfLink",
    "resourceVersion",
    "managedFields",
    "generation",
];

/// True for an update whose object differs from the old one only in the
/// garbage collector's fields.
pub fn only_gc_fields_change(request: &AdmissionRequest) -> bool {
    if request.operation != Operation::Update {
        return false;
    }
    match (&request.object, &request.old_object) {
        (Some(new), Some(old)) => without_gc_fields(new) == without_gc_fields(old),
        _ => false,
    }
}

fn without_gc_fields(object: &Value) -> Value {
    let mut copy = object.clone();
    if let Some(Value::Object(metadata)) = copy.get_mut("metadata") {
        for field in IGNORED {
            metadata.remove(field);
        }
    }
    copy
}
