//! The projected service account token volume (`kube-api-access-xxxxx`) and
//! its read-only mount at /var/run/secrets/kubernetes.io/serviceaccount in
//! every init container and container, as kube's ServiceAccount admission does.

use capstan_plugin_sdk::{json, object, AdmissionRequest, JsonPatch, Value};

/// Where the token, CA bundle and namespace are mounted.
pub const MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
const VOLUME_PREFIX: &str = "kube-api-access-";
/// kube's WarnOnlyBoundTokenExpirationSeconds (1h7s).
const EXPIRATION_SECONDS: i64 = 3607;
/// The characters of kube's random name suffixes (no vowels, no confusables).
const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// Adds the mounts (and the volume if some container needed one).
pub fn mount(req: &AdmissionRequest, pod: &Value, mut patch: JsonPatch) -> JsonPatch {
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    let volumes = object::array(spec, &["volumes"]);
    let existing = volumes
        .iter()
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .find(|n| n.starts_with(VOLUME_PREFIX));
    let volume_name = existing
        .map(str::to_string)
        .unwrap_or_else(|| format!("{VOLUME_PREFIX}{}", suffix(&req.uid)));
    let mount = json!({"name": volume_name, "readOnly": true, "mountPath": MOUNT_PATH});
    let mut mounted = false;
    for field in ["initContainers", "containers"] {
        for (i, container) in object::array(spec, &[field]).iter().enumerate() {
            if !has_mount_at_token_path(container) {
                patch = add_mount(patch, field, i, container, mount.clone());
                mounted = true;
            }
        }
    }
    if mounted && existing.is_none() {
        patch = add_volume(patch, spec, volume(&volume_name));
    }
    patch
}

fn has_mount_at_token_path(container: &Value) -> bool {
    object::array(container, &["volumeMounts"])
        .iter()
        .any(|m| m.get("mountPath").and_then(Value::as_str) == Some(MOUNT_PATH))
}

fn add_mount(
    patch: JsonPatch,
    field: &str,
    i: usize,
    container: &Value,
    mount: Value,
) -> JsonPatch {
    let i = i.to_string();
    if container.get("volumeMounts").is_some_and(Value::is_array) {
        patch.add(["spec", field, i.as_str(), "volumeMounts", "-"], mount)
    } else {
        patch.add(["spec", field, i.as_str(), "volumeMounts"], json!([mount]))
    }
}

fn add_volume(patch: JsonPatch, spec: &Value, volume: Value) -> JsonPatch {
    if spec.get("volumes").is_some_and(Value::is_array) {
        patch.add(["spec", "volumes", "-"], volume)
    } else {
        patch.add(["spec", "volumes"], json!([volume]))
    }
}

/// The projected volume: token, cluster CA bundle, namespace.
fn volume(name: &str) -> Value {
    json!({"name": name, "projected": {
    "defaultMode": 420,
    "sources": [
        {"serviceAccountToken": {"expirationSeconds": EXPIRATION_SECONDS, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace",
            "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
    ]}})
}

/// Five characters from kube's alphabet, derived from the request uid
/// (FNV-1a) instead of a random source: unique per request, reproducible in tests.
fn suffix(seed: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in seed.bytes() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    (0..5)
        .map(|i| {
            let index = (hash >> (i * 12)) as usize % ALPHABET.len();
            char::from(ALPHABET[index])
        })
        .collect()
}
