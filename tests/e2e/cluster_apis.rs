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
