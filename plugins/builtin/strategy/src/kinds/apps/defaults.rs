//! The apps group's (apps/v1) defaults, from kube's
//! `pkg/apis/apps/v1/defaults.go` with 1.32's default feature gates
//! (StatefulSetAutoDeletePVC on, MaxUnavailableStatefulSet off), and the
//! conversion that shows a StatefulSet's claim templates with their kind.

use serde_json::{json, Value};

use crate::json::{child_mut, items_mut, set_default, set_if_zero};
use crate::kinds::core::defaults::{self as core, pod};

/// `SetDefaults_Deployment`: one replica, RollingUpdate 25%/25%, ten
/// revisions kept, a 600 s progress deadline.
pub fn deployment(object: &mut Value) {
    if let Some(spec) = child_mut(object, "spec") {
        set_default(spec, "/replicas", json!(1));
        set_default(spec, "/strategy", json!({}));
        set_if_zero(spec, "/strategy/type", json!("RollingUpdate"));
        if spec.pointer("/strategy/type") == Some(&json!("RollingUpdate")) {
            set_default(spec, "/strategy/rollingUpdate", json!({}));
            set_default(spec, "/strategy/rollingUpdate/maxUnavailable", json!("25%"));
            set_default(spec, "/strategy/rollingUpdate/maxSurge", json!("25%"));
        }
        set_default(spec, "/revisionHistoryLimit", json!(10));
        set_default(spec, "/progressDeadlineSeconds", json!(600));
    }
    pod::template(object, "/spec/template");
}

/// `SetDefaults_ReplicaSet`: one replica.
pub fn replica_set(object: &mut Value) {
    set_default(object, "/spec/replicas", json!(1));
    pod::template(object, "/spec/template");
}

/// `SetDefaults_DaemonSet`: RollingUpdate with maxUnavailable 1 and
/// maxSurge 0, ten revisions kept.
pub fn daemon_set(object: &mut Value) {
    if let Some(spec) = child_mut(object, "spec") {
        set_default(spec, "/updateStrategy", json!({}));
        set_if_zero(spec, "/updateStrategy/type", json!("RollingUpdate"));
        if spec.pointer("/updateStrategy/type") == Some(&json!("RollingUpdate")) {
            set_default(spec, "/updateStrategy/rollingUpdate", json!({}));
            set_default(
                spec,
                "/updateStrategy/rollingUpdate/maxUnavailable",
                json!(1),
            );
            set_default(spec, "/updateStrategy/rollingUpdate/maxSurge", json!(0));
        }
        set_default(spec, "/revisionHistoryLimit", json!(10));
    }
    pod::template(object, "/spec/template");
}

/// `SetDefaults_StatefulSet`: OrderedReady pods, RollingUpdate from
/// partition 0, claims retained, one replica, ten revisions kept; each
/// claim template defaulted as a claim and shown as `v1`
/// PersistentVolumeClaim.
pub fn stateful_set(object: &mut Value) {
    if let Some(spec) = child_mut(object, "spec") {
        set_if_zero(spec, "/podManagementPolicy", json!("OrderedReady"));
        stateful_update_strategy(spec);
        set_default(spec, "/persistentVolumeClaimRetentionPolicy", json!({}));
        let policy = "/persistentVolumeClaimRetentionPolicy";
        set_if_zero(spec, &format!("{policy}/whenDeleted"), json!("Retain"));
        set_if_zero(spec, &format!("{policy}/whenScaled"), json!("Retain"));
        set_default(spec, "/replicas", json!(1));
        set_default(spec, "/revisionHistoryLimit", json!(10));
        for claim in items_mut(spec, "volumeClaimTemplates") {
            claim_template(claim);
        }
    }
    pod::template(object, "/spec/template");
}

