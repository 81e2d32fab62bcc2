//! The `coordination.k8s.io` group's kinds.

pub(crate) mod table;
use capstan_plugin_sdk::Cause;
use serde_json::Value;

use super::{KindRules, Printer};
use crate::json::child_mut;

pub(super) struct Leases;

impl KindRules for Leases {
    fn validate(&self, object: &Value, _: Option<&Value>) -> Vec<Cause> {
        crate::kinds::core::validation::lease(object)
    }
    fn prepare_for_create(&self, object: &mut Value) {
        lease_without_election(object);
    }
    fn prepare_for_update(&self, object: &mut Value, old: &Value) {
        lease_election_kept(object, old);
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(table::lease_columns, table::lease_row))
    }
}

/// The fields of CoordinatedLeaderElection, off in 1.32.
const LEADER_ELECTION_FIELDS: [&str; 2] = ["strategy", "preferredHolder"];

fn lease_without_election(lease: &mut Value) {
    if let Some(spec) = child_mut(lease, "spec").and_then(Value::as_object_mut) {
        for key in LEADER_ELECTION_FIELDS {
            spec.remove(key);
        }
    }
}

/// An update may keep the election fields a lease already had.
fn lease_election_kept(lease: &mut Value, old: &Value) {
    let Some(spec) = child_mut(lease, "spec").and_then(Value::as_object_mut) else {
        return;
    };
    for key in LEADER_ELECTION_FIELDS {
        if old
            .pointer(&format!("/spec/{key}"))
            .is_none_or(Value::is_null)
        {
            spec.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn leases_drop_disabled_fields() {
        let mut lease =
            json!({"spec": {"holderIdentity": "h", "strategy": "OldestEmulationVersion"}});
        lease_without_election(&mut lease);
        assert_eq!(lease["spec"], json!({"holderIdentity": "h"}));
    }
}
