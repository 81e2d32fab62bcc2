//! The defaults of a PodSpec (a pod's, or a workload's pod template): restart
//! and DNS policies, grace period, scheduler, and per container the image
//! pull policy (Always for `:latest` or untagged images, else IfNotPresent),
//! the termination message path and policy, and empty resources.

use serde_json::{json, Value};

use crate::json::set_default;

/// Defaults the PodSpec at JSON pointer `at` ("/spec", "/spec/template/spec"),
/// when there is one.
pub fn apply(object: &mut Value, at: &str) {
    let Some(spec) = object.pointer_mut(at) else {
        return;
    };
    set_default(spec, "/restartPolicy", json!("Always"));
    set_default(spec, "/dnsPolicy", json!("ClusterFirst"));
    set_default(spec, "/terminationGracePeriodSeconds", json!(30));
    set_default(spec, "/schedulerName", json!("default-scheduler"));
    set_default(spec, "/securityContext", json!({}));
    for list in ["containers", "initContainers"] {
        if let Some(containers) = spec.get_mut(list).and_then(Value::as_array_mut) {
            containers.iter_mut().for_each(container);
        }
    }
}

fn container(c: &mut Value) {
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

/// Is the image's tag `latest`, or absent? (a digest pins it: not latest)
pub fn image_tag_is_latest(image: &str) -> bool {
    if image.contains('@') {
        return false;
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.rsplit_once(':') {
        Some((_, tag)) => tag == "latest",
        None => true,
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
        assert!(image_tag_is_latest("localhost:5000/nginx"));
        assert!(!image_tag_is_latest("nginx@sha256:abc"));
    }

    #[test]
    fn pod_spec_and_container_defaults() {
        let mut pod = json!({"spec": {
            "containers": [{"name": "a", "image": "nginx"}, {"name": "b", "image": "nginx:1.27"}],
            "initContainers": [{"name": "i", "image": "busybox:latest"}]}});
        apply(&mut pod, "/spec");
        let spec = &pod["spec"];
        assert_eq!(spec["restartPolicy"], "Always");
        assert_eq!(spec["dnsPolicy"], "ClusterFirst");
        assert_eq!(spec["terminationGracePeriodSeconds"], 30);
        assert_eq!(spec["schedulerName"], "default-scheduler");
        assert_eq!(spec["securityContext"], json!({}));
        assert_eq!(
            spec["containers"][0],
            json!({"name": "a", "image": "nginx", "imagePullPolicy": "Always",
                   "terminationMessagePath": "/dev/termination-log",
                   "terminationMessagePolicy": "File", "resources": {}})
        );
        assert_eq!(spec["containers"][1]["imagePullPolicy"], "IfNotPresent");
        assert_eq!(spec["initContainers"][0]["imagePullPolicy"], "Always");
    }

    #[test]
    fn set_values_are_kept_and_missing_specs_ignored() {
        let mut pod = json!({"spec": {"restartPolicy": "Never", "dnsPolicy": "Default",
            "containers": [{"image": "nginx", "imagePullPolicy": "Never"}]}});
        apply(&mut pod, "/spec");
        assert_eq!(pod["spec"]["restartPolicy"], "Never");
        assert_eq!(pod["spec"]["dnsPolicy"], "Default");
        assert_eq!(pod["spec"]["containers"][0]["imagePullPolicy"], "Never");
        let mut empty = json!({"metadata": {}});
        apply(&mut empty, "/spec/template/spec");
        assert_eq!(empty, json!({"metadata": {}}));
    }
}
