//! Who may read the reports: a ClusterRole created with the bootstrap RBAC
//! policy and aggregated into `view` (and so `edit` and `admin`), as
//! Kyverno's `kyverno:rbac:view:policyreports` is: a namespace's viewers
//! read its PolicyReports; only the audit (and cluster-admins) write them.

use crate::catalogue::policy_report::{CLUSTER, GROUP, NAMESPACED};
use serde_json::{json, Value};

pub const VIEW_ROLE: &str = "capstan:policyreports:view";

/// The ClusterRoles to create at first start.
pub fn cluster_roles() -> Vec<Value> {
    vec![json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {
            "name": VIEW_ROLE,
            "labels": {
                "rbac.authorization.k8s.io/aggregate-to-view": "true",
                "kubernetes.io/bootstrapping": "rbac-defaults",
            },
            "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
        },
        "rules": [{
            "apiGroups": [GROUP],
            "resources": [NAMESPACED, CLUSTER],
            "verbs": ["get", "list", "watch"],
        }],
    })]
}
