//! Protobuf request bodies (`application/vnd.kubernetes.protobuf`) as
//! client-go sends them: DeleteOptions of the client's own group version on
//! DELETE and deletecollection, a CustomResourceDefinition, and kube's 400
//! for bodies it cannot decode into the resource (415 for a media type no
//! decoder reads).

use crate::support::Server;

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// A length-delimited field (`tag`, wire type 2).
fn field(tag: u32, bytes: &[u8]) -> Vec<u8> {
    let mut out = varint(u64::from(tag << 3 | 2));
    out.extend(varint(bytes.len() as u64));
    out.extend_from_slice(bytes);
    out
}

/// A bool field (`tag`, wire type 0).
fn flag(tag: u32, on: bool) -> Vec<u8> {
    let mut out = varint(u64::from(tag << 3));
    out.push(u8::from(on));
    out
}

fn varint(mut n: u64) -> Vec<u8> {
    let mut out = Vec::new();
    while n >= 0x80 {
        out.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
    out
}

/// `k8s\0` and the runtime.Unknown envelope around `raw`.
fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let type_meta = [field(1, api_version.as_bytes()), field(2, kind.as_bytes())].concat();
    [b"k8s\0".to_vec(), field(1, &type_meta), field(2, raw)].concat()
}

/// meta/v1 DeleteOptions {dryRun: [All]} under `api_version`.
fn dry_run_delete_options(api_version: &str) -> Vec<u8> {
    envelope(api_version, "DeleteOptions", &field(5, b"All"))
}

fn exists(s: &Server, path: &str) -> bool {
    s.get_json(path).0 == 200
}

#[test]
fn delete_options_of_the_clients_group_version_are_read_from_protobuf() {
    let s = Server::start();
    s.ok(&["create", "deployment", "web", "--image=nginx"]);
    let one = "/apis/apps/v1/namespaces/default/deployments/web";
    let all = "/apis/apps/v1/namespaces/default/deployments";
    let dry = dry_run_delete_options("apps/v1");
    let (code, body, _) = s.request_bytes("DELETE", one, PROTOBUF, Some(&dry));
    assert_eq!(code, 200, "{body}");
    let (code, body, _) = s.request_bytes("DELETE", all, PROTOBUF, Some(&dry));
    assert_eq!(code, 200, "{body}");
    assert!(exists(&s, one), "a dry-run delete removed the deployment");

    let (code, body, _) = s.request_bytes("POST", CRDS, PROTOBUF, Some(&widget_crd()));
    assert_eq!(code, 201, "{body}");
    let crd_path = format!("{CRDS}/widgets.example.com");
    let dry = dry_run_delete_options("apiextensions.k8s.io/v1");
    let (code, body, _) = s.request_bytes("DELETE", &crd_path, PROTOBUF, Some(&dry));
    assert_eq!(code, 200, "{body}");
    assert!(exists(&s, &crd_path), "a dry-run delete removed the CRD");

    let real = envelope("apps/v1", "DeleteOptions", &field(4, b"Background"));
    let (code, body, _) = s.request_bytes("DELETE", one, PROTOBUF, Some(&real));
    assert_eq!(code, 200, "{body}");
    assert!(!exists(&s, one), "the deployment is still there");
}

/// widgets.example.com: namespaced, v1 served and stored, any spec.
fn widget_crd() -> Vec<u8> {
    let names = [
        field(1, b"widgets"),
        field(2, b"widget"),
        field(4, b"Widget"),
    ]
    .concat();
    let spec_schema = [field(5, b"object"), flag(38, true)].concat();
    let entry = [field(1, b"spec"), field(2, &spec_schema)].concat();
    let schema = [field(5, b"object"), field(29, &entry)].concat();
    let version = [
        field(1, b"v1"),
        flag(2, true),
        flag(3, true),
        field(4, &field(1, &schema)),
    ]
    .concat();
    let spec = [
        field(1, b"example.com"),
        field(3, &names),
        field(4, b"Namespaced"),
        field(7, &version),
    ]
    .concat();
    let crd = [field(1, &field(1, b"widgets.example.com")), field(2, &spec)].concat();
    envelope("apiextensions.k8s.io/v1", "CustomResourceDefinition", &crd)
}

#[test]
fn bodies_kube_cannot_decode_into_the_resource_are_bad_requests() {
    let s = Server::start();
    let (code, body, _) = s.request_bytes("POST", CRDS, PROTOBUF, Some(&widget_crd()));
    assert_eq!(code, 201, "{body}");
    assert_eq!(
        body["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"],
        serde_json::json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
    );
    s.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/widgets.example.com",
    ]);

    let widget = envelope("example.com/v1", "Widget", &field(1, &field(1, b"w")));
    let path = "/apis/example.com/v1/namespaces/default/widgets";
    let (code, body, _) = s.request_bytes("POST", path, PROTOBUF, Some(&widget));
    assert_eq!(code, 400, "{body}");
    assert_eq!(body["reason"], "BadRequest");
    assert_eq!(
        body["message"],
        "Widget in version \"v1\" cannot be handled as a Widget: object *unstructured.Unstructured \
         does not implement the protobuf marshalling interface and cannot be encoded to a protobuf message"
    );

    let old = envelope("apps/v1beta1", "Deployment", &field(1, &field(1, b"d")));
    let path = "/apis/apps/v1/namespaces/default/deployments";
    let (code, body, _) = s.request_bytes("POST", path, PROTOBUF, Some(&old));
    assert_eq!(code, 400, "{body}");
    assert_eq!(
        body["message"],
        "Deployment in version \"v1beta1\" cannot be handled as a Deployment: no kind \"Deployment\" \
         is registered for version \"apps/v1beta1\" in scheme \"pkg/api/legacyscheme/scheme.go:30\""
    );

    let (code, body, _) = s.request_bytes("POST", path, "text/plain", Some(b"d"));
    assert_eq!(
        (code, &body["reason"]),
        (415, &serde_json::json!("UnsupportedMediaType"))
    );
    assert_eq!(
        body["message"],
        "the body of the request was in an unknown format - accepted media types include: \
         application/json, application/yaml, application/vnd.kubernetes.protobuf"
    );
}
