//! A HorizontalPodAutoscaler's metrics and scaling behavior
//! (`validateMetrics`, `validateMetricSpec`, the metric sources and
//! targets, `validateBehavior` of kube's autoscaling validation).

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common::{self, list, opt_int, text};
use kube_rules::gofmt;

const SOURCE_TYPES: [&str; 5] = [
    "ContainerResource",
    "External",
    "Object",
    "Pods",
    "Resource",
];
/// The source fields in the order kube looks at them.
const SOURCES: [&str; 5] = [
    "object",
    "external",
    "pods",
    "resource",
    "containerResource",
];
const SELECT_POLICIES: [&str; 3] = ["Disabled", "Max", "Min"];
const POLICY_TYPES: [&str; 2] = ["Percent", "Pods"];
const MAX_PERIOD_SECONDS: i64 = 1800;
const MAX_STABILIZATION_SECONDS: i64 = 3600;

/// `ValidateCrossVersionObjectReference` at `at`.
pub fn object_reference(reference: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    for key in ["kind", "name"] {
        let field = format!("{at}.{key}");
        match text(reference, key) {
            "" => causes.push(common::required(&field, "")),
            value => common::invalid_each(
                &mut causes,
                &field,
                value,
                kube_rules::path_segment_name(value),
            ),
        }
    }
    causes
}

/// `validateMetrics`: each metric, and scaling to zero needs an Object
/// or External metric.
pub fn metrics(metrics: &[Value], min_replicas: Option<i64>) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (i, metric) in metrics.iter().enumerate() {
        causes.extend(metric_spec(metric, &format!("spec.metrics[{i}]")));
    }
    let scales_to_zero = ["Object", "External"];
    let has_one = metrics
        .iter()
        .any(|m| scales_to_zero.contains(&text(m, "type")));
    if min_replicas == Some(0) && !has_one {
        let detail = "must specify at least one Object or External metric to support scaling to zero replicas";
        causes.push(common::forbidden("spec.metrics", detail));
    }
    causes
}

fn metric_spec(metric: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let kind = text(metric, "type");
    let type_field = format!("{at}.type");
    if kind.is_empty() {
        causes.push(common::required(
            &type_field,
            "must specify a metric source type",
        ));
    }
    if !SOURCE_TYPES.contains(&kind) {
        causes.push(common::not_supported(&type_field, kind, &SOURCE_TYPES));
    }
    let present: Vec<&str> = SOURCES
        .iter()
        .copied()
        .filter(|key| metric.get(*key).is_some_and(|v| !v.is_null()))
        .collect();
    if let Some(first) = present.first() {
        let source = &metric[*first];
        causes.extend(source_causes(first, source, &format!("{at}.{first}")));
    }
    let mut expected = kind.to_string();
    if let Some(c) = expected.get_mut(..1) {
        c.make_ascii_lowercase();
    }
    if SOURCE_TYPES.contains(&kind) && !present.contains(&expected.as_str()) {
        let detail = "must populate information for the given metric source";
        causes.push(common::required(&format!("{at}.{expected}"), detail));
    }
    if present.len() != 1 {
        for other in present.iter().filter(|p| **p != expected) {
            let detail = "must populate the given metric source only";
            causes.push(common::forbidden(&format!("{at}.{other}"), detail));
        }
    }
    causes
}

fn source_causes(kind: &str, source: &Value, at: &str) -> Vec<Cause> {
    let target = source.get("target").unwrap_or(&Value::Null);
    let target_at = format!("{at}.target");
    let has = |key: &str| target.get(key).is_some_and(|v| !v.is_null());
    let mut causes = Vec::new();
    match kind {
        "object" => {
            let described = source.get("describedObject").unwrap_or(&Value::Null);
            causes.extend(object_reference(
                described,
                &format!("{at}.describedObject"),
            ));
            causes.extend(metric_identifier(source, at));
            causes.extend(metric_target(target, &target_at));
            if !has("value") && !has("averageValue") {
                let detail = "must set either a target value or averageValue";
                causes.push(common::required(
                    &format!("{target_at}.averageValue"),
                    detail,
                ));
            }
        }
        "external" => {
            causes.extend(metric_identifier(source, at));
            causes.extend(metric_target(target, &target_at));
            if !has("value") && !has("averageValue") {
                let detail = "must set either a target value for metric or a per-pod target";
                causes.push(common::required(
                    &format!("{target_at}.averageValue"),
                    detail,
                ));
            }
            if has("value") && has("averageValue") {
                let detail = "may not set both a target value for metric and a per-pod target";
                causes.push(common::forbidden(&format!("{target_at}.value"), detail));
            }
        }
        "pods" => {
            causes.extend(metric_identifier(source, at));
            causes.extend(metric_target(target, &target_at));
            if !has("averageValue") {
                let detail = "must specify a positive target averageValue";
                causes.push(common::required(
                    &format!("{target_at}.averageValue"),
                    detail,
                ));
            }
        }
        _ => causes.extend(resource_source(kind, source, at)),
    }
    causes
}

