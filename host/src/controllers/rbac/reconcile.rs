//! kube-apiserver's reconciliation of the bootstrap policy with what a data
//! directory already holds (component-helpers' `auth/rbac/reconciliation`,
//! in its "union" mode): a role gains the rules and aggregation selectors
//! it lacks, a binding the subjects it lacks, both the bootstrap labels and
//! annotations they lack; a binding whose roleRef changed is recreated.
//! An object annotated `rbac.authorization.kubernetes.io/autoupdate: "false"`
//! is left as it is. Nothing is ever removed.

use capstan_rbac::escalation::uncovered;
use capstan_rbac::PolicyRule;
use serde_json::{Map, Value};

const AUTOUPDATE: &str = "rbac.authorization.kubernetes.io/autoupdate";

/// What reconciling one bootstrap object with its stored copy calls for.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// The stored object already has everything.
    Unchanged,
    /// It lacks something, but its owner asked not to be updated.
    Protected,
    /// Store this object in its place.
    Update(Value),
    /// The roleRef changed (immutable): delete it and create the expected one.
    Recreate,
}

/// A ClusterRole or Role: `existing` as stored, `expected` from the policy.
pub fn role(existing: &Value, expected: &Value) -> Outcome {
    let mut result = existing.clone();
    merge_metadata(&mut result, expected);
    let missing = missing_rules(existing, expected);
    if !missing.is_empty() {
        let rules = result["rules"].as_array().cloned().unwrap_or_default();
        let added = missing.iter().filter_map(|r| serde_json::to_value(r).ok());
        result["rules"] = Value::Array(rules.into_iter().chain(added).collect());
    }
    reconcile_aggregation(&mut result, existing, expected);
    outcome(existing, result)
}

/// A ClusterRoleBinding or RoleBinding.
pub fn binding(existing: &Value, expected: &Value) -> Outcome {
    if existing["roleRef"] != expected["roleRef"] {
        return if protected(existing) {
            Outcome::Protected
        } else {
            Outcome::Recreate
        };
    }
    let mut result = existing.clone();
    merge_metadata(&mut result, expected);
    let mut subjects = existing["subjects"].as_array().cloned().unwrap_or_default();
    for subject in expected["subjects"].as_array().into_iter().flatten() {
        if !subjects.contains(subject) {
            subjects.push(subject.clone());
        }
    }
    if !subjects.is_empty() {
        result["subjects"] = Value::Array(subjects);
    }
    outcome(existing, result)
}

fn outcome(existing: &Value, result: Value) -> Outcome {
    if &result == existing {
        Outcome::Unchanged
    } else if protected(existing) {
        Outcome::Protected
    } else {
        Outcome::Update(result)
    }
}

fn protected(existing: &Value) -> bool {
    existing["metadata"]["annotations"][AUTOUPDATE] == "false"
}

/// The expected labels and annotations the stored object lacks (a stored
/// value wins over the policy's).
fn merge_metadata(result: &mut Value, expected: &Value) {
    for field in ["labels", "annotations"] {
        let Some(wanted) = expected["metadata"][field].as_object() else {
            continue;
        };
        let mut merged: Map<String, Value> = wanted.clone();
        if let Some(have) = result["metadata"][field].as_object() {
            merged.extend(have.clone());
        }
        result["metadata"][field] = Value::Object(merged);
    }
}

fn rules_of(obj: &Value) -> Vec<PolicyRule> {
    serde_json::from_value(obj["rules"].clone()).unwrap_or_default()
}

/// The pieces of the expected rules no stored rule covers (kube's `Covers`).
fn missing_rules(existing: &Value, expected: &Value) -> Vec<PolicyRule> {
    uncovered(&rules_of(existing), &rules_of(expected))
}

/// The aggregation selectors the stored role lacks are added; a stored
/// aggregationRule the policy does not have is removed, as kube does.
fn reconcile_aggregation(result: &mut Value, existing: &Value, expected: &Value) {
    let Some(wanted) = expected["aggregationRule"].as_object() else {
        if let Some(obj) = result.as_object_mut() {
            obj.remove("aggregationRule");
        }
        return;
    };
    let have = existing["aggregationRule"]["clusterRoleSelectors"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut selectors = have.clone();
    for selector in wanted
        .get("clusterRoleSelectors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if !have.contains(selector) {
            selectors.push(selector.clone());
        }
    }
    if selectors != have || existing.get("aggregationRule").is_none() {
        result["aggregationRule"]["clusterRoleSelectors"] = Value::Array(selectors);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cluster_role(rules: Value) -> Value {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "system:kube-scheduler", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
                "annotations": {AUTOUPDATE: "true"}},
            "rules": rules})
    }

    #[test]
    fn an_older_role_gains_the_rules_it_lacks_and_keeps_its_own() {
        let stored = cluster_role(json!([
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]},
            {"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get"]}
        ]));
        let policy = cluster_role(json!([
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": ["storage.k8s.io"], "resources": ["volumeattachments"], "verbs": ["get"]}
        ]));
        let Outcome::Update(updated) = role(&stored, &policy) else {
            panic!("the role lacks rules");
        };
        let rules = updated["rules"].as_array().unwrap();
        assert_eq!(rules.len(), 4, "{rules:?}");
        assert_eq!(
            rules[1]["apiGroups"],
            json!(["example.com"]),
            "its own rule stays"
        );
        assert_eq!(rules[2]["verbs"], json!(["watch"]));
        assert_eq!(rules[3]["resources"], json!(["volumeattachments"]));
        assert_eq!(role(&updated, &policy), Outcome::Unchanged);
    }

    #[test]
    fn autoupdate_false_protects_a_role() {
        let mut stored = cluster_role(json!([]));
        stored["metadata"]["annotations"][AUTOUPDATE] = json!("false");
        let policy =
            cluster_role(json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]));
        assert_eq!(role(&stored, &policy), Outcome::Protected);
    }

    #[test]
    fn aggregation_selectors_are_added_and_labels_merged() {
        let stored = json!({"metadata": {"name": "admin", "labels": {"mine": "yes"}},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"a": "true"}}]}, "rules": []});
        let policy = json!({"metadata": {"name": "admin", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"b": "true"}}]}, "rules": []});
        let Outcome::Update(updated) = role(&stored, &policy) else {
            panic!("the role lacks a selector");
        };
        assert_eq!(
            updated["aggregationRule"]["clusterRoleSelectors"],
            json!([{"matchLabels": {"a": "true"}}, {"matchLabels": {"b": "true"}}])
        );
        assert_eq!(
            updated["metadata"]["labels"],
            json!({"mine": "yes", "kubernetes.io/bootstrapping": "rbac-defaults"})
        );
    }

    #[test]
    fn bindings_gain_subjects_and_are_recreated_for_another_role() {
        let sub = |name: &str| json!({"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": name});
        let binding_of = |role: &str, subjects: Value| json!({"metadata": {"name": "b"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role}, "subjects": subjects});
        let stored = binding_of("view", json!([sub("alice")]));
        let Outcome::Update(updated) = binding(&stored, &binding_of("view", json!([sub("bob")])))
        else {
            panic!("the binding lacks a subject");
        };
        assert_eq!(updated["subjects"], json!([sub("alice"), sub("bob")]));
        assert_eq!(
            binding(&stored, &binding_of("edit", json!([]))),
            Outcome::Recreate
        );
        assert_eq!(binding(&stored, &stored.clone()), Outcome::Unchanged);
    }
}
