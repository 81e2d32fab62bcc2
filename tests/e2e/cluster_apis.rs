//! Cluster-level APIs clients call without a kubelet: componentstatuses,
//! APIServices, CertificateSigningRequests and their signer, node and
//! service proxies.

use crate::support::{stderr, stdout, Server};

#[test]
fn componentstatuses_report_what_is_true_here() {
    let s = Server::start();
    let out = s.kubectl(&["get", "cs"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let table = stdout(&out);
    assert!(
        table.starts_with("NAME") && table.contains("MESSAGE") && table.contains("ERROR"),
        "{table}"
    );
    assert!(
        table.lines().any(|l| l.starts_with("controller-manager")
            && l.contains("Healthy")
            && l.contains("ok")),
        "{table}"
    );
    assert!(table.lines().any(|l| l.starts_with("scheduler")), "{table}");
    assert!(
        !table.contains("etcd-0"),
        "no etcd behind the embedded store: {table}"
    );
    assert!(
        stderr(&out).contains("v1 ComponentStatus is deprecated in v1.19+"),
        "{}",
        stderr(&out)
    );
    let cm = s.json(&["get", "componentstatus", "controller-manager"]);
    assert_eq!(cm["kind"], "ComponentStatus");
    assert_eq!(cm["conditions"][0]["type"], "Healthy");
    assert_eq!(cm["conditions"][0]["status"], "True");
    let err = s.fails(&["get", "cs", "nope"]);
    assert!(
        err.contains(r#"componentstatuses "nope" not found"#),
        "{err}"
    );
    let (code, status, _) = s.request(
        "POST",
        "/api/v1/componentstatuses",
        "application/json",
        Some("{}"),
    );
    assert_eq!(
        (code, status["reason"].as_str()),
        (405, Some("MethodNotAllowed")),
        "{status}"
    );
}

/// A key (PEM) and a certificate request for `user` in `group` (PEM).
fn client_request(user: &str, group: &str) -> (String, String) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, group);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, user);
    let csr = params.serialize_request(&key).unwrap().pem().unwrap();
    (key.serialize_pem(), csr)
}

fn b64(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(text)
}

fn csr_manifest(name: &str, request_pem: &str, usages: &str) -> String {
    format!(
        "apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata:\n  name: {name}\nspec:\n  request: {}\n  signerName: kubernetes.io/kube-apiserver-client\n  expirationSeconds: 3600\n  usages: [{usages}]\n",
        b64(request_pem)
    )
}

