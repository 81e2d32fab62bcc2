//! Nodes (`ValidateNode`): taints (kube reports them under
//! `metadata.taints`), pod CIDRs, and status resource quantities.

use std::collections::HashSet;

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use super::{ip, quantities};
use crate::common;
use kube_rules::{label_value, qualified_name};

const EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

/// `ValidateNode`.
pub fn node(node: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    taints(common::list(&node["spec"], "taints"), &mut causes);
    resources(node, &mut causes);
    pod_cidrs(&node["spec"], &mut causes);
    causes
}

fn taints(taints: &[Value], causes: &mut Vec<Cause>) {
    let mut seen = HashSet::new();
    for (i, taint) in taints.iter().enumerate() {
        let at = format!("metadata.taints[{i}]");
        let (key, value) = (common::text(taint, "key"), common::text(taint, "value"));
        common::invalid_each(causes, &format!("{at}.key"), key, qualified_name(key));
        let problems = label_value(value);
        if !problems.is_empty() {
            causes.push(common::invalid_str(
                &format!("{at}.value"),
                value,
                &problems.join(";"),
            ));
        }
        let effect = common::text(taint, "effect");
        let field = format!("{at}.effect");
        if effect.is_empty() {
            causes.push(common::required(&field, ""));
            continue;
        }
        if !EFFECTS.contains(&effect) {
            causes.push(common::not_supported(&field, effect, &EFFECTS));
        }
        if !seen.insert((effect, key)) {
            let shown = format!(
                "core.Taint{{Key:{}, Value:{}, Effect:{}, TimeAdded:<nil>}}",
                kube_rules::gofmt::quote(key),
                kube_rules::gofmt::quote(value),
                kube_rules::gofmt::quote(effect)
            );
            let mut dup = common::duplicate(&at, &shown);
            dup.message = format!(
                "{}: taints must be unique by key and effect pair",
                dup.message
            );
            causes.push(dup);
        }
    }
}

fn resources(node: &Value, causes: &mut Vec<Cause>) {
    for list in ["capacity", "allocatable"] {
        let Some(map) = node["status"].get(list).and_then(Value::as_object) else {
            continue;
        };
        for (name, text) in map {
            let field = format!("status.{list}[{name}]");
            causes.extend(quantities::value(&field, name, &quantities::text(text)));
        }
    }
}

/// The internal type's `podCIDRs`: v1's list, or its single `podCIDR`.
fn pod_cidrs(spec: &Value, causes: &mut Vec<Cause>) {
    let mut cidrs: Vec<&str> = common::list(spec, "podCIDRs")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let single = common::text(spec, "podCIDR");
    if cidrs.is_empty() && !single.is_empty() {
        cidrs.push(single);
    }
    for (i, cidr) in cidrs.iter().enumerate() {
        ip::check_cidr(&format!("spec.podCIDRs[{i}]"), cidr, causes);
    }
    if cidrs.len() > 1 {
        let families: Vec<Option<bool>> = cidrs
            .iter()
            .map(|c| ip::parse_cidr(c).map(|c| c.is_ipv4()))
            .collect();
        let dual = cidrs.len() == 2
            && families[0].is_some()
            && families[1].is_some()
            && families[0] != families[1];
        if !dual {
            let shown = kube_rules::gofmt::string_slice(spec.get("podCIDRs"));
            let detail = "may specify no more than one CIDR for each IP family";
            causes.push(common::invalid("spec.podCIDRs", &shown, detail));
        }
        let mut seen = HashSet::new();
        for (i, cidr) in cidrs.iter().enumerate() {
            if !seen.insert(cidr) {
                causes.push(common::duplicate(
                    &format!("spec.podCIDRs[{i}]"),
                    &kube_rules::gofmt::quote(cidr),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn taints_and_cidrs_are_checked_where_kube_reports_them() {
        let n =
            json!({"spec": {"taints": [{"key": "k", "effect": "Bogus"}], "podCIDR": "notacidr"}});
        let shown: Vec<String> = node(&n)
            .into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        assert_eq!(
            shown,
            ["metadata.taints[0].effect: Unsupported value: \"Bogus\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"",
             "spec.podCIDRs[0]: Invalid value: \"notacidr\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"]
        );
    }
}
