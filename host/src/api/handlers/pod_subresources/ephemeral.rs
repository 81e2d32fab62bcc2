//! `pods/<name>/ephemeralcontainers` (what `kubectl debug` writes): GET
//! returns the pod; PUT and PATCH change only `spec.ephemeralContainers`,
//! checked as kube's ValidatePodEphemeralContainersUpdate: existing ones may
//! be neither changed nor removed, new ones need a unique name and an image
//! and may not set what only regular containers have.

use super::super::scoped_write::Desired;
use super::{pod, Call};
use crate::apimachinery::meta;
use crate::apimachinery::status::{ApiError, ApiResult, Cause};
use axum::body::Body;
use axum::response::Response;
use http::Method;
use serde_json::{json, Value};
use std::collections::HashSet;

/// Fields an ephemeral container may not set.
const FORBIDDEN: [&str; 6] = [
    "ports",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "resources",
];

pub async fn serve(call: &Call<'_>, raw: Body) -> ApiResult<Response> {
    let obj = match call.parts.method {
        Method::GET => pod(call).await?,
        _ => write(call, &Desired::read(call, raw).await?).await?,
    };
    super::answer_pod(call, obj).await
}

/// Stores the pod with the ephemeral containers the request gives it.
async fn write(call: &Call<'_>, desired: &Desired) -> ApiResult<Value> {
    let mut opts = call.query.write_options()?;
    let admission = call.admission("UPDATE", opts.dry_run);
    opts.admit = &admission;
    let change = |current: Value| {
        let wanted = desired.apply(call, &current)?;
        let mut next = current.clone();
        let mut list = wanted
            .pointer("/spec/ephemeralContainers")
            .cloned()
            .unwrap_or(json!([]));
        default_containers(&mut list);
        next["spec"]["ephemeralContainers"] = list;
        let causes = validate(&next, &current);
        if !causes.is_empty() {
            return Err(ApiError::invalid("", "Pod", call.name(), causes));
        }
        let m = meta::metadata_mut(&mut next);
        match meta::resource_version(&wanted) {
            Some(rv) => m.insert("resourceVersion".into(), json!(rv)),
            None => m.remove("resourceVersion"),
        };
        Ok(next)
    };
    let out = call
        .state
        .registry
        .guaranteed_update_own_rules(call.res, call.namespace(), call.name(), opts, &change)
        .await?;
    Ok(out.object().clone())
}

/// The defaults kube gives every container.
fn default_containers(list: &mut Value) {
    for c in list.as_array_mut().into_iter().flatten() {
        let Some(c) = c.as_object_mut() else { continue };
        let image = c.get("image").and_then(Value::as_str).unwrap_or_default();
        let latest = !image.contains('@')
            && image
                .rsplit('/')
                .next()
                .is_none_or(|last| !last.contains(':') || last.ends_with(":latest"));
        let policy = if latest { "Always" } else { "IfNotPresent" };
        c.entry("imagePullPolicy").or_insert(json!(policy));
        c.entry("terminationMessagePath")
            .or_insert(json!("/dev/termination-log"));
        c.entry("terminationMessagePolicy").or_insert(json!("File"));
    }
}

fn list<'a>(pod: &'a Value, key: &str) -> &'a [Value] {
    pod.pointer(&format!("/spec/{key}"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn name_of(c: &Value) -> &str {
    c.get("name").and_then(Value::as_str).unwrap_or_default()
}

/// kube's ValidatePodEphemeralContainersUpdate, for the ephemeral containers.
pub fn validate(new: &Value, old: &Value) -> Vec<Cause> {
    let path = "spec.ephemeralContainers";
    let mut causes = Vec::new();
    let news = list(new, "ephemeralContainers");
    for before in list(old, "ephemeralContainers") {
        let name = name_of(before);
        match news.iter().find(|c| name_of(c) == name) {
            None => causes.push(Cause::forbidden(
                path,
                &format!("existing ephemeral containers {name:?} may not be removed\n"),
            )),
            Some(now) if now != before => causes.push(Cause::forbidden(
                path,
                &format!("existing ephemeral containers {name:?} may not be changed\n"),
            )),
            Some(_) => {}
        }
    }
    let mut seen: HashSet<&str> = list(new, "containers")
        .iter()
        .chain(list(new, "initContainers"))
        .map(name_of)
        .collect();
    let targets: HashSet<&str> = list(new, "containers").iter().map(name_of).collect();
    for (i, c) in news.iter().enumerate() {
        let at = format!("{path}[{i}]");
        let name = name_of(c);
        if name.is_empty() {
            causes.push(Cause::required(&format!("{at}.name"), ""));
        } else if !seen.insert(name) {
            causes.push(Cause {
                reason: "FieldValueDuplicate",
                field: format!("{at}.name"),
                message: format!("Duplicate value: {}", json!(name)),
            });
        }
        if c.get("image")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            causes.push(Cause::required(&format!("{at}.image"), ""));
        }
        for field in FORBIDDEN {
            if c.get(field)
                .is_some_and(|v| !v.is_null() && v != &json!({}) && v != &json!([]))
            {
                causes.push(Cause::forbidden(
                    &format!("{at}.{field}"),
                    "cannot be set for an Ephemeral Container",
                ));
            }
        }
        if let Some(target) = c.get("targetContainerName").and_then(Value::as_str) {
            if !target.is_empty() && !targets.contains(target) {
                causes.push(Cause {
                    reason: "FieldValueNotFound",
                    field: format!("{at}.targetContainerName"),
                    message: format!("Not found: {}", json!(target)),
                });
            }
        }
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(ephemeral: Value) -> Value {
        json!({"spec": {"containers": [{"name": "app", "image": "nginx"}], "ephemeralContainers": ephemeral}})
    }

    #[test]
    fn new_ephemeral_containers_are_checked() {
        let old = pod(json!([]));
        let ok = pod(json!([{"name": "debug", "image": "busybox", "targetContainerName": "app"}]));
        assert!(validate(&ok, &old).is_empty());
        let bad = pod(
            json!([{"name": "app", "ports": [{"containerPort": 80}]}, {"name": "x", "image": "b", "targetContainerName": "nope"}]),
        );
        let fields: Vec<String> = validate(&bad, &old)
            .iter()
            .map(|c| c.field.clone())
            .collect();
        assert_eq!(
            fields,
            [
                "spec.ephemeralContainers[0].name",
                "spec.ephemeralContainers[0].image",
                "spec.ephemeralContainers[0].ports",
                "spec.ephemeralContainers[1].targetContainerName",
            ]
        );
    }

    #[test]
    fn existing_ephemeral_containers_stay_as_they_are() {
        let old = pod(json!([{"name": "debug", "image": "busybox"}]));
        let removed = validate(&pod(json!([])), &old);
        assert!(removed[0]
            .message
            .contains("existing ephemeral containers \"debug\" may not be removed"));
        let changed = validate(&pod(json!([{"name": "debug", "image": "alpine"}])), &old);
        assert!(changed[0].message.contains("may not be changed"));
    }
}
