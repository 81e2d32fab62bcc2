//! A native test double for the host (config, a fake object store, captured
//! logs) plus helpers to build requests, apply a response's patch and make a
//! strategy call, so a plugin's logic is unit-testable with plain `cargo test`.
//!
//! The fake is thread-local: each `#[test]` runs on its own thread, so tests
//! do not see each other's objects. Call [`reset`] first in each test.

use std::cell::RefCell;
use std::collections::BTreeMap;

use serde_json::Value;

use crate::host::Level;
use crate::patch::PatchOp;
use crate::plugin::{run_strategy, StrategyPlugin};
use crate::response::AdmissionResponse;
use crate::review::{AdmissionRequest, GroupVersionKind, GroupVersionResource, Operation};

#[derive(Default)]
struct FakeHost {
    config: String,
    /// (apiVersion, resource, namespace or "", name) → object.
    objects: BTreeMap<(String, String, String, String), Value>,
    logs: Vec<(Level, String)>,
    read_error: Option<String>,
    /// (apiVersion, resource) → number of changes so far (the watermark).
    changes: BTreeMap<(String, String), u64>,
}

thread_local! {
    static FAKE: RefCell<FakeHost> = RefCell::new(FakeHost::default());
}

fn with<R>(f: impl FnOnce(&mut FakeHost) -> R) -> R {
    FAKE.with(|h| f(&mut h.borrow_mut()))
}

/// Empties the store, the logs and the configuration ("{}").
pub fn reset() {
    with(|h| *h = FakeHost::default());
}

/// Sets the configuration the plugin reads with `host::config`.
pub fn set_config(config: Value) {
    set_config_text(&config.to_string());
}

/// Sets the raw configuration text (to test invalid configurations).
pub fn set_config_text(text: &str) {
    with(|h| h.config = text.to_string());
}

/// Stores an object under its `metadata.namespace` / `metadata.name`.
pub fn put_object(api_version: &str, resource: &str, object: Value) {
    let ns = crate::object::namespace(&object).to_string();
    let name = crate::object::name(&object).to_string();
    let key = (api_version.to_string(), resource.to_string(), ns, name);
    with(|h| {
        h.objects.insert(key, object);
        h.changed(api_version, resource);
    });
}

/// Removes an object (namespace "" for cluster-scoped ones); moves the
/// resource's watermark like a delete in the server.
pub fn remove_object(api_version: &str, resource: &str, namespace: &str, name: &str) {
    let key = (
        api_version.to_string(),
        resource.to_string(),
        namespace.to_string(),
        name.to_string(),
    );
    with(|h| {
        h.objects.remove(&key);
        h.changed(api_version, resource);
    });
}

impl FakeHost {
    fn changed(&mut self, api_version: &str, resource: &str) {
        *self
            .changes
            .entry((api_version.to_string(), resource.to_string()))
            .or_default() += 1;
    }
}

/// Makes every get/list fail with `message` (None restores normal reads).
pub fn fail_reads(message: Option<&str>) {
    with(|h| h.read_error = message.map(str::to_string));
}

/// The lines the plugin logged so far.
pub fn logs() -> Vec<(Level, String)> {
    with(|h| h.logs.clone())
}

/// A request for `object` at `api_version` ("v1", "apps/v1") / `resource`,
/// with `kind` and namespace; name taken from the object's metadata.
pub fn request(
    operation: Operation,
    api_version: &str,
    resource: &str,
    kind: &str,
    namespace: &str,
    object: Value,
) -> AdmissionRequest {
    let (group, version) = match api_version.split_once('/') {
        Some((g, v)) => (g.to_string(), v.to_string()),
        None => (String::new(), api_version.to_string()),
    };
    AdmissionRequest {
        uid: "test-uid".to_string(),
        kind: GroupVersionKind {
            group: group.clone(),
            version: version.clone(),
            kind: kind.to_string(),
        },
        resource: GroupVersionResource {
            group,
            version,
            resource: resource.to_string(),
        },
        name: crate::object::name(&object).to_string(),
        namespace: namespace.to_string(),
        operation,
        object: (operation != Operation::Delete).then_some(object),
        ..Default::default()
    }
}

