//! The `apiregistration.k8s.io` group's kinds.

pub(crate) mod validation;

pub(crate) mod table;
use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::{json, Value};

use super::{KindRules, Printer};
use crate::json::set_default;

pub(super) struct ApiServices;

impl KindRules for ApiServices {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        api_service_defaults(object);
    }
    fn validate(&self, object: &Value, _: Option<&Value>) -> Vec<Cause> {
        crate::kinds::apiregistration::validation::api_service(object)
    }
    fn initial_status(&self, _: &StrategyResource, object: &Value) -> Option<Value> {
        Some(api_service_status(object))
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::api_service_columns,
            table::api_service_row,
        ))
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

/// `SetDefaults_ServiceReference`: a service is reached on port 443.
fn api_service_defaults(object: &mut Value) {
    if let Some(service) = object
        .pointer_mut("/spec/service")
        .filter(|s| s.is_object())
    {
        set_default(service, "/port", json!(443));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defaults::with;
    use serde_json::json;

    #[test]
    fn api_service_ports() {
        let remote = with(
            api_service_defaults,
            json!({"spec": {"service": {"name": "s", "namespace": "n"}}}),
        );
        assert_eq!(remote["spec"]["service"]["port"], 443);
        let local = with(
            api_service_defaults,
            json!({"spec": {"group": "g", "version": "v1"}}),
        );
        assert!(local["spec"].get("service").is_none());
    }
}
