//! The `node.k8s.io` group's kinds.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use super::{KindRules, Printer};
use crate::kinds::storage::table as csi;

pub(super) struct RuntimeClasses;

impl KindRules for RuntimeClasses {
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        crate::kinds::storage::csi::validate_runtime_class(object, old)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            csi::runtime_class_columns,
            csi::runtime_class_row,
        ))
    }
}
