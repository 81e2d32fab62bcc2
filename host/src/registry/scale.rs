//! The scale subresource: an autoscaling/v1 Scale view of `spec.replicas`,
//! and admission of a scale write, which sees Scale objects as in kube.

use crate::apimachinery::meta;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::catalogue::ResourceInfo;
use crate::registry::Admit;
use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};

/// Admission of a write through the scale subresource: the chain sees (and
/// may patch) the Scale views of the new and old objects; a mutated Scale is
/// written back into the object.
pub struct ScaleAdmission<'a>(pub &'a dyn Admit, pub &'a ResourceInfo);

impl Admit for ScaleAdmission<'_> {
    fn mutate<'a>(&'a self, obj: Value, old: Option<&'a Value>) -> BoxFuture<'a, ApiResult<Value>> {
        Box::pin(async move {
            let res = self.1;
            let old_scale = old.map(|o| to_scale(res, o));
            let scale = self
                .0
                .mutate(to_scale(res, &obj), old_scale.as_ref())
                .await?;
            apply_scale(res, obj, &scale).map_err(ApiError::bad_request)
        })
    }

    fn validate<'a>(
        &'a self,
        obj: Option<&'a Value>,
        old: Option<&'a Value>,
    ) -> BoxFuture<'a, ApiResult<()>> {
        Box::pin(async move {
            let view = |o: &Value| to_scale(self.1, o);
            let (scale, old_scale) = (obj.map(view), old.map(view));
            self.0.validate(scale.as_ref(), old_scale.as_ref()).await
        })
    }
}

/// Where a resource keeps its replicas: JSON pointers to the desired and
/// current counts, and to the selector (an object for built-ins, a string
/// at a CRD's `labelSelectorPath`).
struct Paths {
    spec: String,
    status: String,
    selector: Option<String>,
    selector_is_text: bool,
}

fn paths(res: &ResourceInfo) -> Paths {
    match res.custom.as_ref().and_then(|c| c.scale.as_ref()) {
        Some(s) => Paths {
            spec: pointer(&s.spec_replicas),
            status: pointer(&s.status_replicas),
            selector: s.label_selector.as_deref().map(pointer),
            selector_is_text: true,
        },
        None => Paths {
            spec: "/spec/replicas".into(),
            status: "/status/replicas".into(),
            selector: Some("/spec/selector".into()),
            selector_is_text: false,
        },
    }
}

/// `.spec.replicas` as the JSON pointer `/spec/replicas`.
fn pointer(path: &str) -> String {
    path.trim_start_matches('.')
        .split('.')
        .map(|p| format!("/{}", p.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// The Scale object for a scalable resource.
pub fn to_scale(res: &ResourceInfo, obj: &Value) -> Value {
    let paths = paths(res);
    let m = meta::metadata(obj).cloned().unwrap_or_default();
    let mut md = Map::new();
    for f in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(v) = m.get(f) {
            md.insert(f.into(), v.clone());
        }
    }
    let replicas = obj
        .pointer(&paths.spec)
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let current = obj
        .pointer(&paths.status)
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let mut status = json!({"replicas": current});
    let selector = match (&paths.selector, paths.selector_is_text) {
        (Some(p), true) => obj.pointer(p).and_then(Value::as_str).map(String::from),
        (Some(p), false) => obj.pointer(p).map(selector_string),
        (None, _) => None,
    }
    .unwrap_or_default();
    if !selector.is_empty() {
        status["selector"] = json!(selector);
    }
    // Go's encoding of autoscaling/v1 Scale: `spec.replicas` is omitempty.
    let spec = match replicas {
        0 => json!({}),
        n => json!({"replicas": n}),
    };
    json!({"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": md, "spec": spec, "status": status})
}

/// Writes a Scale's desired replicas (and its resourceVersion, a precondition) into the object.
pub fn apply_scale(res: &ResourceInfo, mut obj: Value, scale: &Value) -> Result<Value, String> {
    let replicas = match scale.pointer("/spec/replicas") {
        None | Some(Value::Null) => 0,
        Some(v) => v.as_i64().ok_or("spec.replicas must be an integer")?,
    };
    if replicas < 0 {
        return Err(format!(
            "spec.replicas: Invalid value: {replicas}: must be greater than or equal to 0"
        ));
    }
    set_at(&mut obj, &paths(res).spec, json!(replicas));
    let m = meta::metadata_mut(&mut obj);
    match meta::resource_version(scale) {
        Some(rv) => m.insert("resourceVersion".into(), json!(rv)),
        None => m.remove("resourceVersion"),
    };
    Ok(obj)
}

/// Sets the value at a JSON pointer, creating the objects on the way.
fn set_at(obj: &mut Value, pointer: &str, value: Value) {
    let mut at = obj;
    let parts: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|p| p.replace("~1", "/").replace("~0", "~"))
        .collect();
    let Some((last, parents)) = parts.split_last() else {
        return;
    };
    for part in parents {
        if !at.get(part).is_some_and(Value::is_object) {
            at[part.as_str()] = json!({});
        }
        at = &mut at[part.as_str()];
    }
    at[last.as_str()] = value;
}

/// A selector as a string: a LabelSelector object or a plain map (ReplicationController).
pub fn selector_string(sel: &Value) -> String {
    let Some(o) = sel.as_object() else {
        return String::new();
    };
    if !o.contains_key("matchLabels") && !o.contains_key("matchExpressions") {
        return pairs(o);
    }
    let mut parts = Vec::new();
    if let Some(ml) = o.get("matchLabels").and_then(Value::as_object) {
        if !ml.is_empty() {
            parts.push(pairs(ml));
        }
    }
    for e in o
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        parts.push(expression(e));
    }
    parts.join(",")
}

