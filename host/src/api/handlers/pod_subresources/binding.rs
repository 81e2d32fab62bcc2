//! `pods/<name>/binding` (kube's BindingREST): assigns an unbound pod to a
//! node, sets the PodScheduled condition, and answers Status Success (201).

use super::{check_body_name, created_success, decode_body, Call};
use crate::apimachinery::meta;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::catalogue::ResourceInfo;
use axum::body::Body;
use axum::response::Response;
use serde_json::{json, Value};

/// kube's ValidatePodBinding, whose aggregate error kube returns as an
/// internal error (500 without a reason).
pub fn validate(binding: &Value) -> ApiResult<String> {
    let kind = binding
        .pointer("/target/kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let node = binding
        .pointer("/target/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut errs = Vec::new();
    if !kind.is_empty() && kind != "Node" {
        errs.push(format!(
            "target.kind: Unsupported value: {kind:?}: supported values: \"Node\", \"<empty>\""
        ));
    }
    if node.is_empty() {
        errs.push("target.name: Required value".to_string());
    }
    match errs.as_slice() {
        [] => Ok(node.to_string()),
        [one] => Err(ApiError::unknown(one.clone())),
        _ => Err(ApiError::unknown(format!("[{}]", errs.join(", ")))),
    }
}

/// The pod bound to `node`, or why it cannot be (kube's wording).
pub fn bind(mut pod: Value, node: &str, annotations: Option<&Value>) -> Result<Value, String> {
    let name = meta::name(&pod).unwrap_or_default().to_string();
    if meta::is_terminating(&pod) {
        return Err(format!(
            "pod {name} is being deleted, cannot be assigned to a host"
        ));
    }
    if let Some(bound) = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    {
        return Err(format!("pod {name} is already assigned to node {bound:?}"));
    }
    if pod
        .pointer("/spec/schedulingGates")
        .and_then(Value::as_array)
        .is_some_and(|g| !g.is_empty())
    {
        return Err(format!("pod {name} has non-empty .spec.schedulingGates"));
    }
    pod["spec"]["nodeName"] = json!(node);
    if let Some(Value::Object(extra)) = annotations {
        let m = meta::metadata_mut(&mut pod);
        let target = m.entry("annotations").or_insert_with(|| json!({}));
        for (k, v) in extra {
            target[k] = v.clone();
        }
    }
    set_scheduled(&mut pod);
    Ok(pod)
}

/// PodScheduled=True, with a new transition time when it changes.
fn set_scheduled(pod: &mut Value) {
    let conditions = pod["status"]
        .as_object_mut()
        .map(|s| s.entry("conditions").or_insert_with(|| json!([])));
    let Some(Value::Array(list)) = conditions else {
        pod["status"] = json!({"conditions": []});
        return set_scheduled(pod);
    };
    let scheduled = json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": meta::now()});
    match list.iter_mut().find(|c| c["type"] == "PodScheduled") {
        Some(c) if c["status"] == "True" => {}
        Some(c) => *c = scheduled,
        None => list.push(scheduled),
    }
}

pub async fn create(call: &Call<'_>, raw: Body) -> ApiResult<Response> {
    let binding = decode_body(call, raw).await?;
    check_body_name(call, &binding, "Binding")?;
    bind_pod(call, call.res, call.name(), &binding).await
}

/// `POST namespaces/<ns>/bindings`: binds the pod the Binding names.
pub async fn create_named_in_body(call: &Call<'_>, raw: Body) -> ApiResult<Response> {
    let binding = decode_body(call, raw).await?;
    let pods = call
        .cat
        .lookup("", "v1", "pods")
        .ok_or_else(|| ApiError::internal("pods are not served"))?;
    let name = meta::name(&binding).unwrap_or_default();
    bind_pod(call, pods, name, &binding).await
}

/// Binds the pod `name` of `pods` as `binding` asks (201 Status Success).
async fn bind_pod(
    call: &Call<'_>,
    pods: &ResourceInfo,
    name: &str,
    binding: &Value,
) -> ApiResult<Response> {
    let node = validate(binding)?;
    let opts = call.query.write_options()?;
    let annotations = binding.pointer("/metadata/annotations");
    let change = |current: Value| {
        bind(current, &node, annotations)
            .map_err(|why| ApiError::conflict("", "pods/binding", name, &why))
    };
    call.state
        .registry
        .guaranteed_update_own_rules(pods, call.namespace(), name, opts, &change)
        .await?;
    Ok(created_success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binding_sets_the_node_once() {
        let pod = json!({"metadata": {"name": "p"}, "spec": {"containers": []}, "status": {"phase": "Pending"}});
        let bound = bind(pod, "n1", Some(&json!({"a": "b"}))).unwrap();
        assert_eq!(bound["spec"]["nodeName"], "n1");
        assert_eq!(bound["metadata"]["annotations"]["a"], "b");
        assert_eq!(bound["status"]["conditions"][0]["type"], "PodScheduled");
        assert_eq!(
            bind(bound, "n2", None).unwrap_err(),
            "pod p is already assigned to node \"n1\""
        );
    }

    #[test]
    fn a_binding_needs_a_node_target() {
        assert_eq!(validate(&json!({"target": {"name": "n1"}})).unwrap(), "n1");
        let e = validate(&json!({"target": {"kind": "Pod"}})).unwrap_err();
        assert_eq!(e.code, 500);
        assert!(
            e.message.contains("target.name: Required value"),
            "{}",
            e.message
        );
    }
}
