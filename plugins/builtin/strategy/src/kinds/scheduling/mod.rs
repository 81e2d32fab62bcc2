//! The `scheduling.k8s.io` group's kinds.

pub(crate) mod validation;

use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::Value;

use super::{Generation, KindRules, Printer};
use crate::table::{columns, config as rows};

pub(super) struct PriorityClasses;

impl KindRules for PriorityClasses {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        crate::defaults::cluster::priority_class(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        crate::kinds::scheduling::validation::validate(object, old)
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::Nothing)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            columns::priority_class,
            rows::priority_class_row,
        ))
    }
}
