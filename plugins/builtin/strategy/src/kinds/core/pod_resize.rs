//! `pods/<name>/resize` (kube's podResizeStrategy): of what the client
//! sent only the containers' `resources` and `resizePolicy` are kept (by
//! container name, on the stored pod), a change of requests marks
//! `status.resize` Proposed, and `ValidatePodResize` checks the result: the
//! pod as any pod, then what a resize may not do.

use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::{json, Map, Value};

use super::qos;
use crate::common::{self, list, same, text};

/// Whether a write is a pod resize.
pub fn applies(resource: &StrategyResource) -> bool {
    resource.group.is_empty() && resource.resource == "pods" && resource.subresource == "resize"
}

/// PrepareForUpdate: the stored pod with the sent containers' resources.
pub fn prepare(new: &mut Value, old: &Value) {
    let mut pod = old.clone();
    for key in ["name", "namespace", "resourceVersion", "uid"] {
        let sent = new.pointer(&format!("/metadata/{key}")).cloned();
        if let Some(meta) = pod.get_mut("metadata").and_then(Value::as_object_mut) {
            match sent {
                Some(v) => meta.insert(key.to_string(), v),
                None => meta.remove(key),
            };
        }
    }
    for sent in list(new.get("spec").unwrap_or(&Value::Null), "containers") {
        let Some(stored) = container_mut(&mut pod, text(sent, "name")) else {
            continue;
        };
        for key in ["resources", "resizePolicy"] {
            match sent.get(key) {
                Some(v) => stored.insert(key.to_string(), v.clone()),
                None => stored.remove(key),
            };
        }
    }
    mark_proposed(old, &mut pod);
    *new = pod;
}

fn container_mut<'a>(pod: &'a mut Value, name: &str) -> Option<&'a mut Map<String, Value>> {
    pod.pointer_mut("/spec/containers")?
        .as_array_mut()?
        .iter_mut()
        .find(|c| text(c, "name") == name)?
        .as_object_mut()
}

fn containers(pod: &Value) -> &[Value] {
    list(pod.get("spec").unwrap_or(&Value::Null), "containers")
}

/// kube's MarkPodProposedForResize: changed requests make `status.resize` Proposed.
fn mark_proposed(old: &Value, new: &mut Value) {
    let (before, after) = (containers(old), containers(new));
    if before.len() != after.len() {
        return;
    }
    for (was, now) in before.iter().zip(after) {
        if text(was, "name") != text(now, "name") {
            return;
        }
        if now
            .pointer("/resources/requests")
            .is_none_or(Value::is_null)
        {
            continue;
        }
        if same(was.get("resources"), now.get("resources")) {
            continue;
        }
        if let Some(status) = crate::json::ensure_object(new, "status") {
            status["resize"] = json!("Proposed");
        }
        return;
    }
}

/// What ValidatePodResize adds to the pod's own validation.
pub fn validate(new: &Value, old: &Value) -> Vec<Cause> {
    if let Some(refused) = not_resizable(old, new) {
        return vec![common::forbidden("[]", refused)];
    }
    let mut causes = Vec::new();
    let old_class = old
        .pointer("/status/qosClass")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| qos::class(old));
    if old_class != qos::class(new) {
        let shown = text(new.get("status").unwrap_or(&Value::Null), "qosClass");
        let detail = "Pod QOS Class may not change as a result of resizing";
        causes.push(common::invalid_str("spec", shown, detail));
    }
    if !node_supports_resize(old) {
        let detail = "Pod running on node without support for resize";
        causes.push(common::forbidden("spec", detail));
    }
    removed_resources(new, old, &mut causes);
    let munged = only_cpu_memory_changes(new, old);
    let stored = old.get("spec").unwrap_or(&Value::Null);
    if !same(Some(&munged), Some(stored)) {
        let diff = super::pod_update::diff_lines(stored, &munged).join("\n");
        let detail = format!("only cpu and memory resources are mutable\n{diff}");
        causes.push(common::forbidden("spec", &detail));
    }
    causes
}

/// Pods no resize applies to: with pod-level resources, static, Windows.
fn not_resizable(old: &Value, new: &Value) -> Option<&'static str> {
    let pod_level = |pod: &Value| {
        ["requests", "limits"].iter().any(|k| {
            pod.pointer(&format!("/spec/resources/{k}"))
                .and_then(Value::as_object)
                .is_some_and(|m| !m.is_empty())
        })
    };
    if pod_level(old) || pod_level(new) {
        return Some("pods with pod-level resources cannot be resized");
    }
    let mirror = old.pointer("/metadata/annotations/kubernetes.io~1config.mirror");
    if mirror.is_some() {
        return Some("static pods cannot be resized");
    }
    if old.pointer("/spec/os/name").and_then(Value::as_str) == Some("windows") {
        return Some("windows pods cannot be resized");
    }
    None
}

/// kube's version-skew check: a running container without
/// `status.containerStatuses[].resources` is on a node that cannot resize.
fn node_supports_resize(pod: &Value) -> bool {
    let statuses = pod
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array);
    statuses
        .into_iter()
        .flatten()
        .find(|s| s.pointer("/state/running").is_some_and(|r| !r.is_null()))
        .is_none_or(|s| s.get("resources").is_some_and(|r| !r.is_null()))
}

/// A request or limit a container had may not go.
fn removed_resources(new: &Value, old: &Value, causes: &mut Vec<Cause>) {
    let after = containers(new);
    for (i, was) in containers(old).iter().enumerate() {
        let now = after.get(i).unwrap_or(&Value::Null);
        for which in ["requests", "limits"] {
            let names = |c: &Value| -> Vec<String> {
                c.pointer(&format!("/resources/{which}"))
                    .and_then(Value::as_object)
                    .map(|m| m.keys().cloned().collect())
                    .unwrap_or_default()
            };
            let kept = names(now);
            if names(was).iter().any(|n| !kept.contains(n)) {
                let field = format!("spec.containers[{i}].resources.{which}");
                let detail = format!("resource {which} cannot be removed");
                causes.push(common::forbidden(&field, &detail));
            }
        }
    }
}

