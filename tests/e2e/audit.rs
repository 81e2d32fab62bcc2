//! Audit logging with the real binary: an audit policy with per-resource
//! levels, a kubectl session, and the events in the log (and at a webhook)
//! compared with what kube-apiserver 1.32 writes for the same session:
//! stages, levels, objectRef, responseStatus, bodies only where the level
//! says, impersonation, the authorization annotations, rotation.

use crate::support::{eventually, stdout, Server};
use http_body_util::BodyExt;
use serde_json::Value;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const POLICY: &str = r#"apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
omitManagedFields: true
rules:
- level: None
  users: [ignored]
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*", "/openapi*", /api, /apis, "/api/*", "/apis/*"]
- level: Metadata
  resources: [{group: "", resources: [secrets]}]
- level: RequestResponse
  resources: [{group: "", resources: [configmaps]}]
- level: Metadata
"#;

fn events(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str(l).expect("one JSON event a line"))
        .collect()
}

/// The events about namespace `ns`, as (verb, resource, stage, level, code).
fn summary(all: &[Value], ns: &str) -> Vec<(String, String, String, String, u64)> {
    let text = |e: &Value, p: &str| {
        e.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    all.iter()
        .filter(|e| e.pointer("/objectRef/namespace").and_then(Value::as_str) == Some(ns))
        .map(|e| {
            (
                text(e, "/verb"),
                text(e, "/objectRef/resource"),
                text(e, "/stage"),
                text(e, "/level"),
                e.pointer("/responseStatus/code")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
            )
        })
        .collect()
}

pub(crate) fn started(dir: &Path, extra: &[&str]) -> Server {
    let policy = dir.join("policy.yaml");
    std::fs::write(&policy, POLICY).unwrap();
    let log = dir.join("audit.log");
    let mut args = vec![
        "--audit-policy-file".to_string(),
        policy.display().to_string(),
        "--audit-log-path".to_string(),
        log.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Server::start_with(&args)
}

#[test]
fn a_kubectl_session_is_audited_at_the_policys_levels() {
    let dir = tempfile::tempdir().unwrap();
    let s = started(dir.path(), &[]);
    let log = dir.path().join("audit.log");
    s.ok(&["create", "namespace", "audited"]);
    s.ok(&[
        "-n",
        "audited",
        "create",
        "secret",
        "generic",
        "s1",
        "--from-literal=k=v",
    ]);
    s.ok(&["-n", "audited", "get", "secret", "s1"]);
    s.ok(&[
        "-n",
        "audited",
        "create",
        "configmap",
        "c1",
        "--from-literal=a=b",
    ]);
    s.ok(&["-n", "audited", "delete", "configmap", "c1"]);
    let denied = s.kubectl(&["-n", "audited", "get", "pods", "--as=someone"]);
    assert!(!denied.status.success());
    let ignored = s.user_kubeconfig("ignored", &[]);
    let _ = s.kubectl_with(&ignored, &["-n", "audited", "get", "configmaps"]);
    // A client's Audit-ID is kept, and answered.
    let out = s.curl(&[
        "-sk",
        "-D",
        "-",
        "-o",
        "/dev/null",
        "-H",
        "Audit-ID: my-audit-id",
        &s.url("/api/v1/namespaces/audited/configmaps"),
    ]);
    assert!(
        stdout(&out)
            .to_ascii_lowercase()
            .contains("audit-id: my-audit-id"),
        "{}",
        stdout(&out)
    );

    let wanted = 7;
    assert!(
        eventually(Duration::from_secs(10), || summary(
            &events(&log),
            "audited"
        )
        .len()
            >= wanted),
        "{:?}",
        summary(&events(&log), "audited")
    );
    let all = events(&log);
    let seen: Vec<_> = summary(&all, "audited");
    let row = |verb: &str, resource: &str, level: &str, code: u64| {
        (
            verb.to_string(),
            resource.to_string(),
            "ResponseComplete".to_string(),
            level.to_string(),
            code,
        )
    };
    assert_eq!(
        seen,
        [
            row("create", "secrets", "Metadata", 201),
            row("get", "secrets", "Metadata", 200),
            row("create", "configmaps", "RequestResponse", 201),
            row("delete", "configmaps", "RequestResponse", 200),
            row("get", "configmaps", "RequestResponse", 404),
            row("list", "pods", "Metadata", 403),
            row("list", "configmaps", "RequestResponse", 200),
        ],
        "RequestReceived omitted; nothing for the user `ignored`"
    );
    let of = |verb: &str, resource: &str| {
        all.iter()
            .find(|e| {
                e["verb"] == verb
                    && e["objectRef"]["resource"] == resource
                    && e["objectRef"]["namespace"] == "audited"
            })
            .unwrap()
            .clone()
    };
    let secret = of("create", "secrets");
    assert!(secret.get("requestObject").is_none() && secret.get("responseObject").is_none());
    assert_eq!(
        secret["objectRef"]["name"], "s1",
        "a create is named by its object"
    );
    assert_eq!(
        secret["annotations"]["authorization.k8s.io/decision"],
        "allow"
    );
    let configmap = of("create", "configmaps");
    assert_eq!(
        configmap["requestObject"]["data"]["a"], "b",
        "kubectl's protobuf body, decoded"
    );
    assert_eq!(configmap["responseObject"]["data"]["a"], "b");
    assert!(
        configmap["responseObject"]["metadata"]
            .get("managedFields")
            .is_none(),
        "omitManagedFields"
    );
    // A list served from stored bytes carries its responseObject too.
    let listed = all
        .iter()
        .find(|e| e["auditID"] == "my-audit-id" && e["stage"] == "ResponseComplete")
        .expect("the curl list's event");
    assert_eq!(
        listed["responseObject"]["kind"], "ConfigMapList",
        "{listed}"
    );
    let deleted = of("delete", "configmaps");
    assert_eq!(deleted["responseStatus"]["status"], "Success");
    let forbidden = of("list", "pods");
    assert_eq!(forbidden["impersonatedUser"]["username"], "someone");
    assert_eq!(
        forbidden["annotations"]["authorization.k8s.io/decision"],
        "forbid"
    );
    assert_eq!(forbidden["responseStatus"]["reason"], "Forbidden");
    assert!(all.iter().all(|e| e["user"]["username"] != "ignored"));
    let ours = all
        .iter()
        .find(|e| e["auditID"] == "my-audit-id")
        .expect("the client's Audit-ID");
    assert_eq!(ours["verb"], "list");

    let metrics = s.ok(&["get", "--raw", "/metrics"]);
    let counted = metrics
        .lines()
        .find_map(|l| l.strip_prefix("apiserver_audit_event_total "))
        .and_then(|n| n.parse::<f64>().ok())
        .unwrap_or(0.0);
    assert!(counted >= all.len() as f64, "{counted} < {}", all.len());
}

#[test]
fn the_log_is_rotated_and_events_reach_a_webhook_in_batches() {
    let dir = tempfile::tempdir().unwrap();
    let (port, ca, received) = start_collector();
    let kubeconfig = dir.path().join("webhook.kubeconfig");
    let b64 = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, ca);
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: audit\n  cluster:\n    server: https://127.0.0.1:{port}/events\n    certificate-authority-data: {b64}\n\
             users:\n- name: audit\n  user: {{}}\ncontexts:\n- name: audit\n  context: {{cluster: audit, user: audit}}\ncurrent-context: audit\n"
        ),
    )
    .unwrap();
    let kc = kubeconfig.display().to_string();
    let s = started(
        dir.path(),
        &[
            "--audit-log-maxsize",
            "1",
            "--audit-log-maxbackup",
            "1",
            "--audit-webhook-config-file",
            &kc,
            "--audit-webhook-batch-max-size",
            "5",
            "--audit-webhook-batch-max-wait",
            "1s",
        ],
    );
    s.ok(&["create", "namespace", "big"]);
    // Configmaps at RequestResponse: each ~600 KiB twice (request and
    // response), so the 1 MB log rotates.
    let value = "x".repeat(600 * 1024);
    for i in 0..4 {
        let body = format!("{{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{{\"name\":\"c{i}\"}},\"data\":{{\"v\":\"{value}\"}}}}");
        s.ok_stdin(&["-n", "big", "create", "-f", "-"], &body);
    }
    let backups = || {
        std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| {
                let name = e.file_name().to_string_lossy().to_string();
                name.starts_with("audit-") && name.ends_with(".log")
            })
            .count()
    };
    assert!(
        eventually(Duration::from_secs(10), || backups() == 1),
        "one backup kept: {}",
        backups()
    );
    assert!(
        std::fs::metadata(dir.path().join("audit.log"))
            .unwrap()
            .len()
            < 2 * 1024 * 1024
    );
    // The webhook gets EventLists of at most 5 events.
    assert!(eventually(Duration::from_secs(15), || {
        received
            .lock()
            .unwrap()
            .iter()
            .flat_map(|l| l["items"].as_array().cloned().unwrap_or_default())
            .any(|e| e["objectRef"]["name"] == "c3")
    }));
    let lists = received.lock().unwrap().clone();
    assert!(lists
        .iter()
        .all(|l| l["kind"] == "EventList" && l["items"].as_array().unwrap().len() <= 5));
    assert!(lists.len() >= 2, "batched: {} posts", lists.len());
}

/// A TLS server on 127.0.0.1 collecting the JSON bodies POSTed to it;
/// (port, CA PEM, bodies).
fn start_collector() -> (u16, String, Arc<Mutex<Vec<Value>>>) {
    let (config, ca) = crate::support::loopback_tls();
    let received = Arc::new(Mutex::new(Vec::new()));
    let sink = received.clone();
    let port = crate::support::serve_on_loopback(
        Some(config),
        move |req: http::Request<hyper::body::Incoming>| {
            let sink = sink.clone();
            async move {
                let body = req.into_body().collect().await.unwrap().to_bytes();
                if let Ok(list) = serde_json::from_slice::<Value>(&body) {
                    sink.lock().unwrap().push(list);
                }
                http::Response::new(http_body_util::Full::new(bytes::Bytes::from_static(b"{}")))
            }
        },
    );
    (port, ca, received)
}

/// The annotation `key` of the ResponseComplete event of the pod `name`'s create.
fn pod_annotation(log: &Path, name: &str, key: &str) -> Option<String> {
    events(log)
        .iter()
        .filter(|e| e["stage"] == "ResponseComplete" && e["verb"] == "create")
        .filter(|e| e["objectRef"]["resource"] == "pods" && e["objectRef"]["name"] == name)
        .find_map(|e| e["annotations"][key].as_str().map(String::from))
}

#[test]
fn admission_annotations_reach_the_audit_event() {
    let dir = tempfile::tempdir().unwrap();
    let s = started(dir.path(), &[]);
    let log = dir.path().join("audit.log");
    s.ok(&["create", "namespace", "psa"]);
    s.ok(&[
        "label",
        "namespace",
        "psa",
        "pod-security.kubernetes.io/enforce=baseline",
        "pod-security.kubernetes.io/audit=restricted",
    ]);
    // A ValidatingAdmissionPolicy bound with validationActions [Audit].
    let vap = r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: pinned-images}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
  validations:
  - expression: "!object.spec.containers.exists(c, c.image.endsWith(':latest'))"
    message: images must not be latest
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: pinned-images}
spec: {policyName: pinned-images, validationActions: [Audit]}
"#;
    s.ok_stdin(&["apply", "-f", "-"], vap);
    let build = tempfile::tempdir().unwrap();
    let (_, tar) = crate::policy_bundles::build_baseline(build.path());
    let bundles = s.dir.path().join("bundles");
    std::fs::create_dir_all(&bundles).unwrap();
    std::fs::copy(&tar, bundles.join("baseline.tar")).unwrap();
    let bundle = "apiVersion: policies.capstan.dev/v1alpha1\nkind: PolicyBundle\nmetadata:\n  name: baseline\n\
                  spec:\n  bundle: baseline.tar\n  mode: Audit\n  policies: [disallow-latest-tag]\n";
    s.ok_stdin(&["apply", "-f", "-"], bundle);
    let (status, _, message) = crate::policy_bundle_api::wait_ready(&s, "baseline");
    assert_eq!(status, "True", "{message}");

    let mut n = 0;
    assert!(
        eventually(Duration::from_secs(20), || {
            n += 1;
            let name = format!("web{n}");
            s.ok(&["-n", "psa", "run", &name, "--image=nginx:latest"]);
            std::thread::sleep(Duration::from_millis(200));
            pod_annotation(
                &log,
                &name,
                "validation.policy.admission.k8s.io/validation_failure",
            )
            .is_some()
                && pod_annotation(
                    &log,
                    &name,
                    "policies.capstan.dev/baseline.disallow-latest-tag",
                )
                .is_some()
        }),
        "the policies never annotated an event"
    );
    let name = format!("web{n}");
    assert_eq!(
        pod_annotation(&log, &name, "pod-security.kubernetes.io/enforce-policy").as_deref(),
        Some("baseline:latest")
    );
    let violations =
        pod_annotation(&log, &name, "pod-security.kubernetes.io/audit-violations").unwrap();
    assert!(
        violations.starts_with("would violate PodSecurity \"restricted:latest\""),
        "{violations}"
    );
    let failure = pod_annotation(
        &log,
        &name,
        "validation.policy.admission.k8s.io/validation_failure",
    )
    .unwrap();
    let failure: Value = serde_json::from_str(&failure).unwrap();
    assert_eq!(failure[0]["message"], "images must not be latest");
    assert_eq!(failure[0]["policy"], "pinned-images");
    let bundled = pod_annotation(
        &log,
        &name,
        "policies.capstan.dev/baseline.disallow-latest-tag",
    )
    .unwrap();
    assert!(bundled.contains("uses image \"nginx:latest\""), "{bundled}");
}

#[test]
fn the_legacy_format_writes_kube_s_text_lines_and_an_unknown_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Metadata}]\n",
    )
    .unwrap();
    let log = dir.path().join("audit.log");
    let s = Server::start_with(&[
        "--audit-policy-file",
        policy.to_str().unwrap(),
        "--audit-log-path",
        log.to_str().unwrap(),
        "--audit-log-format",
        "legacy",
    ]);
    s.ok(&["get", "namespaces"]);
    let wanted = r#"method="list" user="capstan-admin" groups="\"system:masters\",\"system:authenticated\"" as="<self>" asgroups="<lookup>""#;
    let found = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .any(|l| {
                l.contains(" AUDIT: id=\"")
                    && l.contains(wanted)
                    && l.contains(r#"stage="ResponseComplete""#)
                    && l.contains(r#"uri="/api/v1/namespaces?limit=500""#)
                    && l.ends_with(r#"response="200""#)
            })
    };
    assert!(
        eventually(Duration::from_secs(10), found),
        "{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_capstan"))
        .args([
            "serve",
            "--secure-port",
            "0",
            "--audit-log-format",
            "xml",
            "--data-dir",
        ])
        .arg(dir.path().join("other"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = crate::support::stderr(&out);
    assert!(
        err.contains(r#"invalid audit log format xml, allowed formats are "legacy,json""#),
        "{err}"
    );
}
