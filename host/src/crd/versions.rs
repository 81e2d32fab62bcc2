//! A custom resource's versions: objects are stored in the CRD's storage
//! version and shown in the version a request names. Between versions with
//! the `None` strategy only `apiVersion` changes.

use serde_json::{json, Value};

use crate::catalogue::ResourceInfo;

/// Rewrites a stored object into `res`'s version (no-op for built-ins).
pub fn view(res: &ResourceInfo, obj: &mut Value) {
    if res.custom.is_some() {
        set_api_version(obj, &res.api_version());
    }
}

/// The object as it is stored: in the CRD's storage version. `None` when it
/// already is (or `res` is a built-in), so callers need no copy.
pub fn stored(res: &ResourceInfo, obj: &Value) -> Option<Value> {
    let custom = res.custom.as_ref()?;
    let storage = custom.storage_api_version(&res.group);
    if obj.get("apiVersion").and_then(Value::as_str) == Some(storage.as_str()) {
        return None;
    }
    let mut copy = obj.clone();
    set_api_version(&mut copy, &storage);
    Some(copy)
}

fn set_api_version(obj: &mut Value, api_version: &str) {
    if let Some(o) = obj.as_object_mut() {
        o.insert("apiVersion".into(), json!(api_version));
    }
}
