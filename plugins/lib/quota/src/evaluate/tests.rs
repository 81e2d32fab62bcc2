use super::*;
use crate::resources::pretty_print;
use serde_json::json;

fn usage_of(resource: &str, object: &Value) -> String {
    let evaluator = Evaluator::for_resource(&GroupResource::parse(resource)).unwrap();
    pretty_print(&evaluator.usage(object, Some(2_000_000_000)))
}

fn container(name: &str, requests: Value, limits: Value) -> Value {
    json!({"name": name, "resources": {"requests": requests, "limits": limits}})
}

fn pod(spec: Value) -> Value {
    json!({"metadata": {"name": "p", "namespace": "ns"}, "spec": spec})
}

#[test]
fn pod_sums_containers_and_maxes_init_containers() {
    let p = pod(json!({
        "containers": [
            container("a", json!({"cpu": "250m", "memory": "64Mi"}), json!({"cpu": "500m"})),
            container("b", json!({"cpu": "250m", "memory": "64Mi"}), json!({"cpu": "1"})),
        ],
        "initContainers": [
            container("init", json!({"cpu": "2", "memory": "32Mi"}), json!({})),
        ],
    }));
    assert_eq!(
        usage_of("pods", &p),
        "count/pods=1,cpu=2,limits.cpu=1500m,memory=128Mi,pods=1,requests.cpu=2,requests.memory=128Mi"
    );
}

