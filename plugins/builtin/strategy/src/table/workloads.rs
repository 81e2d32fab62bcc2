//! What the printers of the workload controllers (Deployments, ReplicaSets,
//! ReplicationControllers, StatefulSets, DaemonSets, Jobs, CronJobs)
//! share: template containers and images, replica counts.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::access::{age, containers_and_images, int, name, opt_int};

pub(crate) const TEMPLATE_CONTAINERS: &str = "/spec/template/spec/containers";

/// `spec.replicas`, which kube defaults to 1 before storing.
pub(crate) fn desired_replicas(obj: &Value) -> i64 {
    opt_int(obj, "/spec/replicas").unwrap_or(1)
}

pub(crate) fn with_template(mut cells: Vec<Value>, obj: &Value, pointer: &str) -> Vec<Value> {
    let (names, images) = containers_and_images(obj, pointer);
    cells.push(names);
    cells.push(images);
    cells
}

pub(crate) fn replica_counts(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    vec![
        name(obj),
        Value::from(desired_replicas(obj)),
        Value::from(int(obj, "/status/replicas")),
        Value::from(int(obj, "/status/readyReplicas")),
        age(obj, now),
    ]
}
