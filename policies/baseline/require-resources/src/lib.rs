//! Baseline policy `require-resources`: every container and init container
//! of a pod (or of a controller's pod template) sets CPU and memory
//! requests and limits, so the scheduler can place it and a node can bound
//! it. (Ephemeral containers cannot have resources.)

use capstan_plugin_sdk::{object, AdmissionPlugin, AdmissionRequest, AdmissionResponse};
use pod_policy::{pod_spec, verdict, Problem};

/// What every container must set.
const REQUIRED: [(&str, &str); 4] = [
    ("requests", "cpu"),
    ("requests", "memory"),
    ("limits", "cpu"),
    ("limits", "memory"),
];

/// The plugin.
pub struct RequireResources;

impl AdmissionPlugin for RequireResources {
    fn review(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
        let Some(spec) = pod_spec(req) else {
            return Ok(AdmissionResponse::allow());
        };
        let problems = spec
            .containers(&["initContainers", "containers"])
            .into_iter()
            .filter_map(|c| {
                let missing: Vec<String> = REQUIRED
                    .iter()
                    .filter(|(kind, resource)| {
                        object::get(c.value, &["resources", kind, resource]).is_none()
                    })
                    .map(|(kind, resource)| format!("resources.{kind}.{resource}"))
                    .collect();
                (!missing.is_empty()).then(|| {
                    Problem::new(
                        format!("{}.resources", c.path),
                        format!("container {:?} must set {}", c.name, missing.join(", ")),
                    )
                })
            })
            .collect();
        Ok(verdict(req, problems))
    }
}

capstan_plugin_sdk::admission_plugin!(RequireResources);

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::{json, testing, Operation, Value};

    fn review(spec: Value) -> AdmissionResponse {
        testing::reset();
        let obj = json!({"metadata": {"name": "web"}, "spec": spec});
        let req = testing::request(Operation::Create, "v1", "pods", "Pod", "ns", obj);
        RequireResources::review(&req).unwrap()
    }

    fn full() -> Value {
        json!({"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "1", "memory": "128Mi"}})
    }

    #[test]
    fn containers_with_requests_and_limits_are_allowed() {
        let r = review(
            json!({"containers": [{"name": "a", "resources": full()}], "initContainers": [{"name": "i", "resources": full()}]}),
        );
        assert!(r.allowed);
    }

    #[test]
    fn what_is_missing_is_named_per_container() {
        let r = review(json!({
            "initContainers": [{"name": "init"}],
            "containers": [{"name": "app", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1"}}}]
        }));
        assert_eq!(
            r.message(),
            "pods \"web\" is forbidden: container \"init\" must set resources.requests.cpu, resources.requests.memory, resources.limits.cpu, resources.limits.memory; \
             container \"app\" must set resources.limits.memory"
        );
    }

    #[test]
    fn deletes_are_not_checked() {
        testing::reset();
        let req = testing::request(Operation::Delete, "v1", "pods", "Pod", "ns", json!({}));
        assert!(RequireResources::review(&req).unwrap().allowed);
    }
}
