//! Workloads with a pod template: deployments and replicasets (apps/v1) and
//! replicationcontrollers (v1); StatefulSets and DaemonSets are `apps`'. Replicas are non-negative, the
//! selector is required and must match the template's labels, the template
//! is a valid pod spec that always restarts, and apps selectors are immutable.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common::{self, int, same};
use crate::int_or_percent as iop;
use crate::kinds::core::pods;
use crate::selector;
use kube_rules::gofmt;

const NEGATIVE: &str = "must be greater than or equal to 0";
const MISMATCH: &str = "`selector` does not match template `labels`";
const LABELS_FIELD: &str = "spec.template.metadata.labels";

/// What an apps selector turns into (`metav1.LabelSelectorAsSelector`).
enum Selector<'a> {
    /// No selector: matches nothing.
    Nothing,
    /// An empty selector: no check against the template.
    Everything,
    Labels(&'a Value),
    /// Malformed expressions: the template is not checked.
    Unusable,
}

/// A create or update of the workload `resource` (plural).
pub fn validate(resource: &str, object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut causes = Vec::new();
    if resource == "replicationcontrollers" {
        controller_spec(spec, &mut causes);
    } else {
        apps_spec(spec, &mut causes);
    }
    // Defaulting always sets a strategy before validation runs.
    if let Some(strategy) = spec.get("strategy").filter(|_| resource == "deployments") {
        deployment_strategy(strategy, &mut causes);
    }
    if let Some(old) = old {
        let old_spec = old.get("spec").unwrap_or(&Value::Null);
        apps_update(resource, spec, old_spec, &mut causes);
    }
    causes
}

fn non_negative(spec: &Value, key: &str, causes: &mut Vec<Cause>) {
    let value = int(spec, key);
    if value < 0 {
        let field = format!("spec.{key}");
        causes.push(common::invalid(&field, &value.to_string(), NEGATIVE));
    }
}

fn apps_spec(spec: &Value, causes: &mut Vec<Cause>) {
    let kind = "deployment";
    non_negative(spec, "replicas", causes);
    non_negative(spec, "minReadySeconds", causes);
    let selector = apps_selector(spec, kind, causes);
    let template = spec.get("template").unwrap_or(&Value::Null);
    let labels = template.get("metadata").and_then(|m| m.get("labels"));
    let matched = match selector {
        Selector::Unusable => return,
        Selector::Nothing => false,
        Selector::Everything => true,
        Selector::Labels(sel) => selector::matches(sel, labels),
    };
    if !matched {
        causes.push(common::invalid(
            LABELS_FIELD,
            &gofmt::string_map(labels),
            MISMATCH,
        ));
    }
    template_spec(template, "ReplicaSet", causes);
}

fn apps_selector<'a>(spec: &'a Value, kind: &str, causes: &mut Vec<Cause>) -> Selector<'a> {
    let field = "spec.selector";
    let Some(sel) = spec.get("selector").filter(|s| !s.is_null()) else {
        causes.push(common::required(field, ""));
        return Selector::Nothing;
    };
    let (problems, usable) = selector::check(sel, field);
    causes.extend(problems);
    let empty = selector::is_empty(sel);
    if empty {
        let detail = format!("empty selector is invalid for {kind}");
        causes.push(common::invalid(field, &gofmt::label_selector(sel), &detail));
    }
    if !usable {
        let detail = "invalid label selector";
        causes.push(common::invalid(field, &gofmt::label_selector(sel), detail));
        return Selector::Unusable;
    }
    if empty {
        Selector::Everything
    } else {
        Selector::Labels(sel)
    }
}

/// The template's pod spec, which must restart Always and have no deadline.
pub fn template_spec(template: &Value, owner: &str, causes: &mut Vec<Cause>) {
    let spec = template.get("spec").unwrap_or(&Value::Null);
    causes.extend(pods::validate_spec(spec, "spec.template.spec"));
    let restart = spec.get("restartPolicy").and_then(Value::as_str);
    if let Some(policy) = restart.filter(|p| *p != "Always") {
        let field = "spec.template.spec.restartPolicy";
        causes.push(common::not_supported(field, policy, &["Always"]));
    }
    if spec
        .get("activeDeadlineSeconds")
        .is_some_and(|v| !v.is_null())
    {
        let field = "spec.template.spec.activeDeadlineSeconds";
        let detail = format!("activeDeadlineSeconds in {owner} is not Supported");
        causes.push(common::forbidden(field, &detail));
    }
}

