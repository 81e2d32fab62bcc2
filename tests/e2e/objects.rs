//! Creating, reading, listing, scaling and restarting: objects as users see them.

use crate::support::Server;

const DEPLOYMENT: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
      - name: sidecar
        image: busybox:1.36
"#;

#[test]
fn configmap_round_trip_has_server_fields() {
    let s = Server::start();
    s.ok(&[
        "create",
        "configmap",
        "settings",
        "--from-literal=color=blue",
    ]);
    let cm = s.json(&["get", "configmap", "settings"]);
    assert_eq!(cm["data"]["color"], "blue");
    assert_eq!(cm["metadata"]["namespace"], "default");
    assert!(cm["metadata"]["uid"]
        .as_str()
        .is_some_and(|u| u.len() == 36));
    assert!(cm["metadata"]["creationTimestamp"]
        .as_str()
        .is_some_and(|t| t.ends_with('Z')));
    assert!(
        cm["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse::<i64>()
            .unwrap()
            > 0
    );
    let table = s.ok(&["get", "cm", "settings"]);
    assert!(
        table.starts_with("NAME") && table.contains("DATA") && table.contains("settings"),
        "{table}"
    );
}

#[test]
fn apply_creates_then_updates_and_bumps_generation() {
    let s = Server::start();
    assert!(s
        .ok_stdin(&["apply", "-f", "-"], DEPLOYMENT)
        .contains("deployment.apps/web created"));
    let d = s.json(&["get", "deploy", "web"]);
    assert_eq!(d["metadata"]["generation"], 1);
    let changed = DEPLOYMENT.replace("replicas: 2", "replicas: 3");
    assert!(s
        .ok_stdin(&["apply", "-f", "-"], &changed)
        .contains("configured"));
    let d = s.json(&["get", "deploy", "web"]);
    assert_eq!(
        (
            d["spec"]["replicas"].as_i64(),
            d["metadata"]["generation"].as_i64()
        ),
        (Some(3), Some(2))
    );
    assert!(s
        .ok_stdin(&["apply", "-f", "-"], &changed)
        .contains("unchanged"));
    let table = s.ok(&["get", "deployments"]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]);
    assert!(table.contains("0/3"), "{table}");
}

#[test]
fn scale_uses_the_scale_subresource() {
    let s = Server::start();
    s.ok_stdin(&["apply", "-f", "-"], DEPLOYMENT);
    assert!(s
        .ok(&["scale", "deployment/web", "--replicas=5"])
        .contains("scaled"));
    assert_eq!(s.json(&["get", "deploy", "web"])["spec"]["replicas"], 5);
    let (code, scale) = s.get_json("/apis/apps/v1/namespaces/default/deployments/web/scale");
    assert_eq!(
        (
            code,
            scale["kind"].as_str(),
            scale["spec"]["replicas"].as_i64()
        ),
        (200, Some("Scale"), Some(5))
    );
    assert_eq!(scale["status"]["selector"], "app=web");
}

#[test]
fn selectors_and_paging_list_what_matches() {
    let s = Server::start();
    for i in 0..7 {
        let tier = if i % 2 == 0 { "front" } else { "back" };
        s.ok(&["create", "configmap", &format!("cm-{i}")]);
        s.ok(&[
            "label",
            "configmap",
            &format!("cm-{i}"),
            &format!("tier={tier}"),
        ]);
    }
    let names = |args: &[&str]| -> Vec<String> {
        let mut a = vec!["get", "cm", "-o", "name"];
        a.extend_from_slice(args);
        s.ok(&a).lines().map(String::from).collect()
    };
    assert_eq!(names(&["-l", "tier=front"]).len(), 4);
    assert_eq!(names(&["-l", "tier in (back),tier!=front"]).len(), 3);
    assert_eq!(
        names(&["--field-selector", "metadata.name=cm-3"]),
        ["configmap/cm-3"]
    );
    let all = names(&["--chunk-size=2", "-l", "tier"]);
    assert_eq!(all.len(), 7, "{all:?}");
    let (_, page) = s.get_json("/api/v1/namespaces/default/configmaps?limit=3");
    assert_eq!(page["items"].as_array().unwrap().len(), 3);
    assert!(page["metadata"]["continue"].as_str().is_some());
    let err = s.fails(&["get", "pods", "--field-selector", "spec.color=red"]);
    assert!(
        err.contains("field label not supported: spec.color"),
        "{err}"
    );
}

#[test]
fn generate_name_gives_unique_names() {
    let s = Server::start();
    let manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: job-\n";
    let a = s.ok_stdin(&["create", "-f", "-", "-o", "name"], manifest);
    let b = s.ok_stdin(&["create", "-f", "-", "-o", "name"], manifest);
    assert!(
        a.starts_with("configmap/job-") && a.trim().len() == "configmap/job-".len() + 5,
        "{a}"
    );
    assert_ne!(a, b);
}