/// The new spec with every container's cpu and memory put back to the
/// stored values and its resize policy the stored one: equal to the stored
/// spec when nothing else changed.
fn only_cpu_memory_changes(new: &Value, old: &Value) -> Value {
    let mut spec = new.get("spec").cloned().unwrap_or(Value::Null);
    let before = containers(old);
    let Some(items) = spec.get_mut("containers").and_then(Value::as_array_mut) else {
        return spec;
    };
    for (i, item) in items.iter_mut().enumerate() {
        let was = before.get(i).unwrap_or(&Value::Null);
        let Some(container) = item.as_object_mut() else {
            continue;
        };
        let mut resources = Map::new();
        for which in ["limits", "requests"] {
            let now = container.get("resources").and_then(|r| r.get(which));
            let stored = was.pointer(&format!("/resources/{which}"));
            if let Some(list) = with_stored_cpu_memory(now, stored) {
                resources.insert(which.into(), list);
            }
        }
        container.insert("resources".into(), Value::Object(resources));
        match was.get("resizePolicy") {
            Some(p) => container.insert("resizePolicy".into(), p.clone()),
            None => container.remove("resizePolicy"),
        };
    }
    spec
}

/// kube's dropCPUMemoryUpdates: nothing when nothing was stored, else the
/// new list with cpu and memory as stored.
fn with_stored_cpu_memory(now: Option<&Value>, stored: Option<&Value>) -> Option<Value> {
    let stored = stored.and_then(Value::as_object)?;
    let mut list = now.and_then(Value::as_object).cloned().unwrap_or_default();
    for name in ["cpu", "memory"] {
        match stored.get(name) {
            Some(q) => list.insert(name.into(), q.clone()),
            None => list.remove(name),
        };
    }
    Some(Value::Object(list))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod() -> Value {
        json!({"metadata": {"name": "p", "namespace": "ns", "labels": {"a": "b"}},
               "spec": {"containers": [{"name": "app", "image": "nginx",
                   "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                                 "limits": {"cpu": "200m", "memory": "128Mi"}}}]},
               "status": {"phase": "Pending", "qosClass": "Burstable"}})
    }

    fn resized(requests: Value, limits: Value) -> Value {
        let mut new = pod();
        new["metadata"]["labels"] = json!({"changed": "yes"});
        new["spec"]["containers"][0]["image"] = json!("other");
        new["spec"]["containers"][0]["resources"] = json!({"requests": requests, "limits": limits});
        new
    }

    #[test]
    fn only_resources_are_taken_and_the_resize_is_proposed() {
        let mut new = resized(
            json!({"cpu": "150m", "memory": "64Mi"}),
            json!({"cpu": "200m", "memory": "128Mi"}),
        );
        prepare(&mut new, &pod());
        assert_eq!(new["metadata"]["labels"], json!({"a": "b"}));
        assert_eq!(new["spec"]["containers"][0]["image"], "nginx");
        assert_eq!(
            new["spec"]["containers"][0]["resources"]["requests"]["cpu"],
            "150m"
        );
        assert_eq!(new["status"]["resize"], "Proposed");
        assert!(validate(&new, &pod()).is_empty());
    }

    #[test]
    fn an_unchanged_pod_is_not_proposed() {
        let mut new = pod();
        prepare(&mut new, &pod());
        assert!(new["status"].get("resize").is_none());
    }

    #[test]
    fn removing_resources_or_changing_qos_or_others_is_refused() {
        let mut new = resized(json!({"cpu": "150m"}), json!({}));
        prepare(&mut new, &pod());
        let shown: Vec<String> = validate(&new, &pod())
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        assert_eq!(
            shown,
            [
                "spec.containers[0].resources.requests: Forbidden: resource requests cannot be removed",
                "spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed",
            ]
        );
        let mut new = resized(
            json!({"cpu": "200m", "memory": "128Mi"}),
            json!({"cpu": "200m", "memory": "128Mi"}),
        );
        prepare(&mut new, &pod());
        let causes = validate(&new, &pod());
        assert_eq!(
            causes[0].message,
            "Invalid value: \"Burstable\": Pod QOS Class may not change as a result of resizing"
        );
        let mut new = resized(
            json!({"cpu": "100m", "memory": "64Mi", "ephemeral-storage": "1Gi"}),
            json!({"cpu": "200m", "memory": "128Mi"}),
        );
        prepare(&mut new, &pod());
        let causes = validate(&new, &pod());
        assert_eq!(
            (causes[0].field.as_str(), causes[0].message.as_str()),
            (
                "spec",
                "Forbidden: only cpu and memory resources are mutable\n\
                      - spec.containers[0].resources.requests.ephemeral-storage: <unset>\n\
                      + spec.containers[0].resources.requests.ephemeral-storage: \"1Gi\""
            )
        );
    }

    #[test]
    fn static_pods_and_pods_on_old_nodes_are_not_resized() {
        let mut old = pod();
        old["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "x"});
        let causes = validate(&old, &old);
        assert_eq!(
            (causes[0].field.as_str(), causes[0].message.as_str()),
            ("[]", "Forbidden: static pods cannot be resized")
        );
        let mut old = pod();
        old["status"]["containerStatuses"] = json!([{"name": "app", "state": {"running": {}}}]);
        let causes = validate(&old, &old);
        assert_eq!(
            causes[0].message,
            "Forbidden: Pod running on node without support for resize"
        );
    }
}
