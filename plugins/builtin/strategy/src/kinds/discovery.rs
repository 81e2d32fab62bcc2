//! The `discovery.k8s.io` group's kinds.

use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::Value;

use super::{Generation, KindRules, Printer};
use crate::prepare::kinds as prepare;
use crate::table::{columns, network as rows};

pub(super) struct EndpointSlices;

impl KindRules for EndpointSlices {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        crate::kinds::networking::defaults::endpoint_slice(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        crate::core_kinds::endpoint_slice(object, old)
    }
    fn prepare_for_create(&self, object: &mut Value) {
        prepare::no_deprecated_topology(object);
    }
    fn prepare_for_update(&self, object: &mut Value, old: &Value) {
        prepare::topology_on_update(object, old);
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredStateAndLabels)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            columns::endpoint_slice,
            rows::endpoint_slice_row,
        ))
    }
}
