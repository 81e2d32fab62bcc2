//! The encoder against the decoder and against k8s-pb: every object
//! kube-apiserver 1.32 answered in `tests/golden` (as JSON) written in
//! protobuf, read back to the same JSON, and readable by prost's types.

use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::core::v1 as core;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::Unknown;
use prost::Message;
use serde_json::{json, Value};

use super::{decode_object, encodable, encode_object, encode_watch_event, MAGIC};
use crate::catalogue::Catalogue;

fn encode(v: &Value) -> Vec<u8> {
    encode_object(v, Catalogue::builtin().schemas()).unwrap()
}

fn round_trip(v: &Value) -> Value {
    decode_object(&encode(v), Catalogue::builtin().schemas()).unwrap()
}

/// Where `got` (read back) differs from `want` other than by what the
/// decoder leaves out as Go's zero value, or the type meta of an embedded
/// object (protobuf carries none, so client-go sees none from kube either).
fn difference(want: &Value, got: &Value, path: &str) -> Option<String> {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (k, wv) in w {
                let at = format!("{path}/{k}");
                let embedded_type = !path.is_empty() && (k == "kind" || k == "apiVersion");
                let found = match g.get(k) {
                    Some(gv) => difference(wv, gv, &at),
                    None if is_zero(wv) || embedded_type => None,
                    None => Some(format!("{at}: missing")),
                };
                if found.is_some() {
                    return found;
                }
            }
            g.keys()
                .find(|k| !w.contains_key(*k))
                .map(|k| format!("{path}/{k}: unexpected"))
        }
        (Value::Array(w), Value::Array(g)) if w.len() == g.len() => w
            .iter()
            .zip(g)
            .enumerate()
            .find_map(|(i, (wv, gv))| difference(wv, gv, &format!("{path}/{i}"))),
        _ if want == got => None,
        _ => Some(format!("{path}: {want} became {got}")),
    }
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

/// The object kube answered, for every recorded built-in object (but those
/// whose numbers the recording replaced by `<allocated>`).
fn recorded_objects() -> Vec<(String, Value)> {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/golden/answers/objects"
    );
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let answer: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        // The recording's time placeholder, as a time again.
        let text = answer["body"]
            .to_string()
            .replace("\"<time>\"", "\"2024-05-01T10:00:00Z\"");
        let body: Value = serde_json::from_str(&text).unwrap();
        let kind = (body["apiVersion"].as_str(), body["kind"].as_str());
        if let (Some(api_version), Some(kind)) = kind {
            let placeholder_number = body.to_string().contains("\"<allocated>\"");
            if encodable(api_version, kind) && !placeholder_number {
                out.push((path.display().to_string(), body));
            }
        }
    }
    out
}

#[test]
fn the_comparison_sees_a_change() {
    let want = json!({"spec": {"replicas": 3, "name": ""}});
    assert_eq!(
        difference(&want, &json!({"spec": {"replicas": 3}}), ""),
        None
    );
    let got = json!({"spec": {"replicas": 2}});
    assert_eq!(
        difference(&want, &got, "").as_deref(),
        Some("/spec/replicas: 3 became 2")
    );
}