#[test]
fn restart_keeps_objects_and_continues_revisions() {
    let mut s = Server::start();
    s.ok(&["create", "configmap", "durable", "--from-literal=k=v"]);
    let rv1: i64 = s.json(&["get", "cm", "durable"])["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    s.restart(true);
    assert_eq!(s.json(&["get", "cm", "durable"])["data"]["k"], "v");
    s.ok(&["create", "configmap", "after"]);
    let rv2: i64 = s.json(&["get", "cm", "after"])["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(rv2 > rv1, "revision went from {rv1} to {rv2}");
    let ca_before = std::fs::read(s.pki("ca.crt")).unwrap();
    s.restart(false);
    assert_eq!(std::fs::read(s.pki("ca.crt")).unwrap(), ca_before);
    s.ok(&["get", "cm", "durable"]);
}

#[test]
fn cluster_scoped_and_namespaced_kinds_from_every_group() {
    let s = Server::start();
    s.ok(&["create", "namespace", "team-a"]);
    s.ok(&[
        "create",
        "clusterrole",
        "reader",
        "--verb=get",
        "--resource=pods",
    ]);
    s.ok(&[
        "create",
        "rolebinding",
        "rb",
        "--clusterrole=reader",
        "--user=alice",
        "-n",
        "team-a",
    ]);
    s.ok(&["create", "priorityclass", "high", "--value=1000"]);
    s.ok(&["create", "job", "once", "--image=busybox", "-n", "team-a"]);
    s.ok(&[
        "create",
        "cronjob",
        "nightly",
        "--image=busybox",
        "--schedule=0 0 * * *",
        "-n",
        "team-a",
    ]);
    s.ok(&[
        "create",
        "service",
        "clusterip",
        "svc",
        "--tcp=80:8080",
        "-n",
        "team-a",
    ]);
    s.ok(&[
        "create",
        "ingress",
        "ing",
        "--rule=example.com/=svc:80",
        "-n",
        "team-a",
    ]);
    s.ok(&[
        "create",
        "poddisruptionbudget",
        "pdb",
        "--selector=app=x",
        "--min-available=1",
        "-n",
        "team-a",
    ]);
    s.ok(&[
        "create",
        "secret",
        "generic",
        "tls",
        "--from-literal=a=b",
        "-n",
        "team-a",
    ]);
    let all = s.ok(&[
        "get",
        "job,cronjob,svc,ing,pdb,secret,rolebinding",
        "-n",
        "team-a",
        "-o",
        "name",
    ]);
    for n in [
        "job.batch/once",
        "cronjob.batch/nightly",
        "service/svc",
        "ingress.networking.k8s.io/ing",
        "poddisruptionbudget.policy/pdb",
        "secret/tls",
        "rolebinding.rbac.authorization.k8s.io/rb",
    ] {
        assert!(all.contains(n), "{n} missing in:\n{all}");
    }
    let svc = s.ok(&["get", "svc", "svc", "-n", "team-a"]);
    assert!(svc.contains("80/TCP"), "{svc}");
}

#[test]
fn server_side_apply_creates_then_updates() {
    let s = Server::start();
    let out = s.ok_stdin(&["apply", "--server-side", "-f", "-"], DEPLOYMENT);
    assert!(
        out.contains("deployment.apps/web serverside-applied"),
        "{out}"
    );
    let changed = DEPLOYMENT
        .replace("replicas: 2", "replicas: 4")
        .replace("busybox:1.36", "busybox:1.37");
    s.ok_stdin(&["apply", "--server-side", "-f", "-"], &changed);
    let d = s.json(&["get", "deploy", "web"]);
    assert_eq!(
        (
            d["spec"]["replicas"].as_i64(),
            d["metadata"]["generation"].as_i64()
        ),
        (Some(4), Some(2))
    );
    let containers = d["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap();
    assert_eq!(
        (containers.len(), containers[1]["image"].as_str()),
        (2, Some("busybox:1.37"))
    );
}

#[test]
fn server_side_apply_tracks_field_managers() {
    let s = Server::start();
    let cm = |data: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: owned\ndata:\n{data}")
    };
    s.ok_stdin(
        &["apply", "--server-side", "-f", "-"],
        &cm("  a: \"1\"\n  b: \"2\"\n"),
    );
    s.ok_stdin(&["apply", "--server-side", "-f", "-"], &cm("  b: \"2\"\n"));
    let data = s.json(&["get", "cm", "owned"])["data"].clone();
    assert_eq!(
        data,
        serde_json::json!({"b": "2"}),
        "a field no longer applied is removed"
    );
    let shown = s.json(&["get", "cm", "owned", "--show-managed-fields"]);
    assert_eq!(shown["metadata"]["managedFields"][0]["manager"], "kubectl");
    assert_eq!(shown["metadata"]["managedFields"][0]["operation"], "Apply");
    let other = ["apply", "--server-side", "--field-manager=other", "-f", "-"];
    let out = s.kubectl_stdin(&other, Some(&cm("  b: \"3\"\n")));
    let err = crate::support::stderr(&out);
    assert!(
        err.contains(r#"Apply failed with 1 conflict: conflict with "kubectl" using v1: .data.b"#),
        "{err}"
    );
    let forced = [
        "apply",
        "--server-side",
        "--field-manager=other",
        "--force-conflicts",
        "-f",
        "-",
    ];
    s.ok_stdin(&forced, &cm("  b: \"3\"\n"));
    assert_eq!(s.json(&["get", "cm", "owned"])["data"]["b"], "3");
}
