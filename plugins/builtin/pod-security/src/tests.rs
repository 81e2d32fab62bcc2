//! Unit tests of the PodSecurity plugin through the SDK's fake host.

use super::*;
use capstan_plugin_sdk::{json, testing};

fn namespace(labels: Value) {
    testing::put_object(
        "v1",
        "namespaces",
        json!({"metadata": {"name": "ns", "labels": labels}}),
    );
}

fn nginx() -> Value {
    json!({"metadata": {"name": "web"}, "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}})
}

fn hardened() -> Value {
    json!({"metadata": {"name": "web"}, "spec": {
        "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{"name": "app", "image": "app", "securityContext": {
            "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}]}})
}

fn create(obj: Value) -> AdmissionResponse {
    let req = testing::request(Operation::Create, "v1", "pods", "Pod", "ns", obj);
    PodSecurity::review(&req).unwrap()
}

#[test]
fn restricted_enforce_rejects_a_plain_pod_with_kubes_message() {
    testing::reset();
    namespace(json!({"pod-security.kubernetes.io/enforce": "restricted"}));
    let r = create(nginx());
    assert_eq!(r.code(), 403);
    assert_eq!(
        r.message(),
        "pods \"web\" is forbidden: violates PodSecurity \"restricted:latest\": \
         allowPrivilegeEscalation != false (container \"nginx\" must set securityContext.allowPrivilegeEscalation=false), \
         unrestricted capabilities (container \"nginx\" must set securityContext.capabilities.drop=[\"ALL\"]), \
         runAsNonRoot != true (pod or container \"nginx\" must set securityContext.runAsNonRoot=true), \
         seccompProfile (pod or container \"nginx\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")"
    );
    assert!(create(hardened()).allowed);
}

#[test]
fn baseline_warn_gives_a_warning_not_a_denial() {
    testing::reset();
    namespace(
        json!({"pod-security.kubernetes.io/warn": "baseline", "pod-security.kubernetes.io/warn-version": "v1.33"}),
    );
    let mut pod = nginx();
    pod["spec"]["containers"][0]["securityContext"] = json!({"privileged": true});
    let r = create(pod);
    assert!(r.allowed);
    assert_eq!(
        r.warnings,
        ["would violate PodSecurity \"baseline:v1.33\": privileged (container \"nginx\" must not set securityContext.privileged=true)"]
    );
}

#[test]
fn baseline_checks_host_namespaces_paths_ports_and_capabilities() {
    testing::reset();
    namespace(json!({"pod-security.kubernetes.io/enforce": "baseline"}));
    let pod = json!({"metadata": {"name": "p"}, "spec": {
        "hostNetwork": true, "hostPID": true,
        "volumes": [{"name": "root", "hostPath": {"path": "/"}}],
        "containers": [
            {"name": "a", "ports": [{"containerPort": 80, "hostPort": 80}],
             "securityContext": {"capabilities": {"add": ["NET_ADMIN", "CHOWN"]}}},
            {"name": "b", "securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}}}]}});
    let r = create(pod);
    assert_eq!(
        r.message(),
        "pods \"p\" is forbidden: violates PodSecurity \"baseline:latest\": \
         non-default capabilities (containers \"a\", \"b\" must not include \"NET_ADMIN\", \"SYS_ADMIN\" in securityContext.capabilities.add), \
         host namespaces (hostNetwork=true, hostPID=true), hostPath volumes (volume \"root\"), \
         hostPort (container \"a\" uses hostPort 80)"
    );
    assert!(create(nginx()).allowed);
}

#[test]
fn workloads_only_get_warnings_and_privileged_allows_all() {
    testing::reset();
    namespace(json!({"pod-security.kubernetes.io/enforce": "baseline"}));
    let mut deploy = json!({"metadata": {"name": "d"}, "spec": {"template": nginx()}});
    deploy["spec"]["template"]["spec"]["hostIPC"] = json!(true);
    let req = testing::request(
        Operation::Create,
        "apps/v1",
        "deployments",
        "Deployment",
        "ns",
        deploy,
    );
    let r = PodSecurity::review(&req).unwrap();
    assert!(r.allowed);
    assert_eq!(
        r.warnings,
        ["would violate PodSecurity \"baseline:latest\": host namespaces (hostIPC=true)"]
    );
    testing::reset();
    namespace(json!({}));
    let mut pod = nginx();
    pod["spec"]["hostNetwork"] = json!(true);
    let r = create(pod);
    assert!(r.allowed && r.warnings.is_empty());
}

#[test]
fn config_defaults_exemptions_and_unknown_levels() {
    testing::reset();
    testing::set_config(
        json!({"defaults": {"enforce": "restricted"}, "exemptions": {"usernames": ["admin"]}}),
    );
    namespace(json!({}));
    assert!(!create(nginx()).allowed);
    let mut req = testing::request(Operation::Create, "v1", "pods", "Pod", "ns", nginx());
    req.user_info.username = "admin".into();
    assert!(PodSecurity::review(&req).unwrap().allowed);
    testing::reset();
    namespace(json!({"pod-security.kubernetes.io/enforce": "strict-ish"}));
    assert!(create(nginx()).message().contains("\"restricted:latest\""));
}

#[test]
fn unchanged_pod_updates_are_not_checked() {
    testing::reset();
    namespace(json!({"pod-security.kubernetes.io/enforce": "restricted"}));
    let mut req = testing::request(Operation::Update, "v1", "pods", "Pod", "ns", nginx());
    req.old_object = Some(nginx());
    assert!(PodSecurity::review(&req).unwrap().allowed);
    req.sub_resource = Some("status".into());
    assert!(PodSecurity::review(&req).unwrap().allowed);
}

#[test]
fn audit_annotations_name_the_enforced_policy_and_audit_violations() {
    testing::reset();
    namespace(json!({"pod-security.kubernetes.io/enforce": "baseline",
                     "pod-security.kubernetes.io/audit": "restricted"}));
    let r = create(nginx());
    assert!(r.allowed);
    assert_eq!(
        r.audit_annotations["pod-security.kubernetes.io/enforce-policy"],
        "baseline:latest"
    );
    let violations = &r.audit_annotations["pod-security.kubernetes.io/audit-violations"];
    assert!(
        violations.starts_with(
            "would violate PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false"
        ),
        "{violations}"
    );
    assert!(!create(hardened())
        .audit_annotations
        .contains_key("pod-security.kubernetes.io/audit-violations"));
}
