//! The `apiregistration.k8s.io` group's kinds.

pub(crate) mod validation;

use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::{json, Value};

use super::{KindRules, Printer};
use crate::table::{cluster, columns};

pub(super) struct ApiServices;

impl KindRules for ApiServices {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        crate::defaults::cluster::api_service(object);
    }
    fn validate(&self, object: &Value, _: Option<&Value>) -> Vec<Cause> {
        crate::kinds::apiregistration::validation::api_service(object)
    }
    fn initial_status(&self, _: &StrategyResource, object: &Value) -> Option<Value> {
        Some(api_service_status(object))
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(columns::api_service, cluster::api_service_row))
    }
}

/// A local APIService (no service) is Available from its creation.
fn api_service_status(object: &Value) -> Value {
    let local = object.pointer("/spec/service").is_none_or(Value::is_null);
    if !local {
        return json!({});
    }
    let mut available = json!({"type": "Available", "status": "True"});
    if let Some(now) = super::created(object) {
        available["lastTransitionTime"] = now;
    }
    available["reason"] = json!("Local");
    available["message"] = json!("Local APIServices are always available");
    json!({ "conditions": [available] })
}