#[test]
fn an_approved_csr_is_signed_and_its_certificate_authenticates() {
    let s = Server::start();
    let (key, request) = client_request("jane", "dev");
    s.ok_stdin(
        &["apply", "-f", "-"],
        &csr_manifest("jane", &request, "client auth"),
    );
    let table = s.ok(&["get", "csr"]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        [
            "NAME",
            "AGE",
            "SIGNERNAME",
            "REQUESTOR",
            "REQUESTEDDURATION",
            "CONDITION"
        ]
    );
    let row = table.lines().find(|l| l.starts_with("jane")).unwrap();
    assert!(
        row.contains("kubernetes.io/kube-apiserver-client")
            && row.contains("capstan-admin")
            && row.contains("60m")
            && row.ends_with("Pending"),
        "{table}"
    );
    let csr = s.json(&["get", "csr", "jane"]);
    assert_eq!(csr["spec"]["username"], "capstan-admin");

    let out = s.ok(&["certificate", "approve", "jane"]);
    assert!(out.contains("approved"), "{out}");
    let issued = crate::support::eventually(std::time::Duration::from_secs(10), || {
        s.json(&["get", "csr", "jane"])["status"]["certificate"].is_string()
    });
    assert!(issued, "{}", s.log());
    let csr = s.json(&["get", "csr", "jane"]);
    assert_eq!(csr["status"]["conditions"][0]["reason"], "KubectlApprove");
    let row = s.ok(&["get", "csr", "jane"]);
    assert!(row.contains("Approved,Issued"), "{row}");
    use base64::Engine;
    let cert = base64::engine::general_purpose::STANDARD
        .decode(csr["status"]["certificate"].as_str().unwrap())
        .unwrap();
    let ca = std::fs::read_to_string(s.pki("ca.crt")).unwrap();
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority-data: {}\nusers:\n- name: jane\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\ncontexts:\n- name: jane\n  context: {{cluster: c, user: jane}}\ncurrent-context: jane\n",
        s.url(""), b64(&ca), b64(&String::from_utf8(cert).unwrap()), b64(&key)
    );
    let path = s.dir.path().join("jane.kubeconfig");
    std::fs::write(&path, kubeconfig).unwrap();
    let out = s.kubectl_with(&path, &["auth", "whoami", "-o", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let me: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(me["status"]["userInfo"]["username"], "jane");
    let groups = me["status"]["userInfo"]["groups"].to_string();
    assert!(
        groups.contains("\"dev\"") && groups.contains("system:authenticated"),
        "{groups}"
    );
}

#[test]
fn csr_rules_are_kubes() {
    let s = Server::start();
    let (_, request) = client_request("bob", "dev");
    // A server certificate usage for the client signer: the signer fails it.
    s.ok_stdin(
        &["apply", "-f", "-"],
        &csr_manifest("bad-usage", &request, "server auth"),
    );
    s.ok(&["certificate", "approve", "bad-usage"]);
    let failed = crate::support::eventually(std::time::Duration::from_secs(10), || {
        s.ok(&["get", "csr", "bad-usage"])
            .contains("Approved,Failed")
    });
    assert!(
        failed,
        "{}",
        s.ok(&["get", "csr", "bad-usage", "-o", "yaml"])
    );
    let csr = s.json(&["get", "csr", "bad-usage"]);
    assert_eq!(
        csr["status"]["conditions"][1]["message"],
        "invalid usage for client certificate: server auth"
    );

    let manifest = csr_manifest("short", "not a request", "client auth").replace("3600", "60");
    let out = s.kubectl_stdin(&["create", "-f", "-"], Some(&manifest));
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(r#"The CertificateSigningRequest "short" is invalid"#),
        "{err}"
    );
    assert!(
        err.contains("PEM block type must be CERTIFICATE REQUEST"),
        "{err}"
    );
    assert!(
        err.contains("may not specify a duration less than 600 seconds (10 minutes)"),
        "{err}"
    );

    // Approved and Denied at once is refused, and the approval stays.
    let mut both = s.json(&["get", "csr", "bad-usage"]);
    both["status"]["conditions"] = serde_json::json!([
        {"type": "Approved", "status": "True", "reason": "R"},
        {"type": "Denied", "status": "True", "reason": "R"}]);
    let (code, status, _) = s.request(
        "PUT",
        "/apis/certificates.k8s.io/v1/certificatesigningrequests/bad-usage/approval",
        "application/json",
        Some(&both.to_string()),
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
            .contains("Approved and Denied conditions are mutually exclusive"),
        "{status}"
    );
    // The spec cannot be changed.
    s.ok(&[
        "patch",
        "csr",
        "bad-usage",
        "--type=merge",
        "-p",
        r#"{"spec":{"signerName":"example.com/other"}}"#,
    ]);
    assert_eq!(
        s.json(&["get", "csr", "bad-usage"])["spec"]["signerName"],
        "kubernetes.io/kube-apiserver-client"
    );
}

const API_SERVICE: &str = r#"
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.metrics.example.com}
spec:
  group: metrics.example.com
  version: v1beta1
  groupPriorityMinimum: 100
  versionPriority: 100
  service: {namespace: kube-system, name: metrics}
"#;

#[test]
fn apiservices_are_served_stored_and_discovered() {
    let s = Server::start();
    let local = s.ok(&["get", "apiservices"]);
    for name in [
        "v1.",
        "v1.apps",
        "v1.certificates.k8s.io",
        "v1.flowcontrol.apiserver.k8s.io",
    ] {
        let row = local
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name));
        assert!(
            row.is_some_and(|r| r.contains("Local") && r.contains("True")),
            "{name}: {local}"
        );
    }
    assert!(
        !local.contains("v1.apiregistration.k8s.io"),
        "kube registers no APIService for the aggregator's own group: {local}"
    );
    let resources = s.ok(&["api-resources", "--api-group=apiregistration.k8s.io"]);
    assert!(
        resources.contains("apiservices") && resources.contains("APIService"),
        "{resources}"
    );
    s.ok_stdin(&["apply", "-f", "-"], API_SERVICE);
    let table = s.ok(&["get", "apiservices"]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "SERVICE", "AVAILABLE", "AGE"]);
    assert!(
        table.contains("v1beta1.metrics.example.com") && table.contains("kube-system/metrics"),
        "{table}"
    );
    s.ok(&["patch", "apiservice", "v1beta1.metrics.example.com", "--subresource=status", "--type=merge",
           "-p", r#"{"status":{"conditions":[{"type":"Available","status":"False","reason":"MissingEndpoints","lastTransitionTime":"2025-01-01T00:00:00Z"}]}}"#]);
    assert!(s
        .ok(&["get", "apiservices"])
        .contains("False (MissingEndpoints)"));
    let (_, groups) = s.get_json("/apis");
    let names: Vec<&str> = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|g| g["name"].as_str())
        .collect();
    assert!(
        names.contains(&"apiregistration.k8s.io") && names.contains(&"certificates.k8s.io"),
        "{names:?}"
    );
    s.ok(&["delete", "apiservice", "v1beta1.metrics.example.com"]);
}

