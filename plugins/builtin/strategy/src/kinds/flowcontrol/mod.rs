//! The `flowcontrol.apiserver.k8s.io` group's kinds.

pub(crate) mod table;
pub(crate) mod validation;

use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::{json, Value};

use super::{Generation, KindRules, Printer};

pub(super) struct FlowSchemas;

impl KindRules for FlowSchemas {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        validation::flow_schema_defaults(object);
    }
    fn validate(&self, object: &Value, _: Option<&Value>) -> Vec<Cause> {
        validation::validate_flow_schema(object)
    }
    fn initial_status(&self, _: &StrategyResource, _: &Value) -> Option<Value> {
        Some(json!({}))
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredState)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::flow_schema_columns,
            table::flow_schema_row,
        ))
    }
}

pub(super) struct PriorityLevelConfigurations;

impl KindRules for PriorityLevelConfigurations {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        validation::priority_level_defaults(object);
    }
    fn validate(&self, object: &Value, _: Option<&Value>) -> Vec<Cause> {
        validation::validate_priority_level(object)
    }
    fn initial_status(&self, _: &StrategyResource, _: &Value) -> Option<Value> {
        Some(json!({}))
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredState)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::priority_level_columns,
            table::priority_level_row,
        ))
    }
}
