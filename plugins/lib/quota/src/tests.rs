//! Tests of the public API: usage, resources to list, admission checks.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::*;

fn quota(name: &str, hard: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ResourceQuota",
           "metadata": {"name": name, "namespace": "ns"}, "spec": {"hard": hard}})
}

fn pod(name: &str, cpu: &str, memory: &str) -> Value {
    json!({"metadata": {"name": name, "namespace": "ns", "resourceVersion": "1"},
           "spec": {"containers": [{"name": "app", "resources": {
               "requests": {"cpu": cpu, "memory": memory},
               "limits": {"cpu": cpu, "memory": memory}}}]}})
}

fn used(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn usage_has_every_hard_key_and_sums_matching_objects() {
    let q = quota(
        "q",
        json!({"pods": "10", "requests.cpu": "4", "requests.memory": "8Gi", "services": "2",
               "count/deployments.apps": "3", "configmaps": "5", "foo": "1"}),
    );
    let (a, b) = (pod("a", "500m", "1Gi"), pod("b", "1", "512Mi"));
    let done = json!({"metadata": {"name": "c"}, "status": {"phase": "Succeeded"}});
    let svc = json!({"spec": {"type": "ClusterIP"}});
    let deploy = json!({"metadata": {"name": "d"}});
    let objects: Vec<(&str, &Value)> = vec![
        ("pods", &a),
        ("pods", &b),
        ("pods", &done),
        ("services", &svc),
        ("deployments.apps", &deploy),
        ("events", &deploy),
    ];
    let u = usage(&q, &objects);
    let want = used(&[
        ("configmaps", "0"),
        ("count/deployments.apps", "1"),
        ("foo", "0"),
        ("pods", "2"),
        ("requests.cpu", "1500m"),
        ("requests.memory", "1536Mi"),
        ("services", "1"),
    ]);
    assert_eq!(u, want);
}

#[test]
fn usage_respects_scopes() {
    let q = json!({"metadata": {"name": "be"},
        "spec": {"hard": {"pods": "5", "count/pods": "5"}, "scopes": ["BestEffort"]}});
    let best_effort = json!({"spec": {"containers": [{"name": "a"}]}});
    let burstable = pod("b", "1", "1Gi");
    let u = usage_at(&q, &[("pods", &best_effort), ("pods", &burstable)], None);
    assert_eq!(u, used(&[("count/pods", "1"), ("pods", "1")]));
}

#[test]
fn resources_to_list_names_each_counted_resource_once() {
    let q = quota(
        "q",
        json!({"pods": "1", "limits.cpu": "1", "services.nodeports": "1",
               "gold.storageclass.storage.k8s.io/requests.storage": "1Gi",
               "count/deployments.apps": "1", "count/events": "1", "secrets": "1", "bogus": "1"}),
    );
    let names: Vec<String> = resources_to_list(&q)
        .iter()
        .map(|g| g.to_string())
        .collect();
    assert_eq!(
        names,
        [
            "persistentvolumeclaims",
            "pods",
            "secrets",
            "services",
            "deployments.apps"
        ]
    );
}

#[test]
fn admit_rejects_exceeding_pod_count_with_kube_message() {
    let q = quota("q", json!({"pods": "2"}));
    let new = pod("c", "1", "1Gi");
    let err = admit(&q, "pods", &used(&[("pods", "2")]), &new, None).unwrap_err();
    assert_eq!(
        err,
        "exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2"
    );
    assert!(admit(&q, "pods", &used(&[("pods", "1")]), &new, None).is_ok());
}

#[test]
fn admit_lists_every_exceeded_resource_sorted() {
    let q = quota(
        "compute",
        json!({"requests.cpu": "1", "requests.memory": "1Gi", "pods": "10"}),
    );
    let new = pod("p", "600m", "768Mi");
    let u = used(&[
        ("requests.cpu", "500m"),
        ("requests.memory", "512Mi"),
        ("pods", "1"),
    ]);
    assert_eq!(
        admit(&q, "pods", &u, &new, None).unwrap_err(),
        "exceeded quota: compute, requested: requests.cpu=600m,requests.memory=768Mi, \
         used: requests.cpu=500m,requests.memory=512Mi, limited: requests.cpu=1,requests.memory=1Gi"
    );
}

#[test]
fn admit_requires_tracked_compute_resources() {
    let q = quota("q", json!({"limits.cpu": "2", "limits.memory": "2Gi"}));
    let bare = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "app"}, {"name": "sidecar"}]}});
    let expected =
        "failed quota: q: must specify limits.cpu for: app,sidecar; limits.memory for: app,sidecar";
    assert_eq!(
        admit(&q, "pods", &used(&[]), &bare, None).unwrap_err(),
        expected
    );
    assert_eq!(check_constraints(&q, "pods", &bare).unwrap_err(), expected);
    assert!(check_constraints(&q, "services", &bare).is_ok());
}

