//! The `autoscaling` group's kinds.

pub(crate) mod hpa_metrics;
pub(crate) mod table;
pub(crate) mod validation;

use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::{json, Value};

use super::{KindRules, Printer};

pub(super) struct HorizontalPodAutoscalers;

impl KindRules for HorizontalPodAutoscalers {
    fn defaults(&self, resource: &StrategyResource, object: &mut Value) {
        crate::kinds::autoscaling::validation::defaults(resource, object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        crate::kinds::autoscaling::validation::validate(object, old)
    }
    /// kube's empty status of the version written.
    fn initial_status(&self, resource: &StrategyResource, _: &Value) -> Option<Value> {
        Some(if resource.version == "v1" {
            json!({"currentReplicas": 0, "desiredReplicas": 0})
        } else {
            json!({"desiredReplicas": 0})
        })
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(table::hpa_columns, table::hpa_row))
    }
}
