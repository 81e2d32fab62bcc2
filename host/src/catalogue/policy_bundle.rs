//! `policies.capstan.dev/v1alpha1 PolicyBundle`: served from the built-in
//! catalogue, declared as a CustomResourceDefinition would declare it (so
//! its schema, `x-kubernetes-validations`, defaults, status subresource and
//! printer columns are the CRD machinery's: kube's 422 wording with field
//! paths, generation, `kubectl get` columns) but never stored as a CRD.

use crate::apimachinery::status::Cause;
use crate::catalogue::live::CustomEntry;
use serde_json::{json, Value};
use std::sync::Arc;

pub const GROUP: &str = "policies.capstan.dev";
pub const VERSION: &str = "v1alpha1";
pub const PLURAL: &str = "policybundles";

/// The catalogue entries of the resource (one version), with the checks
/// its schema cannot make.
pub fn entries() -> Vec<CustomEntry> {
    let mut entries =
        crate::catalogue::custom::resource::entries(&definition(), &Default::default());
    for entry in &mut entries {
        if let Some(custom) = entry.info.custom.as_mut().and_then(Arc::get_mut) {
            custom.checks = Some(verification_keys);
        }
    }
    entries
}

/// Each `spec.verification.publicKeys[i]` parsed as the bundle loader
/// parses it (a PEM PKIX ECDSA P-256 key, `cosign.pub`), so a key that
/// could never verify a signature is refused on write, not at load. Values
/// without the PEM armour are left to the schema's rule; keys the stored
/// object already had pass (as kube ratchets validation), so a bundle
/// stored before this check can still have its status written.
fn verification_keys(obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    let keys = |o: &Value| -> Vec<String> {
        let list = o.pointer("/spec/verification/publicKeys");
        let items = list.and_then(Value::as_array).into_iter().flatten();
        items
            .map(|k| k.as_str().unwrap_or_default().to_string())
            .collect()
    };
    let stored = old.map(keys).unwrap_or_default();
    let checked = |k: &String| k.contains("-----BEGIN PUBLIC KEY-----") && !stored.contains(k);
    keys(obj)
        .iter()
        .enumerate()
        .filter(|(_, key)| checked(key))
        .filter_map(|(i, key)| {
            let why = crate::cosign::keys::PublicKey::from_pem(key).err()?;
            let field = format!("spec.verification.publicKeys[{i}]");
            let detail =
                format!("must be an ECDSA P-256 public key (PKIX PEM, as cosign.pub): {why}");
            Some(Cause::invalid(&field, "string", &detail))
        })
        .collect()
}

/// The resource as a CustomResourceDefinition, Established.
fn definition() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{PLURAL}.{GROUP}"), "resourceVersion": "1"},
        "spec": {
            "group": GROUP,
            "scope": "Cluster",
            "names": {"plural": PLURAL, "singular": "policybundle", "kind": "PolicyBundle",
                      "listKind": "PolicyBundleList", "shortNames": ["pb"]},
            "versions": [{
                "name": VERSION, "served": true, "storage": true,
                "subresources": {"status": {}},
                "additionalPrinterColumns": columns(),
                "schema": {"openAPIV3Schema": schema()},
            }],
        },
        "status": {"conditions": [{"type": "Established", "status": "True"}]},
    })
}

fn columns() -> Value {
    json!([
        {"name": "Bundle", "type": "string", "jsonPath": ".spec.bundle"},
        {"name": "Mode", "type": "string", "jsonPath": ".spec.mode"},
        {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ])
}

fn schema() -> Value {
    json!({
        "type": "object",
        "description": "A policy bundle loaded into the admission chain at its `policies` markers.",
        "required": ["spec"],
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": spec_schema(),
            "status": status_schema(),
        },
    })
}

fn spec_schema() -> Value {
    json!({
        "type": "object",
        "required": ["bundle"],
        "properties": {
            "bundle": {
                "type": "string", "minLength": 1, "maxLength": 4096,
                "description": "An OCI image layout directory or its .tar (a relative path is under <data-dir>/bundles/), or a registry reference registry://host[:port]/repo:tag or @sha256:<hex>.",
                "x-kubernetes-validations": [{
                    "rule": "!self.matches('(^|/)[.][.](/|$)')",
                    "message": "must not contain a '..' path segment",
                }],
            },
            "policies": {
                "type": "array", "maxItems": 64, "x-kubernetes-list-type": "set",
                "description": "The policies of the bundle to run (default: all).",
                "items": {"type": "string", "minLength": 1, "maxLength": 253},
            },
            "mode": {
                "type": "string", "enum": ["Enforce", "Warn", "Audit"], "default": "Enforce",
                "description": "Enforce denies; Warn allows with a warning; Audit allows and records.",
            },
            "overrides": {
                "type": "array", "maxItems": 64,
                "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "description": "Per policy: settings, rules and failurePolicy instead of the bundle's.",
                "items": override_schema(),
            },
            "namespaceSelector": label_selector(),
            "objectSelector": label_selector(),
            "matchConditions": match_conditions(),
            "verification": verification_schema(),
        },
    })
}

