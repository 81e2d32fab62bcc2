//! Multi-tenancy policy `unique-ingress-host`: an Ingress may not claim a
//! host that another Ingress, in any namespace, already has, so one tenant
//! cannot take over another's traffic. On every create or update of an
//! Ingress it lists the cluster's Ingresses through the host import
//! `list-objects` (the server's watch cache, so it sees an Ingress created a
//! moment before) and refuses the first host already taken, naming the
//! Ingress that holds it. The logic of `examples/rust/unique-ingress-host`,
//! shipped in the multi-tenancy bundle.

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
        for (i, wanted) in hosts {
            let holder = others.iter().find(|other| {
                (object::namespace(other), object::name(other).to_string()) != me
                    && self::hosts(other).iter().any(|(_, h)| *h == wanted)
            });
            if let Some(holder) = holder {
                return Ok(taken(req, i, wanted, holder));
            }
        }
        Ok(AdmissionResponse::allow())
    }
}

/// kube's Forbidden naming the host, its field and the Ingress holding it.
fn taken(req: &AdmissionRequest, rule: usize, wanted: &str, holder: &Value) -> AdmissionResponse {
    let held_by = format!("{}/{}", object::namespace(holder), object::name(holder));
    host::log(
        host::Level::Info,
        &format!("host {wanted} is held by {held_by}"),
    );
    let message = format!("host \"{wanted}\" is already used by ingress {held_by}");
    AdmissionResponse::forbidden(req, &message).with_cause(
        "FieldValueForbidden",
        &format!("spec.rules[{rule}].host"),
        &message,
    )
}

/// The non-empty hosts of an Ingress's rules with their rule's index.
fn hosts(ingress: &Value) -> Vec<(usize, &str)> {
    object::array(ingress, &["spec", "rules"])
        .iter()
        .enumerate()
        .filter_map(|(i, rule)| Some((i, object::get_str(rule, &["host"])?)))
        .filter(|(_, host)| !host.is_empty())
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

    fn request(operation: Operation, object: Value) -> AdmissionRequest {
        let namespace = object::namespace(&object).to_string();
        testing::request(
            operation,
            "networking.k8s.io/v1",
            "ingresses",
            "Ingress",
            &namespace,
            object,
        )
    }

    fn review(operation: Operation, object: Value) -> AdmissionResponse {
        UniqueIngressHost::review(&request(operation, object)).unwrap()
    }

    fn held(namespace: &str, name: &str, hosts: &[&str]) {
        testing::put_object(
            "networking.k8s.io/v1",
            "ingresses",
            ingress(namespace, name, hosts),
        );
    }

    #[test]
    fn a_host_held_in_another_namespace_is_refused_naming_its_holder_and_field() {
        testing::reset();
        held("team-a", "shop", &["shop.example.com"]);
        let r = review(
            Operation::Create,
            ingress(
                "team-b",
                "copy",
                &["", "other.example.com", "shop.example.com"],
            ),
        );
        assert!(!r.allowed);
        assert_eq!(r.code(), 403);
        assert_eq!(
            r.message(),
            "ingresses.networking.k8s.io \"copy\" is forbidden: host \"shop.example.com\" is already used by ingress team-a/shop"
        );
        let causes = &r.status.unwrap().details.unwrap().causes;
        assert_eq!(causes[0].field, "spec.rules[2].host");
    }

    #[test]
    fn an_update_taking_a_held_host_is_refused() {
        testing::reset();
        held("team-a", "shop", &["shop.example.com"]);
        held("team-b", "blog", &["blog.example.com"]);
        let r = review(
            Operation::Update,
            ingress("team-b", "blog", &["blog.example.com", "shop.example.com"]),
        );
        assert!(!r.allowed);
        assert!(r.message().contains("team-a/shop"), "{}", r.message());
    }

    #[test]
    fn new_hosts_and_an_ingress_keeping_its_own_host_are_allowed() {
        testing::reset();
        held("team-a", "shop", &["shop.example.com"]);
        let blog = ingress("team-b", "blog", &["blog.example.com"]);
        assert!(review(Operation::Create, blog).allowed);
        let same = ingress("team-a", "shop", &["shop.example.com"]);
        assert!(review(Operation::Update, same).allowed);
        let no_host = ingress("team-b", "default-backend", &[]);
        assert!(review(Operation::Create, no_host).allowed);
    }

    #[test]
    fn the_same_name_in_another_namespace_is_another_ingress() {
        testing::reset();
        held("team-a", "shop", &["shop.example.com"]);
        let r = review(
            Operation::Create,
            ingress("team-b", "shop", &["shop.example.com"]),
        );
        assert!(!r.allowed);
    }

    #[test]
    fn other_requests_read_nothing() {
        testing::reset();
        testing::fail_reads(Some("must not be read"));
        let mut status = request(Operation::Update, ingress("a", "x", &["x.example.com"]));
        status.sub_resource = Some("status".into());
        assert!(UniqueIngressHost::review(&status).unwrap().allowed);
        let delete = request(Operation::Delete, ingress("a", "x", &["x.example.com"]));
        assert!(UniqueIngressHost::review(&delete).unwrap().allowed);
    }

    #[test]
    fn a_failed_read_fails_the_call_so_the_failure_policy_decides() {
        testing::reset();
        testing::fail_reads(Some("the cache is not ready"));
        let req = request(Operation::Create, ingress("b", "x", &["x.example.com"]));
        let e = UniqueIngressHost::review(&req).unwrap_err();
        assert_eq!(e, "the cache is not ready");
    }
}
