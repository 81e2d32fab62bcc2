//! The pod-level checks after the DNS policy (`ValidatePodSpec`'s tail):
//! node selector, pod security context, node affinity, DNS config,
//! topology spread, names, deadlines and tolerations.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common::{self, text};
use crate::metadata::validate_labels;
use kube_rules::{label_value, qualified_name};

/// The pod-level checks of the spec at `at`.
pub fn pod_level(spec: &Value, at: &str, causes: &mut Vec<Cause>) {
    if let Some(selector) = spec.get("nodeSelector") {
        causes.extend(validate_labels(&format!("{at}.nodeSelector"), selector));
    }
    super::containers::security(
        &spec["securityContext"],
        &format!("{at}.securityContext"),
        causes,
    );
    node_affinity(spec, at, causes);
    dns_config(spec, at, causes);
    topology_spread(
        common::list(spec, "topologySpreadConstraints"),
        &format!("{at}.topologySpreadConstraints"),
        causes,
    );
    names(spec, at, causes);
    tolerations(
        common::list(spec, "tolerations"),
        &format!("{at}.tolerations"),
        causes,
    );
}

fn node_affinity(spec: &Value, at: &str, causes: &mut Vec<Cause>) {
    let base = format!("{at}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution");
    let Some(required) = spec
        .pointer("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution")
        .filter(|v| !v.is_null())
    else {
        return;
    };
    let terms = common::list(required, "nodeSelectorTerms");
    let field = format!("{base}.nodeSelectorTerms");
    if terms.is_empty() {
        causes.push(common::required(
            &field,
            "must have at least one node selector term",
        ));
        return;
    }
    for (i, term) in terms.iter().enumerate() {
        for (j, req) in common::list(term, "matchExpressions").iter().enumerate() {
            requirement(req, &format!("{field}[{i}].matchExpressions[{j}]"), causes);
        }
    }
}

/// `ValidateNodeSelectorRequirement`.
fn requirement(req: &Value, at: &str, causes: &mut Vec<Cause>) {
    let values = common::list(req, "values").len();
    let values_field = format!("{at}.values");
    match text(req, "operator") {
        "In" | "NotIn" if values == 0 => causes.push(common::required(
            &values_field,
            "must be specified when `operator` is 'In' or 'NotIn'",
        )),
        "Exists" | "DoesNotExist" if values > 0 => causes.push(common::forbidden(
            &values_field,
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        )),
        "Gt" | "Lt" if values != 1 => causes.push(common::required(
            &values_field,
            "must be specified single value when `operator` is 'Lt' or 'Gt'",
        )),
        "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt" => {}
        other => causes.push(common::invalid_str(
            &format!("{at}.operator"),
            other,
            "not a valid selector operator",
        )),
    }
    let key = text(req, "key");
    common::invalid_each(causes, &format!("{at}.key"), key, qualified_name(key));
}

fn dns_config(spec: &Value, at: &str, causes: &mut Vec<Cause>) {
    let field = format!("{at}.dnsConfig");
    let config = spec.get("dnsConfig").filter(|v| !v.is_null());
    if text(spec, "dnsPolicy") == "None" {
        let Some(config) = config else {
            causes.push(common::required(
                &field,
                "must provide `dnsConfig` when `dnsPolicy` is None",
            ));
            return;
        };
        if common::list(config, "nameservers").is_empty() {
            let detail = "must provide at least one DNS nameserver when `dnsPolicy` is None";
            causes.push(common::required(&format!("{field}.nameservers"), detail));
            return;
        }
    }
    for (i, server) in config
        .map(|c| common::list(c, "nameservers"))
        .unwrap_or(&[])
        .iter()
        .enumerate()
    {
        let server = server.as_str().unwrap_or_default();
        if crate::kinds::core::validation::parse_ip(server).is_none() {
            let detail = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
            causes.push(common::invalid_str(
                &format!("{field}.nameservers[{i}]"),
                server,
                detail,
            ));
        }
    }
}

