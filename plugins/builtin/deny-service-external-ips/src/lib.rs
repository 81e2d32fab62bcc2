//! Built-in admission plugin `deny-service-external-ips`, kube-apiserver's
//! DenyServiceExternalIPs: a Service may not gain `spec.externalIPs` it did
//! not already have (CVE-2020-8554); removing or keeping existing ones is fine.

use capstan_plugin_sdk::{object, AdmissionPlugin, AdmissionRequest, AdmissionResponse, Value};

/// kube's exact wording.
const DENIED: &str = "Use of external IPs is denied by admission control";

/// The plugin.
pub struct DenyServiceExternalIps;

impl AdmissionPlugin for DenyServiceExternalIps {
    fn review(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
        let Some(service) = req.written_object("", "services") else {
            return Ok(AdmissionResponse::allow());
        };
        if is_subset(service, req.old_object.as_ref()) {
            return Ok(AdmissionResponse::allow());
        }
        Ok(AdmissionResponse::forbidden(req, DENIED))
    }
}

fn external_ips(service: &Value) -> Vec<&str> {
    object::array(service, &["spec", "externalIPs"])
        .iter()
        .filter_map(Value::as_str)
        .collect()
}

/// Every new external IP was already on the old object.
fn is_subset(service: &Value, old: Option<&Value>) -> bool {
    let new_ips = external_ips(service);
    if new_ips.is_empty() {
        return true;
    }
    let Some(old) = old else { return false };
    let old_ips = external_ips(old);
    new_ips.iter().all(|ip| old_ips.contains(ip))
}

capstan_plugin_sdk::admission_plugin!(DenyServiceExternalIps);

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::Operation;
    use capstan_plugin_sdk::{json, testing};

    fn svc(ips: &[&str]) -> Value {
        json!({"metadata": {"name": "web"}, "spec": {"externalIPs": ips}})
    }

    #[test]
    fn create_with_external_ips_is_forbidden() {
        let req = testing::request(
            Operation::Create,
            "v1",
            "services",
            "Service",
            "ns",
            svc(&["1.2.3.4"]),
        );
        let r = DenyServiceExternalIps::review(&req).unwrap();
        assert_eq!(r.code(), 403);
        assert_eq!(
            r.message(),
            "services \"web\" is forbidden: Use of external IPs is denied by admission control"
        );
    }

    #[test]
    fn create_without_external_ips_is_allowed() {
        let req = testing::request(
            Operation::Create,
            "v1",
            "services",
            "Service",
            "ns",
            svc(&[]),
        );
        assert!(DenyServiceExternalIps::review(&req).unwrap().allowed);
    }

    #[test]
    fn update_may_keep_or_drop_but_not_add() {
        let mut req = testing::request(
            Operation::Update,
            "v1",
            "services",
            "Service",
            "ns",
            svc(&["1.1.1.1"]),
        );
        req.old_object = Some(svc(&["1.1.1.1", "2.2.2.2"]));
        assert!(DenyServiceExternalIps::review(&req).unwrap().allowed);
        req.object = Some(svc(&["1.1.1.1", "3.3.3.3"]));
        assert!(!DenyServiceExternalIps::review(&req).unwrap().allowed);
    }

    #[test]
    fn other_resources_are_ignored() {
        let req = testing::request(
            Operation::Create,
            "v1",
            "configmaps",
            "ConfigMap",
            "ns",
            svc(&["1.2.3.4"]),
        );
        assert!(DenyServiceExternalIps::review(&req).unwrap().allowed);
    }
}
