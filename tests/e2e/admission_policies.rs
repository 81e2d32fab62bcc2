//! ValidatingAdmissionPolicies from the API, enforced as kube-apiserver
//! 1.32 enforces them: kube's documentation examples (`data/vap/`), with
//! the answers the real server gave to the same requests
//! (`data/vap/kube-answers.json`, recorded with
//! `tools/record-admission-policies.py` against ../shared/kube-oracle).

use crate::support::{eventually, stderr, stdout, Server};
use serde_json::{json, Value};
use std::time::Duration;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/e2e/data/vap");

fn data(file: &str) -> String {
    format!("{DATA}/{file}")
}

/// The server with kube's examples applied: namespaces, the ReplicaLimit
/// CRD and its params, the policies and bindings.
fn server_with_examples() -> Server {
    let s = Server::start();
    s.ok(&["apply", "-f", &data("setup.yaml")]);
    s.ok(&["apply", "-f", &data("policies.yaml")]);
    s.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/replicalimits.rules.example.com",
    ]);
    s.ok(&["apply", "-f", &data("params.yaml")]);
    s
}

/// One recorded case sent as the recorder sends it, answered as it
/// records: code, warnings, the Status of a failure, else the `pick`ed
/// parts of the object (JSON pointers).
pub(crate) fn send(s: &Server, case: &Value) -> Value {
    let path = case["path"].as_str().unwrap();
    let method = case["method"].as_str().unwrap();
    let (content_type, body) = match (case.get("patch"), case.get("body")) {
        (Some(p), _) => ("application/merge-patch+json", Some(p.to_string())),
        (None, Some(b)) => ("application/json", Some(b.to_string())),
        _ => ("application/json", None),
    };
    let (code, doc, headers) = s.request(method, path, content_type, body.as_deref());
    let warnings: Vec<Value> = headers
        .lines()
        .filter_map(|l| l.strip_prefix("warning: ").or(l.strip_prefix("Warning: ")))
        .map(|w| json!(w.trim()))
        .collect();
    let mut answer = json!({"code": code, "warnings": warnings});
    if doc["kind"] == "Status" && doc["status"] == "Failure" {
        for key in ["reason", "message", "details"] {
            answer[key] = doc[key].clone();
        }
    } else if let Some(picks) = case["pick"].as_array() {
        let picked = picks.iter().filter_map(Value::as_str).map(|p| {
            let value = doc.pointer(p).cloned().unwrap_or(Value::Null);
            (p.to_string(), value)
        });
        answer["picked"] = Value::Object(picked.collect());
    }
    answer
}

/// A generated name (`gen-` and five characters) as `gen-<generated>`.
fn normalized(answer: &Value) -> Value {
    let text = answer.to_string();
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find("gen-") {
        out.push_str(&rest[..i + 4]);
        let tail = &rest[i + 4..];
        let generated = tail.len() >= 5 && tail[..5].chars().all(|c| c.is_ascii_alphanumeric());
        if generated {
            out.push_str("<generated>");
            rest = &tail[5..];
        } else {
            rest = tail;
        }
    }
    out.push_str(rest);
    serde_json::from_str(&out).unwrap()
}

#[test]
fn kubes_documentation_examples_answer_as_kube_apiserver_did() {
    let s = server_with_examples();
    let cases: Value =
        serde_json::from_str(&std::fs::read_to_string(data("cases.json")).unwrap()).unwrap();
    let kube: Value =
        serde_json::from_str(&std::fs::read_to_string(data("kube-answers.json")).unwrap()).unwrap();
    let cases = cases["cases"].as_array().unwrap();
    // The policies are in effect once the first denial is seen (a dry run,
    // so nothing is left behind).
    let probe = cases
        .iter()
        .find(|c| c["name"] == "deployment-dry-run-denied")
        .unwrap();
    assert!(
        eventually(Duration::from_secs(10), || send(&s, probe)["code"] == 422),
        "the policies never took effect"
    );
    let mut differences = Vec::new();
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let ours = normalized(&send(&s, case));
        let theirs = normalized(&kube[name]);
        if ours != theirs {
            differences.push(format!("{name}:\n  kube:    {theirs}\n  capstan: {ours}"));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

fn deployment(name: &str, replicas: u32) -> String {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    })
    .to_string()
}