/// Makes a strategy call as the host does (the call's JSON text through
/// `run_strategy`) and returns the answer parsed back into JSON.
pub fn call_strategy<P: StrategyPlugin>(call: &Value) -> Result<Value, String> {
    let answer = run_strategy::<P>(&call.to_string())?;
    serde_json::from_str(&answer).map_err(|e| format!("the answer is not JSON: {e}"))
}

/// Applies the response's patch (add/replace/remove) to `object`.
pub fn apply_patch(object: &Value, response: &AdmissionResponse) -> Result<Value, String> {
    let mut doc = object.clone();
    for op in &response.patch_ops {
        apply_op(&mut doc, op)?;
    }
    Ok(doc)
}

fn apply_op(doc: &mut Value, op: &PatchOp) -> Result<(), String> {
    let (parent_path, last) = split_pointer(op.path())?;
    let parent = doc
        .pointer_mut(&parent_path)
        .ok_or_else(|| format!("{}: parent does not exist", op.path()))?;
    match (op, parent) {
        (PatchOp::Add { value, .. }, Value::Array(items)) if last == "-" => {
            items.push(value.clone())
        }
        (PatchOp::Add { value, .. }, Value::Array(items)) => {
            let i = index(&last, items.len() + 1, op.path())?;
            items.insert(i, value.clone());
        }
        (PatchOp::Replace { value, .. }, Value::Array(items)) => {
            let i = index(&last, items.len(), op.path())?;
            items[i] = value.clone();
        }
        (PatchOp::Remove { .. }, Value::Array(items)) => {
            let i = index(&last, items.len(), op.path())?;
            items.remove(i);
        }
        (PatchOp::Add { value, .. }, Value::Object(map)) => {
            map.insert(last, value.clone());
        }
        (PatchOp::Replace { value, .. }, Value::Object(map)) if map.contains_key(&last) => {
            map.insert(last, value.clone());
        }
        (PatchOp::Remove { .. }, Value::Object(map)) if map.contains_key(&last) => {
            map.remove(&last);
        }
        _ => return Err(format!("{}: cannot apply", op.path())),
    }
    Ok(())
}

fn split_pointer(path: &str) -> Result<(String, String), String> {
    let (parent, last) = path
        .rsplit_once('/')
        .ok_or_else(|| format!("{path}: not a JSON pointer"))?;
    Ok((
        parent.to_string(),
        last.replace("~1", "/").replace("~0", "~"),
    ))
}

fn index(token: &str, bound: usize, path: &str) -> Result<usize, String> {
    match token.parse::<usize>() {
        Ok(i) if i < bound => Ok(i),
        _ => Err(format!("{path}: index out of range")),
    }
}

/// The native implementation behind `crate::host`.
pub(crate) mod host_impl {
    use super::*;

    pub fn log(level: Level, message: &str) {
        with(|h| h.logs.push((level, message.to_string())));
    }

    pub fn config() -> String {
        with(|h| h.config.clone())
    }

    pub fn watermark(api_version: &str, resource: &str) -> Result<String, String> {
        with(|h| {
            if let Some(e) = &h.read_error {
                return Err(e.clone());
            }
            let key = (api_version.to_string(), resource.to_string());
            Ok(h.changes.get(&key).copied().unwrap_or(0).to_string())
        })
    }

