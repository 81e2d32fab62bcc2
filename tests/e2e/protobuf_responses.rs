//! Responses in protobuf, as kube-apiserver gives them to client-go's
//! default for kube-controller-manager and kube-scheduler
//! (`application/vnd.kubernetes.protobuf, */*`): objects, lists, metadata
//! views and watch streams of built-in kinds, each read here with prost's
//! k8s-pb types; custom resources stay JSON.

use crate::support::Server;
use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::core::v1 as core;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::Unknown;
use prost::Message;

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf, */*";
const MAGIC: &[u8] = b"k8s\x00";

/// The body and Content-Type of a GET asking for `accept`.
fn get(s: &Server, path: &str, accept: &str) -> (Vec<u8>, String) {
    let body = s.dir.path().join("pb-body");
    let headers = s.dir.path().join("pb-headers");
    let accept = format!("Accept: {accept}");
    let (b, h) = (body.display().to_string(), headers.display().to_string());
    s.curl(&["-H", &accept, "-o", &b, "-D", &h, &s.url(path)]);
    let headers = std::fs::read_to_string(&headers).unwrap_or_default();
    let content_type = headers
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-type:")
                .map(|v| v.trim().to_string())
        })
        .unwrap_or_default();
    (std::fs::read(&body).unwrap_or_default(), content_type)
}

/// The envelope's kind and the object's message bytes.
fn unwrap(body: &[u8]) -> (String, Vec<u8>) {
    let envelope = body.strip_prefix(MAGIC).expect("the protobuf magic");
    let unknown = Unknown::decode(envelope).expect("a runtime.Unknown");
    let kind = unknown.type_meta.and_then(|t| t.kind).unwrap_or_default();
    (kind, unknown.raw.unwrap_or_default())
}

#[test]
fn built_in_objects_lists_and_watches_come_in_protobuf_when_asked() {
    let s = Server::start();
    s.ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx:1.27",
        "--replicas=2",
    ]);
    s.ok(&[
        "create",
        "configmap",
        "settings",
        "--from-literal=mode=fast",
    ]);

    let (body, ct) = get(
        &s,
        "/apis/apps/v1/namespaces/default/deployments/web",
        PROTOBUF,
    );
    assert_eq!(ct, "application/vnd.kubernetes.protobuf");
    let (kind, raw) = unwrap(&body);
    assert_eq!(kind, "Deployment");
    let d = apps::Deployment::decode(raw.as_slice()).unwrap();
    assert_eq!(d.metadata.unwrap().name.as_deref(), Some("web"));
    let spec = d.spec.unwrap();
    assert_eq!(spec.replicas, Some(2));
    let image = &spec.template.unwrap().spec.unwrap().containers[0].image;
    assert_eq!(image.as_deref(), Some("nginx:1.27"));

    let (body, _) = get(&s, "/api/v1/namespaces/default/configmaps", PROTOBUF);
    let (kind, raw) = unwrap(&body);
    assert_eq!(kind, "ConfigMapList");
    let list = core::ConfigMapList::decode(raw.as_slice()).unwrap();
    let settings = list
        .items
        .iter()
        .find(|c| c.metadata.as_ref().and_then(|m| m.name.as_deref()) == Some("settings"));
    assert_eq!(
        settings.unwrap().data.get("mode").map(String::as_str),
        Some("fast")
    );

    let metadata =
        "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
    let (body, _) = get(&s, "/api/v1/namespaces/default/configmaps", metadata);
    let (kind, raw) = unwrap(&body);
    assert_eq!(kind, "PartialObjectMetadataList");
    let partial = meta::PartialObjectMetadataList::decode(raw.as_slice()).unwrap();
    assert!(partial
        .items
        .iter()
        .any(|i| i.metadata.as_ref().and_then(|m| m.name.as_deref()) == Some("settings")));

    let watch = "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1&fieldSelector=metadata.name%3Dsettings";
    let (body, ct) = get(&s, watch, PROTOBUF);
    assert_eq!(ct, "application/vnd.kubernetes.protobuf;stream=watch");
    let len = u32::from_be_bytes(body[..4].try_into().unwrap()) as usize;
    let event = meta::WatchEvent::decode(&body[4..4 + len]).unwrap();
    assert_eq!(event.r#type.as_deref(), Some("ADDED"));
    let (kind, raw) = unwrap(&event.object.unwrap().raw.unwrap());
    assert_eq!(kind, "ConfigMap");
    let cm = core::ConfigMap::decode(raw.as_slice()).unwrap();
    assert_eq!(cm.data.get("mode").map(String::as_str), Some("fast"));
}

#[test]
fn json_stays_the_answer_where_kube_has_no_protobuf() {
    let s = Server::start();
    // Without protobuf in Accept, and for a kind without a protobuf form.
    let (_, ct) = get(&s, "/api/v1/namespaces/default", "application/json");
    assert_eq!(ct, "application/json");
    let (body, ct) = get(
        &s,
        "/apis/policies.capstan.dev/v1alpha1/policybundles",
        PROTOBUF,
    );
    assert_eq!(ct, "application/json", "{}", String::from_utf8_lossy(&body));
}