/// cosign public keys, one of which must have signed the bundle.
fn verification_schema() -> Value {
    json!({
        "type": "object",
        "description": "When present, the bundle must carry a cosign signature by one of these keys.",
        "required": ["publicKeys"],
        "properties": {
            "publicKeys": {
                "type": "array", "minItems": 1, "maxItems": 8,
                "description": "PEM public keys (PKIX, ECDSA P-256: cosign.pub).",
                "items": {
                    "type": "string", "maxLength": 4096,
                    "x-kubernetes-validations": [{
                        "rule": "self.contains('-----BEGIN PUBLIC KEY-----') && self.contains('-----END PUBLIC KEY-----')",
                        "message": "must be a PEM public key (-----BEGIN PUBLIC KEY-----)",
                    }],
                },
            },
        },
    })
}

fn override_schema() -> Value {
    json!({
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 253},
            "settings": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "failurePolicy": {"type": "string", "enum": ["Fail", "Ignore"]},
            "rules": {"type": "array", "items": rule_schema()},
            "matchConditions": match_conditions(),
        },
    })
}

/// As a webhook's: at most 64, named uniquely, each a CEL expression over
/// `object`, `oldObject` and `request` (compiled when the bundle loads).
fn match_conditions() -> Value {
    json!({
        "type": "array", "maxItems": 64,
        "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
        "description": "CEL conditions that must all hold for a policy to run.",
        "items": {
            "type": "object",
            "required": ["name", "expression"],
            "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": 63},
                "expression": {"type": "string", "minLength": 1, "maxLength": 10240},
            },
        },
    })
}

fn strings() -> Value {
    json!({"type": "array", "items": {"type": "string"}})
}

fn rule_schema() -> Value {
    json!({
        "type": "object",
        "required": ["operations", "apiGroups", "apiVersions", "resources"],
        "properties": {
            "operations": {"type": "array", "items": {"type": "string",
                "enum": ["*", "CREATE", "UPDATE", "DELETE", "CONNECT"]}},
            "apiGroups": strings(),
            "apiVersions": strings(),
            "resources": strings(),
            "scope": {"type": "string", "enum": ["*", "Cluster", "Namespaced"]},
        },
    })
}

fn label_selector() -> Value {
    json!({
        "type": "object",
        "properties": {
            "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
            "matchExpressions": {"type": "array", "items": {
                "type": "object",
                "required": ["key", "operator"],
                "properties": {
                    "key": {"type": "string"},
                    "operator": {"type": "string", "enum": ["In", "NotIn", "Exists", "DoesNotExist"]},
                    "values": strings(),
                },
            }},
        },
    })
}