#[test]
fn admit_update_charges_only_growth() {
    let q = quota("q", json!({"requests.cpu": "2", "pods": "1"}));
    let old = pod("p", "1", "1Gi");
    let grown = pod("p", "1500m", "1Gi");
    // Nothing else in the namespace; the pod itself uses 1 cpu and 1 pod.
    assert!(admit(&q, "pods", &used(&[]), &grown, Some(&old)).is_ok());
    let too_big = pod("p", "3", "1Gi");
    assert_eq!(
        admit(&q, "pods", &used(&[]), &too_big, Some(&old)).unwrap_err(),
        "exceeded quota: q, requested: requests.cpu=2, used: requests.cpu=1, limited: requests.cpu=2"
    );
    // Shrinking is always fine, even over quota.
    let shrunk = pod("p", "500m", "1Gi");
    assert!(admit(
        &q,
        "pods",
        &used(&[("requests.cpu", "5")]),
        &shrunk,
        Some(&old)
    )
    .is_ok());
}

#[test]
fn admit_update_without_resource_version_bills_everything() {
    let q = quota("q", json!({"pods": "1"}));
    let mut old = pod("p", "1", "1Gi");
    old["metadata"]["resourceVersion"] = json!("");
    let new = pod("p", "1", "1Gi");
    assert!(admit(&q, "pods", &used(&[("pods", "1")]), &new, Some(&old)).is_err());
}

#[test]
fn admit_update_into_scope_bills_everything() {
    let q = json!({"metadata": {"name": "t"},
        "spec": {"hard": {"pods": "1"}, "scopes": ["Terminating"]}});
    let old = pod("p", "1", "1Gi");
    let mut new = old.clone();
    new["spec"]["activeDeadlineSeconds"] = json!(60);
    assert!(handles("pods", "", Operation::Update, &new, Some(&old)));
    assert_eq!(
        admit(&q, "pods", &used(&[("pods", "1")]), &new, Some(&old)).unwrap_err(),
        "exceeded quota: t, requested: pods=1, used: pods=1, limited: pods=1"
    );
    assert!(!applies(&q, "pods", &old));
}

#[test]
fn admit_services_and_claims() {
    let q = quota(
        "svc",
        json!({"services.loadbalancers": "1", "services.nodeports": "2"}),
    );
    let lb = json!({"spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}});
    assert_eq!(
        admit(&q, "services", &used(&[("services.loadbalancers", "1"), ("services.nodeports", "1")]), &lb, None)
            .unwrap_err(),
        "exceeded quota: svc, requested: services.loadbalancers=1, used: services.loadbalancers=1, \
         limited: services.loadbalancers=1"
    );
    let q = quota("storage", json!({"requests.storage": "10Gi"}));
    let old = json!({"metadata": {"name": "c", "resourceVersion": "3"},
        "spec": {"resources": {"requests": {"storage": "5Gi"}}}});
    let mut new = old.clone();
    new["spec"]["resources"]["requests"]["storage"] = json!("12Gi");
    assert_eq!(
        admit(&q, "persistentvolumeclaims", &used(&[]), &new, Some(&old)).unwrap_err(),
        "exceeded quota: storage, requested: requests.storage=7Gi, used: requests.storage=5Gi, \
         limited: requests.storage=10Gi"
    );
}

#[test]
fn admit_ignores_quotas_that_do_not_apply() {
    let q = quota("q", json!({"services": "0"}));
    assert!(admit(&q, "pods", &used(&[]), &pod("p", "1", "1"), None).is_ok());
    assert!(admit(&q, "events", &used(&[]), &json!({}), None).is_ok());
    assert!(!applies(&q, "pods", &json!({})));
    assert!(!handles("events", "", Operation::Create, &json!({}), None));
    assert!(handles(
        "configmaps",
        "",
        Operation::Create,
        &json!({}),
        None
    ));
    assert!(!handles(
        "configmaps",
        "",
        Operation::Update,
        &json!({}),
        None
    ));
}

#[test]
fn admit_rejects_negative_usage() {
    let q = quota("q", json!({"requests.cpu": "1"}));
    let p = pod("p", "-1", "1Gi");
    assert_eq!(
        admit(&q, "pods", &used(&[]), &p, None).unwrap_err(),
        "quota usage is negative for resource(s): cpu,limits.cpu,requests.cpu"
    );
}

#[test]
fn object_usage_is_public() {
    let u = object_usage("pods", &pod("p", "250m", "1Gi"));
    assert_eq!(u["requests.cpu"].to_string(), "250m");
    assert!(object_usage("events", &json!({})).is_empty());
}

#[test]
fn requested_is_the_non_zero_growth_under_hard_keys() {
    let q = quota("q", json!({"requests.cpu": "2", "pods": "3"}));
    let old = pod("p", "1", "1Gi");
    let names = |l: ResourceList| resources::pretty_print(&l);
    assert_eq!(
        names(requested(&q, "pods", &pod("p", "1", "1Gi"), None)),
        "pods=1,requests.cpu=1"
    );
    assert_eq!(
        names(requested(&q, "pods", &pod("p", "2", "2Gi"), Some(&old))),
        "requests.cpu=1"
    );
    assert_eq!(names(requested(&q, "pods", &old, Some(&old))), "");
    assert_eq!(names(requested(&q, "services", &json!({}), None)), "");
}
