//! `ClusterRole` aggregation, with the semantics of `kube-controller-manager`'s
//! `clusterrole-aggregation-controller`
//! (kubernetes `pkg/controller/clusterroleaggregation/clusterroleaggregation_controller.go`).
//!
//! For a `ClusterRole` with an `aggregationRule`, kube computes its rules as:
//!
//! * for each entry of `aggregationRule.clusterRoleSelectors`, in order, list every
//!   `ClusterRole` whose labels match that label selector (`matchLabels` and
//!   `matchExpressions` with `In`, `NotIn`, `Exists`, `DoesNotExist`, all required; an empty
//!   selector matches every role);
//! * visit the matches sorted by name, skipping the aggregating role itself;
//! * append each of their rules unless a semantically equal rule is already in the
//!   result (first occurrence wins, so order is selector order, then name order, then
//!   the source role's rule order).
//!
//! Rules are compared the way `equality.Semantic.DeepEqual` compares `PolicyRule`s:
//! only `apiGroups`, `resources`, `resourceNames`, `nonResourceURLs` and `verbs`
//! count, element order matters, and a missing field equals an empty list. Rules are
//! written back in that typed form (unknown fields dropped, empty lists omitted).
//!
//! If a selector is invalid, kube's sync fails and the role is not written; here that
//! yields `None`, as for a role without an `aggregationRule`. Malformed source roles
//! (labels that are not a string map, no name) and malformed rules are skipped.
//!

use crate::admission::matcher::Selector;
use serde_json::{Map, Value};

/// The `PolicyRule` fields kube keeps, in the order they are compared.
const RULE_FIELDS: [&str; 5] = [
    "apiGroups",
    "resources",
    "resourceNames",
    "nonResourceURLs",
    "verbs",
];

/// A `PolicyRule` reduced to the fields kube's typed struct holds.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    /// One list per entry of [`RULE_FIELDS`]; a missing field is an empty list.
    fields: [Vec<String>; 5],
}

impl Rule {
    /// Parses a rule object; `None` if it or one of its known fields is malformed.
    fn parse(value: &Value) -> Option<Rule> {
        let object = value.as_object()?;
        let mut fields: [Vec<String>; 5] = Default::default();
        for (slot, key) in fields.iter_mut().zip(RULE_FIELDS) {
            *slot = string_list(object.get(key))?;
        }
        Some(Rule { fields })
    }

    /// Serializes the rule as kube would store it: empty lists are omitted.
    fn to_value(&self) -> Value {
        let mut object = Map::new();
        for (list, key) in self.fields.iter().zip(RULE_FIELDS) {
            if !list.is_empty() {
                let items = list.iter().cloned().map(Value::String).collect();
                object.insert(key.to_string(), Value::Array(items));
            }
        }
        Value::Object(object)
    }
}

/// Reads an optional list of strings: absent or null is empty, anything but an
/// array of strings is malformed (`None`).
fn string_list(value: Option<&Value>) -> Option<Vec<String>> {
    match value {
        None | Some(Value::Null) => Some(Vec::new()),
        Some(Value::Array(items)) => items.iter().map(|v| v.as_str().map(String::from)).collect(),
        Some(_) => None,
    }
}

/// The role's `metadata.name`, if it is a string.
fn name_of(role: &Value) -> Option<&str> {
    role.get("metadata")?.get("name")?.as_str()
}

/// The role's labels; `None` if malformed (not a map of strings).
fn labels_of(role: &Value) -> Option<Map<String, Value>> {
    match role.get("metadata")?.get("labels") {
        None | Some(Value::Null) => Some(Map::new()),
        Some(Value::Object(labels)) if labels.values().all(Value::is_string) => {
            Some(labels.clone())
        }
        Some(_) => None,
    }
}

/// The role's well-formed rules; malformed rules (or a non-list) are skipped.
fn rules_of(role: &Value) -> Vec<Rule> {
    match role.get("rules") {
        Some(Value::Array(rules)) => rules.iter().filter_map(Rule::parse).collect(),
        _ => Vec::new(),
    }
}

/// The role's selectors: `None` without an aggregation rule or if any is invalid.
fn selectors_of(role: &Value) -> Option<Vec<Selector>> {
    let aggregation = role.get("aggregationRule")?.as_object()?;
    match aggregation.get("clusterRoleSelectors") {
        None | Some(Value::Null) => Some(Vec::new()),
        Some(Value::Array(selectors)) => selectors
            .iter()
            .map(|s| Selector::parse(Some(s)).ok())
            .collect(),
        Some(_) => None,
    }
}

