//! Unit tests of the ServiceAccount admission plugin, through the SDK's fake host.

use super::*;
use crate::token::MOUNT_PATH;
use capstan_plugin_sdk::testing;

fn account(name: &str, extra: Value) -> Value {
    let mut sa = json!({"metadata": {"name": name, "namespace": "ns"}});
    if let (Some(sa), Some(extra)) = (sa.as_object_mut(), extra.as_object()) {
        sa.extend(extra.clone());
    }
    sa
}

fn create(pod: &Value) -> (AdmissionResponse, Value) {
    let req = testing::request(Operation::Create, "v1", "pods", "Pod", "ns", pod.clone());
    let r = ServiceAccount::review(&req).unwrap();
    let out = testing::apply_patch(pod, &r).unwrap();
    (r, out)
}

fn web_pod() -> Value {
    json!({"metadata": {"name": "web"}, "spec": {
        "initContainers": [{"name": "init", "image": "busybox"}],
        "containers": [{"name": "a", "image": "nginx", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
        "volumes": [{"name": "data", "emptyDir": {}}]}})
}

#[test]
fn missing_service_account_is_rejected_with_kubes_message() {
    testing::reset();
    let pod = json!({"metadata": {"name": "web"}, "spec": {"serviceAccountName": "robot", "containers": []}});
    let (r, _) = create(&pod);
    assert_eq!(r.code(), 403);
    assert_eq!(
        r.message(),
        "pods \"web\" is forbidden: error looking up service account ns/robot: serviceaccount \"robot\" not found"
    );
    let (r, _) = create(&json!({"metadata": {"generateName": "job-"}, "spec": {}}));
    assert_eq!(
        r.message(),
        "pods \"job-\" is forbidden: error looking up service account ns/default: serviceaccount \"default\" not found"
    );
}

#[test]
fn defaults_to_default_and_mounts_the_token_everywhere() {
    testing::reset();
    testing::put_object("v1", "serviceaccounts", account("default", json!({})));
    let (r, out) = create(&web_pod());
    assert!(r.allowed);
    assert_eq!(out["spec"]["serviceAccountName"], "default");
    let volumes = out["spec"]["volumes"].as_array().unwrap();
    assert_eq!(volumes.len(), 2);
    let name = volumes[1]["name"].as_str().unwrap();
    assert!(name.starts_with("kube-api-access-") && name.len() == "kube-api-access-".len() + 5);
    assert_eq!(
        volumes[1]["projected"]["sources"][0]["serviceAccountToken"]["expirationSeconds"],
        3607
    );
    for field in ["initContainers", "containers"] {
        let mounts = out["spec"][field][0]["volumeMounts"].as_array().unwrap();
        let last = mounts.last().unwrap();
        assert_eq!(last["mountPath"], MOUNT_PATH);
        assert_eq!(last["name"], name);
        assert_eq!(last["readOnly"], true);
    }
}

#[test]
fn automount_can_be_turned_off_by_pod_or_account() {
    testing::reset();
    testing::put_object(
        "v1",
        "serviceaccounts",
        account("default", json!({"automountServiceAccountToken": false})),
    );
    let (_, out) = create(&web_pod());
    assert_eq!(out["spec"]["volumes"].as_array().unwrap().len(), 1);
    testing::reset();
    testing::put_object("v1", "serviceaccounts", account("default", json!({})));
    let mut pod = web_pod();
    pod["spec"]["automountServiceAccountToken"] = json!(false);
    let (_, out) = create(&pod);
    assert!(out["spec"]["initContainers"][0]
        .get("volumeMounts")
        .is_none());
}

#[test]
fn existing_mount_at_token_path_is_respected() {
    testing::reset();
    testing::put_object("v1", "serviceaccounts", account("default", json!({})));
    let pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "a", "volumeMounts": [{"name": "mine", "mountPath": MOUNT_PATH}]}]}});
    let (_, out) = create(&pod);
    assert!(
        out["spec"].get("volumes").is_none(),
        "no container needed the volume"
    );
}

#[test]
fn image_pull_secrets_come_from_the_account() {
    testing::reset();
    testing::put_object(
        "v1",
        "serviceaccounts",
        account(
            "builder",
            json!({"imagePullSecrets": [{"name": "regcred"}]}),
        ),
    );
    let pod = json!({"metadata": {"name": "p"}, "spec": {"serviceAccountName": "builder", "containers": []}});
    let (_, out) = create(&pod);
    assert_eq!(
        out["spec"]["imagePullSecrets"],
        json!([{"name": "regcred"}])
    );
    assert!(out["spec"].get("serviceAccountName").is_some());
}

#[test]
fn mirror_pods_may_not_use_accounts_or_secrets() {
    testing::reset();
    let mirror = |spec: Value| json!({"metadata": {"name": "m", "annotations": {MIRROR_ANNOTATION: "x"}}, "spec": spec});
    let (r, _) = create(&mirror(json!({"containers": []})));
    assert!(r.allowed && r.patch.is_none());
    let (r, _) = create(&mirror(json!({"serviceAccountName": "robot"})));
    assert_eq!(
        r.message(),
        "pods \"m\" is forbidden: a mirror pod may not reference service accounts"
    );
    let (r, _) = create(&mirror(
        json!({"volumes": [{"name": "s", "secret": {"secretName": "x"}}]}),
    ));
    assert_eq!(
        r.message(),
        "pods \"m\" is forbidden: a mirror pod may not reference secrets"
    );
}

#[test]
fn store_errors_are_reported_as_lookup_failures_and_updates_are_ignored() {
    testing::reset();
    testing::fail_reads(Some("etcd is sad"));
    let (r, _) = create(&web_pod());
    assert_eq!(
        r.message(),
        "pods \"web\" is forbidden: error looking up service account ns/default: etcd is sad"
    );
    let update = testing::request(Operation::Update, "v1", "pods", "Pod", "ns", web_pod());
    assert!(ServiceAccount::review(&update).unwrap().allowed);
}
