//! HorizontalPodAutoscaler (autoscaling/v2 and v1): kube's defaults of each
//! version (`minReplicas: 1`; in v2 the cpu 80% metric when none is given
//! and, when `behavior` is set, its scale-up and scale-down rules filled
//! with SetDefaults_HorizontalPodAutoscalerBehavior's) and the main rules of
//! `validateHorizontalPodAutoscalerSpec`.

use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::{json, Value};

use super::hpa_metrics;
use crate::common::{self, list};
use crate::json::set_default;

/// The defaults of the version `resource` names.
pub fn defaults(resource: &StrategyResource, object: &mut Value) {
    set_default(object, "/spec/minReplicas", json!(1));
    if resource.version == "v1" {
        return;
    }
    let no_metrics = list(object.get("spec").unwrap_or(&Value::Null), "metrics").is_empty();
    if no_metrics && object.get("spec").is_some_and(Value::is_object) {
        object["spec"]["metrics"] = json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}}}]);
    }
    if let Some(behavior) = object
        .pointer_mut("/spec/behavior")
        .filter(|b| b.is_object())
    {
        let up = json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15}]});
        let down = json!({"selectPolicy": "Max", "policies": [
            {"type": "Percent", "value": 100, "periodSeconds": 15}]});
        fill_rules(behavior, "scaleUp", up);
        fill_rules(behavior, "scaleDown", down);
    }
}

/// Each unset field of `behavior[key]` from `rules` (kube's copyHPAScalingRules).
fn fill_rules(behavior: &mut Value, key: &str, rules: Value) {
    let Some(fields) = behavior.as_object_mut() else {
        return;
    };
    let given = fields
        .get(key)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut filled = rules.as_object().cloned().unwrap_or_default();
    for (name, value) in given {
        if !value.is_null() {
            filled.insert(name, value);
        }
    }
    let mut ordered = serde_json::Map::new();
    for name in ["stabilizationWindowSeconds", "selectPolicy", "policies"] {
        if let Some(value) = filled.remove(name) {
            ordered.insert(name.into(), value);
        }
    }
    ordered.extend(filled);
    fields.insert(key.into(), Value::Object(ordered));
}

/// `validateHorizontalPodAutoscalerSpec`; on update a stored
/// `minReplicas: 0` keeps 0 allowed.
pub fn validate(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let old_min = old
        .and_then(|o| o.pointer("/spec/minReplicas"))
        .and_then(Value::as_i64);
    let lower_bound = if old_min == Some(0) { 0 } else { 1 };
    let mut causes = Vec::new();
    let min = spec.get("minReplicas").and_then(Value::as_i64);
    let max = spec.get("maxReplicas").and_then(Value::as_i64).unwrap_or(0);
    if let Some(min) = min.filter(|m| *m < lower_bound) {
        let detail = format!("must be greater than or equal to {lower_bound}");
        causes.push(common::invalid(
            "spec.minReplicas",
            &min.to_string(),
            &detail,
        ));
    }
    if max < 1 {
        causes.push(common::invalid(
            "spec.maxReplicas",
            &max.to_string(),
            "must be greater than 0",
        ));
    }
    if min.is_some_and(|min| max < min) {
        let detail = "must be greater than or equal to `minReplicas`";
        causes.push(common::invalid(
            "spec.maxReplicas",
            &max.to_string(),
            detail,
        ));
    }
    let target = spec.get("scaleTargetRef").unwrap_or(&Value::Null);
    causes.extend(hpa_metrics::object_reference(target, "spec.scaleTargetRef"));
    causes.extend(hpa_metrics::metrics(list(spec, "metrics"), min));
    if let Some(behavior) = spec.get("behavior").filter(|b| !b.is_null()) {
        causes.extend(hpa_metrics::behavior(behavior));
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2() -> StrategyResource {
        StrategyResource {
            group: "autoscaling".into(),
            version: "v2".into(),
            ..Default::default()
        }
    }

    #[test]
    fn v2_defaults_metrics_and_behavior() {
        let mut hpa = json!({"spec": {"maxReplicas": 3, "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}});
        defaults(&v2(), &mut hpa);
        assert_eq!(hpa["spec"]["minReplicas"], 1);
        assert_eq!(
            hpa["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
            80
        );
        assert_eq!(
            hpa["spec"]["behavior"]["scaleUp"]["policies"][0]["value"],
            4
        );
        let down = &hpa["spec"]["behavior"]["scaleDown"];
        assert_eq!(down["stabilizationWindowSeconds"], 60);
        assert_eq!(down["selectPolicy"], "Max");
    }

    #[test]
    fn v1_defaults_only_min_replicas() {
        let mut hpa = json!({"spec": {"maxReplicas": 3}});
        let v1 = StrategyResource {
            version: "v1".into(),
            ..v2()
        };
        defaults(&v1, &mut hpa);
        assert_eq!(hpa, json!({"spec": {"maxReplicas": 3, "minReplicas": 1}}));
    }

    #[test]
    fn replica_bounds_and_target_reference() {
        let hpa = json!({"spec": {"minReplicas": 3, "maxReplicas": 2, "scaleTargetRef": {"kind": "Deployment"},
                                  "metrics": [{"type": "Bogus"}, {"type": "Pods"}]}});
        let got: Vec<String> = validate(&hpa, None)
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        assert_eq!(got, [
            "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`",
            "spec.scaleTargetRef.name: Required value",
            "spec.metrics[0].type: Unsupported value: \"Bogus\": supported values: \"ContainerResource\", \"External\", \"Object\", \"Pods\", \"Resource\"",
            "spec.metrics[1].pods: Required value: must populate information for the given metric source",
        ]);
    }
}
