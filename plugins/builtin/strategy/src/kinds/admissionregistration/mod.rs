//! The `admissionregistration.k8s.io` group's kinds.

pub(crate) mod admission_policies;
pub(crate) mod mutating_policies;
pub(crate) mod table;
pub(crate) mod webhooks;

use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::{json, Value};

use super::{Generation, KindRules, Printer};

pub(super) struct MutatingWebhookConfigurations;

impl KindRules for MutatingWebhookConfigurations {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        webhooks::defaults(object, true);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        webhooks::validate(object, old, true)
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredState)
    }
    fn printer(&self) -> Option<Printer> {
        Some(WEBHOOKS)
    }
}

pub(super) struct ValidatingWebhookConfigurations;

impl KindRules for ValidatingWebhookConfigurations {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        webhooks::defaults(object, false);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        webhooks::validate(object, old, false)
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredState)
    }
    fn printer(&self) -> Option<Printer> {
        Some(WEBHOOKS)
    }
}

const WEBHOOKS: Printer = Printer::new(
    table::webhook_configuration_columns,
    table::webhook_configuration_row,
);

pub(super) struct ValidatingAdmissionPolicies;

impl KindRules for ValidatingAdmissionPolicies {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        admission_policies::policy_defaults(object);
    }
    fn validate(&self, object: &Value, _: Option<&Value>) -> Vec<Cause> {
        admission_policies::validate_policy(object)
    }
    fn initial_status(&self, _: &StrategyResource, _: &Value) -> Option<Value> {
        Some(json!({}))
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredState)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::validating_policy_columns,
            table::validating_policy_row,
        ))
    }
}

pub(super) struct ValidatingAdmissionPolicyBindings;

impl KindRules for ValidatingAdmissionPolicyBindings {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        admission_policies::binding_defaults(object);
    }
    fn validate(&self, object: &Value, _: Option<&Value>) -> Vec<Cause> {
        admission_policies::validate_binding(object)
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredState)
    }
    fn printer(&self) -> Option<Printer> {
        Some(BINDINGS)
    }
}

pub(super) struct MutatingAdmissionPolicies;

impl KindRules for MutatingAdmissionPolicies {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        mutating_policies::policy_defaults(object);
    }
    fn validate(&self, object: &Value, _: Option<&Value>) -> Vec<Cause> {
        mutating_policies::validate_policy(object)
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredState)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::mutating_policy_columns,
            table::mutating_policy_row,
        ))
    }
}

pub(super) struct MutatingAdmissionPolicyBindings;

impl KindRules for MutatingAdmissionPolicyBindings {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        mutating_policies::binding_defaults(object);
    }
    fn validate(&self, object: &Value, _: Option<&Value>) -> Vec<Cause> {
        mutating_policies::validate_binding(object)
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredState)
    }
    fn printer(&self) -> Option<Printer> {
        Some(BINDINGS)
    }
}

/// Both kinds of policy binding print alike.
const BINDINGS: Printer = Printer::new(table::binding_columns, table::binding_row);