    pub fn get_object(
        api_version: &str,
        resource: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<String>, String> {
        with(|h| {
            if let Some(e) = &h.read_error {
                return Err(e.clone());
            }
            let key = (
                api_version.to_string(),
                resource.to_string(),
                namespace.unwrap_or("").to_string(),
                name.to_string(),
            );
            Ok(h.objects.get(&key).map(Value::to_string))
        })
    }

    pub fn list_objects(
        api_version: &str,
        resource: &str,
        namespace: Option<&str>,
        label_selector: Option<&str>,
        field_selector: Option<&str>,
    ) -> Result<String, String> {
        with(|h| {
            if let Some(e) = &h.read_error {
                return Err(e.clone());
            }
            let items: Vec<Value> = h
                .objects
                .iter()
                .filter(|((av, res, ns, _), _)| {
                    av == api_version && res == resource && namespace.is_none_or(|n| n == ns)
                })
                .filter(|(_, o)| label_selector.is_none_or(|s| labels_match(o, s)))
                .filter(|(_, o)| field_selector.is_none_or(|s| fields_match(o, s)))
                .map(|(_, o)| o.clone())
                .collect();
            Ok(
                serde_json::json!({"apiVersion": api_version, "kind": "List", "items": items})
                    .to_string(),
            )
        })
    }

    /// Equality (`a=b`, `a==b`), inequality (`a!=b`), existence (`a`, `!a`).
    fn labels_match(object: &Value, selector: &str) -> bool {
        let labels = crate::object::labels(object);
        requirements(selector).all(|req| match req {
            Req::Eq(k, v) => labels.get(k).is_some_and(|l| l == v),
            Req::Ne(k, v) => labels.get(k).is_none_or(|l| l != v),
            Req::Exists(k) => labels.contains_key(k),
            Req::Absent(k) => !labels.contains_key(k),
        })
    }

    /// Equality and inequality on dotted paths (`metadata.name=x`).
    fn fields_match(object: &Value, selector: &str) -> bool {
        let at = |k: &str| {
            let path: Vec<&str> = k.split('.').collect();
            crate::object::get_str(object, &path)
                .unwrap_or("")
                .to_string()
        };
        requirements(selector).all(|req| match req {
            Req::Eq(k, v) => at(k) == v,
            Req::Ne(k, v) => at(k) != v,
            Req::Exists(_) | Req::Absent(_) => true,
        })
    }

    enum Req<'a> {
        Eq(&'a str, &'a str),
        Ne(&'a str, &'a str),
        Exists(&'a str),
        Absent(&'a str),
    }

    fn requirements(selector: &str) -> impl Iterator<Item = Req<'_>> {
        selector
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| {
                if let Some((k, v)) = s.split_once("!=") {
                    Req::Ne(k.trim(), v.trim())
                } else if let Some((k, v)) = s.split_once("==").or_else(|| s.split_once('=')) {
                    Req::Eq(k.trim(), v.trim())
                } else if let Some(k) = s.strip_prefix('!') {
                    Req::Absent(k.trim())
                } else {
                    Req::Exists(s)
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn list_filters_by_namespace_and_selectors() {
        reset();
        put_object(
            "v1",
            "pods",
            json!({"metadata": {"name": "a", "namespace": "x", "labels": {"app": "web"}}}),
        );
        put_object(
            "v1",
            "pods",
            json!({"metadata": {"name": "b", "namespace": "x"}}),
        );
        put_object(
            "v1",
            "pods",
            json!({"metadata": {"name": "c", "namespace": "y", "labels": {"app": "web"}}}),
        );
        let list = |ns, l, f| {
            let text = host_impl::list_objects("v1", "pods", ns, l, f).unwrap();
            let v: Value = serde_json::from_str(&text).unwrap();
            let names: Vec<String> = v["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| crate::object::name(o).to_string())
                .collect();
            names
        };
        assert_eq!(list(Some("x"), None, None), ["a", "b"]);
        assert_eq!(list(None, Some("app=web"), None), ["a", "c"]);
        assert_eq!(list(None, Some("!app"), None), ["b"]);
        assert_eq!(list(None, None, Some("metadata.name!=a")), ["b", "c"]);
    }

    #[test]
    fn apply_patch_handles_arrays_objects_and_escapes() {
        let doc = json!({"metadata": {"labels": {}}, "spec": {"l": [1, 3]}});
        let resp = AdmissionResponse::allow().with_patch(
            crate::patch::JsonPatch::new()
                .add(["metadata", "labels", "a/b"], json!("v"))
                .add(["spec", "l", "1"], json!(2))
                .add(["spec", "l", "-"], json!(4))
                .replace(["spec", "l", "0"], json!(0))
                .ops(),
        );
        let out = apply_patch(&doc, &resp).unwrap();
        assert_eq!(out["metadata"]["labels"]["a/b"], "v");
        assert_eq!(out["spec"]["l"], json!([0, 2, 3, 4]));
        let bad = AdmissionResponse::allow().with_patch(vec![PatchOp::remove("/nope/x")]);
        assert!(apply_patch(&doc, &bad).is_err());
    }
}
