//! Baseline policy `disallow-host-namespaces-and-paths`: a pod (or a
//! controller's pod template) shares none of the node's namespaces
//! (`hostNetwork`, `hostPID`, `hostIPC`), mounts no `hostPath` volume and
//! runs no privileged container (any of its containers, init containers or
//! ephemeral containers).

use capstan_plugin_sdk::{object, AdmissionPlugin, AdmissionRequest, AdmissionResponse, Value};
use pod_policy::{pod_spec, verdict, Problem};

/// The plugin.
pub struct DisallowHost;

impl AdmissionPlugin for DisallowHost {
    fn review(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
        let Some(spec) = pod_spec(req) else {
            return Ok(AdmissionResponse::allow());
        };
        let mut problems: Vec<Problem> = ["hostNetwork", "hostPID", "hostIPC"]
            .into_iter()
            .filter(|field| spec.spec.get(*field) == Some(&Value::Bool(true)))
            .map(|field| {
                Problem::new(
                    format!("{}.{field}", spec.path),
                    format!("{field} must not be true"),
                )
            })
            .collect();
        for (i, volume) in object::array(spec.spec, &["volumes"]).iter().enumerate() {
            if let Some(host_path) = volume.get("hostPath") {
                let name = object::get_str(volume, &["name"]).unwrap_or("");
                let path = object::get_str(host_path, &["path"]).unwrap_or("");
                problems.push(Problem::new(
                    format!("{}.volumes[{i}].hostPath", spec.path),
                    format!("volume {name:?} must not be a hostPath volume (path {path:?})"),
                ));
            }
        }
        for c in spec.all_containers() {
            if object::get(c.value, &["securityContext", "privileged"]) == Some(&Value::Bool(true))
            {
                problems.push(Problem::new(
                    format!("{}.securityContext.privileged", c.path),
                    format!("container {:?} must not be privileged", c.name),
                ));
            }
        }
        Ok(verdict(req, problems))
    }
}

capstan_plugin_sdk::admission_plugin!(DisallowHost);

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::{json, testing, Operation};

    fn review(resource: &str, api_version: &str, obj: Value) -> AdmissionResponse {
        testing::reset();
        let req = testing::request(Operation::Create, api_version, resource, "X", "ns", obj);
        DisallowHost::review(&req).unwrap()
    }

    #[test]
    fn an_ordinary_pod_is_allowed() {
        let pod = json!({"metadata": {"name": "web"}, "spec": {"hostNetwork": false,
            "volumes": [{"name": "tmp", "emptyDir": {}}],
            "containers": [{"name": "a", "securityContext": {"privileged": false}}]}});
        assert!(review("pods", "v1", pod).allowed);
    }

    #[test]
    fn every_host_access_is_named() {
        let pod = json!({"metadata": {"name": "web"}, "spec": {"hostNetwork": true, "hostPID": true,
            "volumes": [{"name": "root", "hostPath": {"path": "/"}}],
            "ephemeralContainers": [{"name": "debug", "securityContext": {"privileged": true}}]}});
        let r = review("pods", "v1", pod);
        assert_eq!(
            r.message(),
            "pods \"web\" is forbidden: hostNetwork must not be true; hostPID must not be true; \
             volume \"root\" must not be a hostPath volume (path \"/\"); container \"debug\" must not be privileged"
        );
    }

    #[test]
    fn daemonset_templates_are_checked() {
        let ds = json!({"metadata": {"name": "agent"}, "spec": {"template": {"spec": {"hostIPC": true}}}});
        let r = review("daemonsets", "apps/v1", ds);
        assert_eq!(
            r.message(),
            "daemonsets.apps \"agent\" is forbidden: hostIPC must not be true"
        );
        let causes = r.status.unwrap().details.unwrap().causes;
        assert_eq!(causes[0].field, "spec.template.spec.hostIPC");
    }
}
