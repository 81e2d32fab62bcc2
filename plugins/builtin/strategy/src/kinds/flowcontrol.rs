//! The `flowcontrol.apiserver.k8s.io` group's kinds.

use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::{json, Value};

use super::{Generation, KindRules, Printer};
use crate::flowcontrol;
use crate::table::flowcontrol as rows;

pub(super) struct FlowSchemas;

impl KindRules for FlowSchemas {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        flowcontrol::flow_schema_defaults(object);
    }
    fn validate(&self, object: &Value, _: Option<&Value>) -> Vec<Cause> {
        flowcontrol::validate_flow_schema(object)
    }
    fn initial_status(&self, _: &StrategyResource, _: &Value) -> Option<Value> {
        Some(json!({}))
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredState)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            rows::flow_schema_columns,
            rows::flow_schema_row,
        ))
    }
}

pub(super) struct PriorityLevelConfigurations;

impl KindRules for PriorityLevelConfigurations {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        flowcontrol::priority_level_defaults(object);
    }
    fn validate(&self, object: &Value, _: Option<&Value>) -> Vec<Cause> {
        flowcontrol::validate_priority_level(object)
    }
    fn initial_status(&self, _: &StrategyResource, _: &Value) -> Option<Value> {
        Some(json!({}))
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredState)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            rows::priority_level_columns,
            rows::priority_level_row,
        ))
    }
}