fn pairs(m: &Map<String, Value>) -> String {
    let mut kv: Vec<String> = m
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    kv.sort();
    kv.join(",")
}

fn expression(e: &Value) -> String {
    let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
    let mut values: Vec<&str> = e
        .get("values")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    values.sort();
    match e
        .get("operator")
        .and_then(Value::as_str)
        .unwrap_or_default()
    {
        "In" => format!("{key} in ({})", values.join(",")),
        "NotIn" => format!("{key} notin ({})", values.join(",")),
        "Exists" => key.to_string(),
        "DoesNotExist" => format!("!{key}"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployments() -> ResourceInfo {
        let cat = crate::catalogue::Catalogue::builtin();
        cat.lookup("apps", "v1", "deployments").cloned().unwrap()
    }

    /// A CRD's scale subresource reads and writes the paths it names.
    #[test]
    fn custom_resources_scale_at_their_crds_paths() {
        let crd = json!({
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "kind": "Widget"},
                     "versions": [{"name": "v1", "served": true, "storage": true,
                        "subresources": {"scale": {"specReplicasPath": ".spec.size",
                            "statusReplicasPath": ".status.count", "labelSelectorPath": ".status.selector"}}}]},
            "status": {"conditions": [{"type": "Established", "status": "True"}]}
        });
        let res = crate::catalogue::custom::resource::entries(&crd, &Default::default())
            .remove(0)
            .info;
        let w = json!({"metadata": {"name": "w"}, "spec": {"size": 4}, "status": {"count": 1, "selector": "app=w"}});
        let s = to_scale(&res, &w);
        assert_eq!(s["spec"]["replicas"], 4);
        assert_eq!(s["status"], json!({"replicas": 1, "selector": "app=w"}));
        let empty = json!({"metadata": {"name": "w"}});
        let updated = apply_scale(&res, empty, &json!({"spec": {"replicas": 2}})).unwrap();
        assert_eq!(updated["spec"]["size"], 2);
    }

    #[test]
    fn scale_reflects_replicas_and_selector() {
        let d = json!({"metadata": {"name": "web", "resourceVersion": "7"}, "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}}, "status": {"replicas": 2}});
        let s = to_scale(&deployments(), &d);
        assert_eq!(s["spec"]["replicas"], 3);
        assert_eq!(s["status"]["replicas"], 2);
        assert_eq!(s["status"]["selector"], "app=web");
        let updated = apply_scale(&deployments(), d, &json!({"spec": {"replicas": 5}})).unwrap();
        assert_eq!(updated["spec"]["replicas"], 5);
        assert!(apply_scale(&deployments(), updated, &json!({"spec": {"replicas": -1}})).is_err());
    }

    /// Caps replicas at 3 and refuses Scales with 0 replicas, looking only at Scale objects.
    struct CapAtThree;

    impl Admit for CapAtThree {
        fn mutate<'a>(
            &'a self,
            obj: Value,
            _: Option<&'a Value>,
        ) -> BoxFuture<'a, ApiResult<Value>> {
            Box::pin(async move {
                assert_eq!(obj["kind"], "Scale");
                let mut scale = obj;
                if scale["spec"]["replicas"].as_i64().unwrap_or(0) > 3 {
                    scale["spec"]["replicas"] = json!(3);
                }
                Ok(scale)
            })
        }

        fn validate<'a>(
            &'a self,
            obj: Option<&'a Value>,
            _: Option<&'a Value>,
        ) -> BoxFuture<'a, ApiResult<()>> {
            Box::pin(async move {
                let scale = obj.cloned().unwrap_or_default();
                assert_eq!(scale["apiVersion"], "autoscaling/v1");
                // Zero replicas are left out, as Go encodes a Scale.
                match scale["spec"].get("replicas") {
                    None => Err(ApiError::forbidden("no zero")),
                    Some(_) => Ok(()),
                }
            })
        }
    }

    #[tokio::test]
    async fn scale_writes_are_admitted_as_scale_objects() {
        let res = deployments();
        let admission = ScaleAdmission(&CapAtThree, &res);
        let d = json!({"metadata": {"name": "web"}, "spec": {"replicas": 9, "template": {}}});
        let out = admission.mutate(d, None).await.unwrap();
        assert_eq!(out["spec"]["replicas"], 3);
        assert!(
            out["spec"]["template"].is_object(),
            "the rest of the object is kept"
        );
        assert!(admission.validate(Some(&out), None).await.is_ok());
        let zero = json!({"metadata": {"name": "web"}, "spec": {"replicas": 0}});
        assert_eq!(
            admission
                .validate(Some(&zero), None)
                .await
                .unwrap_err()
                .code,
            403
        );
    }
}
