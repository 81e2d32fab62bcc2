//! kube-apiserver 1.32's validation of the apps, batch, networking, policy,
//! rbac, storage and apiregistration kinds, seen through real kubectl:
//! invalid objects of different kinds are refused with kube's messages,
//! and an update may not change what kube keeps immutable.

use crate::support::Server;

/// Each manifest and a line kubectl must print for it.
const INVALID: [(&str, &str); 5] = [
    (
        r#"{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
            "spec": {"schedule": "not a schedule", "jobTemplate": {"spec": {"template": {"spec": {
              "restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}}}}"#,
        r#"The CronJob "c" is invalid: spec.schedule: Invalid value: "not a schedule": expected exactly 5 fields, found 3: [not a schedule]"#,
    ),
    (
        r#"{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"},
            "spec": {"selector": {"matchLabels": {"a": "b"}}, "serviceName": "x",
              "podManagementPolicy": "Bogus",
              "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}"#,
        r#"spec.podManagementPolicy: Invalid value: "Bogus": must be 'OrderedReady' or 'Parallel'"#,
    ),
    (
        r#"{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "n"},
            "spec": {"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/33"}}]}]}}"#,
        r#"The NetworkPolicy "n" is invalid: spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"#,
    ),
    (
        r#"{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "r"},
            "rules": [{"apiGroups": [""], "resources": ["pods"]}]}"#,
        r#"The ClusterRole "r" is invalid: rules[0].verbs: Required value: verbs must contain at least one value"#,
    ),
    (
        r#"{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "sc"},
            "provisioner": "a.io/x", "reclaimPolicy": "Bogus"}"#,
        r#"The StorageClass "sc" is invalid: reclaimPolicy: Unsupported value: "Bogus": supported values: "Delete", "Retain""#,
    ),
];

#[test]
fn invalid_objects_of_many_kinds_get_kubes_messages() {
    let s = Server::start();
    for (manifest, message) in INVALID {
        let out = s.kubectl_stdin(&["create", "-f", "-"], Some(manifest));
        let err = crate::support::stderr(&out);
        assert!(!out.status.success(), "{manifest} was accepted");
        assert!(err.contains(message), "expected {message}\nin: {err}");
    }
}

#[test]
fn what_kube_keeps_immutable_stays_so() {
    let s = Server::start();
    s.ok_stdin(
        &["create", "-f", "-"],
        r#"{"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {"name": "ic"},
            "spec": {"controller": "example.com/ingress"}}"#,
    );
    let err = s.fails(&[
        "patch",
        "ingressclass",
        "ic",
        "--type=merge",
        "-p",
        r#"{"spec": {"controller": "example.com/other"}}"#,
    ]);
    assert!(
        err.contains(r#"spec.controller: Invalid value: "example.com/other": field is immutable"#),
        "{err}"
    );
    s.ok_stdin(
        &["create", "-f", "-"],
        r#"{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"},
            "spec": {"selector": {"matchLabels": {"a": "b"}}, "serviceName": "web",
              "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}"#,
    );
    s.ok(&["scale", "statefulset", "web", "--replicas=3"]);
    let err = s.fails(&[
        "patch",
        "statefulset",
        "web",
        "--type=merge",
        "-p",
        r#"{"spec": {"serviceName": "other"}}"#,
    ]);
    assert!(
        err.contains("spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"),
        "{err}"
    );
}

#[test]
fn deployment_strategies_are_validated_as_kube_does() {
    let s = Server::start();
    let deployment = |name: &str, strategy: &str| {
        format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec:\n  selector: {{matchLabels: {{a: b}}}}\n  strategy: {strategy}\n  template:\n    metadata: {{labels: {{a: b}}}}\n    spec: {{containers: [{{name: c, image: nginx}}]}}\n")
    };
    let out = s.kubectl_stdin(
        &["create", "-f", "-"],
        Some(&deployment(
            "r",
            "{type: Recreate, rollingUpdate: {maxSurge: 1}}",
        )),
    );
    let err = crate::support::stderr(&out);
    assert!(err.contains("spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"), "{err}");
    let out = s.kubectl_stdin(
        &["create", "-f", "-"],
        Some(&deployment(
            "z",
            "{rollingUpdate: {maxSurge: 0, maxUnavailable: 0}}",
        )),
    );
    let err = crate::support::stderr(&out);
    assert!(err.contains("may not be 0 when `maxSurge` is 0"), "{err}");
    s.ok_stdin(
        &["create", "-f", "-"],
        &deployment(
            "ok",
            "{type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}",
        ),
    );
}
