//! API Priority and Fairness with the real binary: a FlowSchema sending
//! one user to a small priority level that rejects beyond its share; that
//! user's flood gets kube's 429 while another user's requests keep
//! succeeding; answers name the FlowSchema and priority level by UID, and
//! the rejections are counted.

use crate::support::{stdout, Server};
use base64::Engine;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const CONFIG: &str = r#"apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: flood-level}
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 1
    limitResponse: {type: Reject}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: flood}
spec:
  priorityLevelConfiguration: {name: flood-level}
  matchingPrecedence: 500
  distinguisherMethod: {type: ByUser}
  rules:
  - subjects: [{kind: User, user: {name: flooder}}]
    resourceRules: [{verbs: ["*"], apiGroups: ["*"], resources: ["*"], clusterScope: true, namespaces: ["*"]}]
"#;

/// The client certificate and key of a kubeconfig, as files for curl.
fn credentials(kubeconfig: &Path, dir: &Path, user: &str) -> (PathBuf, PathBuf) {
    let doc: Value =
        capstan::apimachinery::yaml::config_from_str(&std::fs::read_to_string(kubeconfig).unwrap())
            .unwrap();
    let u = &doc["users"][0]["user"];
    let write = |key: &str, suffix: &str| {
        let pem = base64::engine::general_purpose::STANDARD
            .decode(u[key].as_str().unwrap())
            .unwrap();
        let path = dir.join(format!("{user}.{suffix}"));
        std::fs::write(&path, pem).unwrap();
        path
    };
    (
        write("client-certificate-data", "crt"),
        write("client-key-data", "key"),
    )
}

fn get(url: &str, (cert, key): &(PathBuf, PathBuf)) -> (String, String) {
    let out = Command::new("curl")
        .args([
            "-sk",
            "-D",
            "-",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "--cert",
        ])
        .arg(cert)
        .arg("--key")
        .arg(key)
        .arg(url)
        .output()
        .unwrap();
    let text = stdout(&out);
    let code = text.lines().last().unwrap_or_default().to_string();
    (code, text)
}

#[test]
fn one_users_flood_is_rejected_while_another_user_is_served() {
    let s = Server::start_with(&[
        "--max-requests-inflight",
        "1",
        "--max-mutating-requests-inflight",
        "1",
    ]);
    s.ok_stdin(&["apply", "-f", "-"], CONFIG);
    s.ok(&[
        "create",
        "clusterrolebinding",
        "readers",
        "--clusterrole=view",
        "--user=flooder",
        "--user=steady",
    ]);
    for i in 0..200 {
        s.ok(&[
            "create",
            "configmap",
            &format!("c{i}"),
            "--from-literal=k=v",
        ]);
    }
    let dir = tempfile::tempdir().unwrap();
    let flooder = credentials(&s.user_kubeconfig("flooder", &[]), dir.path(), "flooder");
    let steady = credentials(&s.user_kubeconfig("steady", &[]), dir.path(), "steady");
    let url = s.url("/api/v1/namespaces/default/configmaps");
    let schema_uid = s.ok(&[
        "get",
        "flowschema",
        "flood",
        "-o",
        "jsonpath={.metadata.uid}",
    ]);
    // The schema is in effect once the flooder's answers name it.
    assert!(crate::support::eventually(
        std::time::Duration::from_secs(10),
        || {
            get(&url, &flooder)
                .1
                .to_ascii_lowercase()
                .contains(&schema_uid)
        }
    ));
    let floods: Vec<_> = (0..24)
        .map(|_| {
            let (url, creds) = (url.clone(), flooder.clone());
            std::thread::spawn(move || (0..5).map(|_| get(&url, &creds).0).collect::<Vec<_>>())
        })
        .collect();
    let steady_codes: Vec<String> = (0..20).map(|_| get(&url, &steady).0).collect();
    let flood_codes: Vec<String> = floods.into_iter().flat_map(|t| t.join().unwrap()).collect();
    assert!(flood_codes.iter().any(|c| c == "429"), "{flood_codes:?}");
    assert!(flood_codes.iter().any(|c| c == "200"), "{flood_codes:?}");
    assert!(steady_codes.iter().all(|c| c == "200"), "{steady_codes:?}");
    let metrics = s.ok(&["get", "--raw", "/metrics"]);
    let rejected = r#"apiserver_flowcontrol_rejected_requests_total{flow_schema="flood",priority_level="flood-level",reason="concurrency-limit"} "#;
    assert!(
        metrics.lines().any(|l| l.starts_with(rejected)),
        "{metrics}"
    );
}
