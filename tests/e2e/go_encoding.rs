//! Built-in objects read back as kube-apiserver's Go types encode them
//! (omitempty, zero values of absent fields, canonical quantities), while
//! custom resources keep the JSON they were written with.

use crate::support::Server;
use serde_json::{json, Value};

const CONFIG_MAP: &str = r#"
apiVersion: v1
kind: ConfigMap
metadata:
  name: empty
  labels: {}
data: {}
"#;

#[test]
fn empty_maps_with_omitempty_are_dropped() {
    let s = Server::start();
    let created = s.ok_stdin(&["create", "-f", "-", "-o", "json"], CONFIG_MAP);
    let created: Value = serde_json::from_str(&created).expect("JSON");
    let (code, got) = s.get_json("/api/v1/namespaces/default/configmaps/empty");
    assert_eq!(code, 200, "{got}");
    for obj in [&created, &got] {
        assert!(obj.get("data").is_none(), "{obj}");
        assert!(obj["metadata"].get("labels").is_none(), "{obj}");
    }
    let (_, list) = s.get_json("/api/v1/namespaces/default/configmaps");
    let items = list["items"].as_array().expect("items");
    let item = items.iter().find(|i| i["metadata"]["name"] == "empty");
    assert!(item.is_some_and(|i| i.get("data").is_none()), "{list}");
}

const DEPLOYMENT: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
"#;

#[test]
fn a_deployment_without_status_reads_back_an_empty_status() {
    let s = Server::start();
    s.ok_stdin(&["create", "-f", "-"], DEPLOYMENT);
    let (_, got) = s.get_json("/apis/apps/v1/namespaces/default/deployments/web");
    assert_eq!(got["status"], json!({}), "{got}");
    let template = &got["spec"]["template"];
    assert_eq!(template["metadata"]["creationTimestamp"], Value::Null);
    assert!(template["metadata"]
        .as_object()
        .is_some_and(|m| m.contains_key("creationTimestamp")));
    assert_eq!(template["spec"]["containers"][0]["resources"], json!({}));
}

const POD: &str = r#"
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: busybox
    resources:
      limits: {cpu: 0.5, memory: 1024Mi}
      requests: {cpu: "0.5", memory: 1Gi}
"#;

#[test]
fn a_pods_quantities_read_back_canonical() {
    let s = Server::start();
    s.ok_stdin(&["create", "-f", "-"], POD);
    let (_, got) = s.get_json("/api/v1/namespaces/default/pods/p");
    let resources = &got["spec"]["containers"][0]["resources"];
    assert_eq!(resources["limits"], json!({"cpu": "500m", "memory": "1Gi"}));
    assert_eq!(
        resources["requests"],
        json!({"cpu": "500m", "memory": "1Gi"})
    );
}

#[test]
fn a_role_without_rules_reads_back_null_rules() {
    let s = Server::start();
    let role = |name: &str, rules: &str| {
        format!(
            r#"{{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{{"name":"{name}"}}{rules}}}"#
        )
    };
    for (name, rules) in [("none", ""), ("empty", r#","rules":[]"#)] {
        let body = role(name, rules);
        s.ok_stdin(&["create", "-f", "-"], &body);
        let path = format!("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/{name}");
        let (_, got) = s.get_json(&path);
        // Role.rules has no omitempty: Go writes the nil slice as null.
        assert!(
            got.as_object()
                .is_some_and(|o| o.get("rules") == Some(&Value::Null)),
            "{got}"
        );
    }
}

#[test]
fn updates_and_patches_are_encoded_too() {
    let s = Server::start();
    s.ok(&["create", "configmap", "patched", "--from-literal=a=b"]);
    s.ok(&[
        "patch",
        "configmap",
        "patched",
        "--type=merge",
        "-p",
        r#"{"data":null,"metadata":{"annotations":{}}}"#,
    ]);
    let (_, got) = s.get_json("/api/v1/namespaces/default/configmaps/patched");
    assert!(got.get("data").is_none(), "{got}");
    assert!(got["metadata"].get("annotations").is_none(), "{got}");
}

#[test]
fn writes_that_change_no_field_of_the_go_object_keep_the_generation() {
    let s = Server::start();
    s.ok_stdin(&["create", "-f", "-"], DEPLOYMENT);
    // The manifest has no status and no template creationTimestamp: as Go
    // decodes it, its spec equals the stored one.
    s.ok_stdin(&["replace", "-f", "-"], DEPLOYMENT);
    // A Deployment's labels are not what its generation follows.
    s.ok(&["label", "deployment", "web", "note=x"]);
    let (_, got) = s.get_json("/apis/apps/v1/namespaces/default/deployments/web");
    assert_eq!(got["metadata"]["generation"], 1, "{got}");
    assert_eq!(got["metadata"]["labels"]["note"], "x");
}
