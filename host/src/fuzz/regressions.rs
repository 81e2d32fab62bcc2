//! Inputs the harness found that crashed or were answered with the wrong
//! class of error, each kept as a test after its fix.

use crate::patch::apply::{server_side_apply, Applier, ApplyError};
use crate::patch::PatchError;
use serde_json::{json, Value};

/// Server-side apply of an object whose `metadata` is not a map panicked
/// (indexing a JSON boolean/array for `managedFields`); now a 400.
#[test]
fn apply_with_metadata_that_is_not_a_map_is_400() {
    let who = Applier {
        manager: "fuzz",
        force: false,
        api_version: "v1",
        skip_status: true,
        subresource: "",
    };
    for metadata in [json!(false), json!([]), json!(1), json!("x")] {
        let applied = json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata});
        let pod = Some("io.k8s.api.core.v1.Pod");
        let result = server_side_apply(None, &applied, &who, pod, super::schemas());
        match result {
            Err(ApplyError::Patch(PatchError::BadRequest(m))) => {
                assert_eq!(m, "metadata must be an object")
            }
            other => panic!("{metadata}: {other:?}"),
        }
    }
}

/// A forced apply over a stored object whose managedFields held a
/// non-map entry panicked (indexing a JSON boolean for `fieldsV1`); such
/// entries are now dropped.
#[test]
fn forced_apply_over_managed_fields_that_are_not_maps() {
    let who = Applier {
        manager: "fuzz",
        force: true,
        api_version: "v1",
        skip_status: true,
        subresource: "",
    };
    let current = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "managedFields": [false, 1]}});
    let applied =
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}}});
    let pod = Some("io.k8s.api.core.v1.Pod");
    let merged = server_side_apply(Some(&current), &applied, &who, pod, super::schemas()).unwrap();
    let managers: Vec<&Value> = merged["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["manager"])
        .collect();
    assert_eq!(managers, vec!["fuzz"]);
    assert_eq!(merged["metadata"]["labels"]["a"], "b");
}
