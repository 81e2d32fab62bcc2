//! The core kinds' own PrepareForCreate and PrepareForUpdate (kube's
//! `pkg/registry/core/<kind>/strategy.go`) beyond the status reset and
//! generation every kind gets: a pod's (`pods`, `disabled_fields`), a
//! Service's type change (`services`), and here namespaces' finalizers,
//! service accounts' secret references and claims' data sources.

pub(crate) mod disabled_fields;
pub(crate) mod pods;
pub(crate) mod services;

use serde_json::{json, Value};

use crate::json::{child_mut, ensure_object, items_mut};

/// A new namespace is finalized by `kubernetes` (added after the client's).
pub(crate) fn namespace_finalizer(namespace: &mut Value) {
    let Some(spec) = ensure_object(namespace, "spec") else {
        return;
    };
    let kubernetes = json!("kubernetes");
    match spec.get_mut("finalizers").and_then(Value::as_array_mut) {
        Some(list) if list.contains(&kubernetes) => {}
        Some(list) => list.push(kubernetes),
        None => spec["finalizers"] = json!([kubernetes]),
    }
}

/// Only the finalize subresource changes a namespace's finalizers.
pub(crate) fn keep_namespace_finalizers(namespace: &mut Value, old: &Value) {
    let stored = old.pointer("/spec/finalizers").cloned();
    let Some(spec) = ensure_object(namespace, "spec").and_then(Value::as_object_mut) else {
        return;
    };
    match stored {
        Some(finalizers) => spec.insert("finalizers".into(), finalizers),
        None => spec.remove("finalizers"),
    };
}

/// A ServiceAccount's secrets are references by name only.
pub(crate) fn secret_references(account: &mut Value) {
    for secret in items_mut(account, "secrets") {
        let name = secret.get("name").cloned();
        *secret = match name {
            Some(name) => json!({ "name": name }),
            None => json!({}),
        };
    }
}

/// A claim's `dataSource` and `dataSourceRef` mirror each other; without a
/// `dataSourceRef`, a `dataSource` other than a claim or a snapshot is
/// dropped (kube's backwards compatibility).
pub(crate) fn claim_data_sources(claim: &mut Value) {
    normalize_data_sources(claim, false);
}

pub(crate) fn claim_data_sources_on_update(claim: &mut Value, old: &Value) {
    let in_use = ["dataSource", "dataSourceRef"].iter().any(|key| {
        old.pointer(&format!("/spec/{key}"))
            .is_some_and(|v| !v.is_null())
    });
    normalize_data_sources(claim, in_use);
}

fn normalize_data_sources(claim: &mut Value, in_use: bool) {
    let Some(spec) = child_mut(claim, "spec") else {
        return;
    };
    let set = |key: &str, spec: &Value| spec.get(key).is_some_and(|v| !v.is_null());
    if !in_use && !set("dataSourceRef", spec) && set("dataSource", spec) {
        let source = &spec["dataSource"];
        let group = source.get("apiGroup").and_then(Value::as_str).unwrap_or("");
        let kind = source.get("kind").and_then(Value::as_str).unwrap_or("");
        let known = (kind, group) == ("PersistentVolumeClaim", "")
            || (kind, group) == ("VolumeSnapshot", "snapshot.storage.k8s.io");
        if !known {
            if let Some(fields) = spec.as_object_mut() {
                fields.remove("dataSource");
            }
        }
    }
    let (source, reference) = (set("dataSource", spec), set("dataSourceRef", spec));
    if source && !reference {
        spec["dataSourceRef"] = local_reference(&spec["dataSource"]);
    } else if reference && !source {
        let namespace = spec
            .pointer("/dataSourceRef/namespace")
            .and_then(Value::as_str);
        if namespace.is_none_or(str::is_empty) {
            spec["dataSource"] = local_reference(&spec["dataSourceRef"]);
        }
    }
}

/// The apiGroup (when set), kind and name of a reference.
fn local_reference(reference: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for key in ["apiGroup", "kind", "name"] {
        if let Some(value) = reference.get(key).filter(|v| !v.is_null()) {
            out.insert(key.into(), value.clone());
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_are_finalized_by_kubernetes() {
        let mut ns = json!({"metadata": {"name": "a"}});
        namespace_finalizer(&mut ns);
        assert_eq!(ns["spec"], json!({"finalizers": ["kubernetes"]}));
        let mut own = json!({"spec": {"finalizers": ["example.com/x"]}});
        namespace_finalizer(&mut own);
        assert_eq!(
            own["spec"]["finalizers"],
            json!(["example.com/x", "kubernetes"])
        );
        let mut changed = json!({"spec": {"finalizers": []}});
        keep_namespace_finalizers(&mut changed, &ns);
        assert_eq!(changed["spec"]["finalizers"], json!(["kubernetes"]));
    }

    #[test]
    fn service_account_secrets_are_names() {
        let mut sa = json!({"secrets": [{"name": "t", "namespace": "x", "uid": "u"}]});
        secret_references(&mut sa);
        assert_eq!(sa["secrets"], json!([{"name": "t"}]));
    }

    #[test]
    fn claim_data_sources_mirror_each_other() {
        let mut claim =
            json!({"spec": {"dataSource": {"kind": "PersistentVolumeClaim", "name": "src"}}});
        claim_data_sources(&mut claim);
        assert_eq!(
            claim["spec"]["dataSourceRef"],
            json!({"kind": "PersistentVolumeClaim", "name": "src"})
        );
        let mut by_ref =
            json!({"spec": {"dataSourceRef": {"apiGroup": "x.io", "kind": "K", "name": "n"}}});
        claim_data_sources(&mut by_ref);
        assert_eq!(
            by_ref["spec"]["dataSource"],
            json!({"apiGroup": "x.io", "kind": "K", "name": "n"})
        );
        let mut unknown =
            json!({"spec": {"dataSource": {"apiGroup": "x.io", "kind": "K", "name": "n"}}});
        claim_data_sources(&mut unknown);
        assert_eq!(unknown["spec"], json!({}));
    }
}