/// ReplicationControllers: a plain map selector, defaulted from the
/// template's labels when empty, and a template that may be missing.
fn controller_spec(spec: &Value, causes: &mut Vec<Cause>) {
    non_negative(spec, "minReadySeconds", causes);
    let template = spec.get("template").filter(|t| !t.is_null());
    let labels = template
        .and_then(|t| t.get("metadata"))
        .and_then(|m| m.get("labels"));
    let given = spec.get("selector").filter(|s| !is_empty_map(Some(s)));
    let selector = given.or(labels).filter(|s| !is_empty_map(Some(s)));
    if selector.is_none() {
        causes.push(common::required("spec.selector", ""));
    }
    non_negative(spec, "replicas", causes);
    let Some(template) = template else {
        causes.push(common::required("spec.template", ""));
        return;
    };
    if selector.is_some_and(|sel| !selector::map_matches(sel, labels)) {
        causes.push(common::invalid(
            LABELS_FIELD,
            &gofmt::string_map(labels),
            MISMATCH,
        ));
    }
    template_spec(template, "ReplicationController", causes);
}

fn is_empty_map(value: Option<&Value>) -> bool {
    value
        .and_then(Value::as_object)
        .is_none_or(|m| m.is_empty())
}

/// Deployments and ReplicaSets keep their selector; ReplicationControllers
/// have no such rule.
fn apps_update(resource: &str, new: &Value, old: &Value, causes: &mut Vec<Cause>) {
    match resource {
        "deployments" | "replicasets" => {
            let (selector, before) = (new.get("selector"), old.get("selector"));
            if !same(selector, before) {
                let shown = selector
                    .filter(|s| !s.is_null())
                    .map_or_else(|| gofmt::scalar(None), gofmt::label_selector);
                causes.push(common::immutable("spec.selector", &shown));
            }
        }
        _ => {}
    }
}

/// `ValidateDeploymentStrategy` (after defaulting: a RollingUpdate
/// strategy always has its rollingUpdate).
fn deployment_strategy(strategy: &Value, causes: &mut Vec<Cause>) {
    let at = "spec.strategy";
    let rolling = strategy.get("rollingUpdate").filter(|r| !r.is_null());
    match common::text(strategy, "type") {
        "Recreate" if rolling.is_some() => {
            let detail = "may not be specified when strategy `type` is 'Recreate'";
            causes.push(common::forbidden(&format!("{at}.rollingUpdate"), detail));
        }
        "Recreate" => {}
        "RollingUpdate" => match rolling {
            None => {
                let detail = "this should be defaulted and never be nil";
                causes.push(common::required(&format!("{at}.rollingUpdate"), detail));
            }
            Some(rolling) => rolling_deployment(rolling, causes),
        },
        other => {
            let rendered = format!(
                "apps.DeploymentStrategy{{Type:{}, RollingUpdate:{}}}",
                gofmt::quote(other),
                super::validation::pointer("apps.RollingUpdateDeployment", rolling)
            );
            causes.push(common::not_supported_rendered(
                at,
                &rendered,
                &["Recreate", "RollingUpdate"],
            ));
        }
    }
}

