//! MutatingAdmissionPolicies (admissionregistration.k8s.io v1beta1 and
//! v1alpha1, behind kube's `--feature-gates MutatingAdmissionPolicy` and
//! `--runtime-config`): `data/map/` applied, and the answers kube-apiserver
//! 1.32 (v1alpha1, gate on) gave to the same requests
//! (`data/map/kube-answers.json`, recorded with
//! `tools/record-admission-policies.py KUBECONFIG OUT map`): mutated
//! objects, kube's errors, its write-time validation and defaults.

use crate::admission_policies::send;
use crate::support::{eventually, stderr, stdout, Server};
use serde_json::Value;
use std::time::Duration;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/e2e/data/map");
const GATES: [&str; 4] = [
    "--feature-gates",
    "MutatingAdmissionPolicy=true",
    "--runtime-config",
    "admissionregistration.k8s.io/v1beta1=true,admissionregistration.k8s.io/v1alpha1=true",
];

fn data(file: &str) -> String {
    format!("{DATA}/{file}")
}

fn read(file: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(data(file)).unwrap()).unwrap()
}

#[test]
fn mutations_errors_and_validation_answer_as_kube_apiserver_did() {
    let s = Server::start_with(&GATES);
    s.ok(&["apply", "-f", &data("setup.yaml")]);
    s.ok(&["apply", "-f", &data("policies.yaml")]);
    let cases = read("cases.json");
    let cases = cases["cases"].as_array().unwrap();
    let kube = read("kube-answers.json");
    // The policies are in effect once a dry run comes back labelled.
    let probe = cases
        .iter()
        .find(|c| c["name"] == "configmap-dry-run-labelled")
        .unwrap();
    assert!(
        eventually(Duration::from_secs(10), || send(&s, probe)
            == kube[probe["name"].as_str().unwrap()]),
        "the policies never took effect"
    );
    let mut differences = Vec::new();
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let ours = send(&s, case);
        if ours != kube[name] {
            differences.push(format!(
                "{name}:\n  kube:    {}\n  capstan: {ours}",
                kube[name]
            ));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

fn label_policy(value: &str) -> String {
    format!(
        r#"apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata: {{name: team-label}}
spec:
  matchConstraints:
    resourceRules:
    - {{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}}
  reinvocationPolicy: Never
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{{metadata: Object.metadata{{labels: {{"team": "{value}"}}}}}}'
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicyBinding
metadata: {{name: team-label}}
spec: {{policyName: team-label}}
"#
    )
}

fn team_label(s: &Server, name: &str) -> String {
    let out = s.kubectl(&[
        "create",
        "configmap",
        name,
        "--dry-run=server",
        "-o",
        "jsonpath={.metadata.labels.team}",
    ]);
    stdout(&out)
}

#[test]
fn kubectl_manages_v1beta1_policies_and_changes_take_effect_at_once() {
    let s = Server::start_with(&GATES);
    s.ok_stdin(&["apply", "-f", "-"], &label_policy("blue"));
    assert!(
        eventually(Duration::from_secs(10), || team_label(&s, "a") == "blue"),
        "the policy never took effect"
    );
    s.ok_stdin(&["apply", "-f", "-"], &label_policy("green"));
    assert!(eventually(Duration::from_secs(10), || team_label(&s, "b") == "green"));
    let listed = s.ok(&["get", "mutatingadmissionpolicies"]);
    let header: Vec<&str> = listed.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "MUTATIONS", "PARAMKIND", "AGE"]);
    assert!(
        listed.contains("team-label") && listed.contains("<unset>"),
        "{listed}"
    );
    // Stored once, read at either version.
    let alpha = s.json(&[
        "get",
        "mutatingadmissionpolicies.v1alpha1.admissionregistration.k8s.io",
        "team-label",
        "-o",
        "json",
    ]);
    assert_eq!(alpha["apiVersion"], "admissionregistration.k8s.io/v1alpha1");
    assert_eq!(alpha["spec"]["failurePolicy"], "Fail");
    s.ok(&["delete", "mutatingadmissionpolicybinding", "team-label"]);
    assert!(eventually(Duration::from_secs(10), || team_label(&s, "c").is_empty()));
    // A mutation kube refuses on write, in kubectl's words.
    let bad = label_policy("x").replace("Object{metadata", "Object.metadata{metadata");
    let out = s.kubectl_stdin(&["apply", "-f", "-"], Some(&bad));
    assert!(
        stderr(&out).contains("spec.mutations[0].applyConfiguration.expression: Invalid value")
            && stderr(&out).contains("must evaluate to Object but got Object.metadata"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn served_only_behind_the_feature_gate_and_runtime_config() {
    let s = Server::start_with(&["--feature-gates", "MutatingAdmissionPolicy=true"]);
    let resources = s.ok(&[
        "api-resources",
        "--api-group",
        "admissionregistration.k8s.io",
    ]);
    assert!(
        !resources.contains("mutatingadmissionpolicies"),
        "{resources}"
    );
    let (code, _) =
        s.get_json("/apis/admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicies");
    assert_eq!(code, 404);
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_capstan"))
        .args([
            "serve",
            "--data-dir",
            "/nonexistent/never-made",
            "--feature-gates",
            "NoSuchGate=true",
        ])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("unrecognized feature gate: NoSuchGate"),
        "{}",
        stderr(&refused)
    );
}

#[test]
fn policy_test_runs_mutating_policy_yaml_offline() {
    let run = |fixtures: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_capstan"))
            .args(["policy", "test", &data("policies.yaml"), fixtures])
            .output()
            .unwrap()
    };
    let out = run(&data("fixtures"));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("4 cases, 4 passed, 0 failed"), "{text}");
    assert!(
        text.contains("PASS deployment [atomic-selector]: denied: policy 'atomic-selector' with binding 'atomic-selector' denied request: error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.selector"),
        "{text}"
    );
    // An expectation the mutated object does not meet fails, saying why.
    let dir = tempfile::tempdir().unwrap();
    for file in ["configmap.json", "configmap.cluster.yaml"] {
        std::fs::copy(data(&format!("fixtures/{file}")), dir.path().join(file)).unwrap();
    }
    let expect = "policy: label-configmaps\nallowed: true\nobject: {metadata: {labels: {mutated-by: someone}}}\n";
    std::fs::write(dir.path().join("configmap.expect.yaml"), expect).unwrap();
    let out = run(&dir.path().display().to_string());
    assert!(!out.status.success());
    assert!(
        stdout(&out).contains("FAIL configmap [label-configmaps]: expected the object to contain {\"metadata\":{\"labels\":{\"mutated-by\":\"someone\"}}}"),
        "{}",
        stdout(&out)
    );
}
