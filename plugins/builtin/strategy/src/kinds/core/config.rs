//! ConfigMaps and Secrets (`ValidateConfigMap`, `ValidateSecret` and their
//! updates): valid config keys, no key in both data and binaryData, at most
//! 1 MiB of data, the keys each Secret type needs, an immutable `type`, and
//! no data changes once `immutable: true`.

use std::collections::BTreeMap;

use base64::Engine as _;
use capstan_plugin_sdk::Cause;
use serde_json::{json, Map, Value};

use crate::common::{self, text, MAX_DATA_SIZE};
use kube_rules::gofmt;

const IMMUTABLE_SET: &str = "field is immutable when `immutable` is set";

/// Each key and the bytes it holds.
type Entries = BTreeMap<String, Vec<u8>>;

fn entries<'a>(object: &'a Value, key: &str) -> impl Iterator<Item = (&'a String, &'a Value)> {
    object
        .get(key)
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
}

/// Bytes of a base64 field (the text itself when it does not decode).
fn decoded(value: &Value) -> Vec<u8> {
    let encoded = value.as_str().unwrap_or_default();
    base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .unwrap_or_else(|_| encoded.as_bytes().to_vec())
}

fn string_bytes(value: &Value) -> Vec<u8> {
    value.as_str().unwrap_or_default().as_bytes().to_vec()
}

/// A ConfigMap's `data` (strings) or `binaryData` (base64).
fn configmap_entries(cm: &Value, key: &str) -> Entries {
    let read = if key == "binaryData" {
        decoded
    } else {
        string_bytes
    };
    entries(cm, key)
        .map(|(k, v)| (k.clone(), read(v)))
        .collect()
}

/// A Secret's data as the server sees it: `data` with `stringData` merged in.
fn secret_data(secret: &Value) -> Entries {
    let mut data: Entries = entries(secret, "data")
        .map(|(k, v)| (k.clone(), decoded(v)))
        .collect();
    for (key, value) in entries(secret, "stringData") {
        data.insert(key.clone(), string_bytes(value));
    }
    data
}

/// What kube's conversion of a v1 Secret does: each `stringData` value is
/// written over `data` (base64), and `stringData` is not kept.
pub fn merge_string_data(secret: &mut Value) {
    let Some(fields) = secret.as_object_mut() else {
        return;
    };
    let Some(Value::Object(strings)) = fields.remove("stringData") else {
        return;
    };
    if !fields.get("data").is_some_and(Value::is_object) {
        fields.insert("data".into(), Value::Object(Map::new()));
    }
    if let Some(Value::Object(data)) = fields.get_mut("data") {
        let engine = base64::engine::general_purpose::STANDARD;
        for (key, value) in strings {
            data.insert(
                key,
                json!(engine.encode(value.as_str().unwrap_or_default())),
            );
        }
    }
}

fn has(data: &Entries, key: &str) -> bool {
    data.contains_key(key)
}

fn same_entries(a: &Entries, b: &Entries) -> bool {
    a == b
}

fn check_keys(data: &Entries, field: &str, causes: &mut Vec<Cause>) {
    for key in data.keys() {
        let at = format!("{field}[{key}]");
        common::invalid_each(causes, &at, key, kube_rules::config_map_key(key));
    }
}

fn total_size(parts: &[&Entries]) -> usize {
    parts
        .iter()
        .flat_map(|p| p.iter())
        .map(|(_, v)| v.len())
        .sum()
}

fn is_immutable(object: &Value) -> bool {
    object.get("immutable").and_then(Value::as_bool) == Some(true)
}

