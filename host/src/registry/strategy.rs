//! The per-resource rules the generic store applies that are not plain
//! metadata: which writes may touch status, when generation counts, and the
//! defaults a client expects to read back. Until strategy plugins (Wasm) take
//! this over, it is a small table here.

use super::meta;
use crate::catalogue::ResourceInfo;
use serde_json::{json, Value};

/// Does this resource keep `metadata.generation`? (those whose kube-apiserver
/// strategy sets it: kinds with a desired state that controllers observe)
pub fn tracks_generation(res: &ResourceInfo) -> bool {
    matches!(
        (res.group.as_str(), res.plural.as_str()),
        (
            "apps",
            "deployments" | "replicasets" | "statefulsets" | "daemonsets"
        ) | ("", "replicationcontrollers")
            | ("batch", "jobs" | "cronjobs")
            | ("policy", "poddisruptionbudgets")
            | ("networking.k8s.io", "networkpolicies" | "ingresses")
            | ("admissionregistration.k8s.io", _)
    )
}

/// PrepareForCreate: status is the server's to set; generation starts at 1.
pub fn prepare_for_create(res: &ResourceInfo, obj: &mut Value) {
    if res.has_subresource("status") {
        if let Some(o) = obj.as_object_mut() {
            o.remove("status");
        }
    }
    if tracks_generation(res) {
        meta::metadata_mut(obj).insert("generation".into(), json!(1));
    }
    initial_status(res, obj);
    apply_defaults(res, obj);
}

fn initial_status(res: &ResourceInfo, obj: &mut Value) {
    match (res.group.as_str(), res.plural.as_str()) {
        ("", "pods") => obj["status"] = json!({"phase": "Pending", "qosClass": pod_qos(obj)}),
        ("", "namespaces") => obj["status"] = json!({"phase": "Active"}),
        ("", "persistentvolumeclaims") | ("", "persistentvolumes") => {
            obj["status"] = json!({"phase": "Pending"})
        }
        _ => {}
    }
}

/// The pod's QoS class, from its containers' requests and limits.
fn pod_qos(pod: &Value) -> &'static str {
    let containers = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut any = false;
    let mut guaranteed = !containers.is_empty();
    for c in &containers {
        let limits = c.pointer("/resources/limits").and_then(Value::as_object);
        let requests = c.pointer("/resources/requests").and_then(Value::as_object);
        any |= limits.is_some_and(|l| !l.is_empty()) || requests.is_some_and(|r| !r.is_empty());
        for r in ["cpu", "memory"] {
            let limit = limits.and_then(|l| l.get(r));
            let request = requests.and_then(|q| q.get(r)).or(limit);
            guaranteed &= limit.is_some() && limit == request;
        }
    }
    match (any, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}

fn set_default(obj: &mut Value, pointer: &str, value: Value) {
    let (parent, field) = match pointer.rsplit_once('/') {
        Some(p) => p,
        None => return,
    };
    if let Some(target) = obj.pointer_mut(parent).and_then(Value::as_object_mut) {
        target.entry(field.to_string()).or_insert(value);
    }
}

