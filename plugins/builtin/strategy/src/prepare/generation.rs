//! `metadata.generation`: kinds whose kube strategy sets one start at 1, and
//! an update bumps it when it changed what the kind's generation follows
//! (`KindRules::generation`).

use serde_json::{json, Map, Value};

use crate::json::metadata_mut;
use crate::kinds::Generation;

/// The top-level fields that are not the desired state.
const NOT_DESIRED_STATE: [&str; 4] = ["metadata", "status", "apiVersion", "kind"];

/// A new object of a kind with a generation starts at 1.
pub fn on_create(follows: Option<Generation>, object: &mut Value) {
    if follows.is_some_and(|f| f != Generation::DesiredStateAfterCreate) {
        set(object, 1);
    }
}

/// old + 1 when the update changed what the kind's generation follows.
pub fn on_update(follows: Option<Generation>, object: &mut Value, old: &Value) {
    let changed = match follows {
        None | Some(Generation::Nothing) => false,
        Some(Generation::DesiredState | Generation::DesiredStateAfterCreate) => {
            desired_state(old) != desired_state(object)
        }
        Some(Generation::DesiredStateAndAnnotations) => {
            desired_state(old) != desired_state(object) || differs(old, object, "annotations")
        }
        Some(Generation::DesiredStateAndLabels) => {
            desired_state(old) != desired_state(object) || differs(old, object, "labels")
        }
        Some(Generation::Template) => old.get("template") != object.get("template"),
    };
    if changed {
        set(object, generation(old) + 1);
    }
}

/// Do `old` and `new` differ in `metadata.<key>` (absent and empty alike)?
fn differs(old: &Value, new: &Value, key: &str) -> bool {
    let of = |object: &Value| {
        object
            .pointer(&format!("/metadata/{key}"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    of(old) != of(new)
}

/// Everything but metadata, status, apiVersion and kind.
fn desired_state(object: &Value) -> Map<String, Value> {
    let mut fields = object.as_object().cloned().unwrap_or_default();
    for field in NOT_DESIRED_STATE {
        fields.remove(field);
    }
    fields
}

/// `metadata.generation`, 0 when absent.
fn generation(object: &Value) -> i64 {
    object
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

fn set(object: &mut Value, generation: i64) {
    if let Some(metadata) = metadata_mut(object) {
        metadata.insert("generation".into(), json!(generation));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The generation rule of `group`/`plural`'s kind.
    fn res(group: &str, plural: &str) -> Option<Generation> {
        crate::kinds::rules_for(group, plural).generation()
    }

    fn updated(group: &str, plural: &str, old: Value, mut new: Value) -> Value {
        on_update(res(group, plural), &mut new, &old);
        new["metadata"]["generation"].clone()
    }

    #[test]
    fn generation_table() {
        let tracked = [
            ("apps", "deployments"),
            ("apps", "daemonsets"),
            ("", "replicationcontrollers"),
            ("", "podtemplates"),
            ("batch", "cronjobs"),
            ("policy", "poddisruptionbudgets"),
            ("networking.k8s.io", "ingresses"),
            ("networking.k8s.io", "ingressclasses"),
            ("discovery.k8s.io", "endpointslices"),
            ("scheduling.k8s.io", "priorityclasses"),
            (
                "admissionregistration.k8s.io",
                "validatingwebhookconfigurations",
            ),
        ];
        for (group, plural) in tracked {
            let mut object = json!({"metadata": {}});
            on_create(res(group, plural), &mut object);
            assert_eq!(object["metadata"]["generation"], 1, "{plural}");
        }
        for (group, plural) in [
            ("", "pods"),
            ("", "services"),
            ("apps", "controllerrevisions"),
        ] {
            let mut object = json!({"metadata": {}});
            on_create(res(group, plural), &mut object);
            assert!(object["metadata"].get("generation").is_none(), "{plural}");
        }
    }

    #[test]
    fn deployments_follow_their_annotations_too() {
        let old = json!({"metadata": {"generation": 2}, "spec": {"replicas": 1}});
        let new = json!({"metadata": {"generation": 2, "annotations": {"a": "b"}},
                         "spec": {"replicas": 1}});
        assert_eq!(updated("apps", "deployments", old.clone(), new.clone()), 3);
        assert_eq!(updated("apps", "replicasets", old, new), 2);
    }

    #[test]
    fn endpoint_slices_follow_their_labels_and_endpoints() {
        let old = json!({"metadata": {"generation": 1}, "endpoints": []});
        let relabelled =
            json!({"metadata": {"generation": 1, "labels": {"a": "b"}}, "endpoints": []});
        assert_eq!(
            updated(
                "discovery.k8s.io",
                "endpointslices",
                old.clone(),
                relabelled
            ),
            2
        );
        let annotated =
            json!({"metadata": {"generation": 1, "annotations": {"a": "b"}}, "endpoints": []});
        assert_eq!(
            updated("discovery.k8s.io", "endpointslices", old, annotated),
            1
        );
    }

    #[test]
    fn pod_templates_follow_their_template_and_priority_classes_nothing() {
        let old = json!({"metadata": {"generation": 1}, "template": {"spec": {}}});
        let new = json!({"metadata": {"generation": 1}, "template": {"spec": {"hostname": "h"}}});
        assert_eq!(updated("", "podtemplates", old, new), 2);
        let old = json!({"metadata": {"generation": 1}, "value": 1});
        let new = json!({"metadata": {"generation": 1}, "value": 1, "description": "d"});
        assert_eq!(updated("scheduling.k8s.io", "priorityclasses", old, new), 1);
    }
}
