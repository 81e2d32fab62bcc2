//! The `storage.k8s.io` group's kinds.

pub(crate) mod csi;
pub(crate) mod table;
pub(crate) mod validation;

use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::{json, Value};

use super::{Generation, KindRules, Printer};
use crate::json::set_default;

pub(super) struct StorageClasses;

impl KindRules for StorageClasses {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        storage_class_defaults(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        validation::storage_class(object, old)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::storage_class_columns,
            table::storage_class_row,
        ))
    }
}

pub(super) struct CsiDrivers;

impl KindRules for CsiDrivers {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        csi::csi_driver_defaults(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        csi::validate_csi_driver(object, old)
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredStateAfterCreate)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::csi_driver_columns,
            table::csi_driver_row,
        ))
    }
}

pub(super) struct CsiNodes;

impl KindRules for CsiNodes {
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        validation::csi_node(object, old)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(table::csi_node_columns, table::csi_node_row))
    }
}

pub(super) struct VolumeAttachments;

impl KindRules for VolumeAttachments {
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        csi::validate_volume_attachment(object, old)
    }
    fn initial_status(&self, _: &StrategyResource, _: &Value) -> Option<Value> {
        Some(json!({"attached": false}))
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::volume_attachment_columns,
            table::volume_attachment_row,
        ))
    }
}

pub(super) struct CsiStorageCapacities;

impl KindRules for CsiStorageCapacities {
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        csi::validate_csi_storage_capacity(object, old)
    }
}

/// `SetDefaults_StorageClass`: volumes deleted with their claim, bound at once.
fn storage_class_defaults(object: &mut Value) {
    set_default(object, "/reclaimPolicy", json!("Delete"));
    set_default(object, "/volumeBindingMode", json!("Immediate"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defaults::with;
    use serde_json::json;

    #[test]
    fn storage_classes_are_deleted_with_their_claim_and_bound_at_once() {
        let sc = with(storage_class_defaults, json!({"provisioner": "p"}));
        assert_eq!(
            sc,
            json!({"provisioner": "p", "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"})
        );
    }
}
