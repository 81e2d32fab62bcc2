use super::*;
use serde_json::json;

fn at(t: &str) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(t).unwrap().into()
}

fn pod(restart: &str, status: Value) -> Value {
    json!({
        "metadata": {"name": "p", "namespace": "n", "uid": "u-1"},
        "spec": {
            "restartPolicy": restart,
            "initContainers": [{"name": "setup", "image": "busybox:1.36"}],
            "containers": [{"name": "app", "image": "registry.example:5000/team/app:v2"}],
        },
        "status": status,
    })
}

fn node() -> SimNode {
    let args = crate::cli::SimulateArgs {
        kubeconfig: "k".into(),
        context: None,
        count: 3,
        name_prefix: "sim-".into(),
        pod_run_for: Duration::from_secs(1),
    };
    SimNode::new(&args, 2)
}

#[test]
fn a_pending_pod_starts_and_only_a_finite_one_finishes_after_its_run() {
    let now = at("2026-01-01T00:00:10Z");
    let run_for = Duration::from_secs(5);
    let pending = pod("Always", json!({"phase": "Pending"}));
    assert_eq!(next_step(&pending, now, run_for), Step::Start);
    let started = json!({"phase": "Running", "startTime": "2026-01-01T00:00:07Z"});
    assert_eq!(
        next_step(&pod("Never", started.clone()), now, run_for),
        Step::Nothing
    );
    let long_ago = json!({"phase": "Running", "startTime": "2026-01-01T00:00:01Z"});
    assert_eq!(
        next_step(&pod("Never", long_ago.clone()), now, run_for),
        Step::Finish
    );
    assert_eq!(
        next_step(&pod("OnFailure", long_ago.clone()), now, run_for),
        Step::Finish
    );
    assert_eq!(
        next_step(&pod("Always", long_ago), now, run_for),
        Step::Nothing
    );
    let done = pod("Never", json!({"phase": "Succeeded"}));
    assert_eq!(next_step(&done, now, run_for), Step::Nothing);
}

#[test]
fn a_pod_being_deleted_is_removed_once() {
    let now = at("2026-01-01T00:00:10Z");
    let mut p = pod("Always", json!({"phase": "Running"}));
    p["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:09Z");
    p["metadata"]["deletionGracePeriodSeconds"] = json!(30);
    assert_eq!(next_step(&p, now, Duration::ZERO), Step::Remove);
    p["metadata"]["deletionGracePeriodSeconds"] = json!(0);
    assert_eq!(next_step(&p, now, Duration::ZERO), Step::Nothing);
}

#[test]
fn a_running_status_has_ready_conditions_ips_and_started_containers() {
    let mut p = pod(
        "Always",
        json!({"conditions": [
            {"type": "PodScheduled", "status": "True"},
            {"type": "Ready", "status": "False"},
        ]}),
    );
    let n = node();
    let s = running(&p, &n, "10.244.2.2", "2026-01-01T00:00:00Z");
    assert_eq!(s["phase"], "Running");
    let types: Vec<_> = s["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["type"].as_str().unwrap(), c["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        types,
        [
            ("PodReadyToStartContainers", "True"),
            ("Initialized", "True"),
            ("Ready", "True"),
            ("ContainersReady", "True"),
            ("PodScheduled", "True"),
        ]
    );
    assert_eq!(s["hostIP"], "192.168.0.3");
    assert_eq!(s["podIPs"], json!([{"ip": "10.244.2.2"}]));
    let app = &s["containerStatuses"][0];
    assert_eq!(app["ready"], true);
    assert_eq!(app["started"], true);
    assert!(app["state"]["running"]["startedAt"].is_string());
    let image_id = app["imageID"].as_str().unwrap();
    assert!(
        image_id.starts_with("registry.example:5000/team/app@sha256:"),
        "{image_id}"
    );
    let setup = &s["initContainerStatuses"][0];
    assert_eq!(setup["state"]["terminated"]["reason"], "Completed");
    p["spec"]["initContainers"][0]["restartPolicy"] = json!("Always");
    let s = running(&p, &n, "10.244.2.2", "2026-01-01T00:00:00Z");
    assert_eq!(
        s["initContainerStatuses"][0]["ready"], true,
        "a sidecar keeps running"
    );
}

#[test]
fn a_succeeded_status_says_completed_with_exit_code_zero() {
    let p = pod(
        "Never",
        json!({"phase": "Running", "startTime": "2026-01-01T00:00:00Z"}),
    );
    let s = succeeded(&p, "2026-01-01T00:00:05Z");
    assert_eq!(s["phase"], "Succeeded");
    let ready = s["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Ready")
        .unwrap();
    assert_eq!(
        (ready["status"].as_str(), ready["reason"].as_str()),
        (Some("False"), Some("PodCompleted"))
    );
    let term = &s["containerStatuses"][0]["state"]["terminated"];
    assert_eq!(term["exitCode"], 0);
    assert_eq!(term["startedAt"], "2026-01-01T00:00:00Z");
    assert_eq!(term["finishedAt"], "2026-01-01T00:00:05Z");
}

#[test]
fn pod_ips_are_the_lowest_free_of_the_node_range_and_host_network_uses_the_node_ip() {
    let n = node();
    let mut used: BTreeSet<String> = ["10.244.2.2".to_string()].into();
    let p = pod("Always", json!({}));
    assert_eq!(pod_ip(&p, &n, &mut used), "10.244.2.3");
    assert_eq!(pod_ip(&p, &n, &mut used), "10.244.2.4");
    let mut host = p.clone();
    host["spec"]["hostNetwork"] = json!(true);
    assert_eq!(pod_ip(&host, &n, &mut used), "192.168.0.3");
}

#[test]
fn image_repositories_drop_tags_and_digests_but_keep_registry_ports() {
    assert_eq!(repository("nginx:1.25"), "nginx");
    assert_eq!(repository("registry:5000/app"), "registry:5000/app");
    assert_eq!(
        repository("registry:5000/app:v1@sha256:ab"),
        "registry:5000/app"
    );
}