/// `ValidateRollingUpdateDeployment`.
fn rolling_deployment(rolling: &Value, causes: &mut Vec<Cause>) {
    let zero = Value::from(0);
    let value = |key: &str| rolling.get(key).filter(|v| !v.is_null()).unwrap_or(&zero);
    let (unavailable, surge) = (value("maxUnavailable"), value("maxSurge"));
    let unavailable_field = "spec.strategy.rollingUpdate.maxUnavailable";
    causes.extend(iop::positive(unavailable, unavailable_field));
    causes.extend(iop::positive(surge, "spec.strategy.rollingUpdate.maxSurge"));
    if iop::amount(unavailable) == 0 && iop::amount(surge) == 0 {
        let detail = "may not be 0 when `maxSurge` is 0";
        causes.push(common::invalid(
            unavailable_field,
            &iop::render(unavailable),
            detail,
        ));
    }
    causes.extend(iop::at_most_100_percent(unavailable, unavailable_field));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::messages;
    use serde_json::json;

    fn deployment(selector: Value, labels: Value) -> Value {
        json!({"spec": {"replicas": 1, "selector": selector, "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}})
    }

    #[test]
    fn deployment_strategies_are_checked_as_kube_checks_them() {
        let with = |strategy: Value| {
            let mut d = deployment(json!({"matchLabels": {"a": "b"}}), json!({"a": "b"}));
            d["spec"]["strategy"] = strategy;
            messages(&validate("deployments", &d, None))
        };
        assert_eq!(
            with(json!({"type": "Recreate", "rollingUpdate": {"maxSurge": 1}})),
            vec!["spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"]
        );
        assert_eq!(
            with(json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}})),
            vec!["spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}: may not be 0 when `maxSurge` is 0"]
        );
        assert!(with(json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})).is_empty());
    }

    #[test]
    fn a_valid_deployment_has_no_causes() {
        let d = deployment(
            json!({"matchLabels": {"app": "web"}}),
            json!({"app": "web", "v": "1"}),
        );
        assert!(validate("deployments", &d, None).is_empty());
    }

    #[test]
    fn selector_must_match_template_labels() {
        let d = deployment(json!({"matchLabels": {"app": "web"}}), json!({"app": "x"}));
        assert_eq!(
            messages(&validate("deployments", &d, None)),
            vec![
                "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"x\"}: \
                  `selector` does not match template `labels`"
            ]
        );
    }

    #[test]
    fn missing_selector_is_required_and_matches_nothing() {
        let mut d = deployment(json!(null), json!({"app": "x"}));
        d["spec"].as_object_mut().unwrap().remove("selector");
        let got = messages(&validate("replicasets", &d, None));
        assert_eq!(
            got,
            vec![
                "spec.selector: Required value",
                "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"x\"}: \
                 `selector` does not match template `labels`",
            ]
        );
    }

    #[test]
    fn replicas_and_template_rules() {
        let mut d = deployment(
            json!({"matchLabels": {"app": "web"}}),
            json!({"app": "web"}),
        );
        d["spec"]["replicas"] = json!(-1);
        d["spec"]["template"]["spec"]["restartPolicy"] = json!("Never");
        d["spec"]["template"]["spec"]["containers"][0]
            .as_object_mut()
            .unwrap()
            .remove("image");
        let got = messages(&validate("replicasets", &d, None));
        assert_eq!(
            got,
            vec![
                "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
                "spec.template.spec.containers[0].image: Required value",
                "spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"",
            ]
        );
    }

    #[test]
    fn apps_selector_is_immutable() {
        let old = deployment(
            json!({"matchLabels": {"app": "web"}}),
            json!({"app": "web", "b": "1"}),
        );
        let new = deployment(
            json!({"matchLabels": {"b": "1"}}),
            json!({"app": "web", "b": "1"}),
        );
        let got = validate("deployments", &new, Some(&old));
        assert_eq!(
            messages(&got),
            vec!["spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string\
                  {\"b\":\"1\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"]
        );
        assert_eq!(got[0].cause_type, "FieldValueInvalid");
        let mut scaled = old.clone();
        scaled["spec"]["replicas"] = json!(5);
        assert!(validate("deployments", &scaled, Some(&old)).is_empty());
    }

    #[test]
    fn replication_controllers() {
        let rc = json!({"spec": {"selector": {"app": "a"}, "template": {
            "metadata": {"labels": {"app": "b"}},
            "spec": {"containers": [{"name": "c", "image": "x"}], "activeDeadlineSeconds": 5}}}});
        assert_eq!(
            messages(&validate("replicationcontrollers", &rc, None)),
            vec![
                "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"b\"}: \
                 `selector` does not match template `labels`",
                "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in \
                 ReplicationController is not Supported",
            ]
        );
        let defaulted = json!({"spec": {"template": {"metadata": {"labels": {"app": "b"}},
            "spec": {"containers": [{"name": "c", "image": "x"}]}}}});
        assert!(validate("replicationcontrollers", &defaulted, None).is_empty());
        assert_eq!(
            messages(&validate(
                "replicationcontrollers",
                &json!({"spec": {}}),
                None
            )),
            vec![
                "spec.selector: Required value",
                "spec.template: Required value"
            ]
        );
    }
}