fn topology_spread(constraints: &[Value], at: &str, causes: &mut Vec<Cause>) {
    for (i, c) in constraints.iter().enumerate() {
        let path = format!("{at}[{i}]");
        let skew = common::int(c, "maxSkew");
        if skew <= 0 {
            causes.push(common::invalid(
                &format!("{path}.maxSkew"),
                &skew.to_string(),
                "must be greater than zero",
            ));
        }
        let key = text(c, "topologyKey");
        if key.is_empty() {
            causes.push(common::required(
                &format!("{path}.topologyKey"),
                "can not be empty",
            ));
        } else {
            common::invalid_each(
                causes,
                &format!("{path}.topologyKey"),
                key,
                qualified_name(key),
            );
        }
        let action = text(c, "whenUnsatisfiable");
        let actions = ["DoNotSchedule", "ScheduleAnyway"];
        if !actions.contains(&action) {
            causes.push(common::not_supported(
                &format!("{path}.whenUnsatisfiable"),
                action,
                &actions,
            ));
        }
    }
}

fn names(spec: &Value, at: &str, causes: &mut Vec<Cause>) {
    for key in ["serviceAccountName", "nodeName"] {
        let name = text(spec, key);
        if !name.is_empty() {
            common::invalid_each(
                causes,
                &format!("{at}.{key}"),
                name,
                kube_rules::dns1123_subdomain(name),
            );
        }
    }
    if let Some(deadline) = spec.get("activeDeadlineSeconds").and_then(Value::as_i64) {
        if !(1..=i64::from(i32::MAX)).contains(&deadline) {
            let detail = kube_rules::inclusive_range_error(1, i64::from(i32::MAX));
            causes.push(common::invalid(
                &format!("{at}.activeDeadlineSeconds"),
                &deadline.to_string(),
                &detail,
            ));
        }
    }
    for key in ["hostname", "subdomain"] {
        let name = text(spec, key);
        if !name.is_empty() {
            common::invalid_each(
                causes,
                &format!("{at}.{key}"),
                name,
                kube_rules::dns1123_label(name),
            );
        }
    }
}

/// `ValidateTolerations`.
fn tolerations(list: &[Value], at: &str, causes: &mut Vec<Cause>) {
    for (i, t) in list.iter().enumerate() {
        let path = format!("{at}[{i}]");
        let (key, operator, value) = (text(t, "key"), text(t, "operator"), text(t, "value"));
        let effect = text(t, "effect");
        if !key.is_empty() {
            common::invalid_each(causes, &format!("{path}.key"), key, qualified_name(key));
        }
        let op_field = format!("{path}.operator");
        if key.is_empty() && operator != "Exists" {
            let detail = "operator must be Exists when `key` is empty, which means \"match all values and all keys\"";
            causes.push(common::invalid_str(&op_field, operator, detail));
        }
        if t.get("tolerationSeconds").is_some_and(|v| !v.is_null()) && effect != "NoExecute" {
            let detail = "effect must be 'NoExecute' when `tolerationSeconds` is set";
            causes.push(common::invalid_str(
                &format!("{path}.effect"),
                effect,
                detail,
            ));
        }
        match operator {
            "Equal" | "" => {
                let errs = label_value(value);
                if !errs.is_empty() {
                    causes.push(common::invalid_str(&op_field, value, &errs.join(";")));
                }
            }
            "Exists" if !value.is_empty() => {
                causes.push(common::invalid_str(
                    &op_field,
                    value,
                    "value must be empty when `operator` is 'Exists'",
                ));
            }
            "Exists" => {}
            other => causes.push(common::not_supported(
                &op_field,
                other,
                &["Equal", "Exists"],
            )),
        }
        let effects = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
        if !effect.is_empty() && !effects.contains(&effect) {
            causes.push(common::not_supported(
                &format!("{path}.effect"),
                effect,
                &effects,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scheduling_constraints_are_checked() {
        let spec = json!({"tolerations": [{"key": "k", "operator": "Exists", "value": "v"}],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}},
            "dnsPolicy": "None",
            "topologySpreadConstraints": [{"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": "Bogus"}]});
        let mut causes = Vec::new();
        pod_level(&spec, "spec", &mut causes);
        let shown: Vec<String> = causes
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        assert_eq!(shown, [
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value: must have at least one node selector term",
            "spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None",
            "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
            "spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty",
            "spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: \"Bogus\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\"",
            "spec.tolerations[0].operator: Invalid value: \"v\": value must be empty when `operator` is 'Exists'",
        ]);
    }
}
