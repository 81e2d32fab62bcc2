//! ResourceQuota and LimitRange (`ValidateResourceQuota`, `ValidateLimitRange`).
//! Go walks these maps in random order; here keys are taken sorted.

use std::collections::BTreeSet;

use capstan_plugin_sdk::Cause;
use serde_json::{Map, Value};

use super::quantities::{self, go_dump, parse};
use crate::common;
use kube_rules::qualified_name;

fn map<'a>(object: &'a Value, key: &str) -> impl Iterator<Item = (&'a String, String)> + 'a {
    object
        .get(key)
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(Map::iter)
        .map(|(k, v)| (k, quantities::text(v)))
}

/// `ValidateResourceQuota` (spec and status hard/used).
pub fn resource_quota(quota: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut check = |at: &str, list: &Value, field: &str| {
        for (name, text) in map(list, field) {
            let field = format!("{at}.{field}[{name}]");
            causes.extend(quantities::quota_resource_name(&field, name));
            causes.extend(quantities::value(&field, name, &text));
        }
    };
    check("spec", &quota["spec"], "hard");
    check("status", &quota["status"], "hard");
    check("status", &quota["status"], "used");
    scopes(&quota["spec"], &mut causes);
    causes
}

const SCOPES: [&str; 6] = [
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "CrossNamespacePodAffinity",
];

/// The scopes must be kube's (`validateResourceQuotaScopes`, its first check).
fn scopes(spec: &Value, causes: &mut Vec<Cause>) {
    for scope in common::list(spec, "scopes")
        .iter()
        .filter_map(Value::as_str)
    {
        if !SCOPES.contains(&scope) {
            let rendered = kube_rules::gofmt::string_slice(spec.get("scopes"));
            causes.push(common::invalid(
                "spec.scopes",
                &rendered,
                "unsupported scope",
            ));
        }
    }
}

/// `ValidateLimitRange`.
pub fn limit_range(range: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut types = BTreeSet::new();
    for (i, limit) in common::list(&range["spec"], "limits").iter().enumerate() {
        let at = format!("spec.limits[{i}]");
        let kind = common::text(limit, "type");
        type_name(&format!("{at}.type"), kind, &mut causes);
        if !types.insert(kind) {
            causes.push(common::duplicate(&format!("{at}.type"), kind));
        }
        one_limit(&at, kind, limit, &mut causes);
    }
    causes
}

fn type_name(field: &str, kind: &str, causes: &mut Vec<Cause>) {
    let problems = qualified_name(kind);
    if !problems.is_empty() {
        causes.extend(problems.iter().map(|m| common::invalid(field, kind, m)));
        return;
    }
    let standard = ["Pod", "Container", "PersistentVolumeClaim"].contains(&kind);
    if !kind.contains('/') && !standard {
        causes.push(common::invalid(
            field,
            kind,
            "must be a standard limit type or fully qualified",
        ));
    }
}

fn one_limit(at: &str, kind: &str, limit: &Value, causes: &mut Vec<Cause>) {
    let name_check = |field: &str, name: &str| match kind {
        "Pod" | "Container" => quantities::container_resource_name(field, name),
        _ => quantities::resource_name(field, name),
    };
    let mut keys = BTreeSet::new();
    let mut fields = vec!["max", "min"];
    if kind == "Pod" {
        for field in ["default", "defaultRequest"] {
            if limit
                .get(field)
                .and_then(Value::as_object)
                .is_some_and(|m| !m.is_empty())
            {
                let detail = "may not be specified when `type` is 'Pod'";
                causes.push(common::forbidden(&format!("{at}.{field}"), detail));
            }
        }
    } else {
        fields.extend(["default", "defaultRequest"]);
    }
    fields.push("maxLimitRequestRatio");
    for field in &fields {
        if *field == "maxLimitRequestRatio" && kind == "PersistentVolumeClaim" {
            pvc_needs_storage(at, limit, causes);
        }
        for (name, _) in map(limit, field) {
            causes.extend(name_check(&format!("{at}.{field}[{name}]"), name));
            keys.insert(name.as_str());
        }
    }
    for key in keys {
        relations(at, key, limit, causes);
    }
}

fn pvc_needs_storage(at: &str, limit: &Value, causes: &mut Vec<Cause>) {
    let has = |field: &str| limit[field].get("storage").is_some();
    if !has("min") && !has("max") {
        let detail =
            "either minimum or maximum storage value is required, but neither was provided";
        causes.push(common::required(&format!("{at}.limits"), detail));
    }
}

/// kube's order checks of one resource, in its order: (the larger, its
/// words, the smaller, its words, the field reported, the value shown).
const ORDER: [(&str, &str, &str, &str, &str, &str); 6] = [
    ("min", "min value", "max", "max value", "min", "min"),
    (
        "min",
        "min value",
        "defaultRequest",
        "default request value",
        "defaultRequest",
        "defaultRequest",
    ),
    (
        "defaultRequest",
        "default request value",
        "max",
        "max value",
        "defaultRequest",
        "defaultRequest",
    ),
    (
        "defaultRequest",
        "default request value",
        "default",
        "default limit value",
        "defaultRequest",
        "defaultRequest",
    ),
    (
        "min",
        "min value",
        "default",
        "default value",
        "default",
        "min",
    ),
    (
        "default",
        "default value",
        "max",
        "max value",
        "default",
        "max",
    ),
];

/// The order checks between min, max, default and defaultRequest of one
/// resource, and its limit/request ratio.
fn relations(at: &str, key: &str, limit: &Value, causes: &mut Vec<Cause>) {
    let get = |field: &str| limit[field].get(key).map(quantities::text);
    let show = |t: &str| parse(t).to_string();
    let mut refuse = |field: &str, shown: &str, detail: String| {
        let path = format!("{at}.{field}[{key}]");
        causes.push(common::invalid(&path, &go_dump(shown), &detail));
    };
    for (big, big_words, small, small_words, field, shown) in ORDER {
        let (Some(b), Some(s)) = (get(big), get(small)) else {
            continue;
        };
        if parse(&b) > parse(&s) {
            let detail = format!(
                "{big_words} {} is greater than {small_words} {}",
                show(&b),
                show(&s)
            );
            let value = if shown == big { &b } else { &s };
            refuse(field, value, detail);
        }
    }
    if let Some(r) = get("maxLimitRequestRatio") {
        if parse(&r) < capstan_quota::Quantity::from_units(1) {
            refuse(
                "maxLimitRequestRatio",
                &r,
                format!("ratio {} is less than 1", show(&r)),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(causes: Vec<Cause>) -> Vec<String> {
        causes
            .into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect()
    }

    #[test]
    fn a_minimum_above_the_maximum_is_refused_with_go_quantities() {
        let range = json!({"spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}, "min": {"cpu": "2"},
            "default": {"cpu": "1"}, "defaultRequest": {"cpu": "1"}}]}});
        let got = messages(limit_range(&range));
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(got[0].starts_with("spec.limits[0].min[cpu]: Invalid value: resource.Quantity{i:resource.int64Amount{value:2, scale:0}"));
        assert!(got[0].ends_with("min value 2 is greater than max value 1"));
        assert!(got[1].ends_with("min value 2 is greater than default request value 1"));
        assert!(got[2].ends_with("min value 2 is greater than default value 1"));
    }

    #[test]
    fn pod_limits_take_no_defaults_and_types_are_kubes() {
        let range = json!({"spec": {"limits": [{"type": "Pod", "default": {"cpu": "1"}}, {"type": "Bogus"}]}});
        assert_eq!(
            messages(limit_range(&range)),
            ["spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'",
             "spec.limits[1].type: Invalid value: Bogus: must be a standard limit type or fully qualified"]
        );
    }

    #[test]
    fn quotas_refuse_negative_and_unknown_resources() {
        let quota = json!({"spec": {"hard": {"pods": "-1", "foo": "1"}}});
        assert_eq!(
            messages(resource_quota(&quota)),
            ["spec.hard[pods]: Invalid value: \"-1\": must be greater than or equal to 0",
             "spec.hard[foo]: Invalid value: foo: must be a standard resource type or fully qualified",
             "spec.hard[foo]: Invalid value: foo: must be a standard resource for quota"]
        );
    }
}
