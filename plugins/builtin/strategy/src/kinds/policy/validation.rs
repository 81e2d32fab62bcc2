//! policy/v1 PodDisruptionBudget (`ValidatePodDisruptionBudgetSpec`):
//! minAvailable or maxUnavailable as a count or a percentage, the selector
//! and the unhealthy pod eviction policy. An update tolerates the invalid
//! label values its stored selector already had.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common;
use crate::int_or_percent as iop;
use crate::selector;

const EVICTION_POLICIES: [&str; 2] = ["AlwaysAllow", "IfHealthyBudget"];

pub fn pod_disruption_budget(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let set = |key: &str| spec.get(key).filter(|v| !v.is_null());
    let mut causes = Vec::new();
    if set("minAvailable").is_some() && set("maxUnavailable").is_some() {
        let detail = "minAvailable and maxUnavailable cannot be both set";
        causes.push(common::invalid("spec", &render_spec(spec), detail));
    }
    for key in ["minAvailable", "maxUnavailable"] {
        if let Some(value) = set(key) {
            let field = format!("spec.{key}");
            causes.extend(iop::positive(value, &field));
            causes.extend(iop::at_most_100_percent(value, &field));
        }
    }
    if let Some(sel) = set("selector") {
        let allow = old
            .and_then(|o| o.pointer("/spec/selector"))
            .is_some_and(has_invalid_expression_values);
        causes.extend(selector::validate(sel, "spec.selector", allow).0);
    }
    if let Some(policy) = set("unhealthyPodEvictionPolicy").and_then(Value::as_str) {
        if !EVICTION_POLICIES.contains(&policy) {
            let field = "spec.unhealthyPodEvictionPolicy";
            causes.push(common::not_supported(field, policy, &EVICTION_POLICIES));
        }
    }
    causes
}

/// `LabelSelectorHasInvalidLabelValue`.
fn has_invalid_expression_values(sel: &Value) -> bool {
    common::list(sel, "matchExpressions").iter().any(|req| {
        common::list(req, "values")
            .iter()
            .any(|v| !kube_rules::label_value(v.as_str().unwrap_or_default()).is_empty())
    })
}

/// `policy.PodDisruptionBudgetSpec` as `%#v`: its fields are pointers,
/// whose addresses are not knowable, so set ones show a placeholder.
fn render_spec(spec: &Value) -> String {
    let pointer = |key: &str, type_name: &str| match spec.get(key).filter(|v| !v.is_null()) {
        Some(_) => format!("({type_name})(0xc000000000)"),
        None => format!("({type_name})(nil)"),
    };
    format!(
        "policy.PodDisruptionBudgetSpec{{MinAvailable:{}, Selector:{}, MaxUnavailable:{}, \
         UnhealthyPodEvictionPolicy:{}}}",
        pointer("minAvailable", "*intstr.IntOrString"),
        pointer("selector", "*v1.LabelSelector"),
        pointer("maxUnavailable", "*intstr.IntOrString"),
        pointer(
            "unhealthyPodEvictionPolicy",
            "*policy.UnhealthyPodEvictionPolicyType"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::messages;
    use serde_json::json;

    #[test]
    fn budgets_and_policies() {
        let pdb = json!({"spec": {"maxUnavailable": -1, "unhealthyPodEvictionPolicy": "Bogus"}});
        assert_eq!(
            messages(&pod_disruption_budget(&pdb, None)),
            vec![
                "spec.maxUnavailable: Invalid value: -1: must be greater than or equal to 0",
                "spec.unhealthyPodEvictionPolicy: Unsupported value: \"Bogus\": supported values: \"AlwaysAllow\", \"IfHealthyBudget\"",
            ]
        );
        let pdb = json!({"spec": {"minAvailable": "150%"}});
        assert_eq!(
            messages(&pod_disruption_budget(&pdb, None)),
            vec!["spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"150%\"}: must not be greater than 100%"]
        );
    }
}
