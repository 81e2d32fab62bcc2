//! A new pod's preparation (kube's pod strategy PrepareForCreate): fields of
//! disabled features dropped, the PodScheduled condition of a gated pod,
//! pod (anti-)affinity terms' `matchLabelKeys`/`mismatchLabelKeys` turned
//! into selector requirements on the pod's own labels
//! (MatchLabelKeysInPodAffinity, on in 1.32), and AppArmor profiles copied
//! into the deprecated per-container annotations.

use serde_json::{json, Value};

use crate::json::{ensure_object, items_mut};

/// PrepareForCreate of a pod, after its status reset.
pub fn prepare_create(pod: &mut Value) {
    super::disabled_fields::pod_create(pod);
    scheduling_gated(pod);
    affinity_label_keys(pod);
    app_armor_annotations(pod);
}

const APP_ARMOR_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";

/// kube's `applyAppArmorVersionSkew`, field to annotation: each container
/// without the annotation gets its own profile's, else the pod's.
fn app_armor_annotations(pod: &mut Value) {
    if pod.pointer("/spec/os/name").and_then(Value::as_str) == Some("windows") {
        return;
    }
    let pod_profile = pod
        .pointer("/spec/securityContext/appArmorProfile")
        .cloned();
    let mut wanted = Vec::new();
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        let containers = pod
            .pointer(&format!("/spec/{list}"))
            .and_then(Value::as_array);
        for c in containers.into_iter().flatten() {
            let name = c.get("name").and_then(Value::as_str).unwrap_or_default();
            let own = c.pointer("/securityContext/appArmorProfile");
            if let Some(text) = own.or(pod_profile.as_ref()).and_then(app_armor_annotation) {
                wanted.push((format!("{APP_ARMOR_PREFIX}{name}"), text));
            }
        }
    }
    if wanted.is_empty() {
        return;
    }
    let Some(meta) = ensure_object(pod, "metadata") else {
        return;
    };
    let Some(Value::Object(annotations)) = ensure_object(meta, "annotations") else {
        return;
    };
    for (key, text) in wanted {
        annotations.entry(key).or_insert(json!(text));
    }
}

fn app_armor_annotation(profile: &Value) -> Option<String> {
    match profile.get("type").and_then(Value::as_str)? {
        "RuntimeDefault" => Some("runtime/default".into()),
        "Unconfined" => Some("unconfined".into()),
        "Localhost" => {
            let name = profile.get("localhostProfile").and_then(Value::as_str)?;
            Some(format!("localhost/{name}"))
        }
        _ => None,
    }
}

/// A pod with scheduling gates starts unscheduled, saying why.
fn scheduling_gated(pod: &mut Value) {
    let gated = pod
        .pointer("/spec/schedulingGates")
        .and_then(Value::as_array)
        .is_some_and(|g| !g.is_empty());
    if !gated {
        return;
    }
    let Some(status) = ensure_object(pod, "status") else {
        return;
    };
    let condition = json!({"type": "PodScheduled", "status": "False",
        "reason": "SchedulingGated",
        "message": "Scheduling is blocked due to non-empty scheduling gates"});
    let conditions = status.get_mut("conditions").and_then(Value::as_array_mut);
    match conditions {
        Some(list)
            if list
                .iter()
                .any(|c| c.get("type") == Some(&json!("PodScheduled"))) => {}
        Some(list) => list.push(condition),
        None => status["conditions"] = json!([condition]),
    }
}

