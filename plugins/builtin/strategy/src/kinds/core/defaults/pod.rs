//! The defaults of pods and of every pod template (kube's `SetDefaults_Pod`,
//! `SetDefaults_PodSpec` and the defaulters `zz_generated.defaults.go` runs
//! on each nested type: containers, probes, ports, env, volumes and their
//! sources), with what kube's v1 conversion does to a PodSpec on the way
//! (`serviceAccount` as an alias of `serviceAccountName`). Pods alone get
//! `SetDefaults_Pod`: requests from limits, `enableServiceLinks`, host ports
//! under hostNetwork.

use serde_json::{json, Value};

use crate::json::{child_mut, ensure_array, ensure_object, items_mut, set_default, set_if_zero};

/// The annotations of the alpha/beta init containers, dropped by kube's conversion.
const INIT_CONTAINER_ANNOTATIONS: [&str; 4] = [
    "pod.beta.kubernetes.io/init-containers",
    "pod.alpha.kubernetes.io/init-containers",
    "pod.beta.kubernetes.io/init-container-statuses",
    "pod.alpha.kubernetes.io/init-container-statuses",
];

/// Every volume source's default mode (0644).
const DEFAULT_MODE: i64 = 0o644;

/// `SetObjectDefaults_Pod`: the pod's own defaults, then its spec's.
pub fn pod(object: &mut Value) {
    drop_init_container_annotations(object);
    pod_status_ips(object);
    let Some(spec) = child_mut(object, "spec") else {
        return;
    };
    pod_only(spec);
    self::spec(spec);
}

/// The pod template (a PodTemplateSpec) at JSON pointer `at`
/// ("/spec/template", "/template"), when there is one.
pub fn template(object: &mut Value, at: &str) {
    let Some(template) = object.pointer_mut(at).filter(|t| t.is_object()) else {
        return;
    };
    drop_init_container_annotations(template);
    if let Some(spec) = child_mut(template, "spec") {
        self::spec(spec);
    }
}

/// `SetDefaults_Pod`, the part a template does not get.
fn pod_only(spec: &mut Value) {
    for list in ["containers", "initContainers"] {
        items_mut(spec, list).for_each(requests_from_limits);
    }
    items_mut(spec, "containers").for_each(resize_policy);
    set_default(spec, "/enableServiceLinks", json!(true));
    if spec.get("hostNetwork") == Some(&json!(true)) {
        for list in ["containers", "initContainers"] {
            for container in items_mut(spec, list) {
                items_mut(container, "ports").for_each(host_port_from_container_port);
            }
        }
    }
    // kube's conversion of a Pod (not of a template): a negative grace period is 1.
    let grace = spec
        .get("terminationGracePeriodSeconds")
        .and_then(Value::as_i64);
    if grace.is_some_and(|g| g < 0) {
        spec["terminationGracePeriodSeconds"] = json!(1);
    }
}

/// A container's limits stand for the requests it does not state.
fn requests_from_limits(container: &mut Value) {
    let Some(limits) = container
        .pointer("/resources/limits")
        .and_then(Value::as_object)
        .filter(|l| !l.is_empty())
        .cloned()
    else {
        return;
    };
    let Some(requests) = container
        .get_mut("resources")
        .and_then(|r| ensure_object(r, "requests"))
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    for (resource, quantity) in limits {
        requests.entry(resource).or_insert(quantity);
    }
}

/// InPlacePodVerticalScaling (on in kube-apiserver 1.32 as recorded): a
/// container requesting cpu or memory may resize it without a restart
/// unless it says otherwise (`NotRequired`).
fn resize_policy(container: &mut Value) {
    let requested: Vec<&str> = ["cpu", "memory"]
        .into_iter()
        .filter(|r| {
            container
                .pointer(&format!("/resources/requests/{r}"))
                .is_some()
        })
        .collect();
    if requested.is_empty() {
        return;
    }
    let Some(Value::Array(policies)) = ensure_array(container, "resizePolicy") else {
        return;
    };
    for resource in requested {
        let named = |p: &Value| p.get("resourceName").and_then(Value::as_str) == Some(resource);
        if !policies.iter().any(named) {
            policies.push(json!({"resourceName": resource, "restartPolicy": "NotRequired"}));
        }
    }
}

fn host_port_from_container_port(port: &mut Value) {
    if let Some(number) = port.get("containerPort").cloned() {
        set_if_zero(port, "/hostPort", number);
    }
}