fn resource_source(kind: &str, source: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    if text(source, "name").is_empty() {
        let field = format!("{at}.name");
        causes.push(common::required(&field, "must specify a resource name"));
    }
    if kind == "containerResource" {
        let field = format!("{at}.container");
        match text(source, "container") {
            "" => causes.push(common::required(&field, "must specify a container")),
            name => {
                common::invalid_each(&mut causes, &field, name, kube_rules::dns1123_label(name))
            }
        }
    }
    let target = source.get("target").unwrap_or(&Value::Null);
    let target_at = format!("{at}.target");
    causes.extend(metric_target(target, &target_at));
    let has = |key: &str| target.get(key).is_some_and(|v| !v.is_null());
    if !has("averageUtilization") && !has("averageValue") {
        let detail = "must set either a target raw value or a target utilization";
        causes.push(common::required(
            &format!("{target_at}.averageUtilization"),
            detail,
        ));
    }
    if has("averageUtilization") && has("averageValue") {
        let detail = "may not set both a target raw value and a target utilization";
        causes.push(common::forbidden(
            &format!("{target_at}.averageValue"),
            detail,
        ));
    }
    causes
}

fn metric_identifier(source: &Value, at: &str) -> Vec<Cause> {
    let metric = source.get("metric").unwrap_or(&Value::Null);
    let field = format!("{at}.metric.name");
    let mut causes = Vec::new();
    match text(metric, "name") {
        "" => causes.push(common::required(&field, "must specify a metric name")),
        name => common::invalid_each(
            &mut causes,
            &field,
            name,
            kube_rules::path_segment_name(name),
        ),
    }
    causes
}

/// `validateMetricTarget`.
fn metric_target(target: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let kind = text(target, "type");
    if kind.is_empty() {
        causes.push(common::required(
            &format!("{at}.type"),
            "must specify a metric target type",
        ));
    }
    if !["Utilization", "Value", "AverageValue"].contains(&kind) {
        let detail = "must be either Utilization, Value, or AverageValue";
        causes.push(common::invalid_str(&format!("{at}.type"), kind, detail));
    }
    for key in ["value", "averageValue"] {
        if let Some(quantity) = target.get(key).and_then(Value::as_str) {
            if !is_positive(quantity) {
                let field = format!("{at}.{key}");
                causes.push(common::invalid(
                    &field,
                    &render_quantity(quantity),
                    "must be positive",
                ));
            }
        }
    }
    if let Some(utilization) = opt_int(target, "averageUtilization").filter(|u| *u < 1) {
        let field = format!("{at}.averageUtilization");
        causes.push(common::invalid(
            &field,
            &utilization.to_string(),
            "must be greater than 0",
        ));
    }
    causes
}

fn is_positive(quantity: &str) -> bool {
    !quantity.starts_with('-') && quantity.chars().any(|c| ('1'..='9').contains(&c))
}

/// A `resource.Quantity` as `%#v` for the integer and SI-suffixed forms a
/// client writes (`-1`, `500m`, `2k`, `1Ki`).
fn render_quantity(quantity: &str) -> String {
    let split = quantity
        .find(|c: char| !(c.is_ascii_digit() || c == '-' || c == '+'))
        .unwrap_or(quantity.len());
    let (number, suffix) = quantity.split_at(split);
    let value: i64 = number.parse().unwrap_or_default();
    let (value, scale, format) = match suffix {
        "m" => (value, -3, "DecimalSI"),
        "k" => (value, 3, "DecimalSI"),
        "M" => (value, 6, "DecimalSI"),
        "G" => (value, 9, "DecimalSI"),
        "Ki" => (value * 1024, 0, "BinarySI"),
        "Mi" => (value * 1024 * 1024, 0, "BinarySI"),
        "Gi" => (value * 1024 * 1024 * 1024, 0, "BinarySI"),
        _ => (value, 0, "DecimalSI"),
    };
    format!(
        "resource.Quantity{{i:resource.int64Amount{{value:{value}, scale:{scale}}}, \
         d:resource.infDecAmount{{Dec:(*inf.Dec)(nil)}}, s:{}, Format:{}}}",
        gofmt::quote(quantity),
        gofmt::quote(format)
    )
}

