//! exec, attach, portforward and log: kube-apiserver checks the container and
//! the pod's node, then proxies to that node's kubelet. Capstan has no
//! kubelets to proxy to, so these give kube's answers up to that point.

use super::{pod, Call};
use crate::apimachinery::status::{ApiError, ApiResult};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// Names of a container list of the pod spec.
fn names<'a>(spec: &'a Value, key: &str) -> Vec<&'a str> {
    spec.get(key)
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|c| c.get("name").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default()
}

/// kube's validateContainer: the named container must exist; without a
/// name the pod must have exactly one container.
pub fn validate_container(pod: &Value, name: &str, container: Option<&str>) -> ApiResult<String> {
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    let containers = names(spec, "containers");
    // kube visits init containers, containers, then ephemeral containers.
    let all: Vec<&str> = [
        names(spec, "initContainers"),
        containers.clone(),
        names(spec, "ephemeralContainers"),
    ]
    .concat();
    match container.filter(|c| !c.is_empty()) {
        Some(c) if all.contains(&c) => Ok(c.to_string()),
        Some(c) => Err(ApiError::bad_request(format!(
            "container {c} is not valid for pod {name}"
        ))),
        None => match containers.as_slice() {
            [only] => Ok(only.to_string()),
            [] => Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {name}"
            ))),
            _ => Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {name}, choose one of: [{}]",
                all.join(" ")
            ))),
        },
    }
}

fn node_name(pod: &Value) -> Option<&str> {
    pod.pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
}

fn no_host(name: &str) -> ApiError {
    ApiError::bad_request(format!("pod {name} does not have a host assigned"))
}

/// What kube answers once it tries the node's kubelet: the node must exist
/// and have an address; then it dials the kubelet, and Capstan, which has no
/// kubelet client credentials, goes no further than that dial. `what` is
/// how kube words the attempt (`error dialing backend` or the log GET).
async fn kubelet_unreachable(
    call: &Call<'_>,
    node: &str,
    what: impl Fn(&str) -> String,
) -> ApiError {
    use crate::api::handlers::proxy::{forward, location};
    let Some(nodes) = call.state.catalogue.builtin().lookup("", "v1", "nodes") else {
        return ApiError::internal("nodes are not served");
    };
    let obj = match call.state.registry.get(nodes, None, node).await {
        Ok(obj) => obj,
        Err(e) => return e,
    };
    let host = match location::preferred_address(&obj) {
        Ok(host) => host,
        Err(e) => return ApiError::unknown(e),
    };
    let addr = forward::join_host_port(&host, location::kubelet_port(&obj));
    match forward::dial(&addr).await {
        Err(e) => ApiError::unknown(format!("{}: {e}", what(&addr))),
        Ok(_) => ApiError::unknown(format!(
            "{}: Capstan has no kubelet client credentials",
            what(&addr)
        )),
    }
}

fn dialing(_: &str) -> String {
    "error dialing backend".to_string()
}

/// exec and attach (`?container=`): container check, then the node check.
pub async fn container_stream(call: &Call<'_>) -> ApiResult<Response> {
    let pod = pod(call).await?;
    validate_container(&pod, call.name(), call.query.get("container"))?;
    match node_name(&pod) {
        None => Err(no_host(call.name())),
        Some(node) => Err(kubelet_unreachable(call, node, dialing).await),
    }
}

/// portforward: only the node check.
pub async fn port_forward(call: &Call<'_>) -> ApiResult<Response> {
    let pod = pod(call).await?;
    match node_name(&pod) {
        None => Err(no_host(call.name())),
        Some(node) => Err(kubelet_unreachable(call, node, dialing).await),
    }
}

/// log: the container check; a pod without a node has no logs yet, which
/// kube answers with an empty 204 No Content.
pub async fn log(call: &Call<'_>) -> ApiResult<Response> {
    let pod = pod(call).await?;
    let container = validate_container(&pod, call.name(), call.query.get("container"))?;
    let ns = call.namespace().unwrap_or_default();
    let path = format!("/containerLogs/{ns}/{}/{container}", call.name());
    match node_name(&pod) {
        None => Ok(http::StatusCode::NO_CONTENT.into_response()),
        Some(node) => {
            let get = |addr: &str| format!("Get \"https://{addr}{path}\"");
            Err(kubelet_unreachable(call, node, get).await)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn containers_are_checked_as_kube_does() {
        let pod = json!({"spec": {
            "initContainers": [{"name": "init"}],
            "containers": [{"name": "a"}, {"name": "b"}],
        }});
        assert_eq!(validate_container(&pod, "p", Some("b")).unwrap(), "b");
        assert_eq!(validate_container(&pod, "p", Some("init")).unwrap(), "init");
        let e = validate_container(&pod, "p", Some("zz")).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (400, "container zz is not valid for pod p")
        );
        let e = validate_container(&pod, "p", None).unwrap_err();
        assert_eq!(
            e.message,
            "a container name must be specified for pod p, choose one of: [init a b]"
        );
        let single = json!({"spec": {"containers": [{"name": "only"}]}});
        assert_eq!(validate_container(&single, "p", None).unwrap(), "only");
        let none = json!({"spec": {}});
        let e = validate_container(&none, "p", None).unwrap_err();
        assert_eq!(e.message, "a container name must be specified for pod p");
    }
}