/// kube's PodStatus conversion: `podIP` is authoritative over `podIPs`.
fn pod_status_ips(object: &mut Value) {
    let Some(status) = child_mut(object, "status") else {
        return;
    };
    let ip = status.get("podIP").and_then(Value::as_str).unwrap_or("");
    if ip.is_empty() {
        return;
    }
    let first = status.pointer("/podIPs/0/ip").and_then(Value::as_str);
    if first != Some(ip) {
        status["podIPs"] = json!([{ "ip": ip }]);
    }
}

fn drop_init_container_annotations(object: &mut Value) {
    let annotations = object
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut);
    if let Some(annotations) = annotations {
        for key in INIT_CONTAINER_ANNOTATIONS {
            annotations.remove(key);
        }
    }
}

/// `SetDefaults_PodSpec` and the defaulters of everything in a PodSpec.
pub fn spec(spec: &mut Value) {
    service_account_alias(spec);
    set_if_zero(spec, "/dnsPolicy", json!("ClusterFirst"));
    set_if_zero(spec, "/restartPolicy", json!("Always"));
    set_default(spec, "/securityContext", json!({}));
    set_default(spec, "/terminationGracePeriodSeconds", json!(30));
    set_if_zero(spec, "/schedulerName", json!("default-scheduler"));
    items_mut(spec, "volumes").for_each(volume);
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        items_mut(spec, list).for_each(container);
    }
}

/// `serviceAccount` is the deprecated alias of `serviceAccountName`: it
/// fills the name when the name is empty, and always reads back as the name.
fn service_account_alias(spec: &mut Value) {
    let alias = spec.get("serviceAccount").and_then(Value::as_str);
    if let Some(alias) = alias.filter(|a| !a.is_empty()).map(String::from) {
        set_if_zero(spec, "/serviceAccountName", json!(alias));
    }
    let name = spec.get("serviceAccountName").and_then(Value::as_str);
    match name.filter(|n| !n.is_empty()).map(String::from) {
        Some(name) => spec["serviceAccount"] = json!(name),
        None => {
            if let Some(fields) = spec.as_object_mut() {
                fields.remove("serviceAccount");
            }
        }
    }
}

/// `SetDefaults_Container` (every kind of container) and its nested types.
fn container(c: &mut Value) {
    if !c.is_object() {
        return;
    }
    let image = c.get("image").and_then(Value::as_str).unwrap_or_default();
    let pull = if image_tag_is_latest(image) {
        "Always"
    } else {
        "IfNotPresent"
    };
    set_if_zero(c, "/imagePullPolicy", json!(pull));
    set_if_zero(c, "/terminationMessagePath", json!("/dev/termination-log"));
    set_if_zero(c, "/terminationMessagePolicy", json!("File"));
    set_default(c, "/resources", json!({}));
    for port in items_mut(c, "ports") {
        set_if_zero(port, "/protocol", json!("TCP"));
    }
    for env in items_mut(c, "env") {
        if let Some(field_ref) = env.pointer_mut("/valueFrom/fieldRef") {
            object_field_selector(field_ref);
        }
    }
    for which in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = child_mut(c, which) {
            probe(p);
        }
    }
    for hook in ["/lifecycle/postStart/httpGet", "/lifecycle/preStop/httpGet"] {
        if let Some(get) = c.pointer_mut(hook) {
            http_get(get);
        }
    }
}

/// `SetDefaults_Probe` and its handler's defaults.
fn probe(p: &mut Value) {
    set_if_zero(p, "/timeoutSeconds", json!(1));
    set_if_zero(p, "/periodSeconds", json!(10));
    set_if_zero(p, "/successThreshold", json!(1));
    set_if_zero(p, "/failureThreshold", json!(3));
    if let Some(get) = child_mut(p, "httpGet") {
        http_get(get);
    }
    if let Some(grpc) = child_mut(p, "grpc") {
        set_default(grpc, "/service", json!(""));
    }
}

fn http_get(get: &mut Value) {
    set_if_zero(get, "/path", json!("/"));
    set_if_zero(get, "/scheme", json!("HTTP"));
}

/// `SetDefaults_ObjectFieldSelector`.
fn object_field_selector(selector: &mut Value) {
    set_if_zero(selector, "/apiVersion", json!("v1"));
}

