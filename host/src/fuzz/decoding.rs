//! Request bodies: whatever the bytes, `handlers::body::decode` answers a
//! value or a 400, for JSON, YAML and Kubernetes protobuf alike.

use super::generators::{from_tokens, json_value, mutated, YAML_TOKENS};
use crate::api::handlers::body::decode;
use proptest::prelude::*;

/// A valid protobuf ConfigMap body, as client-go sends it.
fn protobuf_configmap() -> Vec<u8> {
    use k8s_pb::api::core::v1::ConfigMap;
    use k8s_pb::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
    use prost::Message;
    let cm = ConfigMap {
        metadata: Some(ObjectMeta {
            name: Some("c".into()),
            labels: [("app".to_string(), "x".to_string())].into(),
            ..Default::default()
        }),
        data: [("k".to_string(), "v".to_string())].into(),
        ..Default::default()
    };
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some("v1".into()),
            kind: Some("ConfigMap".into()),
        }),
        raw: Some(cm.encode_to_vec()),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut out = b"k8s\x00".to_vec();
    out.extend(unknown.encode_to_vec());
    out
}

/// Decoding `bytes` as `content_type` is a value or a 400, never a panic.
fn decodes_or_400(bytes: &[u8], content_type: &str) -> Result<(), TestCaseError> {
    if let Err(e) = decode(bytes, Some(content_type), super::schemas()) {
        prop_assert_eq!(e.code, 400, "{}: {}", content_type, e.message);
    }
    Ok(())
}

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

proptest! {
    #![proptest_config(super::config())]

    #[test]
    fn any_bytes_as_any_body(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        for ct in ["application/json", "application/yaml", PROTOBUF] {
            decodes_or_400(&bytes, ct)?;
        }
        let mut framed = b"k8s\x00".to_vec();
        framed.extend(&bytes);
        decodes_or_400(&framed, PROTOBUF)?;
    }

    #[test]
    fn mutated_json_bodies(bytes in json_value().prop_flat_map(|v| mutated(v.to_string().into_bytes()))) {
        decodes_or_400(&bytes, "application/json")?;
        decodes_or_400(&bytes, "application/yaml")?;
    }

    #[test]
    fn yaml_made_of_yaml_syntax(text in from_tokens(YAML_TOKENS, 40)) {
        decodes_or_400(text.as_bytes(), "application/yaml")?;
    }

    #[test]
    fn mutated_protobuf_bodies(bytes in mutated(protobuf_configmap())) {
        decodes_or_400(&bytes, PROTOBUF)?;
    }
}

#[test]
fn the_protobuf_seed_is_a_valid_body() {
    let value = decode(&protobuf_configmap(), Some(PROTOBUF), super::schemas()).unwrap();
    assert_eq!(value["data"]["k"], "v");
}