#[test]
fn pod_sidecars_run_alongside_and_overhead_is_added() {
    let p = pod(json!({
        "containers": [container("app", json!({"cpu": "1"}), json!({"cpu": "1"}))],
        "initContainers": [
            {"name": "side", "restartPolicy": "Always",
             "resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "500m"}}},
            container("init", json!({"cpu": "1"}), json!({})),
        ],
        "overhead": {"cpu": "100m", "memory": "10Mi"},
    }));
    // containers 1 + sidecar 500m = 1500m; init needs 1 + 500m = 1500m; + overhead.
    assert_eq!(
        usage_of("pods", &p),
        "count/pods=1,cpu=1600m,limits.cpu=1600m,memory=10Mi,pods=1,requests.cpu=1600m,requests.memory=10Mi"
    );
}

#[test]
fn pod_level_resources_override_containers() {
    let p = pod(json!({
        "resources": {"requests": {"cpu": "2"}, "limits": {"memory": "1Gi"}},
        "containers": [container("app", json!({"cpu": "1", "memory": "100Mi"}), json!({}))],
    }));
    assert_eq!(
        usage_of("pods", &p),
        "count/pods=1,cpu=2,limits.memory=1Gi,memory=100Mi,pods=1,requests.cpu=2,requests.memory=100Mi"
    );
}

#[test]
fn pod_resize_counts_the_larger_of_spec_and_status() {
    let mut p = pod(json!({
        "containers": [container("app", json!({"cpu": "1"}), json!({"cpu": "1"}))],
    }));
    p["status"] = json!({"containerStatuses": [{"name": "app",
        "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "500m"}},
        "allocatedResources": {"cpu": "1500m"}}]});
    assert_eq!(
        usage_of("pods", &p),
        "count/pods=1,cpu=2,limits.cpu=1,pods=1,requests.cpu=2"
    );
    p["status"]["conditions"] = json!([{"type": "PodResizePending", "reason": "Infeasible"}]);
    assert_eq!(
        usage_of("pods", &p),
        "count/pods=1,cpu=2,limits.cpu=500m,pods=1,requests.cpu=2"
    );
}

#[test]
fn pod_ephemeral_storage_hugepages_and_extended_resources() {
    let p = pod(json!({"containers": [container("app",
        json!({"ephemeral-storage": "1Gi", "hugepages-2Mi": "4Mi", "nvidia.com/gpu": "1"}),
        json!({"ephemeral-storage": "2Gi", "nvidia.com/gpu": "1"}))]}));
    assert_eq!(
        usage_of("pods", &p),
        "count/pods=1,ephemeral-storage=1Gi,hugepages-2Mi=4Mi,limits.ephemeral-storage=2Gi,pods=1,\
         requests.ephemeral-storage=1Gi,requests.hugepages-2Mi=4Mi,requests.nvidia.com/gpu=1"
    );
}

#[test]
fn finished_and_expired_pods_count_only_as_objects() {
    let mut p = pod(json!({"containers": [container("a", json!({"cpu": "1"}), json!({}))]}));
    p["status"] = json!({"phase": "Succeeded"});
    assert_eq!(usage_of("pods", &p), "count/pods=1");
    p["status"] = json!({"phase": "Failed"});
    assert_eq!(usage_of("pods", &p), "count/pods=1");
    p["status"] = json!({"phase": "Running"});
    p["metadata"]["deletionTimestamp"] = json!("2020-01-01T00:00:00Z");
    p["metadata"]["deletionGracePeriodSeconds"] = json!(30);
    assert_eq!(
        usage_of("pods", &p),
        "count/pods=1",
        "grace period long over"
    );
    p["metadata"]["deletionTimestamp"] = json!("2099-01-01T00:00:00Z");
    assert!(usage_of("pods", &p).contains("pods=1,requests.cpu=1"));
}

#[test]
fn pod_constraints_name_missing_resources_and_containers() {
    let required: BTreeSet<String> = ["limits.cpu", "limits.memory", "pods", "requests.cpu"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let p = pod(json!({
        "containers": [
            container("web", json!({"cpu": "1"}), json!({"memory": "1Gi"})),
            container("log", json!({}), json!({})),
        ],
        "initContainers": [container("init", json!({"cpu": "1"}), json!({"cpu": "1", "memory": "1"}))],
    }));
    assert_eq!(
        Evaluator::Pods.constraints(&required, &p).unwrap_err(),
        "must specify limits.cpu for: log,web; limits.memory for: log; requests.cpu for: log"
    );
    let ok = pod(
        json!({"containers": [container("a", json!({"cpu": "0"}), json!({"cpu": "1", "memory": "1"}))]}),
    );
    assert!(Evaluator::Pods.constraints(&required, &ok).is_ok());
    let pod_level =
        pod(json!({"resources": {"limits": {"cpu": "1"}}, "containers": [{"name": "a"}]}));
    assert!(Evaluator::Pods.constraints(&required, &pod_level).is_ok());
}

#[test]
fn services_count_node_ports_and_load_balancers() {
    let svc = |t: &str| json!({"spec": {"type": t, "ports": [{"port": 80}, {"port": 443}]}});
    assert_eq!(
        usage_of("services", &svc("ClusterIP")),
        "count/services=1,services=1,services.loadbalancers=0,services.nodeports=0"
    );
    assert_eq!(
        usage_of("services", &svc("NodePort")),
        "count/services=1,services=1,services.loadbalancers=0,services.nodeports=2"
    );
    assert_eq!(
        usage_of("services", &svc("LoadBalancer")),
        "count/services=1,services=1,services.loadbalancers=1,services.nodeports=2"
    );
}

#[test]
fn claims_charge_storage_by_class() {
    let claim = json!({"spec": {"storageClassName": "gold",
        "resources": {"requests": {"storage": "1.5"}}}});
    assert_eq!(
        usage_of("persistentvolumeclaims", &claim),
        "count/persistentvolumeclaims=1,gold.storageclass.storage.k8s.io/persistentvolumeclaims=1,\
         gold.storageclass.storage.k8s.io/requests.storage=2,persistentvolumeclaims=1,requests.storage=2"
    );
    let annotated = json!({"metadata": {"annotations": {"volume.beta.kubernetes.io/storage-class": "old"}},
        "spec": {"storageClassName": "gold", "resources": {"requests": {"storage": "1Gi"}}},
        "status": {"allocatedResources": {"storage": "2Gi"}}});
    assert_eq!(
        usage_of("persistentvolumeclaims", &annotated),
        "count/persistentvolumeclaims=1,old.storageclass.storage.k8s.io/persistentvolumeclaims=1,\
         old.storageclass.storage.k8s.io/requests.storage=2Gi,persistentvolumeclaims=1,requests.storage=2Gi"
    );
    assert_eq!(
        usage_of("persistentvolumeclaims", &json!({})),
        "count/persistentvolumeclaims=1,persistentvolumeclaims=1"
    );
}

#[test]
fn object_counts_and_legacy_aliases() {
    assert_eq!(
        usage_of("configmaps", &json!({})),
        "configmaps=1,count/configmaps=1"
    );
    assert_eq!(usage_of("secrets", &json!({})), "count/secrets=1,secrets=1");
    assert_eq!(
        usage_of("replicationcontrollers", &json!({})),
        "count/replicationcontrollers=1,replicationcontrollers=1"
    );
    assert_eq!(
        usage_of("resourcequotas", &json!({})),
        "count/resourcequotas=1,resourcequotas=1"
    );
    assert_eq!(
        usage_of("deployments.apps", &json!({})),
        "count/deployments.apps=1"
    );
    assert_eq!(usage_of("widgets", &json!({})), "count/widgets=1");
    assert!(Evaluator::for_resource(&GroupResource::parse("events")).is_none());
}

#[test]
fn matching_resources_per_evaluator() {
    let hard: Vec<String> = [
        "pods",
        "requests.cpu",
        "requests.nvidia.com/gpu",
        "requests.hugepages-2Mi",
        "services",
        "services.nodeports",
        "requests.storage",
        "gold.storageclass.storage.k8s.io/requests.storage",
        "count/deployments.apps",
        "configmaps",
        "foo",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let names = |e: &Evaluator| e.matching_resources(&hard).into_iter().collect::<Vec<_>>();
    assert_eq!(
        names(&Evaluator::Pods),
        [
            "pods",
            "requests.cpu",
            "requests.hugepages-2Mi",
            "requests.nvidia.com/gpu"
        ]
    );
    assert_eq!(
        names(&Evaluator::Services),
        ["services", "services.nodeports"]
    );
    assert_eq!(
        names(&Evaluator::Claims),
        [
            "gold.storageclass.storage.k8s.io/requests.storage",
            "requests.storage"
        ]
    );
    let deployments = Evaluator::for_resource(&GroupResource::parse("deployments.apps")).unwrap();
    assert_eq!(names(&deployments), ["count/deployments.apps"]);
    assert_eq!(resource_for_key("foo"), None);
    assert_eq!(resource_for_key("count/events"), None);
    assert_eq!(
        resource_for_key("limits.memory"),
        Some(GroupResource::new("", "pods"))
    );
}

#[test]
fn pod_handles_creates_scope_changes_and_resize() {
    let plain = pod(json!({}));
    let deadline = pod(json!({"activeDeadlineSeconds": 10}));
    let e = Evaluator::Pods;
    assert!(e.handles(Operation::Create, "", &plain, None));
    assert!(!e.handles(Operation::Update, "", &plain, Some(&plain)));
    assert!(e.handles(Operation::Update, "", &deadline, Some(&plain)));
    assert!(e.handles(Operation::Update, "resize", &plain, Some(&plain)));
    assert!(!e.handles(Operation::Update, "status", &plain, Some(&plain)));
    assert!(Evaluator::Services.handles(Operation::Update, "", &plain, None));
    assert!(!Evaluator::Count(vec![]).handles(Operation::Update, "", &plain, None));
}

fn quota_with(scopes: Value) -> QuotaSpec {
    QuotaSpec::read(
        &json!({"metadata": {"name": "q"}, "spec": {"hard": {"pods": "5"}, "scopes": scopes}}),
    )
}

fn quota_selecting(expressions: Value) -> QuotaSpec {
    QuotaSpec::read(&json!({"metadata": {"name": "q"},
        "spec": {"hard": {"pods": "5"}, "scopeSelector": {"matchExpressions": expressions}}}))
}

#[test]
fn scopes_filter_pods() {
    let best_effort = pod(json!({"containers": [{"name": "a"}]}));
    let burstable = pod(json!({"containers": [container("a", json!({"cpu": "1"}), json!({}))]}));
    let terminating = pod(json!({"activeDeadlineSeconds": 0, "containers": [{"name": "a"}]}));
    let e = Evaluator::Pods;
    assert!(e.applies(&quota_with(json!(["BestEffort"])), &best_effort));
    assert!(!e.applies(&quota_with(json!(["BestEffort"])), &burstable));
    assert!(e.applies(&quota_with(json!(["NotBestEffort"])), &burstable));
    assert!(e.applies(&quota_with(json!(["Terminating"])), &terminating));
    assert!(!e.applies(&quota_with(json!(["Terminating"])), &best_effort));
    assert!(e.applies(
        &quota_with(json!(["NotTerminating", "BestEffort"])),
        &best_effort
    ));
    assert!(!e.applies(
        &quota_with(json!(["NotTerminating", "BestEffort"])),
        &terminating
    ));
    let mut qos = burstable.clone();
    qos["status"] = json!({"qosClass": "BestEffort"});
    assert!(
        e.applies(&quota_with(json!(["BestEffort"])), &qos),
        "status.qosClass wins"
    );
    // Only pods have scopes: a scoped quota never applies to services.
    let scoped_services =
        QuotaSpec::read(&json!({"spec": {"hard": {"services": "1"}, "scopes": ["BestEffort"]}}));
    assert!(!Evaluator::Services.applies(&scoped_services, &json!({})));
}

#[test]
fn priority_class_selector() {
    let high = pod(json!({"priorityClassName": "high"}));
    let none = pod(json!({}));
    let sel = |op: &str, values: Value| {
        quota_selecting(json!([{"scopeName": "PriorityClass", "operator": op, "values": values}]))
    };
    let e = Evaluator::Pods;
    assert!(e.applies(&sel("In", json!(["high", "mid"])), &high));
    assert!(!e.applies(&sel("In", json!(["low"])), &high));
    assert!(!e.applies(&sel("In", json!(["high"])), &none));
    assert!(e.applies(&sel("NotIn", json!(["low"])), &high));
    assert!(e.applies(&sel("NotIn", json!(["low"])), &none));
    assert!(e.applies(&sel("Exists", json!([])), &high));
    assert!(!e.applies(&sel("Exists", json!([])), &none));
    assert!(e.applies(&sel("DoesNotExist", json!([])), &none));
    assert!(!e.applies(&sel("Bogus", json!([])), &high));
}

#[test]
fn cross_namespace_affinity_scope() {
    let plain = pod(
        json!({"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "zone"}]}}}),
    );
    let cross = pod(
        json!({"affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "podAffinityTerm": {"topologyKey": "zone", "namespaceSelector": {}}}]}}}),
    );
    let q =
        quota_selecting(json!([{"scopeName": "CrossNamespacePodAffinity", "operator": "Exists"}]));
    assert!(!Evaluator::Pods.applies(&q, &plain));
    assert!(Evaluator::Pods.applies(&q, &cross));
}