/// A create or update of a ConfigMap.
pub fn configmap(cm: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut causes = Vec::new();
    let data = configmap_entries(cm, "data");
    let binary = configmap_entries(cm, "binaryData");
    if let Some(old) = old.filter(|o| is_immutable(o)) {
        frozen(cm, &mut causes);
        if !same_entries(&data, &configmap_entries(old, "data")) {
            causes.push(common::forbidden("data", IMMUTABLE_SET));
        }
        if !same_entries(&binary, &configmap_entries(old, "binaryData")) {
            causes.push(common::forbidden("binaryData", IMMUTABLE_SET));
        }
    }
    for key in data.keys() {
        let at = format!("data[{key}]");
        common::invalid_each(&mut causes, &at, key, kube_rules::config_map_key(key));
        if has(&binary, key) {
            let detail = "duplicate of key present in binaryData";
            causes.push(common::invalid_str(&at, key, detail));
        }
    }
    check_keys(&binary, "binaryData", &mut causes);
    if total_size(&[&data, &binary]) > MAX_DATA_SIZE {
        causes.push(common::too_long("", MAX_DATA_SIZE));
    }
    causes
}

/// An object that was immutable must stay so.
fn frozen(object: &Value, causes: &mut Vec<Cause>) {
    if !is_immutable(object) {
        causes.push(common::forbidden("immutable", IMMUTABLE_SET));
    }
}

/// `type`, defaulted to Opaque.
fn secret_type(secret: &Value) -> &str {
    Some(text(secret, "type"))
        .filter(|t| !t.is_empty())
        .unwrap_or("Opaque")
}

/// A create or update of a Secret.
pub fn secret(secret: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut causes = Vec::new();
    let data = secret_data(secret);
    if let Some(old) = old {
        if secret_type(secret) != secret_type(old) {
            let shown = gofmt::quote(secret_type(secret));
            causes.push(common::immutable("type", &shown));
        }
        if is_immutable(old) {
            frozen(secret, &mut causes);
            if !same_entries(&data, &secret_data(old)) {
                causes.push(common::forbidden("data", IMMUTABLE_SET));
            }
        }
    }
    check_keys(&data, "data", &mut causes);
    if total_size(&[&data]) > MAX_DATA_SIZE {
        causes.push(common::too_long("data", MAX_DATA_SIZE));
    }
    required_keys(secret, &data, &mut causes);
    causes
}

/// The keys (or annotation) each built-in Secret type needs.
fn required_keys(secret: &Value, data: &Entries, causes: &mut Vec<Cause>) {
    let mut need = |key: &str| {
        if !has(data, key) {
            causes.push(common::required(&format!("data[{key}]"), ""));
        }
    };
    match secret_type(secret) {
        "kubernetes.io/dockercfg" => need(".dockercfg"),
        "kubernetes.io/dockerconfigjson" => need(".dockerconfigjson"),
        "kubernetes.io/tls" => {
            need("tls.crt");
            need("tls.key");
        }
        "kubernetes.io/basic-auth" if !has(data, "username") && !has(data, "password") => {
            need("username");
            need("password");
        }
        "kubernetes.io/ssh-auth" => {
            let empty = data.get("ssh-privatekey").is_none_or(Vec::is_empty);
            if empty {
                causes.push(common::required("data[ssh-privatekey]", ""));
            }
        }
        "kubernetes.io/service-account-token" => service_account_name(secret, causes),
        _ => {}
    }
}

