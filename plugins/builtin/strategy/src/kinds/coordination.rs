//! The `coordination.k8s.io` group's kinds.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use super::{KindRules, Printer};
use crate::prepare::kinds as prepare;
use crate::table::{columns, config as rows};

pub(super) struct Leases;

impl KindRules for Leases {
    fn validate(&self, object: &Value, _: Option<&Value>) -> Vec<Cause> {
        crate::core_kinds::lease(object)
    }
    fn prepare_for_create(&self, object: &mut Value) {
        prepare::lease_without_election(object);
    }
    fn prepare_for_update(&self, object: &mut Value, old: &Value) {
        prepare::lease_election_kept(object, old);
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(columns::lease, rows::lease_row))
    }
}