/// The roles a selector lists, sorted by name, without the aggregating role itself.
fn matching_roles<'a>(
    selector: &Selector,
    all: &'a [Value],
    own_name: &str,
) -> Vec<(&'a str, &'a Value)> {
    let mut matches: Vec<(&str, &Value)> = all
        .iter()
        .filter_map(|role| Some((name_of(role)?, role)))
        .filter(|(name, _)| *name != own_name)
        .filter(|(_, role)| labels_of(role).is_some_and(|labels| selector.matches(&labels)))
        .collect();
    matches.sort_by(|a, b| a.0.cmp(b.0));
    matches
}

/// The aggregated rules in typed form; `None` if the role does not aggregate.
fn aggregate(role: &Value, all_cluster_roles: &[Value]) -> Option<Vec<Rule>> {
    let selectors = selectors_of(role)?;
    let own_name = name_of(role).unwrap_or("");
    let mut result: Vec<Rule> = Vec::new();
    for selector in &selectors {
        for (_, source) in matching_roles(selector, all_cluster_roles, own_name) {
            for rule in rules_of(source) {
                if !result.contains(&rule) {
                    result.push(rule);
                }
            }
        }
    }
    Some(result)
}

/// Whether the role's stored rules already equal `wanted` (null or missing = empty).
fn stored_rules_equal(role: &Value, wanted: &[Rule]) -> bool {
    let stored: Option<Vec<Rule>> = match role.get("rules") {
        None | Some(Value::Null) => Some(Vec::new()),
        Some(Value::Array(rules)) => rules.iter().map(Rule::parse).collect(),
        Some(_) => None,
    };
    stored.is_some_and(|stored| stored == wanted)
}

/// Returns the rules `role` should hold after aggregation, or `None` when it has no
/// `aggregationRule` (or one with an invalid selector, which kube refuses to apply).
///
/// `all_cluster_roles` is every stored `ClusterRole`, with its current rules; it may
/// include `role` itself, which is never aggregated into itself.
#[cfg(test)]
pub fn aggregated_rules(role: &Value, all_cluster_roles: &[Value]) -> Option<Vec<Value>> {
    aggregate(role, all_cluster_roles).map(|rules| rules.iter().map(Rule::to_value).collect())
}

/// Returns a copy of `role` with its `rules` replaced by the aggregated rules, or
/// `None` if it does not aggregate or its stored rules already equal them.
#[must_use]
pub fn needs_update(role: &Value, all_cluster_roles: &[Value]) -> Option<Value> {
    let wanted = aggregate(role, all_cluster_roles)?;
    if stored_rules_equal(role, &wanted) {
        return None;
    }
    let mut updated = role.clone();
    let rules = wanted.iter().map(Rule::to_value).collect();
    updated
        .as_object_mut()?
        .insert("rules".to_string(), Value::Array(rules));
    Some(updated)
}