/// The defaults users read back from a real cluster for the common kinds.
pub fn apply_defaults(res: &ResourceInfo, obj: &mut Value) {
    match (res.group.as_str(), res.plural.as_str()) {
        ("apps", "deployments") => {
            set_default(obj, "/spec/replicas", json!(1));
            set_default(obj, "/spec/revisionHistoryLimit", json!(10));
            set_default(obj, "/spec/progressDeadlineSeconds", json!(600));
            set_default(obj, "/spec/strategy", json!({}));
            set_default(obj, "/spec/strategy/type", json!("RollingUpdate"));
            if obj.pointer("/spec/strategy/type").and_then(Value::as_str) == Some("RollingUpdate") {
                set_default(obj, "/spec/strategy/rollingUpdate", json!({}));
                set_default(
                    obj,
                    "/spec/strategy/rollingUpdate/maxUnavailable",
                    json!("25%"),
                );
                set_default(obj, "/spec/strategy/rollingUpdate/maxSurge", json!("25%"));
            }
        }
        ("apps", "replicasets" | "statefulsets") | ("", "replicationcontrollers") => {
            set_default(obj, "/spec/replicas", json!(1));
        }
        ("", "pods") => default_pod_spec(obj, "/spec"),
        ("", "services") => {
            set_default(obj, "/spec/type", json!("ClusterIP"));
            set_default(obj, "/spec/sessionAffinity", json!("None"));
            default_service_ports(obj);
        }
        ("", "secrets") => set_default(obj, "/type", json!("Opaque")),
        ("", "namespaces") => label_namespace(obj),
        _ => {}
    }
    if res.group == "apps" || res.plural == "replicationcontrollers" || res.group == "batch" {
        let template = if res.plural == "cronjobs" {
            "/spec/jobTemplate/spec/template/spec"
        } else {
            "/spec/template/spec"
        };
        default_pod_spec(obj, template);
    }
}

/// Namespaces carry their own name as the `kubernetes.io/metadata.name` label.
fn label_namespace(obj: &mut Value) {
    let Some(name) = meta::name(obj).map(String::from) else {
        return;
    };
    let m = meta::metadata_mut(obj);
    if !m.get("labels").is_some_and(Value::is_object) {
        m.insert("labels".into(), json!({}));
    }
    obj["metadata"]["labels"]["kubernetes.io/metadata.name"] = json!(name);
}

fn default_pod_spec(obj: &mut Value, at: &str) {
    let Some(spec) = obj.pointer_mut(at) else {
        return;
    };
    set_default(spec, "/restartPolicy", json!("Always"));
    set_default(spec, "/dnsPolicy", json!("ClusterFirst"));
    set_default(spec, "/terminationGracePeriodSeconds", json!(30));
    set_default(spec, "/schedulerName", json!("default-scheduler"));
    set_default(spec, "/securityContext", json!({}));
    for list in ["containers", "initContainers"] {
        let Some(cs) = spec.get_mut(list).and_then(Value::as_array_mut) else {
            continue;
        };
        for c in cs {
            let image = c.get("image").and_then(Value::as_str).unwrap_or_default();
            let pull = if image_tag_is_latest(image) {
                "Always"
            } else {
                "IfNotPresent"
            };
            set_default(c, "/imagePullPolicy", json!(pull));
            set_default(c, "/terminationMessagePath", json!("/dev/termination-log"));
            set_default(c, "/terminationMessagePolicy", json!("File"));
            set_default(c, "/resources", json!({}));
        }
    }
}

fn image_tag_is_latest(image: &str) -> bool {
    if image.contains('@') {
        return false;
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.rsplit_once(':') {
        Some((_, tag)) => tag == "latest",
        None => true,
    }
}

fn default_service_ports(obj: &mut Value) {
    let Some(ports) = obj.pointer_mut("/spec/ports").and_then(Value::as_array_mut) else {
        return;
    };
    for p in ports {
        set_default(p, "/protocol", json!("TCP"));
        if let Some(port) = p.get("port").cloned() {
            set_default(p, "/targetPort", port);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latest_tag_rules() {
        assert!(image_tag_is_latest("nginx"));
        assert!(image_tag_is_latest("nginx:latest"));
        assert!(!image_tag_is_latest("nginx:1.27"));
        assert!(!image_tag_is_latest("localhost:5000/nginx:1"));
    }

    #[test]
    fn qos_classes() {
        let p = json!({"spec": {"containers": [{"name": "a"}]}});
        assert_eq!(pod_qos(&p), "BestEffort");
        let p = json!({"spec": {"containers": [{"resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}});
        assert_eq!(pod_qos(&p), "Guaranteed");
        let p = json!({"spec": {"containers": [{"resources": {"requests": {"cpu": "1"}}}]}});
        assert_eq!(pod_qos(&p), "Burstable");
    }
}
