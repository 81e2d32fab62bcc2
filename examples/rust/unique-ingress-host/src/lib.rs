//! Example admission plugin `unique-ingress-host`, a policy that reads the
//! server's own cache: an Ingress may not claim a host that another Ingress,
//! in any namespace, already has. On every create or update of an Ingress it
//! lists the cluster's Ingresses through the host import `list-objects`
//! (served from the server's watch cache, so it sees an Ingress created a
//! moment before) and refuses the first host already taken, naming the
//! Ingress that holds it.

use capstan_plugin_sdk::{
    host, object, AdmissionPlugin, AdmissionRequest, AdmissionResponse, Value,
};

/// The plugin.
pub struct UniqueIngressHost;

impl AdmissionPlugin for UniqueIngressHost {
    fn review(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
        let Some(ingress) = req.written_object("networking.k8s.io", "ingresses") else {
            return Ok(AdmissionResponse::allow());
        };
        let hosts = hosts(ingress);
        if hosts.is_empty() {
            return Ok(AdmissionResponse::allow());
        }
        let others = host::list_objects("networking.k8s.io/v1", "ingresses", None, None, None)?;
        let me = (req.namespace.as_str(), req.object_name());
        for wanted in hosts {
            let holder = others.iter().find(|other| {
                (object::namespace(other), object::name(other).to_string()) != me
                    && self::hosts(other).contains(&wanted)
            });
            if let Some(holder) = holder {
                let held_by = format!("{}/{}", object::namespace(holder), object::name(holder));
                host::log(
                    host::Level::Info,
                    &format!("host {wanted} is held by {held_by}"),
                );
                let message = format!("host \"{wanted}\" is already used by ingress {held_by}");
                return Ok(AdmissionResponse::forbidden(req, &message));
            }
        }
        Ok(AdmissionResponse::allow())
    }
}

/// The non-empty hosts of an Ingress's rules, in order.
fn hosts(ingress: &Value) -> Vec<&str> {
    object::array(ingress, &["spec", "rules"])
        .iter()
        .filter_map(|rule| object::get_str(rule, &["host"]))
        .filter(|host| !host.is_empty())
        .collect()
}

capstan_plugin_sdk::admission_plugin!(UniqueIngressHost);

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::{json, testing, Operation};

    fn ingress(namespace: &str, name: &str, hosts: &[&str]) -> Value {
        let rules: Vec<Value> = hosts.iter().map(|h| json!({"host": h})).collect();
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
               "metadata": {"name": name, "namespace": namespace},
               "spec": {"rules": rules}})
    }

    fn review(operation: Operation, object: Value) -> AdmissionResponse {
        let namespace = object::namespace(&object).to_string();
        let req = testing::request(
            operation,
            "networking.k8s.io/v1",
            "ingresses",
            "Ingress",
            &namespace,
            object,
        );
        UniqueIngressHost::review(&req).unwrap()
    }

    #[test]
    fn a_host_held_in_another_namespace_is_refused_naming_its_holder() {
        testing::reset();
        testing::put_object(
            "networking.k8s.io/v1",
            "ingresses",
            ingress("a", "shop", &["shop.example.com"]),
        );
        let r = review(
            Operation::Create,
            ingress("b", "copy", &["", "other.example.com", "shop.example.com"]),
        );
        assert!(!r.allowed);
        assert_eq!(r.code(), 403);
        assert_eq!(
            r.message(),
            "ingresses.networking.k8s.io \"copy\" is forbidden: host \"shop.example.com\" is already used by ingress a/shop"
        );
    }

    #[test]
    fn new_hosts_and_an_ingress_keeping_its_own_host_are_allowed() {
        testing::reset();
        testing::put_object(
            "networking.k8s.io/v1",
            "ingresses",
            ingress("a", "shop", &["shop.example.com"]),
        );
        assert!(
            review(
                Operation::Create,
                ingress("b", "blog", &["blog.example.com"])
            )
            .allowed
        );
        assert!(
            review(
                Operation::Update,
                ingress("a", "shop", &["shop.example.com"])
            )
            .allowed
        );
        assert!(review(Operation::Create, ingress("b", "default-backend", &[])).allowed);
    }

    #[test]
    fn a_failed_read_fails_the_call_so_the_failure_policy_decides() {
        testing::reset();
        testing::fail_reads(Some("the cache is not ready"));
        let req = testing::request(
            Operation::Create,
            "networking.k8s.io/v1",
            "ingresses",
            "Ingress",
            "b",
            ingress("b", "x", &["x.example.com"]),
        );
        assert!(UniqueIngressHost::review(&req).is_err());
    }
}
