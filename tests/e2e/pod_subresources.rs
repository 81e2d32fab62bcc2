//! Pod subresources without a kubelet: exec/attach/portforward/log answers,
//! binding, eviction with PodDisruptionBudgets, ephemeral containers,
//! resize, and the pod proxy without a pod network.

use crate::support::{stderr, Server};
use serde_json::{json, Value};

fn pod_path(name: &str, sub: &str) -> String {
    format!("/api/v1/namespaces/default/pods/{name}/{sub}")
}

fn post(s: &Server, path: &str, body: &Value) -> (u16, Value) {
    let (code, v, _) = s.request("POST", path, "application/json", Some(&body.to_string()));
    (code, v)
}

#[test]
fn streams_of_an_unscheduled_pod_get_kubes_answers() {
    let s = Server::start();
    s.ok(&["run", "web", "--image=nginx:1.27"]);
    let out = s.kubectl(&["exec", "web", "--", "ls"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("pod web does not have a host assigned"),
        "{}",
        stderr(&out)
    );
    for sub in [
        "exec?command=ls",
        "attach?stdout=true",
        "portforward?ports=80",
    ] {
        let (code, status) = post(&s, &pod_path("web", sub), &json!({}));
        assert_eq!(
            (code, status["reason"].as_str()),
            (400, Some("BadRequest")),
            "{sub}: {status}"
        );
        assert_eq!(status["message"], "pod web does not have a host assigned");
    }
    let (code, status) = s.get_json(&pod_path("web", "exec?command=ls&container=nope"));
    assert_eq!(code, 400);
    assert_eq!(status["message"], "container nope is not valid for pod web");
    // No node, no logs yet: kube answers 204 and kubectl prints nothing.
    assert_eq!(s.ok(&["logs", "web"]), "");
    let err = s.fails(&["logs", "web", "-c", "nope"]);
    assert!(
        err.contains("container nope is not valid for pod web"),
        "{err}"
    );
    let (code, status) = s.get_json(&pod_path("ghost", "log"));
    assert_eq!(
        (code, status["message"].as_str()),
        (404, Some(r#"pods "ghost" not found"#))
    );
}

#[test]
fn binding_assigns_a_node_once() {
    let s = Server::start();
    s.ok(&["run", "web", "--image=nginx:1.27"]);
    let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "web"},
                         "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}});
    let (code, status) = post(&s, &pod_path("web", "binding"), &binding);
    assert_eq!(
        (code, status["status"].as_str()),
        (201, Some("Success")),
        "{status}"
    );
    let pod = s.json(&["get", "pod", "web"]);
    assert_eq!(pod["spec"]["nodeName"], "n1");
    let scheduled = pod["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["type"] == "PodScheduled" && c["status"] == "True");
    assert!(scheduled, "{pod}");
    let (code, status) = post(&s, &pod_path("web", "binding"), &binding);
    assert_eq!(code, 409, "{status}");
    assert_eq!(
        status["message"],
        r#"Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "n1""#
    );
    let (code, status) = post(&s, &pod_path("other", "binding"), &binding);
    assert_eq!(
        (code, status["message"].as_str()),
        (
            400,
            Some("name in URL does not match name in Binding object")
        )
    );
    // Bound to a node that does not exist: exec is answered as kube does.
    let (code, status) = post(&s, &pod_path("web", "exec?command=ls"), &json!({}));
    assert_eq!(
        (code, status["message"].as_str()),
        (404, Some(r#"nodes "n1" not found"#))
    );
    // The node exists but no kubelet answers: kube's dial errors.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    s.ok_stdin(
        &["apply", "-f", "-"],
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n",
    );
    let status = format!(
        r#"{{"status":{{"addresses":[{{"type":"InternalIP","address":"127.0.0.1"}}],"daemonEndpoints":{{"kubeletEndpoint":{{"Port":{closed}}}}}}}}}"#
    );
    s.ok(&["patch", "node", "n1", "--subresource=status", "-p", &status]);
    let refused = format!("dial tcp 127.0.0.1:{closed}: connect: connection refused");
    let (code, status) = post(&s, &pod_path("web", "exec?command=ls"), &json!({}));
    assert_eq!(code, 500, "{status}");
    assert_eq!(
        status["message"],
        format!("error dialing backend: {refused}")
    );
    let (code, status) = s.get_json(&pod_path("web", "log"));
    assert_eq!(code, 500, "{status}");
    assert_eq!(
        status["message"],
        format!("Get \"https://127.0.0.1:{closed}/containerLogs/default/web/web\": {refused}")
    );
}

const PDB: &str = r#"
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: api-pdb}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: api}}
"#;

fn evict(s: &Server, name: &str) -> (u16, Value) {
    let eviction = json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": "default"}});
    post(s, &pod_path(name, "eviction"), &eviction)
}

#[test]
fn eviction_honours_pod_disruption_budgets() {
    let s = Server::start();
    s.ok(&["run", "pending", "--image=nginx:1.27", "--labels=app=api"]);
    s.ok_stdin(&["apply", "-f", "-"], PDB);
    // A pending pod is evicted whatever the budget says.
    let (code, status) = evict(&s, "pending");
    assert_eq!(
        (code, status["status"].as_str()),
        (201, Some("Success")),
        "{status}"
    );
    assert!(!s.kubectl(&["get", "pod", "pending"]).status.success());

    s.ok(&["run", "api", "--image=nginx:1.27", "--labels=app=api"]);
    s.ok(&[
        "patch",
        "pod",
        "api",
        "--subresource=status",
        "-p",
        r#"{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}"#,
    ]);
    let (code, status) = evict(&s, "api");
    assert_eq!(
        (code, status["reason"].as_str()),
        (429, Some("TooManyRequests")),
        "{status}"
    );
    assert_eq!(
        status["message"],
        "Cannot evict pod as it would violate the pod's disruption budget."
    );
    assert_eq!(
        status["details"]["causes"][0]["message"],
        "The disruption budget api-pdb is still being processed by the server."
    );
    s.ok(&["get", "pod", "api"]);

    let budget = |allowed: i64| {
        format!(
            r#"{{"status":{{"observedGeneration":1,"disruptionsAllowed":{allowed},"desiredHealthy":1,"currentHealthy":1,"expectedPods":1}}}}"#
        )
    };
    s.ok(&[
        "patch",
        "pdb",
        "api-pdb",
        "--subresource=status",
        "--type=merge",
        "-p",
        &budget(0),
    ]);
    let (code, status) = evict(&s, "api");
    assert_eq!(code, 429, "{status}");
    assert_eq!(
        status["details"]["causes"][0]["message"],
        "The disruption budget api-pdb needs 1 healthy pods and has 1 currently"
    );

    s.ok(&[
        "patch",
        "pdb",
        "api-pdb",
        "--subresource=status",
        "--type=merge",
        "-p",
        &budget(1),
    ]);
    let (code, status) = evict(&s, "api");
    assert_eq!(code, 201, "{status}");
    assert!(!s.kubectl(&["get", "pod", "api"]).status.success());
    let pdb = s.json(&["get", "pdb", "api-pdb"]);
    assert_eq!(pdb["status"]["disruptionsAllowed"], 0);
    assert!(pdb["status"]["disruptedPods"]["api"].is_string(), "{pdb}");
}

#[test]
fn ephemeral_containers_are_added_but_never_changed() {
    let s = Server::start();
    s.ok(&["run", "web", "--image=nginx:1.27"]);
    s.ok(&["debug", "web", "--image=busybox:1.36", "-c", "dbg"]);
    let (code, pod) = s.get_json(&pod_path("web", "ephemeralcontainers"));
    assert_eq!(code, 200);
    assert_eq!(pod["spec"]["ephemeralContainers"][0]["name"], "dbg");
    assert_eq!(
        pod["spec"]["ephemeralContainers"][0]["terminationMessagePolicy"],
        "File"
    );
    let removal = r#"{"spec":{"ephemeralContainers":[]}}"#;
    let (code, status, _) = s.request(
        "PATCH",
        &pod_path("web", "ephemeralcontainers"),
        "application/merge-patch+json",
        Some(removal),
    );
    assert_eq!(
        (code, status["reason"].as_str()),
        (422, Some("Invalid")),
        "{status}"
    );
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .contains(r#"existing ephemeral containers "dbg" may not be removed"#),
        "{status}"
    );
    let dup = r#"{"spec":{"ephemeralContainers":[{"name":"web","image":"busybox:1.36"}]}}"#;
    let (code, status, _) = s.request(
        "PATCH",
        &pod_path("web", "ephemeralcontainers"),
        "application/strategic-merge-patch+json",
        Some(dup),
    );
    assert_eq!(code, 422, "{status}");
    let cause = &status["details"]["causes"][0];
    assert_eq!(cause["reason"], "FieldValueDuplicate", "{status}");
    assert_eq!(cause["message"], r#"Duplicate value: "web""#);
    // The pod itself cannot add one.
    let err = s.fails(&[
        "patch",
        "pod",
        "web",
        "--type=merge",
        "-p",
        r#"{"spec":{"ephemeralContainers":[{"name":"x","image":"busybox:1.36"}]}}"#,
    ]);
    assert!(err.contains("Forbidden"), "{err}");
}

#[test]
fn discovery_lists_the_pod_subresources_as_kube_does() {
    let s = Server::start();
    let (_, list) = s.get_json("/api/v1");
    let entry = |name: &str| {
        list["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(entry("pods/eviction")["verbs"], json!(["create"]));
    assert_eq!(entry("pods/eviction")["group"], "policy");
    assert_eq!(entry("pods/exec")["kind"], "PodExecOptions");
    assert_eq!(entry("pods/exec")["verbs"], json!(["create", "get"]));
    assert_eq!(entry("pods/log")["verbs"], json!(["get"]));
    assert_eq!(entry("pods/binding")["kind"], "Binding");
    assert_eq!(
        entry("pods/ephemeralcontainers")["verbs"],
        json!(["get", "patch", "update"])
    );
    assert_eq!(entry("pods/resize")["kind"], "Pod");
    assert_eq!(
        entry("pods/resize")["verbs"],
        json!(["get", "patch", "update"])
    );
    assert_eq!(entry("pods/proxy")["kind"], "PodProxyOptions");
    assert_eq!(
        entry("pods/proxy")["verbs"],
        json!(["create", "delete", "get", "patch", "update"])
    );
}

const SIZED_POD: &str = "apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  containers:
  - name: app
    image: nginx:1.27
    ports: [{containerPort: 80}]
    resources:
      requests: {cpu: 100m, memory: 64Mi}
      limits: {cpu: 200m, memory: 128Mi}
";

fn resize(s: &Server, patch: &str) -> std::process::Output {
    s.kubectl(&["patch", "pod", "web", "--subresource=resize", "-p", patch])
}

#[test]
fn resize_changes_only_cpu_and_memory_as_kube_does() {
    let s = Server::start();
    s.ok_stdin(&["apply", "-f", "-"], SIZED_POD);
    // Only the containers' resources are taken; labels and images are not.
    let out = resize(
        &s,
        r#"{"metadata":{"labels":{"x":"y"}},"spec":{"containers":[{"name":"app","image":"other","resources":{"requests":{"cpu":"150m"}}}]}}"#,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let pod = s.json(&["get", "pod", "web"]);
    let app = &pod["spec"]["containers"][0];
    assert_eq!(
        app["resources"]["requests"],
        json!({"cpu": "150m", "memory": "64Mi"})
    );
    assert_eq!(app["image"], "nginx:1.27");
    assert_eq!(pod["metadata"]["labels"], json!({"app": "web"}));
    assert_eq!(pod["status"]["resize"], "Proposed");
    let (code, got) = s.get_json(&pod_path("web", "resize"));
    assert_eq!((code, got["kind"].as_str()), (200, Some("Pod")), "{got}");

    let refused = |patch: &str| {
        let out = resize(&s, patch);
        assert!(!out.status.success());
        stderr(&out)
    };
    let err = refused(
        r#"{"spec":{"containers":[{"name":"app","resources":{"requests":{"ephemeral-storage":"1Gi"}}}]}}"#,
    );
    assert!(
        err.contains("spec: Forbidden: only cpu and memory resources are mutable"),
        "{err}"
    );
    let err = refused(
        r#"{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"200m","memory":"128Mi"}}}]}}"#,
    );
    assert!(
        err.contains(r#"spec: Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing"#),
        "{err}"
    );
    let merge = s.kubectl(&[
        "patch",
        "pod",
        "web",
        "--subresource=resize",
        "--type=merge",
        "-p",
        r#"{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"150m"}}}]}}"#,
    ]);
    let err = stderr(&merge);
    assert!(
        err.contains(
            "spec.containers[0].resources.requests: Forbidden: resource requests cannot be removed"
        ) && err.contains(
            "spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed"
        ),
        "{err}"
    );
    // The pod itself still cannot change its resources, and resize has no POST.
    let err = s.fails(&[
        "patch",
        "pod",
        "web",
        "-p",
        r#"{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"120m"}}}]}}"#,
    ]);
    assert!(err.contains("pod updates may not change fields"), "{err}");
    let (code, status) = post(&s, &pod_path("web", "resize"), &json!({}));
    assert_eq!(
        (code, status["reason"].as_str()),
        (405, Some("MethodNotAllowed"))
    );
}

fn set_pod_ip(s: &Server, ip: &str) {
    let status = format!(r#"{{"status":{{"podIP":"{ip}","podIPs":[{{"ip":"{ip}"}}]}}}}"#);
    s.ok(&["patch", "pod", "web", "--subresource=status", "-p", &status]);
}

#[test]
fn pod_proxy_answers_as_kube_does_without_a_pod_network() {
    let s = Server::start();
    let (code, status) = s.get_json(&pod_path("ghost", "proxy/"));
    assert_eq!(
        (code, status["message"].as_str()),
        (404, Some(r#"pods "ghost" not found"#))
    );
    let (code, status) = s.get_json(&pod_path("a:b:c:d", "proxy/"));
    assert_eq!(
        (code, status["message"].as_str()),
        (400, Some(r#"invalid pod request "a:b:c:d""#))
    );
    s.ok_stdin(&["apply", "-f", "-"], SIZED_POD);
    // No IP yet (no kubelet), or one that is not a pod's: kube's 400.
    let err = s.fails(&["get", "--raw", &pod_path("web", "proxy/healthz")]);
    assert!(
        err.contains("Error from server (BadRequest): address not allowed"),
        "{err}"
    );
    set_pod_ip(&s, "127.0.0.1");
    let (code, status) = s.get_json(&pod_path("web", "proxy/"));
    assert_eq!(
        (code, status["message"].as_str()),
        (400, Some("address not allowed"))
    );
    // With an IP, a bare `proxy` is redirected to `proxy/` before any dial.
    set_pod_ip(&s, "10.244.0.7");
    let (code, _, headers) = s.request(
        "GET",
        &pod_path("web", "proxy?x=1"),
        "application/json",
        None,
    );
    assert_eq!(code, 301, "{headers}");
    assert!(
        headers
            .to_ascii_lowercase()
            .contains("location: /api/v1/namespaces/default/pods/web/proxy/?x=1"),
        "{headers}"
    );
    let Some(ip) = crate::support::routed_local_ip() else {
        eprintln!("no routed address here: the pod proxy's forwarding is not tried");
        return;
    };
    set_pod_ip(&s, &ip.to_string());
    let closed = std::net::TcpListener::bind((ip, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (code, status) = s.get_json(&pod_path(&format!("web:{closed}"), "proxy/x"));
    assert_eq!(
        (code, status["reason"].as_str()),
        (503, Some("ServiceUnavailable")),
        "{status}"
    );
    let addr = std::net::SocketAddr::new(ip, closed);
    assert_eq!(
        status["message"],
        format!("error trying to reach service: dial tcp {addr}: connect: connection refused")
    );
}
