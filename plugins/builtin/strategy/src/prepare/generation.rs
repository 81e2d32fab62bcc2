//! `metadata.generation`: which kinds keep one (those whose kube strategy
//! sets it), and what part of the object an update must change to bump it.

use capstan_plugin_sdk::strategy::StrategyResource;
use serde_json::{json, Map, Value};

use crate::json::metadata_mut;

/// The top-level fields that are not the desired state.
const NOT_DESIRED_STATE: [&str; 4] = ["metadata", "status", "apiVersion", "kind"];

/// What an update must change for the generation to move.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Follows {
    /// Everything but metadata and status (`spec`, or a webhook
    /// configuration's `webhooks`).
    DesiredState,
    /// The desired state or the annotations (Deployments: their annotations
    /// are copied to their ReplicaSets).
    DesiredStateAndAnnotations,
    /// The desired state or the labels (EndpointSlices).
    DesiredStateAndLabels,
    /// `template` (PodTemplates).
    Template,
    /// Nothing: 1 on create, never bumped (PriorityClasses).
    Nothing,
    /// The desired state, but none on create (CSIDrivers: 0, then bumped).
    DesiredStateAfterCreate,
}

/// The generation rule of `resource`; None for kinds without a generation.
fn follows(resource: &StrategyResource) -> Option<Follows> {
    use Follows::*;
    Some(
        match (resource.group.as_str(), resource.resource.as_str()) {
            ("apps", "deployments") => DesiredStateAndAnnotations,
            ("apps", "replicasets" | "statefulsets" | "daemonsets")
            | ("", "replicationcontrollers")
            | ("batch", "jobs" | "cronjobs")
            | ("policy", "poddisruptionbudgets")
            | ("networking.k8s.io", "networkpolicies" | "ingresses" | "ingressclasses")
            | ("admissionregistration.k8s.io", _)
            | ("flowcontrol.apiserver.k8s.io", _)
            | ("apiextensions.k8s.io", "customresourcedefinitions") => DesiredState,
            ("storage.k8s.io", "csidrivers") => DesiredStateAfterCreate,
            ("discovery.k8s.io", "endpointslices") => DesiredStateAndLabels,
            ("", "podtemplates") => Template,
            ("scheduling.k8s.io", "priorityclasses") => Nothing,
            _ => return None,
        },
    )
}

/// A new object of a kind with a generation starts at 1.
pub fn on_create(resource: &StrategyResource, object: &mut Value) {
    if follows(resource).is_some_and(|f| f != Follows::DesiredStateAfterCreate) {
        set(object, 1);
    }
}

/// old + 1 when the update changed what the kind's generation follows.
pub fn on_update(resource: &StrategyResource, object: &mut Value, old: &Value) {
    let changed = match follows(resource) {
        None | Some(Follows::Nothing) => false,
        Some(Follows::DesiredState | Follows::DesiredStateAfterCreate) => {
            desired_state(old) != desired_state(object)
        }
        Some(Follows::DesiredStateAndAnnotations) => {
            desired_state(old) != desired_state(object) || differs(old, object, "annotations")
        }
        Some(Follows::DesiredStateAndLabels) => {
            desired_state(old) != desired_state(object) || differs(old, object, "labels")
        }
        Some(Follows::Template) => old.get("template") != object.get("template"),
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

    fn res(group: &str, plural: &str) -> StrategyResource {
        StrategyResource {
            group: group.into(),
            resource: plural.into(),
            ..Default::default()
        }
    }

    fn updated(group: &str, plural: &str, old: Value, mut new: Value) -> Value {
        on_update(&res(group, plural), &mut new, &old);
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
            on_create(&res(group, plural), &mut object);
            assert_eq!(object["metadata"]["generation"], 1, "{plural}");
        }
        for (group, plural) in [
            ("", "pods"),
            ("", "services"),
            ("apps", "controllerrevisions"),
        ] {
            let mut object = json!({"metadata": {}});
            on_create(&res(group, plural), &mut object);
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
