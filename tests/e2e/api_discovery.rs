//! A new user's first commands: namespaces, discovery, version, health, explain.

use crate::support::Server;

#[test]
fn fresh_server_has_the_system_namespaces() {
    let s = Server::start();
    let out = s.ok(&["get", "ns"]);
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(ns) && l.contains("Active")),
            "{ns} missing in:\n{out}"
        );
    }
    assert!(out.starts_with("NAME"), "table header expected:\n{out}");
}

#[test]
fn api_resources_lists_builtins_with_scope_and_short_names() {
    let s = Server::start();
    let out = s.ok(&["api-resources"]);
    let row = |name: &str| {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
    };
    assert_eq!(
        row("deployments").unwrap(),
        ["deployments", "deploy", "apps/v1", "true", "Deployment"]
    );
    assert_eq!(row("pods").unwrap(), ["pods", "po", "v1", "true", "Pod"]);
    assert_eq!(
        row("namespaces").unwrap(),
        ["namespaces", "ns", "v1", "false", "Namespace"]
    );
    assert_eq!(
        row("clusterroles").unwrap(),
        [
            "clusterroles",
            "rbac.authorization.k8s.io/v1",
            "false",
            "ClusterRole"
        ]
    );
    let versions = s.ok(&["api-versions"]);
    for gv in [
        "v1",
        "apps/v1",
        "batch/v1",
        "rbac.authorization.k8s.io/v1",
        "networking.k8s.io/v1",
        "admissionregistration.k8s.io/v1",
    ] {
        assert!(
            versions.lines().any(|l| l == gv),
            "{gv} missing in:\n{versions}"
        );
    }
}

#[test]
fn version_reports_kubernetes_level_and_capstan_build() {
    let s = Server::start();
    let (code, v) = s.get_json("/version");
    assert_eq!(code, 200);
    assert_eq!(
        (v["major"].as_str(), v["minor"].as_str()),
        (Some("1"), Some("33"))
    );
    assert!(
        v["gitVersion"]
            .as_str()
            .unwrap()
            .starts_with("v1.33.0+capstan"),
        "{v}"
    );
    let out = s.ok(&["version", "-o", "json"]);
    assert!(
        out.contains("serverVersion") && out.contains("capstan"),
        "{out}"
    );
}

#[test]
fn health_endpoints_answer_with_verbose_checks() {
    let s = Server::start();
    for path in ["/healthz", "/livez", "/readyz"] {
        let out = s.curl(&[&s.url(path)]);
        assert_eq!(crate::support::stdout(&out), "ok");
    }
    let verbose = crate::support::stdout(&s.curl(&[&s.url("/readyz?verbose")]));
    assert!(
        verbose.contains("[+]etcd ok") && verbose.contains("readyz check passed"),
        "{verbose}"
    );
}

#[test]
fn requests_without_credentials_are_anonymous_and_forbidden() {
    let s = Server::start();
    let mut cmd = std::process::Command::new("curl");
    cmd.args(["-sS", "--cacert"]).arg(s.pki("ca.crt")).args([
        "-w",
        "\n%{http_code}",
        &s.url("/api/v1/namespaces"),
    ]);
    let out = crate::support::stdout(&cmd.output().unwrap());
    assert!(out.ends_with("403"), "{out}");
    assert!(
        out.contains(r#"namespaces is forbidden: User \"system:anonymous\" cannot list resource \"namespaces\" in API group \"\" at the cluster scope"#),
        "{out}"
    );
    let mut health = std::process::Command::new("curl");
    health
        .args(["-sS", "--cacert"])
        .arg(s.pki("ca.crt"))
        .arg(s.url("/healthz"));
    assert_eq!(crate::support::stdout(&health.output().unwrap()), "ok");
}

#[test]
fn explain_prints_field_descriptions_from_openapi_v3() {
    let s = Server::start();
    let out = s.ok(&["explain", "deployment.spec.replicas"]);
    assert!(out.contains("KIND:") && out.contains("Deployment"), "{out}");
    assert!(
        out.to_lowercase().contains("number of desired pods"),
        "{out}"
    );
}

#[test]
fn aggregated_discovery_is_served_when_asked_for() {
    let s = Server::start();
    let accept = "Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    let out = crate::support::stdout(&s.curl(&["-i", "-H", accept, &s.url("/apis")]));
    assert!(
        out.to_lowercase().contains(
            "content-type: application/json;g=apidiscovery.k8s.io;v=v2;as=apigroupdiscoverylist"
        ),
        "{out}"
    );
    let body = out.split("\r\n\r\n").nth(1).unwrap();
    let v: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(v["kind"], "APIGroupDiscoveryList");
    let apps = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["metadata"]["name"] == "apps")
        .unwrap();
    let deploy = apps["versions"][0]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["resource"] == "deployments")
        .unwrap();
    assert!(deploy["subresources"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["subresource"] == "scale"));
}

/// `GET /` answers kube's list of paths: every discovery path kube-apiserver
/// 1.32 lists (recorded in `data/kube-root-paths.json`), Capstan's own
/// groups, the probes with each check; sorted. Anonymous users may not read it.
#[test]
fn the_root_lists_every_served_path_as_kube_does() {
    let s = Server::start();
    let text = s.ok(&["get", "--raw", "/"]);
    assert!(
        text.starts_with("{\n  \"paths\": [\n    \"/.")
            || text.starts_with("{\n  \"paths\": [\n    \"/api\""),
        "{text}"
    );
    let ours: serde_json::Value = serde_json::from_str(&text).unwrap();
    let ours: Vec<&str> = ours["paths"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p.as_str())
        .collect();
    let mut sorted = ours.clone();
    sorted.sort();
    assert_eq!(ours, sorted);
    let kube: serde_json::Value =
        serde_json::from_str(include_str!("data/kube-root-paths.json")).unwrap();
    let kube_discovery = kube["paths"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p.as_str())
        .filter(|p| p.starts_with("/api"));
    let missing: Vec<&str> = kube_discovery.filter(|p| !ours.contains(p)).collect();
    assert!(missing.is_empty(), "not listed: {missing:?}");
    for path in [
        "/apis/policies.capstan.dev/v1alpha1",
        "/readyz/shutdown",
        "/healthz/etcd",
        "/version",
        "/metrics",
    ] {
        assert!(ours.contains(&path), "{path}");
    }
    let out = std::process::Command::new("curl")
        .args(["-sk", "-o", "/dev/null", "-w", "%{http_code}", &s.url("/")])
        .output()
        .unwrap();
    assert_eq!(crate::support::stdout(&out), "403");
}