#[test]
fn every_recorded_object_reads_back_as_the_same_json() {
    let objects = recorded_objects();
    assert!(objects.len() >= 100, "{} objects", objects.len());
    let mut wrong = Vec::new();
    for (name, object) in &objects {
        if let Some(d) = difference(object, &round_trip(object), "") {
            wrong.push(format!("{name}: {d}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn prost_reads_what_is_written() {
    let deployment = recorded_objects()
        .into_iter()
        .map(|(_, o)| o)
        .find(|o| o["kind"] == "Deployment")
        .unwrap();
    let bytes = encode(&deployment);
    let unknown = Unknown::decode(bytes.strip_prefix(MAGIC).unwrap()).unwrap();
    let type_meta = unknown.type_meta.unwrap();
    assert_eq!(type_meta.kind.as_deref(), Some("Deployment"));
    assert_eq!(type_meta.api_version.as_deref(), Some("apps/v1"));
    let d = apps::Deployment::decode(unknown.raw.unwrap().as_slice()).unwrap();
    let meta = d.metadata.unwrap();
    assert_eq!(
        meta.name.as_deref(),
        deployment["metadata"]["name"].as_str()
    );
    let spec = d.spec.unwrap();
    assert_eq!(
        spec.replicas,
        deployment["spec"]["replicas"].as_i64().map(|r| r as i32)
    );
    let container = &spec.template.unwrap().spec.unwrap().containers[0];
    let image = deployment["spec"]["template"]["spec"]["containers"][0]["image"].as_str();
    assert_eq!(container.image.as_deref(), image);
}

#[test]
fn lists_and_partial_metadata_have_their_own_messages() {
    let list = json!({"apiVersion": "v1", "kind": "ConfigMapList", "metadata": {"resourceVersion": "7"},
        "items": [{"metadata": {"name": "a", "namespace": "n"}, "data": {"k": "v"}}]});
    let bytes = encode(&list);
    let unknown = Unknown::decode(bytes.strip_prefix(MAGIC).unwrap()).unwrap();
    let decoded = core::ConfigMapList::decode(unknown.raw.unwrap().as_slice()).unwrap();
    assert_eq!(
        decoded.metadata.unwrap().resource_version.as_deref(),
        Some("7")
    );
    assert_eq!(
        decoded.items[0].data.get("k").map(String::as_str),
        Some("v")
    );
    let partial = json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
        "metadata": {"name": "a", "creationTimestamp": "2024-05-01T10:00:00Z", "labels": {"x": "y"}}});
    let bytes = encode(&partial);
    let unknown = Unknown::decode(bytes.strip_prefix(MAGIC).unwrap()).unwrap();
    let decoded = meta::PartialObjectMetadata::decode(unknown.raw.unwrap().as_slice()).unwrap();
    let m = decoded.metadata.unwrap();
    assert_eq!(m.creation_timestamp.unwrap().seconds, Some(1_714_557_600));
    assert!(
        !encodable("example.com/v1", "Widget"),
        "custom resources stay JSON"
    );
}

#[test]
fn watch_events_are_length_prefixed_watch_event_messages() {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    let frame = encode_watch_event("ADDED", &pod, Catalogue::builtin().schemas()).unwrap();
    let len = u32::from_be_bytes(frame[..4].try_into().unwrap()) as usize;
    assert_eq!(len, frame.len() - 4);
    let event = meta::WatchEvent::decode(&frame[4..]).unwrap();
    assert_eq!(event.r#type.as_deref(), Some("ADDED"));
    let raw = event.object.unwrap().raw.unwrap();
    let unknown = Unknown::decode(raw.strip_prefix(MAGIC).unwrap()).unwrap();
    let decoded = core::Pod::decode(unknown.raw.unwrap().as_slice()).unwrap();
    assert_eq!(
        decoded.spec.unwrap().containers[0].image.as_deref(),
        Some("nginx")
    );
}

#[test]
fn go_durations_parse_as_go_writes_them() {
    use super::encode::parse_go_duration;
    assert_eq!(parse_go_duration("1h0m0s"), Ok(3_600_000_000_000));
    assert_eq!(parse_go_duration("1m30.5s"), Ok(90_500_000_000));
    assert_eq!(parse_go_duration("250ms"), Ok(250_000_000));
    assert_eq!(parse_go_duration("-2s"), Ok(-2_000_000_000));
    assert_eq!(parse_go_duration("0s"), Ok(0));
    assert!(parse_go_duration("5 parsecs").is_err());
}

/// VolumeSource has no schema of its own (kube inlines it into Volume):
/// its fields keep the casing kube's schemas give them both ways.
#[test]
fn inlined_volume_sources_keep_their_acronyms() {
    let volume =
        json!({"name": "dapi", "downwardAPI": {"items": [{"path": "cpu"}], "defaultMode": 420}});
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [], "volumes": [volume.clone()]}});
    assert_eq!(round_trip(&pod)["spec"]["volumes"][0], volume);
}
