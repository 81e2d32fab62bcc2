//! OpenAPI v2 for older kubectl releases: 1.27 and 1.28 read `/openapi/v2`
//! (as gnostic protobuf) for `explain --output=plaintext-openapiv2` and for
//! `apply`'s patch metadata.

use crate::support::{stderr, stdout, Server};

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: nginx}, {name: sidecar, image: busybox}]
";

/// kubectl `release` that must succeed; returns its stdout.
fn ok(s: &Server, release: &str, args: &[&str], stdin: Option<&str>) -> String {
    let out = s.kubectl_release(release, args, stdin);
    assert!(
        out.status.success(),
        "kubectl {release} {args:?} failed: {}",
        stderr(&out)
    );
    stdout(&out)
}

#[test]
fn kubectl_1_27_explains_from_openapi_v2() {
    let s = Server::start();
    let args = [
        "explain",
        "deployment.spec.replicas",
        "--output=plaintext-openapiv2",
    ];
    let out = ok(&s, "1.27", &args, None);
    assert!(out.contains("FIELD:    replicas <integer>"), "{out}");
    assert!(out.contains("Number of desired pods"), "{out}");
    // IntOrString is a string in kube's v2 document.
    let surge = "deployment.spec.strategy.rollingUpdate.maxSurge";
    let out = ok(
        &s,
        "1.27",
        &["explain", surge, "--output=plaintext-openapiv2"],
        None,
    );
    assert!(out.contains("FIELD:    maxSurge <string>"), "{out}");
}

#[test]
fn kubectl_1_28_explains_pod_containers_from_openapi_v2() {
    let s = Server::start();
    let args = [
        "explain",
        "pods.spec.containers",
        "--output=plaintext-openapiv2",
    ];
    let out = ok(&s, "1.28", &args, None);
    assert!(out.contains("RESOURCE: containers <[]Object>"), "{out}");
    assert!(
        out.contains("List of containers belonging to the pod."),
        "{out}"
    );
    assert!(out.contains("image\t<string>"), "{out}");
}

#[test]
fn kubectl_1_27_applies_a_deployment() {
    let s = Server::start();
    let apply = ["apply", "-f", "-"];
    let out = ok(&s, "1.27", &apply, Some(DEPLOYMENT));
    assert!(out.contains("deployment.apps/web created"), "{out}");
    let changed = DEPLOYMENT
        .replace("replicas: 2", "replicas: 3")
        .replace(", {name: sidecar, image: busybox}", "");
    let out = ok(&s, "1.27", &apply, Some(&changed));
    assert!(out.contains("deployment.apps/web configured"), "{out}");
    let d = s.json(&["get", "deployment", "web"]);
    assert_eq!(d["spec"]["replicas"], 3);
    let containers = d["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap();
    assert_eq!(containers.len(), 1, "{containers:?}");
    assert_eq!(containers[0]["name"], "app");

    let server_side = changed.replace("replicas: 3", "replicas: 4");
    let args = ["apply", "--server-side", "--force-conflicts", "-f", "-"];
    let out = ok(&s, "1.27", &args, Some(&server_side));
    assert!(
        out.contains("deployment.apps/web serverside-applied"),
        "{out}"
    );
    let d = s.json(&["get", "deployment", "web"]);
    assert_eq!(d["spec"]["replicas"], 4);
}

#[test]
fn openapi_v2_answers_json_and_protobuf_with_one_etag() {
    let s = Server::start();
    let headers = |accept: &str, extra: &[&str]| {
        let mut args = vec!["-o", "/dev/null", "-D", "-", "-H"];
        let accept = format!("Accept: {accept}");
        args.push(&accept);
        args.extend(extra);
        let url = s.url("/openapi/v2");
        args.push(&url);
        stdout(&s.curl(&args)).to_ascii_lowercase()
    };
    let json = headers("application/json", &[]);
    assert!(json.contains("content-type: application/json"), "{json}");
    let pb = headers(
        "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
        &[],
    );
    assert!(
        pb.contains("content-type: application/com.github.proto-openapi.spec.v2.v1.0+protobuf"),
        "{pb}"
    );
    let etag = |h: &str| {
        h.lines()
            .find_map(|l| l.strip_prefix("etag: "))
            .map(|t| t.trim().to_string())
            .expect("an ETag")
    };
    assert_eq!(etag(&json), etag(&pb));
    let tag = etag(&json).to_ascii_uppercase();
    let again = headers(
        "application/json",
        &["-H", &format!("If-None-Match: {tag}")],
    );
    assert!(again.starts_with("http/2 304"), "{again}");
}

/// Go's go-openapi `spec.Swagger` (what the Kubernetes e2e CRD OpenAPI
/// specs unmarshal `/openapi/v2` into) refuses the whole document when one
/// schema position holds something else: JSONSchemaProps has properties
/// named `$ref` and `allOf`, which are property schemas, not keywords.
#[test]
fn openapi_v2_json_schema_props_lists_its_ref_and_all_of_properties() {
    let s = Server::start();
    let (code, doc) = s.get_json("/openapi/v2");
    assert_eq!(code, 200);
    let props = &doc["definitions"]
        ["io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"]["properties"];
    assert_eq!(props["$ref"], serde_json::json!({"type": "string"}));
    assert_eq!(props["allOf"]["type"], "array", "{}", props["allOf"]);
    assert_eq!(
        props["allOf"]["items"]["$ref"],
        "#/definitions/io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"
    );
}