#[test]
fn kubectl_shows_denials_and_warnings_and_changes_take_effect_at_once() {
    let s = server_with_examples();
    let create = |ns: &str, replicas: u32| {
        s.kubectl_stdin(
            &["create", "-n", ns, "--dry-run=server", "-f", "-"],
            Some(&deployment("web", replicas)),
        )
    };
    assert!(eventually(Duration::from_secs(10), || !create(
        "vap-test", 6
    )
    .status
    .success()));
    let out = create("vap-test", 6);
    // What kubectl 1.33 prints for kube-apiserver's answer (an Invalid
    // Status whose one cause has no field).
    assert_eq!(
        stderr(&out).trim(),
        "The deployments \"web\" is invalid: : ValidatingAdmissionPolicy 'demo-policy.example.com' \
         with binding 'demo-binding-test.example.com' denied request: failed expression: \
         object.spec.replicas <= 5"
    );
    let out = s.kubectl_stdin(
        &["create", "-n", "vap-warn", "--dry-run=server", "-f", "-"],
        Some(r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"plain"}}"#),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).trim(),
        "Warning: Validation failed for ValidatingAdmissionPolicy 'require-team-label.example.com' \
         with binding 'require-team-label-warn.example.com': configmap plain has no team label"
    );
    // A changed policy is in effect for the next request.
    s.ok(&[
        "patch",
        "validatingadmissionpolicy",
        "demo-policy.example.com",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/spec/validations/0/expression","value":"object.spec.replicas <= 7"}]"#,
    ]);
    assert!(eventually(Duration::from_secs(5), || create("vap-test", 6)
        .status
        .success()));
    assert!(!create("vap-test", 8).status.success());
    // Without its binding, the policy no longer applies.
    s.ok(&[
        "delete",
        "validatingadmissionpolicybinding",
        "demo-binding-test.example.com",
    ]);
    assert!(eventually(Duration::from_secs(5), || create("vap-test", 8)
        .status
        .success()));
}

#[test]
fn a_policy_cannot_lock_out_changes_to_admission_policies() {
    let s = Server::start();
    let deny_all = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: deny-everything}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: ["*"], apiVersions: ["*"], operations: ["*"], resources: ["*"]}
  validations:
  - {expression: "false", message: "nothing may change"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: deny-everything}
spec: {policyName: deny-everything, validationActions: [Deny]}
"#;
    s.ok_stdin(&["apply", "-f", "-"], deny_all);
    assert!(eventually(Duration::from_secs(10), || {
        let out = s.kubectl(&["create", "configmap", "x", "--dry-run=server"]);
        stderr(&out).contains("nothing may change")
    }));
    // Admission configuration is exempt, as in kube: the policy can go.
    s.ok(&[
        "delete",
        "validatingadmissionpolicybinding",
        "deny-everything",
    ]);
    let out = s.kubectl(&["delete", "validatingadmissionpolicy", "deny-everything"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(eventually(Duration::from_secs(5), || {
        s.kubectl(&["create", "configmap", "x", "--dry-run=server"])
            .status
            .success()
    }));
    assert!(stdout(&s.kubectl(&["get", "validatingadmissionpolicies"])).is_empty());
}

#[test]
fn type_checking_warnings_in_status_are_kube_controller_managers() {
    let s = Server::start();
    s.ok(&["apply", "-f", &data("typecheck-policy.yaml")]);
    let kube: Value =
        serde_json::from_str(&std::fs::read_to_string(data("typecheck-status.json")).unwrap())
            .unwrap();
    let mut status = Value::Null;
    let checked = eventually(Duration::from_secs(10), || {
        status = s.json(&[
            "get",
            "validatingadmissionpolicy",
            "confused.example.com",
            "-o",
            "json",
        ])["status"]
            .clone();
        status.get("typeChecking").is_some()
    });
    assert!(checked, "never type checked: {status}");
    assert_eq!(status, kube);
    // A custom resource's schema types `object` too.
    s.ok(&["apply", "-f", &data("policies.yaml")]);
    let crd_policy = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: crd-typed.example.com}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: ["rules.example.com"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["replicalimits"]}
  validations:
  - {expression: "object.maxReplicas > 1"}
  - {expression: "object.minReplicas < 10"}
"#;
    s.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/replicalimits.rules.example.com",
    ]);
    s.ok_stdin(&["apply", "-f", "-"], crd_policy);
    let mut warnings = Value::Null;
    assert!(eventually(Duration::from_secs(10), || {
        warnings = s.json(&[
            "get",
            "validatingadmissionpolicy",
            "crd-typed.example.com",
            "-o",
            "json",
        ])["status"]["typeChecking"]["expressionWarnings"]
            .clone();
        !warnings.is_null()
    }));
    assert_eq!(
        warnings,
        json!([{
            "fieldRef": "spec.validations[1].expression",
            "warning": "rules.example.com/v1, Kind=ReplicaLimit: ERROR: <input>:1:7: undefined field 'minReplicas'\n | object.minReplicas < 10\n | ......^\n"
        }])
    );
}