fn status_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "observedGeneration": {"type": "integer", "format": "int64"},
            "digest": {"type": "string"},
            "source": {"type": "string"},
            "policies": strings(),
            "conditions": {
                "type": "array",
                "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"],
                "items": {
                    "type": "object",
                    "required": ["type", "status"],
                    "properties": {
                        "type": {"type": "string"},
                        "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
                        "reason": {"type": "string"},
                        "message": {"type": "string"},
                        "lastTransitionTime": {"type": "string", "format": "date-time"},
                        "observedGeneration": {"type": "integer", "format": "int64"},
                    },
                },
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The causes of a 422 for `spec`, as `field: message`.
    fn problems(spec: Value) -> Vec<String> {
        let entries = entries();
        let custom = entries[0].info.custom.as_ref().unwrap();
        let obj = json!({"apiVersion": "policies.capstan.dev/v1alpha1", "kind": "PolicyBundle",
                         "metadata": {"name": "b"}, "spec": spec});
        crate::crd::strategy::validate(custom, &obj, None)
            .into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect()
    }

    #[test]
    fn served_as_a_cluster_scoped_builtin_with_a_status_subresource() {
        let cat = crate::catalogue::Catalogue::builtin();
        let info = cat.lookup(GROUP, VERSION, PLURAL).unwrap();
        assert_eq!(
            (info.kind.as_str(), info.namespaced),
            ("PolicyBundle", false)
        );
        assert_eq!(info.short_names, ["pb"]);
        assert!(info.has_subresource("status"));
        assert!(cat
            .schemas()
            .contains_key("dev.capstan.policies.v1alpha1.PolicyBundleList"));
    }

    #[test]
    fn a_good_spec_passes() {
        let spec = json!({"bundle": "baseline.tar", "mode": "Warn", "policies": ["a"],
            "overrides": [{"name": "a", "failurePolicy": "Ignore", "settings": {"x": [1]},
                "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}]}],
            "namespaceSelector": {"matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]},
            "matchConditions": [{"name": "c", "expression": "object != null"}]});
        assert_eq!(problems(spec), Vec::<String>::new());
    }

    #[test]
    fn verification_keys_must_be_pem_public_keys() {
        let key = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAENptdY/l3nB0yqkXLBWkZWQwo6+cu\nOSWS1X9vPavpiQOoTTGC0xX57OojUadxF1cdQmrsiReWg2Wn4FneJfa8xw==\n-----END PUBLIC KEY-----\n";
        let ok = json!({"bundle": "registry://127.0.0.1:5000/p:v1", "verification": {"publicKeys": [key]}});
        assert_eq!(problems(ok), Vec::<String>::new());
        let p =
            problems(json!({"bundle": "b.tar", "verification": {"publicKeys": [key, "hello"]}}));
        assert!(
            p.iter().any(
                |c| c.starts_with("spec.verification.publicKeys[1]: Invalid value:")
                    && c.ends_with("must be a PEM public key (-----BEGIN PUBLIC KEY-----)")
            ),
            "{p:?}"
        );
    }

    #[test]
    fn verification_keys_are_parsed_not_only_armoured() {
        let garbage = "-----BEGIN PUBLIC KEY-----\naGVsbG8gd29ybGQ=\n-----END PUBLIC KEY-----\n";
        let not_base64 = "-----BEGIN PUBLIC KEY-----\n!!!\n-----END PUBLIC KEY-----\n";
        let spec =
            json!({"bundle": "b.tar", "verification": {"publicKeys": [garbage, not_base64]}});
        let p = problems(spec);
        for i in 0..2 {
            let field = format!("spec.verification.publicKeys[{i}]: Invalid value: \"string\": must be an ECDSA P-256 public key");
            assert!(p.iter().any(|c| c.starts_with(&field)), "{p:?}");
        }
        assert_eq!(p.len(), 2, "{p:?}");
        let stored = json!({"metadata": {"name": "b"},
            "spec": {"bundle": "b.tar", "verification": {"publicKeys": [garbage]}}});
        let mut status_write = stored.clone();
        status_write["status"] = json!({"observedGeneration": 1});
        assert!(verification_keys(&status_write, Some(&stored)).is_empty());
    }

    #[test]
    fn bad_specs_are_refused_with_field_paths() {
        let p = problems(json!({"bundle": "../etc/x.tar", "mode": "Sometimes"}));
        assert!(p.contains(&"spec.mode: Unsupported value: \"Sometimes\": supported values: \"Enforce\", \"Warn\", \"Audit\"".to_string()), "{p:?}");
        assert!(
            p.iter()
                .any(|c| c.starts_with("spec.bundle: Invalid value:")
                    && c.ends_with("must not contain a '..' path segment")),
            "{p:?}"
        );
        let p = problems(json!({"policies": ["a", "a"],
            "overrides": [{"failurePolicy": "Never"}],
            "matchConditions": [{"name": "c", "expression": "true"}, {"name": "c"}]}));
        assert!(
            p.iter()
                .any(|c| c.starts_with("spec.matchConditions[1]: Duplicate value")),
            "{p:?}"
        );
        assert!(
            p.contains(&"spec.matchConditions[1].expression: Required value".to_string()),
            "{p:?}"
        );
        assert!(
            p.contains(&"spec.bundle: Required value".to_string()),
            "{p:?}"
        );
        assert!(
            p.contains(&"spec.policies[1]: Duplicate value: \"a\"".to_string()),
            "{p:?}"
        );
        assert!(
            p.contains(&"spec.overrides[0].name: Required value".to_string()),
            "{p:?}"
        );
        assert!(
            p.iter()
                .any(|c| c.starts_with("spec.overrides[0].failurePolicy: Unsupported value")),
            "{p:?}"
        );
    }
}
