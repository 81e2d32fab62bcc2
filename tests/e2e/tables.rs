//! Table output (`kubectl get`, `-o wide`, watches as tables): the rows of
//! built-in kinds come from the strategy plugin's "table" phase (kube's
//! printers), kinds without a printer get kube's NAME / CREATED AT.

use crate::support::{stdout, Server};
use serde_json::Value;

const TABLE: &str = "Accept: application/json;as=Table;v=v1;g=meta.k8s.io";

const OBJECTS: &str = r#"
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  selector: {app: web}
  ports: [{port: 80, protocol: TCP}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
    matchExpressions: [{key: tier, operator: NotIn, values: [db, cache]}]
  template:
    metadata: {labels: {app: web, tier: front}}
    spec: {containers: [{name: nginx, image: nginx:1.27}]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: default}
rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
"#;

fn header(table: &str) -> Vec<String> {
    let first = table.lines().next().unwrap_or_default();
    first
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(String::from)
        .collect()
}

fn table_json(s: &Server, path: &str) -> Value {
    let out = s.curl(&["-H", TABLE, &s.url(path)]);
    serde_json::from_str(&stdout(&out)).unwrap_or(Value::Null)
}

#[test]
fn built_in_kinds_print_with_kubes_columns() {
    let s = Server::start();
    s.ok_stdin(&["apply", "-f", "-"], OBJECTS);
    let services = s.ok(&["get", "services", "-n", "default"]);
    assert_eq!(
        header(&services),
        [
            "NAME",
            "TYPE",
            "CLUSTER-IP",
            "EXTERNAL-IP",
            "PORT(S)",
            "AGE"
        ]
    );
    assert!(services.contains("80/TCP"), "{services}");
    let wide = s.ok(&["get", "deployments", "-o", "wide"]);
    assert_eq!(
        header(&wide),
        [
            "NAME",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "AGE",
            "CONTAINERS",
            "IMAGES",
            "SELECTOR"
        ]
    );
    assert!(wide.contains("0/2"), "{wide}");
    assert!(wide.contains("nginx:1.27"), "{wide}");
    assert!(wide.contains("app=web,tier notin (cache,db)"), "{wide}");
    let roles = s.ok(&["get", "roles"]);
    assert_eq!(header(&roles), ["NAME", "CREATED AT"]);
    assert!(roles
        .lines()
        .nth(1)
        .unwrap_or_default()
        .starts_with("reader"));
    let t = table_json(
        &s,
        "/apis/apps/v1/namespaces/default/deployments?includeObject=Object",
    );
    assert_eq!(t["kind"], "Table");
    assert_eq!(t["columnDefinitions"][5]["priority"], 1, "{t}");
    assert_eq!(t["rows"][0]["object"]["kind"], "Deployment", "{t}");
    let bad = table_json(&s, "/api/v1/namespaces/default/services?includeObject=All");
    assert_eq!(
        (bad["kind"].as_str(), bad["code"].as_i64()),
        (Some("Status"), Some(400))
    );
    assert!(
        bad["message"].as_str().unwrap_or_default().contains(
            r#"includeObject: Invalid value: "All": must be 'Metadata', 'Object', 'None', or empty"#
        ),
        "{bad}"
    );
    let one = table_json(&s, "/api/v1/namespaces/default/services/web");
    assert_eq!(one["rows"][0]["cells"][0], "web", "{one}");
    assert_eq!(one["rows"][0]["object"]["kind"], "PartialObjectMetadata");
}

#[test]
fn a_long_list_prints_every_object_once_and_in_order() {
    let s = Server::start();
    s.ok(&["create", "namespace", "many"]);
    let data = "x".repeat(6000);
    let mut manifest = String::new();
    for i in 0..300 {
        manifest.push_str(&format!(
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm-{i:03}, namespace: many, labels: {{bulk: \"yes\"}}}}\ndata: {{a: {data}, b: two}}\n"
        ));
    }
    s.ok_stdin(&["apply", "-f", "-"], &manifest);
    let t = table_json(
        &s,
        "/api/v1/namespaces/many/configmaps?includeObject=None&labelSelector=bulk%3Dyes",
    );
    let rows = t["rows"].as_array().cloned().unwrap_or_default();
    assert_eq!(rows.len(), 300, "{}", t["metadata"]);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row["cells"][0], format!("cm-{i:03}"));
        assert_eq!(row["cells"][1], 2, "the DATA column counts keys");
        assert!(row["object"].is_null());
    }
    let listed = s.ok(&[
        "get",
        "configmaps",
        "-n",
        "many",
        "-l",
        "bulk",
        "--no-headers",
    ]);
    assert_eq!(listed.lines().count(), 300);
}

#[test]
fn a_watch_as_table_sends_the_columns_once() {
    let s = Server::start();
    s.ok(&["create", "configmap", "one", "--from-literal=a=b"]);
    s.ok(&["create", "configmap", "two", "--from-literal=a=b"]);
    let path = "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=2";
    let out = stdout(&s.curl(&["-H", TABLE, &s.url(path)]));
    let events: Vec<Value> = out
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let names: Vec<&Value> = events
        .iter()
        .map(|e| &e["object"]["rows"][0]["cells"][0])
        .collect();
    assert!(
        names.contains(&&Value::from("one")) && names.contains(&&Value::from("two")),
        "{out}"
    );
    assert_eq!(events[0]["object"]["columnDefinitions"][1]["name"], "Data");
    assert!(events[1]["object"]["columnDefinitions"].is_null(), "{out}");
}

/// kube's REST for the create-only reviews (and subresources such as
/// finalize) has no TableConvertor, so a Table is not an acceptable answer:
/// 406 before anything is done; a client that also accepts JSON gets JSON.
#[test]
fn a_table_of_a_kind_kube_cannot_print_is_not_acceptable() {
    let s = Server::start();
    let review = r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview",
        "spec":{"resourceAttributes":{"verb":"get","resource":"pods"}}}"#;
    let path = s.url("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews");
    let ask = |accept: &str| {
        let args = [
            "-X",
            "POST",
            "-H",
            "Content-Type: application/json",
            "-H",
            accept,
        ];
        let out = s.curl(&[&args[..], &["--data-binary", review, &path]].concat());
        serde_json::from_str::<Value>(&stdout(&out)).expect("a JSON answer")
    };
    let status = ask(TABLE);
    assert_eq!(status["code"], 406, "{status}");
    assert_eq!(status["reason"], "NotAcceptable");
    assert_eq!(
        status["message"],
        // kube-apiserver 1.32's text (tests/golden/answers/errors/table-of-selfsubjectaccessreview.json).
        "only the following media types are accepted: application/json, application/yaml, \
         application/vnd.kubernetes.protobuf"
    );
    let review = ask(&format!("{TABLE}, application/json"));
    assert_eq!(review["kind"], "SelfSubjectAccessReview", "{review}");
    assert_eq!(review["status"]["allowed"], true);

    let out = s.curl(&["-H", TABLE, &s.url("/api/v1/namespaces/default/status")]);
    let table: Value = serde_json::from_str(&stdout(&out)).expect("a JSON answer");
    assert_eq!(
        table["kind"], "Table",
        "a status subresource prints as its kind"
    );
}