/// `capstan policy test` on the examples' YAML with `args` (fixtures).
fn policy_test(fixtures: &std::path::Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_capstan"))
        .args(["policy", "test", &data("policies.yaml")])
        .arg(fixtures)
        .output()
        .expect("capstan policy test")
}

#[test]
fn policy_test_runs_admission_policy_yaml_offline_with_the_servers_verdicts() {
    let out = policy_test(std::path::Path::new(&data("fixtures")));
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("PASS params-limit [replicalimit-policy.example.com]: denied: deployments.apps \"p4\" is forbidden: ValidatingAdmissionPolicy 'replicalimit-policy.example.com' with binding 'replicalimit-binding-params.example.com' denied request: object.spec.replicas must be no greater than 3"),
        "{text}"
    );
    assert!(text.ends_with("5 cases, 5 passed, 0 failed\n"), "{text}");
    // An expectation the policy does not meet fails the run.
    let dir = tempfile::tempdir().unwrap();
    for f in ["too-many-replicas.json", "too-many-replicas.cluster.yaml"] {
        std::fs::copy(data(&format!("fixtures/{f}")), dir.path().join(f)).unwrap();
    }
    std::fs::write(
        dir.path().join("too-many-replicas.expect.yaml"),
        "policy: demo-policy.example.com\nallowed: true\n",
    )
    .unwrap();
    let out = policy_test(dir.path());
    assert!(!out.status.success());
    assert!(
        stdout(&out).contains(
            "FAIL too-many-replicas [demo-policy.example.com]: expected allowed, got denied"
        ),
        "{}",
        stdout(&out)
    );
}

#[test]
fn webhook_match_conditions_ask_the_authorizer() {
    let s = Server::start();
    // A webhook nobody answers: called, it fails the request (Fail).
    let webhook = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: unprivileged-only}
webhooks:
- name: unprivileged-only.example.com
  clientConfig: {url: "https://127.0.0.1:1/nowhere"}
  rules: [{operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"]}]
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: ["v1"]
  matchConditions:
  - name: cannot-read-secrets
    expression: "!authorizer.group('').resource('secrets').namespace(request.namespace).check('list').allowed()"
"#;
    s.ok_stdin(&["apply", "-f", "-"], webhook);
    s.ok(&[
        "create",
        "role",
        "cm-writer",
        "--verb=create",
        "--resource=configmaps",
    ]);
    s.ok(&[
        "create",
        "rolebinding",
        "bob-cm",
        "--role=cm-writer",
        "--user=bob",
    ]);
    let bob = s.user_kubeconfig("bob", &[]);
    // The admin may list secrets: the condition is false and the webhook skipped.
    assert!(eventually(Duration::from_secs(10), || {
        s.kubectl(&["create", "configmap", "by-admin", "--dry-run=server"])
            .status
            .success()
    }));
    // Bob may not: the webhook is called (and fails).
    let out = s.kubectl_with(&bob, &["create", "configmap", "by-bob", "--dry-run=server"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("failed calling webhook \"unprivileged-only.example.com\""),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_policy_written_through_one_replica_is_enforced_by_the_other() {
    let etcd = crate::etcd::Etcd::start(1);
    let servers = etcd.servers();
    let a = Server::start_with(&["--etcd-servers", &servers]);
    let b = a.start_replica(&["--etcd-servers", &servers]);
    let policy = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-big-configmaps}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"]}
  validations:
  - {expression: "!has(object.data) || object.data.size() < 2", message: "at most one key"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-big-configmaps}
spec: {policyName: no-big-configmaps, validationActions: [Deny]}
"#;
    a.ok_stdin(&["apply", "-f", "-"], policy);
    let create = |s: &Server| {
        s.kubectl(&[
            "create",
            "configmap",
            "two",
            "--from-literal=a=1",
            "--from-literal=b=2",
            "--dry-run=server",
        ])
    };
    assert!(
        eventually(Duration::from_secs(10), || stderr(&create(&b))
            .contains("at most one key")),
        "replica b never enforced the policy written through a"
    );
    b.ok(&[
        "delete",
        "validatingadmissionpolicybinding",
        "no-big-configmaps",
    ]);
    assert!(eventually(Duration::from_secs(10), || create(&a)
        .status
        .success()));
}