fn service_account_name(secret: &Value, causes: &mut Vec<Cause>) {
    let key = "kubernetes.io/service-account.name";
    let name = secret
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if name.is_empty() {
        causes.push(common::required(
            &format!("metadata.annotations[{key}]"),
            "",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::messages;
    use serde_json::json;

    #[test]
    fn configmap_keys_and_duplicates() {
        let cm = json!({"data": {"a b": "1", "ok": "2"}, "binaryData": {"ok": "Mg==", "..x": ""}});
        assert_eq!(
            messages(&configmap(&cm, None)),
            vec![
                "data[a b]: Invalid value: \"a b\": a valid config key must consist of alphanumeric \
                 characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', \
                 regex used for validation is '[-._a-zA-Z0-9]+')",
                "data[ok]: Invalid value: \"ok\": duplicate of key present in binaryData",
                "binaryData[..x]: Invalid value: \"..x\": must not start with '..'",
            ]
        );
    }

    #[test]
    fn configmap_size_limit() {
        let cm = json!({"data": {"big": "x".repeat(MAX_DATA_SIZE + 1)}});
        let causes = configmap(&cm, None);
        assert_eq!(
            messages(&causes),
            vec![": Too long: may not be more than 1048576 bytes"]
        );
        assert_eq!(causes[0].cause_type, "FieldValueTooLong");
        let fits = json!({"data": {"big": "x".repeat(MAX_DATA_SIZE)}});
        assert!(configmap(&fits, None).is_empty());
    }

    #[test]
    fn immutable_configmap_cannot_change() {
        let old = json!({"immutable": true, "data": {"a": "1"}});
        let new = json!({"immutable": true, "data": {"a": "2"}});
        let causes = configmap(&new, Some(&old));
        assert_eq!(
            messages(&causes),
            vec!["data: Forbidden: field is immutable when `immutable` is set"]
        );
        assert_eq!(causes[0].cause_type, "FieldValueForbidden");
        let thawed = json!({"data": {"a": "1"}});
        assert_eq!(
            messages(&configmap(&thawed, Some(&old))),
            vec!["immutable: Forbidden: field is immutable when `immutable` is set"]
        );
        assert!(configmap(&old, Some(&old)).is_empty());
    }

    #[test]
    fn secrets_merge_string_data_and_check_types() {
        let tls = json!({"type": "kubernetes.io/tls", "data": {"tls.crt": "YQ=="}});
        assert_eq!(
            messages(&secret(&tls, None)),
            vec!["data[tls.key]: Required value"]
        );
        let ok = json!({"type": "kubernetes.io/tls", "data": {"tls.crt": "YQ=="},
                        "stringData": {"tls.key": "k"}});
        assert!(secret(&ok, None).is_empty());
        let big = json!({"stringData": {"k": "x".repeat(MAX_DATA_SIZE + 1)}});
        assert_eq!(
            messages(&secret(&big, None)),
            vec!["data: Too long: may not be more than 1048576 bytes"]
        );
    }

    #[test]
    fn string_data_is_merged_into_data_and_dropped() {
        let mut s = json!({"data": {"a": "YQ==", "b": "Yg=="}, "stringData": {"b": "x", "c": "y"}});
        merge_string_data(&mut s);
        assert_eq!(s, json!({"data": {"a": "YQ==", "b": "eA==", "c": "eQ=="}}));
        let mut only = json!({"stringData": {"token-id": "abcdef"}, "data": null});
        merge_string_data(&mut only);
        assert_eq!(only, json!({"data": {"token-id": "YWJjZGVm"}}));
        let mut none = json!({"data": {"a": "YQ=="}});
        merge_string_data(&mut none);
        assert_eq!(none, json!({"data": {"a": "YQ=="}}));
    }

    #[test]
    fn many_string_data_keys_are_merged_in_linear_time() {
        let keys: Map<String, Value> = (0..8000)
            .map(|i| (format!("key-{i}"), json!("v")))
            .collect();
        let secret = json!({"data": {"key-1": "YQ=="}, "stringData": keys});
        assert_eq!(secret_data(&secret).len(), 8000);
        assert!(self::secret(&secret, Some(&secret)).is_empty());
    }

    #[test]
    fn secret_type_and_immutable_data() {
        let old = json!({"type": "Opaque", "immutable": true, "data": {"a": "YQ=="}});
        let same_via_string_data = json!({"immutable": true, "stringData": {"a": "a"}});
        assert!(secret(&same_via_string_data, Some(&old)).is_empty());
        let changed = json!({"type": "kubernetes.io/basic-auth", "immutable": true,
                             "data": {"a": "Yg=="}});
        assert_eq!(
            messages(&secret(&changed, Some(&old))),
            vec![
                "type: Invalid value: \"kubernetes.io/basic-auth\": field is immutable",
                "data: Forbidden: field is immutable when `immutable` is set",
                "data[username]: Required value",
                "data[password]: Required value",
            ]
        );
    }
}
