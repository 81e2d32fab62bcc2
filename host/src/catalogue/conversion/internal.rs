//! The annotations kube's conversions between a served version and its
//! internal type carry fields in: decoding reads them into the internal
//! object and drops them, encoding writes them back. What Capstan keeps
//! (the served version) has them; what kube computes on its internal or
//! freshly converted objects sees them differently:
//! - apps/v1 DaemonSet: `deprecated.daemonset.template.generation`, the
//!   internal `spec.templateGeneration` (always written on the way out);
//! - apps/v1 Deployment: `deprecated.deployment.rollback.to`, the internal
//!   `spec.rollbackTo` (written only when set);
//! - autoscaling HorizontalPodAutoscaler: the `autoscaling.alpha.kubernetes.io/*`
//!   annotations v1 carries v2's fields in (dropped from every version).

use serde_json::{json, Map, Value};

use crate::catalogue::ResourceInfo;

/// DaemonSets' template generation.
const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";
/// Deployments' revision to roll back to.
const ROLLBACK_TO: &str = "deprecated.deployment.rollback.to";
/// HorizontalPodAutoscalers' round-trip annotations.
const HPA_ROUND_TRIP: [&str; 4] = [
    "autoscaling.alpha.kubernetes.io/metrics",
    "autoscaling.alpha.kubernetes.io/current-metrics",
    "autoscaling.alpha.kubernetes.io/conditions",
    "autoscaling.alpha.kubernetes.io/behavior",
];

fn is(res: &ResourceInfo, group: &str, plural: &str) -> bool {
    res.custom.is_none() && res.group == group && res.plural == plural
}

/// The metadata of kube's internal object for `metadata` (a served
/// object's): without the annotations decoding reads into fields (kube's
/// Table rows show this metadata).
pub fn internal_metadata(res: &ResourceInfo, metadata: &Value) -> Value {
    let mut metadata = metadata.clone();
    let Some(annotations) = metadata
        .get_mut("annotations")
        .and_then(Value::as_object_mut)
    else {
        return metadata;
    };
    let is_int = |v: &Value| v.as_str().is_some_and(|s| s.parse::<i64>().is_ok());
    if is(res, "apps", "daemonsets") && annotations.get(TEMPLATE_GENERATION).is_some_and(is_int) {
        annotations.remove(TEMPLATE_GENERATION);
    }
    if is(res, "apps", "deployments") && annotations.get(ROLLBACK_TO).is_some_and(is_int) {
        annotations.remove(ROLLBACK_TO);
    }
    if is(res, "autoscaling", "horizontalpodautoscalers") {
        for key in HPA_ROUND_TRIP {
            annotations.remove(key);
        }
    }
    if annotations.is_empty() {
        if let Some(m) = metadata.as_object_mut() {
            m.remove("annotations");
        }
    }
    metadata
}

/// Adds to `obj` (a written object in `res`'s version) the annotations
/// kube's conversion from the internal type writes whatever the object
/// held: a DaemonSet's template generation (the internal field is 0 until
/// the strategy sets it, unless the annotation gave it).
pub fn add_versioned_annotations(res: &ResourceInfo, obj: &mut Value) {
    if !is(res, "apps", "daemonsets") {
        return;
    }
    let Some(metadata) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let annotations = metadata
        .entry("annotations")
        .or_insert_with(|| Value::Object(Map::new()));
    if !annotations.is_object() {
        *annotations = Value::Object(Map::new());
    }
    if let Some(annotations) = annotations.as_object_mut() {
        annotations
            .entry(TEMPLATE_GENERATION)
            .or_insert_with(|| json!("0"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Catalogue;

    #[test]
    fn internal_metadata_lacks_what_decoding_reads_into_fields() {
        let cat = Catalogue::builtin();
        let ds = cat.lookup("apps", "v1", "daemonsets").unwrap();
        let only = json!({"name": "d", "annotations": {TEMPLATE_GENERATION: "1"}});
        assert_eq!(internal_metadata(ds, &only), json!({"name": "d"}));
        let more = json!({"annotations": {TEMPLATE_GENERATION: "2", "a": "b"}});
        assert_eq!(
            internal_metadata(ds, &more),
            json!({"annotations": {"a": "b"}})
        );
        let deploy = cat.lookup("apps", "v1", "deployments").unwrap();
        assert_eq!(internal_metadata(deploy, &only), only, "not a DaemonSet's");
        let rollback = json!({"annotations": {ROLLBACK_TO: "3"}});
        assert_eq!(internal_metadata(deploy, &rollback), json!({}));
        let hpa = cat
            .lookup("autoscaling", "v1", "horizontalpodautoscalers")
            .unwrap();
        let round_trip = json!({"annotations": {HPA_ROUND_TRIP[0]: "[]", "x": "y"}});
        assert_eq!(
            internal_metadata(hpa, &round_trip),
            json!({"annotations": {"x": "y"}})
        );
    }

    #[test]
    fn a_daemonset_is_written_with_its_template_generation() {
        let cat = Catalogue::builtin();
        let ds = cat.lookup("apps", "v1", "daemonsets").unwrap();
        let mut bare = json!({"metadata": {"name": "d"}});
        add_versioned_annotations(ds, &mut bare);
        assert_eq!(bare["metadata"]["annotations"][TEMPLATE_GENERATION], "0");
        let mut given = json!({"metadata": {"annotations": {TEMPLATE_GENERATION: "4"}}});
        add_versioned_annotations(ds, &mut given);
        assert_eq!(given["metadata"]["annotations"][TEMPLATE_GENERATION], "4");
        let deploy = cat.lookup("apps", "v1", "deployments").unwrap();
        let mut other = json!({"metadata": {"name": "d"}});
        add_versioned_annotations(deploy, &mut other);
        assert!(other["metadata"].get("annotations").is_none());
    }
}