/// `validateBehavior`.
pub fn behavior(behavior: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    for key in ["scaleUp", "scaleDown"] {
        if let Some(rules) = behavior.get(key).filter(|r| !r.is_null()) {
            causes.extend(scaling_rules(rules, &format!("spec.behavior.{key}")));
        }
    }
    causes
}

fn scaling_rules(rules: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    if let Some(window) = opt_int(rules, "stabilizationWindowSeconds") {
        let field = format!("{at}.stabilizationWindowSeconds");
        if window < 0 {
            let detail = "must be greater than or equal to zero";
            causes.push(common::invalid(&field, &window.to_string(), detail));
        }
        if window > MAX_STABILIZATION_SECONDS {
            let detail = format!("must be less than or equal to {MAX_STABILIZATION_SECONDS}");
            causes.push(common::invalid(&field, &window.to_string(), &detail));
        }
    }
    if let Some(policy) = rules.get("selectPolicy").and_then(Value::as_str) {
        if !SELECT_POLICIES.contains(&policy) {
            let field = format!("{at}.selectPolicy");
            causes.push(common::not_supported(&field, policy, &SELECT_POLICIES));
        }
    }
    let policies = list(rules, "policies");
    if policies.is_empty() {
        let field = format!("{at}.policies");
        causes.push(common::required(&field, "must specify at least one Policy"));
    }
    for (i, policy) in policies.iter().enumerate() {
        causes.extend(scaling_policy(policy, &format!("{at}.policies[{i}]")));
    }
    causes
}

fn scaling_policy(policy: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let kind = text(policy, "type");
    if !POLICY_TYPES.contains(&kind) {
        causes.push(common::not_supported(
            &format!("{at}.type"),
            kind,
            &POLICY_TYPES,
        ));
    }
    let value = common::int(policy, "value");
    if value <= 0 {
        let field = format!("{at}.value");
        causes.push(common::invalid(
            &field,
            &value.to_string(),
            "must be greater than zero",
        ));
    }
    let period = common::int(policy, "periodSeconds");
    let field = format!("{at}.periodSeconds");
    if period <= 0 {
        causes.push(common::invalid(
            &field,
            &period.to_string(),
            "must be greater than zero",
        ));
    }
    if period > MAX_PERIOD_SECONDS {
        let detail = format!("must be less than or equal to {MAX_PERIOD_SECONDS}");
        causes.push(common::invalid(&field, &period.to_string(), &detail));
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::messages;
    use serde_json::json;

    #[test]
    fn scaling_to_zero_needs_an_object_or_external_metric() {
        let cpu = json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}}}]);
        let cpu = cpu.as_array().cloned().unwrap_or_default();
        assert_eq!(
            messages(&metrics(&cpu, Some(0))),
            vec!["spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas"]
        );
        assert!(metrics(&cpu, Some(1)).is_empty());
    }

    #[test]
    fn targets_and_sources() {
        let metric = json!({"type": "Resource", "resource": {"name": "",
            "target": {"type": "Bogus", "averageUtilization": 0, "averageValue": "-1"}}});
        assert_eq!(
            messages(&metric_spec(&metric, "spec.metrics[0]")),
            vec![
                "spec.metrics[0].resource.name: Required value: must specify a resource name",
                "spec.metrics[0].resource.target.type: Invalid value: \"Bogus\": must be either Utilization, Value, or AverageValue",
                "spec.metrics[0].resource.target.averageValue: Invalid value: resource.Quantity{i:resource.int64Amount{value:-1, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"-1\", Format:\"DecimalSI\"}: must be positive",
                "spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0",
                "spec.metrics[0].resource.target.averageValue: Forbidden: may not set both a target raw value and a target utilization",
            ]
        );
    }

    #[test]
    fn behavior_rules() {
        let b = json!({"scaleDown": {"stabilizationWindowSeconds": 4000, "policies": []}});
        assert_eq!(
            messages(&behavior(&b)),
            vec![
                "spec.behavior.scaleDown.stabilizationWindowSeconds: Invalid value: 4000: must be less than or equal to 3600",
                "spec.behavior.scaleDown.policies: Required value: must specify at least one Policy",
            ]
        );
    }
}
