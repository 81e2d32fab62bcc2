//! The `networking.k8s.io` group's kinds.

pub(crate) mod ingress;
pub(crate) mod network_policy;

pub(crate) mod defaults;
pub(crate) mod table;
use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::{json, Value};

use super::{Generation, KindRules, Printer};

pub(super) struct Ingresses;

impl KindRules for Ingresses {
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        ingress::ingress(object, old)
    }
    fn initial_status(&self, _: &StrategyResource, _: &Value) -> Option<Value> {
        Some(json!({"loadBalancer": {}}))
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredState)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(table::ingress_columns, table::ingress_row))
    }
}

pub(super) struct IngressClasses;

impl KindRules for IngressClasses {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        defaults::ingress_class(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        ingress::ingress_class(object, old)
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredState)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::ingress_class_columns,
            table::ingress_class_row,
        ))
    }
}

pub(super) struct NetworkPolicies;

impl KindRules for NetworkPolicies {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        defaults::network_policy(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        network_policy::network_policy(object, old)
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredState)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::network_policy_columns,
            table::network_policy_row,
        ))
    }
}
