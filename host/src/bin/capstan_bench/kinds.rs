//! The kinds of object the timed phases can work on: the built-in ConfigMap, and a
//! custom resource (the bench's own CRD, see `custom.rs`) whose request bodies have
//! the same encoded size, so the two run side by side measure what serving a custom
//! resource adds (schema pruning, defaulting, validation and CEL rules).

use bytes::Bytes;
use serde::Serialize;
use serde_json::json;

/// Group, version, plural and kind of the bench's custom resource.
pub const CUSTOM_GROUP: &str = "bench.capstan.dev";
pub const CUSTOM_VERSION: &str = "v1";
pub const CUSTOM_PLURAL: &str = "benchobjects";
pub const CUSTOM_KIND: &str = "BenchObject";

/// Filler text of the objects (the custom resource's is cut to match sizes).
const GREETING: &str = "hello from capstan-bench";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// v1 ConfigMap.
    #[value(name = "configmap")]
    ConfigMap,
    /// bench.capstan.dev/v1 BenchObject (installed by the run).
    Custom,
}

impl Kind {
    /// The name in the table and the JSON.
    pub fn label(self) -> &'static str {
        match self {
            Kind::ConfigMap => "configmap",
            Kind::Custom => "custom",
        }
    }

    pub fn collection_path(self, namespace: &str) -> String {
        match self {
            Kind::ConfigMap => format!("/api/v1/namespaces/{namespace}/configmaps"),
            Kind::Custom => format!(
                "/apis/{CUSTOM_GROUP}/{CUSTOM_VERSION}/namespaces/{namespace}/{CUSTOM_PLURAL}"
            ),
        }
    }

    /// A small object; `generation` changes the data so updates really change it.
    pub fn body(self, name: &str, resource_version: Option<&str>, generation: u32) -> Bytes {
        match self {
            Kind::ConfigMap => configmap_body(name, resource_version, generation),
            Kind::Custom => custom_body(name, resource_version, generation),
        }
    }
}

/// The ConfigMap the phases send.
pub fn configmap_body(name: &str, resource_version: Option<&str>, generation: u32) -> Bytes {
    object(
        "v1",
        "ConfigMap",
        name,
        resource_version,
        generation,
        GREETING,
    )
}

/// The custom resource: the ConfigMap's labels and data under the custom apiVersion
/// and kind, its greeting cut so that the encoded body is exactly as long.
pub fn custom_body(name: &str, resource_version: Option<&str>, generation: u32) -> Bytes {
    let target = configmap_body(name, resource_version, generation).len();
    let api_version = format!("{CUSTOM_GROUP}/{CUSTOM_VERSION}");
    let uncut = object(
        &api_version,
        CUSTOM_KIND,
        name,
        resource_version,
        generation,
        GREETING,
    );
    let keep = GREETING
        .len()
        .saturating_sub(uncut.len().saturating_sub(target));
    object(
        &api_version,
        CUSTOM_KIND,
        name,
        resource_version,
        generation,
        &GREETING[..keep],
    )
}

fn object(
    api_version: &str,
    kind: &str,
    name: &str,
    resource_version: Option<&str>,
    generation: u32,
    greeting: &str,
) -> Bytes {
    let mut metadata = json!({"name": name, "labels": {"app.kubernetes.io/name": "capstan-bench"}});
    if let Some(rv) = resource_version {
        metadata["resourceVersion"] = json!(rv);
    }
    let object = json!({
        "apiVersion": api_version,
        "kind": kind,
        "metadata": metadata,
        "data": {
            "generation": generation.to_string(),
            "color": "blue",
            "greeting": greeting,
        },
    });
    Bytes::from(object.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn custom_body_has_the_configmaps_size_and_data_keys() {
        for (rv, generation) in [(None, 0), (Some("123456"), 1), (Some("9"), 4_000_000)] {
            let cm = configmap_body("bench-abc-c32-1999", rv, generation);
            let cr = custom_body("bench-abc-c32-1999", rv, generation);
            assert_eq!(cr.len(), cm.len());
            let (cm, cr): (Value, Value) = (
                serde_json::from_slice(&cm).unwrap(),
                serde_json::from_slice(&cr).unwrap(),
            );
            assert_eq!(cr["apiVersion"], "bench.capstan.dev/v1");
            assert_eq!(cr["kind"], "BenchObject");
            assert_eq!(cr["metadata"], cm["metadata"]);
            let keys = |v: &Value| {
                v["data"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
            };
            assert_eq!(keys(&cr), keys(&cm));
            assert_eq!(cr["data"]["generation"], generation.to_string());
        }
    }

    #[test]
    fn paths_name_the_kinds_collection() {
        assert_eq!(
            Kind::ConfigMap.collection_path("ns"),
            "/api/v1/namespaces/ns/configmaps"
        );
        assert_eq!(
            Kind::Custom.collection_path("ns"),
            "/apis/bench.capstan.dev/v1/namespaces/ns/benchobjects"
        );
    }
}
