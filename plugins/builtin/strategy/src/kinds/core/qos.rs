//! A pod's QoS class (`status.qosClass`), from its containers' requests and
//! limits: BestEffort without any, Guaranteed when every container limits
//! cpu and memory with requests equal to the limits (a missing request takes
//! the limit), Burstable otherwise.

use serde_json::{Map, Value};

/// The QoS class of `pod` ("BestEffort", "Burstable" or "Guaranteed"),
/// from its containers and init containers alike (kube's GetPodQOS).
pub fn class(pod: &Value) -> &'static str {
    let list = |at: &str| {
        pod.pointer(at)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    };
    let containers: Vec<&Value> = list("/spec/containers")
        .iter()
        .chain(list("/spec/initContainers"))
        .collect();
    let any = containers.iter().any(|c| has_resources(c));
    let guaranteed = !containers.is_empty() && containers.iter().all(|c| is_guaranteed(c));
    match (any, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}

fn resources<'a>(container: &'a Value, which: &str) -> Option<&'a Map<String, Value>> {
    container
        .get("resources")
        .and_then(|r| r.get(which))
        .and_then(Value::as_object)
}

/// Does the container request or limit anything?
fn has_resources(container: &Value) -> bool {
    ["limits", "requests"]
        .iter()
        .any(|which| resources(container, which).is_some_and(|m| !m.is_empty()))
}

/// Are cpu and memory both limited, with requests equal to the limits?
fn is_guaranteed(container: &Value) -> bool {
    let limits = resources(container, "limits");
    let requests = resources(container, "requests");
    ["cpu", "memory"].iter().all(|r| {
        let limit = limits.and_then(|l| l.get(*r));
        let request = requests.and_then(|q| q.get(*r)).or(limit);
        limit.is_some() && limit == request
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(containers: Value) -> Value {
        json!({"spec": {"containers": containers}})
    }

    #[test]
    fn qos_classes() {
        assert_eq!(class(&pod(json!([{"name": "a"}]))), "BestEffort");
        let limits = json!([{"resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]);
        assert_eq!(class(&pod(limits)), "Guaranteed");
        let requests = json!([{"resources": {"requests": {"cpu": "1"}}}]);
        assert_eq!(class(&pod(requests)), "Burstable");
    }

    #[test]
    fn requests_must_equal_limits_in_every_container() {
        let equal = json!({"cpu": "1", "memory": "1Gi"});
        let both = json!([{"resources": {"limits": equal, "requests": equal}}]);
        assert_eq!(class(&pod(both)), "Guaranteed");
        let lower = json!([{"resources": {"limits": equal,
            "requests": {"cpu": "500m", "memory": "1Gi"}}}]);
        assert_eq!(class(&pod(lower)), "Burstable");
        let one_unlimited = json!([{"resources": {"limits": equal}}, {"name": "b"}]);
        assert_eq!(class(&pod(one_unlimited)), "Burstable");
    }

    #[test]
    fn an_init_container_without_limits_makes_the_pod_burstable() {
        let limited = json!({"resources": {"limits": {"cpu": "1", "memory": "1Gi"}}});
        let mut p = pod(json!([limited]));
        assert_eq!(class(&p), "Guaranteed");
        p["spec"]["initContainers"] = json!([{"name": "init"}]);
        assert_eq!(class(&p), "Burstable");
    }

    #[test]
    fn no_containers_is_best_effort() {
        assert_eq!(class(&json!({"spec": {}})), "BestEffort");
        assert_eq!(class(&json!(null)), "BestEffort");
    }
}
