//! The `scheduling.k8s.io` group's kinds.

pub(crate) mod validation;

pub(crate) mod table;
use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::{json, Value};

use super::{Generation, KindRules, Printer};
use crate::json::set_default;

pub(super) struct PriorityClasses;

impl KindRules for PriorityClasses {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        priority_class_defaults(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        crate::kinds::scheduling::validation::validate(object, old)
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::Nothing)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::priority_class_columns,
            table::priority_class_row,
        ))
    }
}

/// `SetDefaults_PriorityClass`.
fn priority_class_defaults(object: &mut Value) {
    set_default(object, "/preemptionPolicy", json!("PreemptLowerPriority"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defaults::with;
    use serde_json::json;

    #[test]
    fn priority_classes_preempt_lower_priorities() {
        let pc = with(priority_class_defaults, json!({"value": 10}));
        assert_eq!(
            pc,
            json!({"value": 10, "preemptionPolicy": "PreemptLowerPriority"})
        );
        let never = with(
            priority_class_defaults,
            json!({"value": 1, "preemptionPolicy": "Never"}),
        );
        assert_eq!(never["preemptionPolicy"], "Never");
    }
}
