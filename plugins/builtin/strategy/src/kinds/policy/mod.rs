//! The `policy` group's kinds.

pub(crate) mod validation;

pub(crate) mod table;
use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::{json, Value};

use super::{Generation, KindRules, Printer};

pub(super) struct PodDisruptionBudgets;

impl KindRules for PodDisruptionBudgets {
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        crate::kinds::policy::validation::pod_disruption_budget(object, old)
    }
    fn initial_status(&self, _: &StrategyResource, _: &Value) -> Option<Value> {
        Some(json!({
            "disruptionsAllowed": 0,
            "currentHealthy": 0,
            "desiredHealthy": 0,
            "expectedPods": 0,
        }))
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredState)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::pod_disruption_budget_columns,
            table::pod_disruption_budget_row,
        ))
    }
}