/// Each affinity term with label keys gets, for each key the pod carries,
/// an `In` (match) or `NotIn` (mismatch) requirement on the pod's value.
fn affinity_label_keys(pod: &mut Value) {
    let labels = pod
        .pointer("/metadata/labels")
        .cloned()
        .unwrap_or(Value::Null);
    for kind in ["podAffinity", "podAntiAffinity"] {
        let Some(affinity) = pod.pointer_mut(&format!("/spec/affinity/{kind}")) else {
            continue;
        };
        for term in items_mut(affinity, "requiredDuringSchedulingIgnoredDuringExecution") {
            apply_label_keys(term, &labels);
        }
        for weighted in items_mut(affinity, "preferredDuringSchedulingIgnoredDuringExecution") {
            if let Some(term) = weighted.get_mut("podAffinityTerm") {
                apply_label_keys(term, &labels);
            }
        }
    }
}

fn apply_label_keys(term: &mut Value, labels: &Value) {
    if !term.get("labelSelector").is_some_and(Value::is_object) {
        return;
    }
    let mut added = Vec::new();
    for (list, operator) in [("matchLabelKeys", "In"), ("mismatchLabelKeys", "NotIn")] {
        let keys = term
            .get(list)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for key in keys.iter().filter_map(Value::as_str) {
            if let Some(value) = labels.get(key) {
                added.push(json!({"key": key, "operator": operator, "values": [value]}));
            }
        }
    }
    if added.is_empty() {
        return;
    }
    let Some(selector) = term.get_mut("labelSelector") else {
        return;
    };
    let expressions = selector
        .get_mut("matchExpressions")
        .and_then(Value::as_array_mut);
    match expressions {
        Some(list) => list.extend(added),
        None => selector["matchExpressions"] = Value::Array(added),
    }
}

#[cfg(test)]
mod app_armor_tests {
    use super::*;

    #[test]
    fn profiles_become_annotations_unless_annotated() {
        let mut pod = json!({"metadata": {"annotations": {
                "container.apparmor.security.beta.kubernetes.io/b": "unconfined"}},
            "spec": {"securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}},
                "containers": [{"name": "a"}, {"name": "b"},
                    {"name": "c", "securityContext": {"appArmorProfile": {"type": "Localhost", "localhostProfile": "p"}}}]}});
        app_armor_annotations(&mut pod);
        assert_eq!(
            pod["metadata"]["annotations"],
            json!({"container.apparmor.security.beta.kubernetes.io/a": "runtime/default",
                   "container.apparmor.security.beta.kubernetes.io/b": "unconfined",
                   "container.apparmor.security.beta.kubernetes.io/c": "localhost/p"})
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gated_pods_start_unscheduled() {
        let mut pod =
            json!({"spec": {"schedulingGates": [{"name": "g"}]}, "status": {"phase": "Pending"}});
        scheduling_gated(&mut pod);
        assert_eq!(
            pod["status"]["conditions"],
            json!([{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
                    "message": "Scheduling is blocked due to non-empty scheduling gates"}])
        );
        let mut free = json!({"spec": {}, "status": {"phase": "Pending"}});
        scheduling_gated(&mut free);
        assert!(free["status"].get("conditions").is_none());
    }

    #[test]
    fn affinity_label_keys_become_requirements() {
        let mut pod = json!({"metadata": {"labels": {"app": "web", "rev": "7"}},
            "spec": {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "k", "labelSelector": {"matchLabels": {"app": "web"}},
                 "matchLabelKeys": ["rev", "absent"], "mismatchLabelKeys": ["app"]}]}}}});
        affinity_label_keys(&mut pod);
        let term = &pod["spec"]["affinity"]["podAntiAffinity"]
            ["requiredDuringSchedulingIgnoredDuringExecution"][0];
        assert_eq!(
            term["labelSelector"]["matchExpressions"],
            json!([{"key": "rev", "operator": "In", "values": ["7"]},
                   {"key": "app", "operator": "NotIn", "values": ["web"]}])
        );
        let mut no_selector = json!({"metadata": {"labels": {"a": "b"}}, "spec": {"affinity": {
            "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "k", "matchLabelKeys": ["a"]}]}}}});
        let before = no_selector.clone();
        affinity_label_keys(&mut no_selector);
        assert_eq!(no_selector, before);
    }
}
