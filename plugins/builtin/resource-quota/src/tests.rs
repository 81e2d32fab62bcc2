use super::*;
use capstan_plugin_sdk::{json, testing, Operation};

fn quota(name: &str, hard: Value) {
    testing::put_object(
        "v1",
        "resourcequotas",
        json!({"metadata": {"name": name, "namespace": "ns"}, "spec": {"hard": hard}}),
    );
}

fn pod(name: &str, cpu: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "ns", "resourceVersion": "7"},
           "spec": {"containers": [{"name": "app", "resources": {
               "requests": {"cpu": cpu, "memory": "64Mi"},
               "limits": {"cpu": cpu, "memory": "64Mi"}}}]}})
}

fn create(resource: &str, kind: &str, object: Value) -> AdmissionRequest {
    let api_version = if resource == "deployments" {
        "apps/v1"
    } else {
        "v1"
    };
    testing::request(Operation::Create, api_version, resource, kind, "ns", object)
}

fn update(resource: &str, kind: &str, old: Value, new: Value) -> AdmissionRequest {
    let mut req = testing::request(Operation::Update, "v1", resource, kind, "ns", new);
    req.old_object = Some(old);
    req
}

fn review(req: &AdmissionRequest) -> AdmissionResponse {
    ResourceQuota::review(req).unwrap()
}

#[test]
fn second_pod_over_a_pod_count_quota_is_forbidden() {
    testing::reset();
    quota("q", json!({"pods": "1"}));
    assert!(review(&create("pods", "Pod", pod("p1", "100m"))).allowed);
    testing::put_object("v1", "pods", pod("p1", "100m"));
    let r = review(&create("pods", "Pod", pod("p2", "100m")));
    assert!(!r.allowed);
    assert_eq!(r.code(), 403);
    assert_eq!(r.status.as_ref().unwrap().reason, "Forbidden");
    assert_eq!(
        r.message(),
        "pods \"p2\" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1"
    );
}

#[test]
fn pod_asking_too_much_cpu_is_forbidden() {
    testing::reset();
    quota(
        "compute",
        json!({"requests.cpu": "1", "limits.cpu": "2", "limits.memory": "1Gi", "requests.memory": "1Gi"}),
    );
    testing::put_object("v1", "pods", pod("a", "500m"));
    assert!(review(&create("pods", "Pod", pod("b", "500m"))).allowed);
    let r = review(&create("pods", "Pod", pod("b", "600m")));
    assert_eq!(
        r.message(),
        "pods \"b\" is forbidden: exceeded quota: compute, requested: requests.cpu=600m, \
         used: requests.cpu=500m, limited: requests.cpu=1"
    );
}

#[test]
fn pod_without_tracked_limits_is_forbidden() {
    testing::reset();
    quota("q", json!({"limits.cpu": "2", "limits.memory": "2Gi"}));
    let bare = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "web"}, {"name": "log",
        "resources": {"limits": {"cpu": "1"}}}]}});
    let r = review(&create("pods", "Pod", bare));
    assert_eq!(r.code(), 403);
    assert_eq!(
        r.message(),
        "pods \"p\" is forbidden: failed quota: q: must specify limits.cpu for: web; limits.memory for: log,web"
    );
}

#[test]
fn constraints_of_every_quota_come_before_usage() {
    testing::reset();
    quota("a-count", json!({"pods": "0"}));
    quota("b-limits", json!({"limits.cpu": "1"}));
    let bare = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "web"}]}});
    let r = review(&create("pods", "Pod", bare));
    assert_eq!(
        r.message(),
        "pods \"p\" is forbidden: failed quota: b-limits: must specify limits.cpu for: web"
    );
}

#[test]
fn namespace_without_quota_and_uninteresting_requests_are_allowed() {
    testing::reset();
    assert!(review(&create("pods", "Pod", pod("p", "100"))).allowed);
    quota("q", json!({"pods": "0"}));
    let mut delete = create("pods", "Pod", pod("p", "1"));
    delete.operation = Operation::Delete;
    assert!(review(&delete).allowed);
    let mut status = update("pods", "Pod", pod("p", "1"), pod("p", "2"));
    status.sub_resource = Some("status".into());
    assert!(review(&status).allowed);
    let mut cluster = create("pods", "Pod", pod("p", "1"));
    cluster.namespace = String::new();
    assert!(review(&cluster).allowed);
    let event = create("events", "Event", json!({"metadata": {"name": "e"}}));
    assert!(review(&event).allowed);
    // A pod update that does not change its Terminating scope is not re-checked.
    assert!(review(&update("pods", "Pod", pod("p", "1"), pod("p", "2"))).allowed);
}

#[test]
fn resize_counts_growth_without_the_pod_itself() {
    testing::reset();
    quota("q", json!({"requests.cpu": "2"}));
    testing::put_object("v1", "pods", pod("a", "500m"));
    testing::put_object("v1", "pods", pod("p", "1"));
    let mut resize = update("pods", "Pod", pod("p", "1"), pod("p", "1500m"));
    resize.sub_resource = Some("resize".into());
    assert!(review(&resize).allowed);
    resize.object = Some(pod("p", "2"));
    assert_eq!(
        review(&resize).message(),
        "pods \"p\" is forbidden: exceeded quota: q, requested: requests.cpu=1, \
         used: requests.cpu=1500m, limited: requests.cpu=2"
    );
}