/// `SetDefaults_Volume` (no source is an emptyDir) and each source's defaults.
fn volume(v: &mut Value) {
    let Some(fields) = v.as_object_mut() else {
        return;
    };
    let sourceless = fields
        .iter()
        .all(|(key, value)| key == "name" || value.is_null());
    if sourceless {
        fields.insert("emptyDir".into(), json!({}));
    }
    persistent_sources(v);
    for mode_only in ["secret", "configMap"] {
        if let Some(source) = child_mut(v, mode_only) {
            set_default(source, "/defaultMode", json!(DEFAULT_MODE));
        }
    }
    if let Some(downward) = child_mut(v, "downwardAPI") {
        set_default(downward, "/defaultMode", json!(DEFAULT_MODE));
        downward_items(downward);
    }
    if let Some(projected) = child_mut(v, "projected") {
        projected_source(projected);
    }
    if let Some(claim) = v.pointer_mut("/ephemeral/volumeClaimTemplate/spec") {
        super::claim_spec(claim);
    }
}

/// The defaults of the sources a PersistentVolume shares with a pod's
/// volumes: hostPath, rbd, iscsi, azureDisk and scaleIO.
pub fn persistent_sources(v: &mut Value) {
    if let Some(host_path) = child_mut(v, "hostPath") {
        set_default(host_path, "/type", json!(""));
    }
    if let Some(rbd) = child_mut(v, "rbd") {
        set_if_zero(rbd, "/pool", json!("rbd"));
        set_if_zero(rbd, "/user", json!("admin"));
        set_if_zero(rbd, "/keyring", json!("/etc/ceph/keyring"));
    }
    if let Some(iscsi) = child_mut(v, "iscsi") {
        set_if_zero(iscsi, "/iscsiInterface", json!("default"));
    }
    if let Some(azure) = child_mut(v, "azureDisk") {
        set_default(azure, "/cachingMode", json!("ReadWrite"));
        set_default(azure, "/fsType", json!("ext4"));
        set_default(azure, "/readOnly", json!(false));
        set_default(azure, "/kind", json!("Shared"));
    }
    if let Some(scale_io) = child_mut(v, "scaleIO") {
        set_if_zero(scale_io, "/storageMode", json!("ThinProvisioned"));
        set_if_zero(scale_io, "/fsType", json!("xfs"));
    }
}

fn downward_items(downward: &mut Value) {
    for item in items_mut(downward, "items") {
        if let Some(field_ref) = child_mut(item, "fieldRef") {
            object_field_selector(field_ref);
        }
    }
}

/// `SetDefaults_ProjectedVolumeSource` and its sources' defaults (a token
/// expires after an hour).
fn projected_source(projected: &mut Value) {
    set_default(projected, "/defaultMode", json!(DEFAULT_MODE));
    for source in items_mut(projected, "sources") {
        if let Some(downward) = child_mut(source, "downwardAPI") {
            downward_items(downward);
        }
        if let Some(token) = child_mut(source, "serviceAccountToken") {
            set_default(token, "/expirationSeconds", json!(3600));
        }
    }
}

/// Is the image's tag `latest`, as kube's `parsers.ParseImageName` reads
/// it? An image without tag or digest is `latest`; one kube cannot parse
/// (empty, upper-case repository) has no tag.
pub fn image_tag_is_latest(image: &str) -> bool {
    let (name, digest) = match image.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (image, None),
    };
    let last = name.rsplit('/').next().unwrap_or(name);
    let (repository, tag) = match last.rsplit_once(':') {
        Some((_, tag)) => (&name[..name.len() - tag.len() - 1], Some(tag)),
        None => (name, None),
    };
    if !parses(repository, tag, digest) {
        return false;
    }
    match tag {
        Some(tag) => tag == "latest",
        None => digest.is_none(),
    }
}

