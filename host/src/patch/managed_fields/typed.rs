//! The objects the field manager compares, as kube's typed converter sees
//! them: kube finds a write's fields on its Go object converted to the
//! request's version and then to unstructured JSON, so a built-in object
//! has what Go's encoding writes (every field without `omitempty` present,
//! `null` when empty: an embedded ObjectMeta's `creationTimestamp`, a
//! CSINode driver's `topologyKeys`; `catalogue::go_encoding`) and what the
//! conversion from kube's internal version adds (apps/v1 DaemonSet's
//! template generation annotation, `conversion::add_versioned_annotations`).
//! Custom resources are compared as they are.

use serde_json::Value;

use crate::catalogue::{conversion, go_encoding, ResourceInfo};

/// `obj` (a written object, decoded and defaulted) as kube compares it.
pub fn written(res: &ResourceInfo, obj: &Value) -> Value {
    let mut typed = obj.clone();
    match (&res.custom, res.is_stored()) {
        (Some(_), _) => {}
        (None, false) => go_encoding::encode_decoded_as(&res.schema_name, &mut typed),
        (None, true) => {
            go_encoding::encode_as(&res.schema_name, &mut typed);
            conversion::add_versioned_annotations(res, &mut typed);
        }
    }
    typed
}

/// `zero` (a kind's Go zero value) as kube compares it: not converted, so
/// with only what Go's encoding writes.
pub fn zero(res: &ResourceInfo, mut zero: Value) -> Value {
    if res.custom.is_none() {
        go_encoding::encode_as(&res.schema_name, &mut zero);
    }
    zero
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Catalogue;
    use serde_json::json;

    #[test]
    fn an_embedded_object_meta_has_a_null_creation_timestamp() {
        let cat = Catalogue::builtin();
        let rc = cat.lookup("", "v1", "replicationcontrollers").unwrap();
        let obj = json!({"metadata": {"name": "rc"}, "spec": {"template": {"metadata": {"labels": {"a": "b"}}}}});
        let typed = written(rc, &obj);
        assert_eq!(
            typed["spec"]["template"]["metadata"],
            json!({"creationTimestamp": null, "labels": {"a": "b"}})
        );
    }

    #[test]
    fn a_daemonset_has_its_template_generation_annotation() {
        let cat = Catalogue::builtin();
        let ds = cat.lookup("apps", "v1", "daemonsets").unwrap();
        let typed = written(ds, &json!({"metadata": {"name": "d"}}));
        let annotations = &typed["metadata"]["annotations"];
        assert_eq!(annotations["deprecated.daemonset.template.generation"], "0");
    }
}
