//! The scale subresource: an autoscaling/v1 Scale view of `spec.replicas`,
//! and admission of a scale write, which sees Scale objects as in kube.

use super::meta;
use crate::admission::Admit;
use crate::status::{ApiError, ApiResult};
use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};

/// Admission of a write through the scale subresource: the chain sees (and
/// may patch) the Scale views of the new and old objects; a mutated Scale is
/// written back into the object.
pub struct ScaleAdmission<'a>(pub &'a dyn Admit);

impl Admit for ScaleAdmission<'_> {
    fn mutate<'a>(&'a self, obj: Value, old: Option<&'a Value>) -> BoxFuture<'a, ApiResult<Value>> {
        Box::pin(async move {
            let old_scale = old.map(to_scale);
            let scale = self.0.mutate(to_scale(&obj), old_scale.as_ref()).await?;
            apply_scale(obj, &scale).map_err(ApiError::bad_request)
        })
    }

    fn validate<'a>(
        &'a self,
        obj: Option<&'a Value>,
        old: Option<&'a Value>,
    ) -> BoxFuture<'a, ApiResult<()>> {
        Box::pin(async move {
            let (scale, old_scale) = (obj.map(to_scale), old.map(to_scale));
            self.0.validate(scale.as_ref(), old_scale.as_ref()).await
        })
    }
}

/// The Scale object for a scalable resource.
pub fn to_scale(obj: &Value) -> Value {
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
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let current = obj
        .pointer("/status/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let mut status = json!({"replicas": current});
    let selector = obj
        .pointer("/spec/selector")
        .map(selector_string)
        .unwrap_or_default();
    if !selector.is_empty() {
        status["selector"] = json!(selector);
    }
    json!({"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": md, "spec": {"replicas": replicas}, "status": status})
}

/// Writes a Scale's desired replicas (and its resourceVersion, a precondition) into the object.
pub fn apply_scale(mut obj: Value, scale: &Value) -> Result<Value, String> {
    let replicas = match scale.pointer("/spec/replicas") {
        None | Some(Value::Null) => 0,
        Some(v) => v.as_i64().ok_or("spec.replicas must be an integer")?,
    };
    if replicas < 0 {
        return Err(format!(
            "spec.replicas: Invalid value: {replicas}: must be greater than or equal to 0"
        ));
    }
    obj["spec"]["replicas"] = json!(replicas);
    let m = meta::metadata_mut(&mut obj);
    match meta::resource_version(scale) {
        Some(rv) => m.insert("resourceVersion".into(), json!(rv)),
        None => m.remove("resourceVersion"),
    };
    Ok(obj)
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

    #[test]
    fn scale_reflects_replicas_and_selector() {
        let d = json!({"metadata": {"name": "web", "resourceVersion": "7"}, "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}}, "status": {"replicas": 2}});
        let s = to_scale(&d);
        assert_eq!(s["spec"]["replicas"], 3);
        assert_eq!(s["status"]["replicas"], 2);
        assert_eq!(s["status"]["selector"], "app=web");
        let updated = apply_scale(d, &json!({"spec": {"replicas": 5}})).unwrap();
        assert_eq!(updated["spec"]["replicas"], 5);
        assert!(apply_scale(updated, &json!({"spec": {"replicas": -1}})).is_err());
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
                match scale["spec"]["replicas"].as_i64() {
                    Some(0) => Err(ApiError::forbidden("no zero")),
                    _ => Ok(()),
                }
            })
        }
    }

    #[tokio::test]
    async fn scale_writes_are_admitted_as_scale_objects() {
        let admission = ScaleAdmission(&CapAtThree);
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