/// A one-request HTTP backend on 127.0.0.1 answering with the path it got.
fn one_shot_backend(ip: std::net::IpAddr) -> (u16, std::thread::JoinHandle<()>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind((ip, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut first = String::new();
        reader.read_line(&mut first).unwrap();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line.trim().is_empty() {
                break;
            }
        }
        let path = first
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_string();
        let body = format!("hello from {path}");
        let mut stream = stream;
        write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()).unwrap();
    });
    (port, handle)
}

fn endpoints(subsets: &str) -> String {
    format!("apiVersion: v1\nkind: Endpoints\nmetadata: {{name: web}}\nsubsets: {subsets}\n")
}

#[test]
fn service_proxy_reaches_endpoints_or_says_why_not() {
    let s = Server::start();
    s.ok(&["create", "service", "clusterip", "web", "--tcp=80:8080"]);
    let base = "/api/v1/namespaces/default/services";
    let (code, status) = s.get_json(&format!("{base}/web/proxy/"));
    assert_eq!(
        (code, status["message"].as_str()),
        (404, Some(r#"endpoints "web" not found"#)),
        "{status}"
    );
    s.ok_stdin(&["apply", "-f", "-"], &endpoints("[]"));
    let (code, status) = s.get_json(&format!("{base}/web/proxy/"));
    assert_eq!(
        (code, status["reason"].as_str()),
        (503, Some("ServiceUnavailable")),
        "{status}"
    );
    assert_eq!(
        status["message"],
        r#"no endpoints available for service "web""#
    );
    let (code, status) = s.get_json(&format!("{base}/web:81/proxy/"));
    assert_eq!(
        (code, status["message"].as_str()),
        (503, Some(r#"no service port 81 found for service "web""#))
    );
    let (code, status) = s.get_json(&format!("{base}/ftp:web:80/proxy/"));
    assert_eq!(
        (code, status["message"].as_str()),
        (400, Some(r#"invalid service request "ftp:web:80""#))
    );

    // kube refuses loopback endpoints: the backend listens on the routed address.
    let Some(ip) = crate::support::routed_local_ip() else {
        eprintln!("no routed address here: the service proxy's forwarding is not tried");
        return;
    };
    let (port, backend) = one_shot_backend(ip);
    let subsets =
        format!("[{{addresses: [{{ip: {ip}}}], ports: [{{name: 80-8080, port: {port}}}]}}]");
    s.ok_stdin(&["apply", "-f", "-"], &endpoints(&subsets));
    let answer = s.ok(&[
        "get",
        "--raw",
        &format!("{base}/web:80/proxy/hello/there?x=1"),
    ]);
    assert_eq!(answer, "hello from /hello/there?x=1");
    backend.join().unwrap();
    let (code, status) = s.get_json(&format!("{base}/web:80/proxy/"));
    assert_eq!(
        (code, status["reason"].as_str()),
        (503, Some("ServiceUnavailable")),
        "{status}"
    );
    assert_eq!(
        status["message"],
        format!("error trying to reach service: dial tcp {ip}:{port}: connect: connection refused")
    );
}

#[test]
fn node_proxy_answers_as_kube_does_without_a_kubelet() {
    let s = Server::start();
    let (code, status) = s.get_json("/api/v1/nodes/n1/proxy/healthz");
    assert_eq!(
        (code, status["message"].as_str()),
        (404, Some(r#"nodes "n1" not found"#))
    );
    s.ok_stdin(
        &["apply", "-f", "-"],
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n",
    );
    let (code, status) = s.get_json("/api/v1/nodes/n1/proxy/healthz");
    assert_eq!(
        (code, status["message"].as_str()),
        (
            500,
            Some("no preferred addresses found; known addresses: []")
        ),
        "{status}"
    );
    s.ok(&[
        "patch",
        "node",
        "n1",
        "--subresource=status",
        "-p",
        r#"{"status":{"addresses":[{"type":"InternalIP","address":"127.0.0.1"}]}}"#,
    ]);
    let (code, status) = s.get_json("/api/v1/nodes/n1/proxy/healthz");
    assert_eq!(
        (code, status["message"].as_str()),
        (400, Some("address not allowed")),
        "{status}"
    );
    let (_, list) = s.get_json("/api/v1");
    let proxy = list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "nodes/proxy")
        .cloned()
        .unwrap_or_default();
    assert_eq!(proxy["kind"], "NodeProxyOptions");
    assert_eq!(
        proxy["verbs"],
        serde_json::json!(["create", "delete", "get", "patch", "update"])
    );
}
