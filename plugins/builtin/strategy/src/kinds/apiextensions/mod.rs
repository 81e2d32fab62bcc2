//! The `apiextensions.k8s.io` group's kinds.

pub(crate) mod crd;

use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::Value;

use super::{Generation, KindRules};

pub(super) struct CustomResourceDefinitions;

impl KindRules for CustomResourceDefinitions {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        crd::defaults(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        crd::validate(object, old)
    }
    fn initial_status(&self, _: &StrategyResource, object: &Value) -> Option<Value> {
        Some(crd::initial_status(object))
    }
    fn prepare_for_update(&self, object: &mut Value, _: &Value) {
        crd::record_storage_version(object);
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredState)
    }
}