#[test]
fn service_type_change_and_claim_growth_are_checked_on_update() {
    testing::reset();
    quota("net", json!({"services.loadbalancers": "1"}));
    let svc = |name: &str, t: &str| {
        json!({"metadata": {"name": name, "namespace": "ns", "resourceVersion": "3"},
        "spec": {"type": t, "ports": [{"port": 80}]}})
    };
    testing::put_object("v1", "services", svc("lb", "LoadBalancer"));
    testing::put_object("v1", "services", svc("web", "ClusterIP"));
    let r = review(&update(
        "services",
        "Service",
        svc("web", "ClusterIP"),
        svc("web", "LoadBalancer"),
    ));
    assert_eq!(
        r.message(),
        "services \"web\" is forbidden: exceeded quota: net, requested: services.loadbalancers=1, \
         used: services.loadbalancers=1, limited: services.loadbalancers=1"
    );
    assert!(
        review(&update(
            "services",
            "Service",
            svc("lb", "LoadBalancer"),
            svc("lb", "LoadBalancer")
        ))
        .allowed
    );

    quota("disk", json!({"requests.storage": "10Gi"}));
    let claim = |size: &str| {
        json!({"metadata": {"name": "data", "namespace": "ns", "resourceVersion": "1"},
        "spec": {"resources": {"requests": {"storage": size}}}})
    };
    testing::put_object("v1", "persistentvolumeclaims", claim("8Gi"));
    assert!(
        review(&update(
            "persistentvolumeclaims",
            "PersistentVolumeClaim",
            claim("8Gi"),
            claim("10Gi")
        ))
        .allowed
    );
    assert_eq!(
        review(&update("persistentvolumeclaims", "PersistentVolumeClaim", claim("8Gi"), claim("11Gi"))).message(),
        "persistentvolumeclaims \"data\" is forbidden: exceeded quota: disk, requested: requests.storage=3Gi, \
         used: requests.storage=8Gi, limited: requests.storage=10Gi"
    );
}

#[test]
fn object_counts_for_core_and_group_resources() {
    testing::reset();
    quota(
        "objects",
        json!({"configmaps": "1", "count/deployments.apps": "1"}),
    );
    testing::put_object(
        "v1",
        "configmaps",
        json!({"metadata": {"name": "c1", "namespace": "ns"}}),
    );
    let r = review(&create(
        "configmaps",
        "ConfigMap",
        json!({"metadata": {"generateName": "cfg-"}}),
    ));
    assert_eq!(
        r.message(),
        "configmaps \"cfg-\" is forbidden: exceeded quota: objects, requested: configmaps=1, \
         used: configmaps=1, limited: configmaps=1"
    );
    let deploy = json!({"metadata": {"name": "d1", "namespace": "ns"}});
    assert!(review(&create("deployments", "Deployment", deploy.clone())).allowed);
    testing::put_object("apps/v1", "deployments", deploy);
    let r = review(&create(
        "deployments",
        "Deployment",
        json!({"metadata": {"name": "d2"}}),
    ));
    assert_eq!(
        r.message(),
        "deployments.apps \"d2\" is forbidden: exceeded quota: objects, requested: count/deployments.apps=1, \
         used: count/deployments.apps=1, limited: count/deployments.apps=1"
    );
}

#[test]
fn scoped_quota_counts_only_matching_pods() {
    testing::reset();
    testing::put_object(
        "v1",
        "resourcequotas",
        json!({"metadata": {"name": "be", "namespace": "ns"},
        "spec": {"hard": {"pods": "1"}, "scopes": ["BestEffort"]}}),
    );
    testing::put_object("v1", "pods", pod("burstable", "1"));
    let best_effort =
        |n: &str| json!({"metadata": {"name": n}, "spec": {"containers": [{"name": "a"}]}});
    assert!(review(&create("pods", "Pod", best_effort("x"))).allowed);
    assert!(review(&create("pods", "Pod", pod("y", "1"))).allowed);
    testing::put_object(
        "v1",
        "pods",
        json!({"metadata": {"name": "x", "namespace": "ns"},
        "spec": {"containers": [{"name": "a"}]}}),
    );
    assert_eq!(
        review(&create("pods", "Pod", best_effort("z"))).message(),
        "pods \"z\" is forbidden: exceeded quota: be, requested: pods=1, used: pods=1, limited: pods=1"
    );
}

#[test]
fn finished_pods_do_not_use_the_pods_quota() {
    testing::reset();
    quota("q", json!({"pods": "1"}));
    let mut done = pod("done", "1");
    done["status"] = json!({"phase": "Succeeded"});
    testing::put_object("v1", "pods", done);
    assert!(review(&create("pods", "Pod", pod("p", "1"))).allowed);
}

#[test]
fn store_errors_are_errors() {
    testing::reset();
    testing::fail_reads(Some("store down"));
    assert_eq!(
        ResourceQuota::review(&create("pods", "Pod", pod("p", "1"))).unwrap_err(),
        "store down"
    );
}

#[test]
fn full_review_round_trip() {
    testing::reset();
    quota("q", json!({"count/secrets": "0"}));
    let input = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "42", "operation": "CREATE", "namespace": "ns", "name": "s",
            "kind": {"group": "", "version": "v1", "kind": "Secret"},
            "resource": {"group": "", "version": "v1", "resource": "secrets"},
            "object": {"metadata": {"name": "s"}}, "dryRun": true}});
    let out = capstan_plugin_sdk::run_admission::<ResourceQuota>(&input.to_string()).unwrap();
    let out: Value = out.parse().unwrap();
    assert_eq!(out["response"]["uid"], "42");
    assert_eq!(out["response"]["allowed"], false);
    assert_eq!(out["response"]["status"]["code"], 403);
    assert_eq!(
        out["response"]["status"]["message"],
        "secrets \"s\" is forbidden: exceeded quota: q, requested: count/secrets=1, used: count/secrets=0, \
         limited: count/secrets=0"
    );
}