/// Runs [`needs_update`] over `roles` until no role changes, as the controller
/// (which requeues every aggregated role on any `ClusterRole` event) converges.
/// Stops after `roles.len() + 1` passes at most; returns the number of updates.
#[cfg(test)]
pub fn reconcile_all(roles: &mut [Value]) -> usize {
    let mut updates = 0;
    for _ in 0..=roles.len() {
        let mut changed = false;
        for i in 0..roles.len() {
            if let Some(updated) = needs_update(&roles[i], roles) {
                roles[i] = updated;
                updates += 1;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    updates
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn role(name: &str, labels: Value, rules: Value) -> Value {
        let mut role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                              "metadata": {"name": name}});
        role["metadata"]["labels"] = labels;
        role["rules"] = rules;
        role
    }

    fn aggregator(name: &str, selectors: Value) -> Value {
        let mut role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                              "metadata": {"name": name}, "rules": null});
        role["aggregationRule"] = json!({});
        role["aggregationRule"]["clusterRoleSelectors"] = selectors;
        role
    }

    fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> Value {
        json!({"apiGroups": groups, "resources": resources, "verbs": verbs})
    }

    #[test]
    fn role_without_aggregation_rule_is_none() {
        let plain = role(
            "plain",
            json!({}),
            json!([rule(&[""], &["pods"], &["get"])]),
        );
        assert_eq!(aggregated_rules(&plain, std::slice::from_ref(&plain)), None);
        assert_eq!(needs_update(&plain, std::slice::from_ref(&plain)), None);
        let null_rule = json!({"metadata": {"name": "n"}, "aggregationRule": null});
        assert_eq!(aggregated_rules(&null_rule, &[]), None);
    }

    #[test]
    fn sources_are_taken_in_name_order_and_deduplicated() {
        let agg = aggregator("agg", json!([{"matchLabels": {"team": "a"}}]));
        let r_pods = rule(&[""], &["pods"], &["get"]);
        let r_svc = rule(&[""], &["services"], &["get"]);
        let all = vec![
            agg.clone(),
            role(
                "zeta",
                json!({"team": "a"}),
                json!([r_pods.clone(), r_svc.clone()]),
            ),
            role("alpha", json!({"team": "a"}), json!([r_svc.clone()])),
            role(
                "other",
                json!({"team": "b"}),
                json!([rule(&[""], &["secrets"], &["get"])]),
            ),
        ];
        assert_eq!(aggregated_rules(&agg, &all), Some(vec![r_svc, r_pods]));
    }

    #[test]
    fn selectors_are_applied_in_order_and_rules_deduplicated_across_them() {
        let agg = aggregator(
            "agg",
            json!([{"matchLabels": {"x": "2"}}, {"matchLabels": {"x": "1"}}]),
        );
        let shared = rule(&["apps"], &["deployments"], &["list"]);
        let all = vec![
            role(
                "a",
                json!({"x": "1"}),
                json!([shared.clone(), rule(&[""], &["pods"], &["get"])]),
            ),
            role("b", json!({"x": "2"}), json!([shared.clone()])),
        ];
        let expected = vec![shared, rule(&[""], &["pods"], &["get"])];
        assert_eq!(aggregated_rules(&agg, &all), Some(expected));
    }

    #[test]
    fn role_never_aggregates_itself() {
        let mut agg = aggregator("agg", json!([{}]));
        agg["metadata"]["labels"] = json!({"k": "v"});
        agg["rules"] = json!([rule(&[""], &["own"], &["get"])]);
        let other = role(
            "other",
            json!({}),
            json!([rule(&[""], &["pods"], &["get"])]),
        );
        let all = vec![agg.clone(), other];
        assert_eq!(
            aggregated_rules(&agg, &all),
            Some(vec![rule(&[""], &["pods"], &["get"])])
        );
    }

    #[test]
    fn match_expressions_follow_label_requirement_semantics() {
        let all = vec![
            role(
                "a",
                json!({"tier": "web", "env": "prod"}),
                json!([rule(&[""], &["a"], &["get"])]),
            ),
            role(
                "b",
                json!({"tier": "db"}),
                json!([rule(&[""], &["b"], &["get"])]),
            ),
            role("c", json!({}), json!([rule(&[""], &["c"], &["get"])])),
        ];
        let resources = |expr: Value| -> Vec<String> {
            let agg = aggregator("agg", json!([{"matchExpressions": [expr]}]));
            let rules = aggregated_rules(&agg, &all).unwrap_or_default();
            rules
                .iter()
                .map(|r| r["resources"][0].as_str().unwrap_or("").to_string())
                .collect()
        };
        let in_web = json!({"key": "tier", "operator": "In", "values": ["web", "x"]});
        assert_eq!(resources(in_web), ["a"]);
        let not_in_web = json!({"key": "tier", "operator": "NotIn", "values": ["web"]});
        assert_eq!(resources(not_in_web), ["b", "c"]);
        assert_eq!(
            resources(json!({"key": "tier", "operator": "Exists"})),
            ["a", "b"]
        );
        assert_eq!(
            resources(json!({"key": "env", "operator": "DoesNotExist"})),
            ["b", "c"]
        );
    }

    #[test]
    fn match_labels_and_expressions_are_anded() {
        let all = vec![
            role(
                "a",
                json!({"tier": "web", "env": "prod"}),
                json!([rule(&[""], &["a"], &["get"])]),
            ),
            role(
                "b",
                json!({"tier": "web"}),
                json!([rule(&[""], &["b"], &["get"])]),
            ),
        ];
        let agg = aggregator(
            "agg",
            json!([{"matchLabels": {"tier": "web"},
            "matchExpressions": [{"key": "env", "operator": "Exists"}]}]),
        );
        assert_eq!(
            aggregated_rules(&agg, &all),
            Some(vec![rule(&[""], &["a"], &["get"])])
        );
    }

    #[test]
    fn empty_selector_matches_everything_and_no_selectors_match_nothing() {
        let all = vec![role(
            "a",
            json!(null),
            json!([rule(&[""], &["a"], &["get"])]),
        )];
        let everything = aggregator("agg", json!([{}]));
        assert_eq!(
            aggregated_rules(&everything, &all),
            Some(vec![rule(&[""], &["a"], &["get"])])
        );
        let no_selectors = json!({"metadata": {"name": "agg"}, "aggregationRule": {}});
        assert_eq!(aggregated_rules(&no_selectors, &all), Some(vec![]));
    }

    #[test]
    fn invalid_selectors_yield_none() {
        let all = vec![role(
            "a",
            json!({"k": "v"}),
            json!([rule(&[""], &["a"], &["get"])]),
        )];
        let invalid = [
            json!({"matchExpressions": [{"key": "k", "operator": "Gt", "values": ["1"]}]}),
            json!({"matchExpressions": [{"key": "k", "operator": "In", "values": []}]}),
            json!({"matchExpressions": [{"key": "k", "operator": "Exists", "values": ["v"]}]}),
            json!({"matchExpressions": [{"key": "k", "operator": "In"}]}),
            json!({"matchLabels": {"bad key!": "v"}}),
            json!({"matchLabels": {"k": "-bad-value"}}),
            json!({"matchLabels": {"k": 1}}),
            json!({"matchLabels": {"Upper.Prefix/k": "v"}}),
            json!("not a selector"),
        ];
        for selector in invalid {
            let agg = aggregator("agg", json!([selector.clone()]));
            assert_eq!(aggregated_rules(&agg, &all), None, "{selector}");
            assert_eq!(needs_update(&agg, &all), None, "{selector}");
        }
    }

    #[test]
    fn malformed_sources_and_rules_are_skipped() {
        let good = rule(&[""], &["pods"], &["get"]);
        let all = vec![
            json!({"metadata": {"name": "bad-labels", "labels": {"k": 5}}, "rules": [good.clone()]}),
            json!({"metadata": {"labels": {"k": "v"}}, "rules": [rule(&[""], &["nameless"], &["get"])]}),
            role(
                "mixed",
                json!({"k": "v"}),
                json!(["text", {"verbs": "get"}, good.clone()]),
            ),
            role("not-a-list", json!({"k": "v"}), json!({"verbs": ["get"]})),
        ];
        let agg = aggregator("agg", json!([{"matchLabels": {"k": "v"}}]));
        assert_eq!(aggregated_rules(&agg, &all), Some(vec![good]));
    }

    #[test]
    fn rules_are_normalized_to_typed_form() {
        let messy = json!({"apiGroups": [""], "resources": ["pods"], "resourceNames": [],
                           "verbs": ["get"], "unknown": true});
        let all = vec![role("a", json!({"k": "v"}), json!([messy]))];
        let agg = aggregator("agg", json!([{"matchLabels": {"k": "v"}}]));
        assert_eq!(
            aggregated_rules(&agg, &all),
            Some(vec![rule(&[""], &["pods"], &["get"])])
        );
    }

    #[test]
    fn needs_update_compares_semantically() {
        let source = role(
            "a",
            json!({"k": "v"}),
            json!([rule(&[""], &["pods"], &["get"])]),
        );
        let mut agg = aggregator("agg", json!([{"matchLabels": {"k": "v"}}]));
        let updated = needs_update(&agg, std::slice::from_ref(&source)).expect("rules differ");
        assert_eq!(updated["rules"], json!([rule(&[""], &["pods"], &["get"])]));
        assert_eq!(updated["aggregationRule"], agg["aggregationRule"]);
        assert_eq!(needs_update(&updated, std::slice::from_ref(&source)), None);
        agg["rules"] = json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"],
                               "nonResourceURLs": null, "extra": 1}]);
        assert_eq!(needs_update(&agg, std::slice::from_ref(&source)), None);
        agg["rules"] = json!([
            rule(&[""], &["pods"], &["get"]),
            rule(&[""], &["x"], &["get"])
        ]);
        assert!(needs_update(&agg, &[source]).is_some());
    }

    #[test]
    fn empty_result_matches_null_or_missing_rules() {
        let agg = aggregator("agg", json!([{"matchLabels": {"k": "v"}}]));
        assert_eq!(needs_update(&agg, &[]), None);
        let mut missing = agg.clone();
        missing.as_object_mut().map(|o| o.remove("rules"));
        assert_eq!(needs_update(&missing, &[]), None);
        let mut stale = agg;
        stale["rules"] = json!([rule(&[""], &["old"], &["get"])]);
        assert_eq!(
            needs_update(&stale, &[]).map(|r| r["rules"].clone()),
            Some(json!([]))
        );
    }

    #[test]
    fn reconcile_all_follows_chains_to_a_fixed_point() {
        let mut roles = vec![
            aggregator("top", json!([{"matchLabels": {"to-top": "true"}}])),
            {
                let mut mid = aggregator("mid", json!([{"matchLabels": {"to-mid": "true"}}]));
                mid["metadata"]["labels"] = json!({"to-top": "true"});
                mid
            },
            role(
                "leaf",
                json!({"to-mid": "true"}),
                json!([rule(&[""], &["pods"], &["get"])]),
            ),
        ];
        assert_eq!(reconcile_all(&mut roles), 2);
        assert_eq!(roles[0]["rules"], json!([rule(&[""], &["pods"], &["get"])]));
        assert_eq!(reconcile_all(&mut roles), 0);
    }

    // ---- bootstrap policy (bootstrap-policy.json must sit next to this file) ----

    const BOOTSTRAP_POLICY: &str = include_str!("bootstrap-policy.json");

    /// The `ClusterRole`s of the bootstrap policy, aggregated to a fixed point.
    fn aggregated_bootstrap_roles() -> Vec<Value> {
        let all: Vec<Value> = serde_json::from_str(BOOTSTRAP_POLICY).expect("valid JSON array");
        let mut roles: Vec<Value> = all
            .into_iter()
            .filter(|o| o["kind"] == "ClusterRole")
            .collect();
        reconcile_all(&mut roles);
        roles
    }

    fn named<'a>(roles: &'a [Value], name: &str) -> &'a Value {
        roles
            .iter()
            .find(|r| r["metadata"]["name"] == name)
            .expect("role present")
    }

    fn rules(role: &Value) -> Vec<Value> {
        role["rules"].as_array().cloned().unwrap_or_default()
    }

    /// Whether a rule list grants `verb` on `group`/`resource` (RBAC `*` wildcards).
    fn allows(rules: &[Value], group: &str, resource: &str, verb: &str) -> bool {
        let has = |r: &Value, field: &str, want: &str| {
            r[field]
                .as_array()
                .is_some_and(|l| l.iter().any(|v| v == want || v == "*"))
        };
        rules.iter().any(|r| {
            has(r, "apiGroups", group) && has(r, "resources", resource) && has(r, "verbs", verb)
        })
    }

    #[test]
    fn bootstrap_view_edit_admin_aggregate_like_kube() {
        let roles = aggregated_bootstrap_roles();
        let (view, edit, admin) = (
            named(&roles, "view"),
            named(&roles, "edit"),
            named(&roles, "admin"),
        );
        assert_eq!(
            rules(view),
            rules(named(&roles, "system:aggregate-to-view"))
        );
        assert!(allows(&rules(view), "", "pods", "get"));
        assert!(allows(&rules(view), "apps", "deployments", "watch"));
        assert!(!allows(&rules(view), "", "secrets", "get"));
        assert!(!allows(&rules(view), "", "pods", "create"));
        assert!(allows(&rules(edit), "", "secrets", "get"));
        assert!(allows(&rules(edit), "apps", "deployments", "create"));
        assert!(!allows(
            &rules(edit),
            "rbac.authorization.k8s.io",
            "rolebindings",
            "create"
        ));
        assert!(allows(
            &rules(admin),
            "rbac.authorization.k8s.io",
            "rolebindings",
            "create"
        ));
        assert!(
            rules(view).iter().all(|r| rules(edit).contains(r)),
            "edit includes view"
        );
        assert!(
            rules(edit).iter().all(|r| rules(admin).contains(r)),
            "admin includes edit"
        );
    }

    #[test]
    fn bootstrap_aggregation_order_matches_kube() {
        let roles = aggregated_bootstrap_roles();
        let edit_sources = [
            rules(named(&roles, "system:aggregate-to-edit")),
            rules(named(&roles, "view")),
        ];
        let mut expected: Vec<Value> = Vec::new();
        for rule in edit_sources.concat() {
            if !expected.contains(&rule) {
                expected.push(rule);
            }
        }
        assert_eq!(rules(named(&roles, "edit")), expected);
        let admin = rules(named(&roles, "admin"));
        let edit_len = rules(named(&roles, "edit")).len();
        assert_eq!(
            admin[..edit_len],
            rules(named(&roles, "edit"))[..],
            "edit sorts before system:aggregate-to-admin"
        );
    }

    #[test]
    fn bootstrap_policy_is_stable_after_aggregation() {
        let roles = aggregated_bootstrap_roles();
        assert!(roles.iter().all(|r| needs_update(r, &roles).is_none()));
        let aggregating = roles
            .iter()
            .filter(|r| aggregated_rules(r, &roles).is_some())
            .count();
        assert_eq!(aggregating, 3, "admin, edit and view carry aggregationRule");
    }
}
