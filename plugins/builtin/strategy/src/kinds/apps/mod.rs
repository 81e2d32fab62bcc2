//! The `apps` group's kinds.

pub(crate) mod validation;
pub(crate) mod workloads;

pub(crate) mod defaults;
pub(crate) mod prepare;
pub(crate) mod table;
use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::{json, Value};

use super::{Generation, KindRules, Printer};

pub(super) struct Deployments;

impl KindRules for Deployments {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        defaults::deployment(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        workloads::validate("deployments", object, old)
    }
    fn initial_status(&self, _: &StrategyResource, _: &Value) -> Option<Value> {
        Some(json!({}))
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredStateAndAnnotations)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::deployment_columns,
            table::deployment_row,
        ))
    }
}

pub(super) struct ReplicaSets;

impl KindRules for ReplicaSets {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        defaults::replica_set(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        workloads::validate("replicasets", object, old)
    }
    fn initial_status(&self, _: &StrategyResource, _: &Value) -> Option<Value> {
        Some(json!({"replicas": 0}))
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredState)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::replicas_columns,
            table::replica_set_row,
        ))
    }
}

pub(super) struct StatefulSets;

impl KindRules for StatefulSets {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        defaults::stateful_set(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        validation::stateful_set(object, old)
    }
    fn initial_status(&self, _: &StrategyResource, _: &Value) -> Option<Value> {
        Some(json!({"replicas": 0, "availableReplicas": 0}))
    }
    fn prepare_for_create(&self, object: &mut Value) {
        prepare::stateful_set_create(object);
    }
    fn prepare_for_update(&self, object: &mut Value, old: &Value) {
        prepare::stateful_set_update(object, old);
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredState)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::stateful_set_columns,
            table::stateful_set_row,
        ))
    }
}

pub(super) struct DaemonSets;

impl KindRules for DaemonSets {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        defaults::daemon_set(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        validation::daemon_set(object, old)
    }
    fn initial_status(&self, _: &StrategyResource, _: &Value) -> Option<Value> {
        Some(json!({
            "currentNumberScheduled": 0,
            "numberMisscheduled": 0,
            "desiredNumberScheduled": 0,
            "numberReady": 0,
        }))
    }
    fn prepare_for_create(&self, object: &mut Value) {
        prepare::daemon_set_create(object);
    }
    fn prepare_for_update(&self, object: &mut Value, old: &Value) {
        prepare::daemon_set_update(object, old);
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredState)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::daemon_set_columns,
            table::daemon_set_row,
        ))
    }
}

pub(super) struct ControllerRevisions;

impl KindRules for ControllerRevisions {
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        validation::controller_revision(object, old)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::controller_revision_columns,
            table::controller_revision_row,
        ))
    }
}