/// Would docker's reference grammar accept these parts? (a lower-case
/// repository path, a tag of word characters, dots and dashes, an
/// `algorithm:hex` digest)
fn parses(repository: &str, tag: Option<&str>, digest: Option<&str>) -> bool {
    let path = repository
        .split_once('/')
        .map_or(repository, |(host, path)| {
            if host.contains(['.', ':']) || host == "localhost" {
                path
            } else {
                repository
            }
        });
    let path_ok = !path.is_empty()
        && path.split('/').all(|part| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || "._-".contains(ch))
        });
    let tag_ok = tag.is_none_or(|t| {
        (1..=128).contains(&t.len())
            && !t.starts_with(['.', '-'])
            && t.chars()
                .all(|ch| ch.is_ascii_alphanumeric() || "_.-".contains(ch))
    });
    let digest_ok = digest.is_none_or(|d| {
        d.split_once(':')
            .is_some_and(|(a, h)| !a.is_empty() && !h.is_empty())
    });
    path_ok && tag_ok && digest_ok
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
        assert!(image_tag_is_latest("nginx:latest@sha256:abc"));
        // kube cannot parse these: no tag, so IfNotPresent.
        assert!(!image_tag_is_latest(""));
        assert!(!image_tag_is_latest("Nginx"));
    }

    fn defaulted_pod(spec: Value) -> Value {
        let mut p = json!({ "spec": spec });
        pod(&mut p);
        p["spec"].clone()
    }

    #[test]
    fn a_minimal_pod_as_kube_answers_it() {
        let spec = defaulted_pod(json!({"containers": [{"name": "a", "image": "nginx"}]}));
        assert_eq!(
            spec,
            json!({"containers": [{"name": "a", "image": "nginx", "imagePullPolicy": "Always",
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File", "resources": {}}],
                   "enableServiceLinks": true, "dnsPolicy": "ClusterFirst",
                   "restartPolicy": "Always", "securityContext": {},
                   "terminationGracePeriodSeconds": 30, "schedulerName": "default-scheduler"})
        );
    }

    #[test]
    fn set_values_are_kept_and_missing_specs_ignored() {
        let spec = defaulted_pod(json!({"restartPolicy": "Never", "dnsPolicy": "Default",
            "enableServiceLinks": false, "terminationGracePeriodSeconds": 0,
            "containers": [{"image": "nginx", "imagePullPolicy": "Never"}]}));
        assert_eq!(spec["restartPolicy"], "Never");
        assert_eq!(spec["dnsPolicy"], "Default");
        assert_eq!(spec["enableServiceLinks"], false);
        assert_eq!(spec["terminationGracePeriodSeconds"], 0);
        assert_eq!(spec["containers"][0]["imagePullPolicy"], "Never");
        let mut empty = json!({"metadata": {}});
        template(&mut empty, "/spec/template");
        assert_eq!(empty, json!({"metadata": {}}));
    }

    #[test]
    fn probes_ports_env_and_hooks() {
        let c = json!({"name": "c", "image": "x:1",
            "ports": [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}],
            "env": [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
            "livenessProbe": {"httpGet": {"port": 80}},
            "readinessProbe": {"grpc": {"port": 9000}, "periodSeconds": 5},
            "startupProbe": {"exec": {"command": ["true"]}},
            "lifecycle": {"preStop": {"httpGet": {"port": 8080}}}});
        let spec = defaulted_pod(json!({ "initContainers": [c.clone()], "containers": [c] }));
        for list in ["containers", "initContainers"] {
            let c = &spec[list][0];
            assert_eq!(
                c["ports"],
                json!([{"containerPort": 80, "protocol": "TCP"},
                                          {"containerPort": 53, "protocol": "UDP"}])
            );
            assert_eq!(
                c["env"][0]["valueFrom"]["fieldRef"],
                json!({"fieldPath": "metadata.name", "apiVersion": "v1"})
            );
            assert_eq!(
                c["livenessProbe"],
                json!({"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"},
                              "timeoutSeconds": 1, "periodSeconds": 10,
                              "successThreshold": 1, "failureThreshold": 3})
            );
            assert_eq!(
                c["readinessProbe"]["grpc"],
                json!({"port": 9000, "service": ""})
            );
            assert_eq!(c["readinessProbe"]["periodSeconds"], 5);
            assert_eq!(c["startupProbe"]["failureThreshold"], 3);
            assert_eq!(
                c["lifecycle"]["preStop"]["httpGet"],
                json!({"port": 8080, "path": "/", "scheme": "HTTP"})
            );
        }
    }

    #[test]
    fn volume_sources() {
        let spec = defaulted_pod(json!({"volumes": [
            {"name": "scratch"},
            {"name": "s", "secret": {"secretName": "s"}},
            {"name": "c", "configMap": {"name": "c", "defaultMode": 256}},
            {"name": "h", "hostPath": {"path": "/x"}},
            {"name": "d", "downwardAPI": {"items": [{"path": "n",
                "fieldRef": {"fieldPath": "metadata.name"}}]}},
            {"name": "p", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
            {"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
            {"name": "r", "rbd": {"monitors": ["m"], "image": "i"}},
        ]}));
        assert_eq!(
            spec["volumes"],
            json!([
                {"name": "scratch", "emptyDir": {}},
                {"name": "s", "secret": {"secretName": "s", "defaultMode": 420}},
                {"name": "c", "configMap": {"name": "c", "defaultMode": 256}},
                {"name": "h", "hostPath": {"path": "/x", "type": ""}},
                {"name": "d", "downwardAPI": {"items": [{"path": "n",
                    "fieldRef": {"fieldPath": "metadata.name", "apiVersion": "v1"}}],
                    "defaultMode": 420}},
                {"name": "p", "projected": {"sources": [{"serviceAccountToken":
                    {"path": "t", "expirationSeconds": 3600}}], "defaultMode": 420}},
                {"name": "e", "ephemeral": {"volumeClaimTemplate":
                    {"spec": {"volumeMode": "Filesystem"}}}},
                {"name": "r", "rbd": {"monitors": ["m"], "image": "i", "pool": "rbd",
                    "user": "admin", "keyring": "/etc/ceph/keyring"}},
            ])
        );
    }

    /// kube-apiserver 1.32's answer: tests/golden/answers/objects/core.v1.pod.full.json.
    #[test]
    fn containers_requesting_cpu_or_memory_resize_without_restart() {
        let containers = json!([
            {"name": "c", "resources": {"limits": {"cpu": "1"}},
             "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "RestartContainer"}]},
            {"name": "d", "resources": {"requests": {"memory": "1Gi"}}},
            {"name": "e"}]);
        let spec = defaulted_pod(json!({ "containers": containers }));
        assert_eq!(
            spec["containers"][0]["resizePolicy"],
            json!([{"resourceName": "cpu", "restartPolicy": "RestartContainer"}])
        );
        assert_eq!(
            spec["containers"][1]["resizePolicy"],
            json!([{"resourceName": "memory", "restartPolicy": "NotRequired"}])
        );
        assert!(spec["containers"][2].get("resizePolicy").is_none());
    }

    #[test]
    fn pods_request_their_limits_and_templates_do_not() {
        let containers = json!([{"name": "c", "image": "x:1", "resources": {
            "limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}}}]);
        let spec = defaulted_pod(json!({ "containers": containers.clone() }));
        assert_eq!(
            spec["containers"][0]["resources"]["requests"],
            json!({"cpu": "500m", "memory": "1Gi"})
        );
        let mut rs = json!({"spec": {"template": {"spec": {"containers": containers}}}});
        template(&mut rs, "/spec/template");
        let tpl = &rs["spec"]["template"]["spec"];
        assert_eq!(
            tpl["containers"][0]["resources"]["requests"],
            json!({"cpu": "500m"})
        );
        assert!(tpl.get("enableServiceLinks").is_none());
        assert_eq!(tpl["terminationGracePeriodSeconds"], 30);
    }

    #[test]
    fn service_account_alias_and_host_network_ports() {
        let spec = defaulted_pod(json!({"serviceAccount": "old", "hostNetwork": true,
            "containers": [{"name": "c", "image": "x:1", "ports": [{"containerPort": 8080}]}]}));
        assert_eq!(spec["serviceAccountName"], "old");
        assert_eq!(spec["serviceAccount"], "old");
        assert_eq!(spec["containers"][0]["ports"][0]["hostPort"], 8080);
        let spec = defaulted_pod(json!({"serviceAccountName": "new", "serviceAccount": "old"}));
        assert_eq!(
            (&spec["serviceAccountName"], &spec["serviceAccount"]),
            (&json!("new"), &json!("new"))
        );
        let negative = defaulted_pod(json!({"terminationGracePeriodSeconds": -5}));
        assert_eq!(negative["terminationGracePeriodSeconds"], 1);
    }

    #[test]
    fn pod_ip_is_authoritative_and_old_init_annotations_go() {
        let mut p = json!({"metadata": {"annotations": {
                "pod.beta.kubernetes.io/init-containers": "[]", "keep": "1"}},
            "spec": {}, "status": {"podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.2"}]}});
        pod(&mut p);
        assert_eq!(p["metadata"]["annotations"], json!({"keep": "1"}));
        assert_eq!(p["status"]["podIPs"], json!([{"ip": "10.0.0.1"}]));
    }
}
