//! The `events.k8s.io` group's kinds.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use super::{KindRules, Printer};

pub(super) struct Events;

impl KindRules for Events {
    fn validate(&self, object: &Value, _: Option<&Value>) -> Vec<Cause> {
        crate::kinds::core::validation::events_event(object)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            crate::kinds::core::table::event_columns,
            crate::kinds::core::table::event_row,
        ))
    }
}