fn stateful_update_strategy(spec: &mut Value) {
    set_default(spec, "/updateStrategy", json!({}));
    let typed = spec
        .pointer("/updateStrategy/type")
        .and_then(Value::as_str)
        .is_some_and(|t| !t.is_empty());
    if !typed {
        set_if_zero(spec, "/updateStrategy/type", json!("RollingUpdate"));
        set_default(spec, "/updateStrategy/rollingUpdate", json!({}));
    }
    let rolling = spec.pointer("/updateStrategy/type") == Some(&json!("RollingUpdate"));
    if rolling
        && spec
            .pointer("/updateStrategy/rollingUpdate")
            .is_some_and(Value::is_object)
    {
        set_default(spec, "/updateStrategy/rollingUpdate/partition", json!(0));
    }
}

fn claim_template(claim: &mut Value) {
    let Some(fields) = claim.as_object_mut() else {
        return;
    };
    fields.insert("apiVersion".into(), json!("v1"));
    fields.insert("kind".into(), json!("PersistentVolumeClaim"));
    core::persistent_volume_claim(claim);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defaults::with;

    #[test]
    fn a_minimal_deployment() {
        let d = with(deployment, json!({"spec": {}}));
        assert_eq!(
            d["spec"],
            json!({"replicas": 1, "strategy": {"type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
                   "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600})
        );
        let recreate = with(
            deployment,
            json!({"spec": {"replicas": 0,
            "strategy": {"type": "Recreate"}, "template": {"spec": {}}}}),
        );
        assert_eq!(recreate["spec"]["replicas"], 0);
        assert_eq!(recreate["spec"]["strategy"], json!({"type": "Recreate"}));
        assert_eq!(
            recreate["spec"]["template"]["spec"]["dnsPolicy"],
            "ClusterFirst"
        );
    }

    #[test]
    fn a_minimal_daemon_set() {
        let ds = with(daemon_set, json!({"spec": {"template": {"spec": {}}}}));
        assert_eq!(
            ds["spec"]["updateStrategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
        );
        assert_eq!(ds["spec"]["revisionHistoryLimit"], 10);
        assert!(ds["spec"].get("replicas").is_none());
        assert_eq!(
            ds["spec"]["template"]["spec"]["schedulerName"],
            "default-scheduler"
        );
        let on_delete = with(
            daemon_set,
            json!({"spec": {"updateStrategy": {"type": "OnDelete"}}}),
        );
        assert_eq!(
            on_delete["spec"]["updateStrategy"],
            json!({"type": "OnDelete"})
        );
    }

    #[test]
    fn a_minimal_stateful_set() {
        let sts = with(
            stateful_set,
            json!({"spec": {"volumeClaimTemplates": [
            {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}]}}),
        );
        assert_eq!(
            sts["spec"],
            json!({"volumeClaimTemplates": [{"metadata": {"name": "data"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "volumeMode": "Filesystem"},
                    "apiVersion": "v1", "kind": "PersistentVolumeClaim",
                    "status": {"phase": "Pending"}}],
                   "podManagementPolicy": "OrderedReady",
                   "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                   "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain",
                                                            "whenScaled": "Retain"},
                   "replicas": 1, "revisionHistoryLimit": 10})
        );
    }

    #[test]
    fn a_stateful_rolling_update_without_its_block_gets_none() {
        let sts = with(
            stateful_set,
            json!({"spec": {"updateStrategy": {"type": "RollingUpdate"}}}),
        );
        assert_eq!(
            sts["spec"]["updateStrategy"],
            json!({"type": "RollingUpdate"})
        );
        let on_delete = with(
            stateful_set,
            json!({"spec": {"updateStrategy": {"type": "OnDelete"}}}),
        );
        assert_eq!(
            on_delete["spec"]["updateStrategy"],
            json!({"type": "OnDelete"})
        );
    }

    #[test]
    fn replica_sets() {
        let rs = with(replica_set, json!({"spec": {"template": {"spec": {}}}}));
        assert_eq!(rs["spec"]["replicas"], 1);
        assert_eq!(rs["spec"]["template"]["spec"]["restartPolicy"], "Always");
    }
}
