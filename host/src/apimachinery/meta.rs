//! ObjectMeta handling shared by every resource: system fields set on create,
//! fields a client may not change on update, and small accessors.

use serde_json::{json, Map, Value};

/// Now, as Kubernetes writes timestamps (RFC 3339, seconds, UTC).
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

pub fn metadata(obj: &Value) -> Option<&Map<String, Value>> {
    obj.get("metadata").and_then(Value::as_object)
}

/// The metadata map, created if absent (callers have checked `obj` is an object).
pub fn metadata_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.get("metadata").is_some_and(Value::is_object) {
        obj["metadata"] = json!({});
    }
    match obj.get_mut("metadata").and_then(Value::as_object_mut) {
        Some(m) => m,
        None => unreachable!("metadata was just made an object"),
    }
}

pub fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    metadata(obj)
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

pub fn name(obj: &Value) -> Option<&str> {
    meta_str(obj, "name")
}

pub fn resource_version(obj: &Value) -> Option<&str> {
    meta_str(obj, "resourceVersion")
}

pub fn finalizers(obj: &Value) -> Vec<String> {
    metadata(obj)
        .and_then(|m| m.get("finalizers"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The garbage collector's finalizers (kube's metav1.FinalizerDeleteDependents
/// and metav1.FinalizerOrphanDependents).
pub const FOREGROUND_FINALIZER: &str = "foregroundDeletion";
pub const ORPHAN_FINALIZER: &str = "orphan";

/// Adds `finalizer` to the metadata's finalizers unless it is there.
pub fn add_finalizer(m: &mut Map<String, Value>, finalizer: &str) {
    let list = m.entry("finalizers").or_insert_with(|| json!([]));
    if let Some(list) = list.as_array_mut() {
        if !list.iter().any(|f| f == finalizer) {
            list.push(json!(finalizer));
        }
    }
}

/// Removes `finalizer` from the object's finalizers.
pub fn remove_finalizer(obj: &mut Value, finalizer: &str) {
    if let Some(list) = metadata_mut(obj)
        .get_mut("finalizers")
        .and_then(Value::as_array_mut)
    {
        list.retain(|f| f != finalizer);
    }
}

pub fn is_terminating(obj: &Value) -> bool {
    meta_str(obj, "deletionTimestamp").is_some()
}

/// Fields the server owns on create: identity, timestamps, resourceVersion.
pub fn set_create_fields(obj: &mut Value, namespace: Option<&str>) {
    let m = metadata_mut(obj);
    m.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
    m.insert("creationTimestamp".into(), json!(now()));
    for f in [
        "resourceVersion",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
    ] {
        m.remove(f);
    }
    match namespace {
        Some(ns) => m.insert("namespace".into(), json!(ns)),
        None => m.remove("namespace"),
    };
}

/// Carries over what a client may not change on update: uid, creation and
/// deletion timestamps, generation (recomputed later), and, unless the
/// write's field manager decided them (`keep_managed` false), managedFields.
pub fn keep_system_fields(new: &mut Value, old: &Value, keep_managed: bool) {
    let old_meta = metadata(old).cloned().unwrap_or_default();
    let m = metadata_mut(new);
    for f in [
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
        "namespace",
    ] {
        match old_meta.get(f) {
            Some(v) => m.insert(f.into(), v.clone()),
            None => m.remove(f),
        };
    }
    m.remove("selfLink");
    // A write that does not mention managedFields keeps them (kube's field
    // manager); an explicit list, even empty, replaces them.
    if keep_managed && !m.contains_key("managedFields") {
        if let Some(managed) = old_meta.get("managedFields") {
            m.insert("managedFields".into(), managed.clone());
        }
    }
}
