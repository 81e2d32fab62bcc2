//! The wire format of client-go 1.32's informers, for every listable
//! resource (built-in, custom, Capstan's own): a metadata informer's list
//! and watch (`as=PartialObjectMetadata[List]`, as the garbage collector and
//! the quota controller use them) and a streaming list (WatchList:
//! `sendInitialEvents=true`, which kube-controller-manager 1.32 turns on for
//! every informer), each decodable the way client-go decodes it.

use crate::support::Server;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::Unknown;
use prost::Message;
use serde_json::Value;

/// What client-go's metadata client sends (protobuf first, then JSON); the
/// list's JSON alternative on its own.
const METADATA_LIST: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
const METADATA_LIST_JSON: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
const METADATA_WATCH: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
"#;

/// Every resource path of the server's discovery that can be listed and watched.
fn listable(s: &Server) -> Vec<String> {
    let mut versions = vec!["/api/v1".to_string()];
    let (_, groups) = s.get_json("/apis");
    for g in groups["groups"].as_array().into_iter().flatten() {
        for v in g["versions"].as_array().into_iter().flatten() {
            versions.push(format!("/apis/{}", v["groupVersion"].as_str().unwrap()));
        }
    }
    let mut paths = Vec::new();
    for base in versions {
        let (_, list) = s.get_json(&base);
        for r in list["resources"].as_array().into_iter().flatten() {
            let verbs: Vec<&str> = r["verbs"]
                .as_array()
                .map(|v| v.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let name = r["name"].as_str().unwrap_or_default();
            if !name.contains('/') && verbs.contains(&"list") && verbs.contains(&"watch") {
                paths.push(format!("{base}/{name}"));
            }
        }
    }
    paths
}

/// The items of the protobuf PartialObjectMetadataList client-go gets.
fn protobuf_list_len(s: &Server, path: &str) -> Result<usize, String> {
    let body = get_bytes(s, path, METADATA_LIST);
    let envelope = body.strip_prefix(b"k8s\x00").ok_or("no protobuf magic")?;
    let unknown = Unknown::decode(envelope).map_err(|e| e.to_string())?;
    let kind = unknown.type_meta.and_then(|t| t.kind).unwrap_or_default();
    if kind != "PartialObjectMetadataList" {
        return Err(format!("a {kind}"));
    }
    let raw = unknown.raw.unwrap_or_default();
    let list =
        meta::PartialObjectMetadataList::decode(raw.as_slice()).map_err(|e| e.to_string())?;
    Ok(list.items.len())
}

fn get_bytes(s: &Server, path: &str, accept: &str) -> Vec<u8> {
    let out = s.curl(&["-N", "-H", &format!("Accept: {accept}"), &s.url(path)]);
    out.stdout
}

/// The events of a protobuf watch stream (length-prefixed WatchEvents),
/// each as the JSON event client-go would decode it into.
fn watch_events(s: &Server, path: &str, accept: &str) -> Vec<Value> {
    let body = get_bytes(s, path, accept);
    let schemas = capstan::catalogue::Catalogue::builtin_schemas();
    let mut events = Vec::new();
    let mut rest = body.as_slice();
    while rest.len() >= 4 {
        let len = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        let Some(frame) = rest.get(4..4 + len) else {
            break;
        };
        rest = &rest[4 + len..];
        let Ok(event) = meta::WatchEvent::decode(frame) else {
            events.push(Value::String("undecodable frame".into()));
            continue;
        };
        let raw = event.object.and_then(|o| o.raw).unwrap_or_default();
        let object =
            capstan::api::protobuf::decode_object(&raw, schemas).unwrap_or_else(Value::String);
        events.push(serde_json::json!({"type": event.r#type, "object": object}));
    }
    events
}

/// A GET with `accept`: the status code and the JSON answer.
fn get_accepting(s: &Server, path: &str, accept: &str) -> (u16, Value) {
    let header = format!("Accept: {accept}");
    let out = s.curl(&["-H", &header, "-w", "\n%{http_code}", &s.url(path)]);
    let text = crate::support::stdout(&out);
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
    let value = serde_json::from_str(body).unwrap_or(Value::String(body.to_string()));
    (code.trim().parse().unwrap_or(0), value)
}

fn wait_established(s: &Server) {
    s.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/widgets.example.com",
        "--timeout=30s",
    ]);
}

#[test]
fn every_resource_serves_metadata_lists_watches_and_streaming_lists_as_client_go_decodes_them() {
    let s = Server::start();
    s.ok_stdin(&["apply", "-f", "-"], CRD);
    wait_established(&s);
    s.ok_stdin(
        &["apply", "-f", "-"],
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 3}\n",
    );
    let paths = listable(&s);
    assert!(
        paths.len() > 50 && paths.iter().any(|p| p.ends_with("/example.com/v1/widgets")),
        "{paths:?}"
    );
    let mut wrong = Vec::new();
    for path in &paths {
        let (code, list) = get_accepting(&s, path, METADATA_LIST_JSON);
        let items_ok = list["items"]
            .as_array()
            .is_some_and(|items| items.iter().all(is_partial));
        if code != 200 || list["kind"] != "PartialObjectMetadataList" || !items_ok {
            wrong.push(format!("list {path}: {code} {}", clip(&list)));
            continue;
        }
        let listed = list["items"].as_array().map_or(0, Vec::len);
        match protobuf_list_len(&s, path) {
            Ok(n) if n == listed => {}
            other => wrong.push(format!("protobuf list {path}: {other:?}, {listed} in JSON")),
        }
        let streamed = format!(
            "{path}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1"
        );
        let events = watch_events(&s, &streamed, METADATA_WATCH);
        if let Some(problem) = streaming_list_problem(&events, list["items"].as_array()) {
            wrong.push(format!("watch {path}: {problem}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

fn is_partial(obj: &Value) -> bool {
    obj["kind"] == "PartialObjectMetadata"
        && obj["apiVersion"] == "meta.k8s.io/v1"
        && obj["metadata"]["name"].is_string()
        && obj.get("spec").is_none()
        && obj.get("data").is_none()
}

/// A streaming list is every listed object ADDED, then one BOOKMARK marked
/// `k8s.io/initial-events-end`, every object PartialObjectMetadata.
fn streaming_list_problem(events: &[Value], listed: Option<&Vec<Value>>) -> Option<String> {
    let added = events.iter().take_while(|e| e["type"] == "ADDED").count();
    let expected = listed.map_or(0, Vec::len);
    let Some(bookmark) = events.get(added) else {
        return Some(format!("no bookmark after {added} ADDED events"));
    };
    let end = &bookmark["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"];
    if bookmark["type"] != "BOOKMARK" || end != "true" {
        return Some(format!(
            "not the initial-events-end bookmark: {}",
            clip(bookmark)
        ));
    }
    if added < expected {
        return Some(format!(
            "{added} ADDED events for {expected} listed objects"
        ));
    }
    events
        .iter()
        .find(|e| !is_partial(&e["object"]) && e["type"] != "BOOKMARK")
        .or_else(|| {
            let o = &bookmark["object"];
            (o["kind"] != "PartialObjectMetadata").then_some(bookmark)
        })
        .map(|e| format!("not PartialObjectMetadata: {}", clip(e)))
}

fn clip(v: &Value) -> String {
    v.to_string().chars().take(300).collect()
}

#[test]
fn a_streaming_list_refuses_options_kube_refuses() {
    let s = Server::start();
    let base = "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true";
    let (code, status) = s.get_json(base);
    assert_eq!(code, 422, "{status}");
    assert_eq!(
        status["details"]["causes"][0]["message"],
        "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
    );
    let (code, status) = s.get_json("/api/v1/namespaces/default/configmaps?sendInitialEvents=true");
    assert_eq!(code, 422, "{status}");
    assert_eq!(
        status["details"]["causes"][0]["message"],
        "Forbidden: sendInitialEvents is forbidden for list"
    );
}
