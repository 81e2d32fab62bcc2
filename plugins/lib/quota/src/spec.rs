//! What a ResourceQuota object says: its name, its hard limits and its scope
//! selectors (`spec.scopes` and `spec.scopeSelector.matchExpressions`).

use serde_json::Value;

use crate::json;
use crate::resources::{self, ResourceList};

/// A scope selector operator (`ScopeSelectorOperator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
    /// An operator kube does not know: matches nothing.
    Unknown,
}

/// One scope requirement (`ScopedResourceSelectorRequirement`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScopeRequirement {
    pub scope: String,
    pub operator: Operator,
    pub values: Vec<String>,
}

/// A ResourceQuota as the evaluators need it.
#[derive(Debug, Clone)]
pub(crate) struct QuotaSpec {
    pub name: String,
    pub hard: ResourceList,
    pub selectors: Vec<ScopeRequirement>,
}

impl QuotaSpec {
    /// Reads a ResourceQuota object. Hard limits come from `spec.hard`,
    /// or `status.hard` when the spec has none.
    pub fn read(quota: &Value) -> QuotaSpec {
        let hard = match json::get(quota, &["spec", "hard"]) {
            Some(h) if h.is_object() => resources::from_json(Some(h)),
            _ => resources::from_json(json::get(quota, &["status", "hard"])),
        };
        QuotaSpec {
            name: json::str_or_empty(quota, &["metadata", "name"]).to_string(),
            hard,
            selectors: selectors(quota),
        }
    }

    /// The hard limits' names.
    pub fn hard_names(&self) -> impl Iterator<Item = &String> {
        self.hard.keys()
    }
}

/// `spec.scopes` as `Exists` requirements, then `spec.scopeSelector`'s expressions.
fn selectors(quota: &Value) -> Vec<ScopeRequirement> {
    let scopes = json::array(quota, &["spec", "scopes"])
        .iter()
        .filter_map(Value::as_str)
        .map(|scope| ScopeRequirement {
            scope: scope.to_string(),
            operator: Operator::Exists,
            values: Vec::new(),
        });
    let expressions = json::array(quota, &["spec", "scopeSelector", "matchExpressions"])
        .iter()
        .map(requirement);
    scopes.chain(expressions).collect()
}

fn requirement(expression: &Value) -> ScopeRequirement {
    let operator = match json::str_or_empty(expression, &["operator"]) {
        "In" => Operator::In,
        "NotIn" => Operator::NotIn,
        "Exists" => Operator::Exists,
        "DoesNotExist" => Operator::DoesNotExist,
        _ => Operator::Unknown,
    };
    ScopeRequirement {
        scope: json::str_or_empty(expression, &["scopeName"]).to_string(),
        operator,
        values: json::array(expression, &["values"])
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_name_hard_and_scopes() {
        let q = QuotaSpec::read(&json!({
            "metadata": {"name": "q"},
            "spec": {"hard": {"pods": "2", "cpu": "1"}, "scopes": ["BestEffort"],
                     "scopeSelector": {"matchExpressions": [
                        {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}}
        }));
        assert_eq!(q.name, "q");
        assert_eq!(q.hard_names().cloned().collect::<Vec<_>>(), ["cpu", "pods"]);
        assert_eq!(q.selectors.len(), 2);
        assert_eq!(q.selectors[0].operator, Operator::Exists);
        assert_eq!(q.selectors[1].values, ["high"]);
    }

    #[test]
    fn falls_back_to_status_hard() {
        let q = QuotaSpec::read(&json!({"status": {"hard": {"pods": "1"}}}));
        assert_eq!(q.hard["pods"].to_string(), "1");
        assert_eq!(q.name, "");
    }
}
