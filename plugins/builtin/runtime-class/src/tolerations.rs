//! kube's `MergeTolerations`: the pod's tolerations and the class's, each
//! kept only when no other one tolerates a superset of it.

use capstan_plugin_sdk::Value;

/// One toleration's fields; "" or None where the JSON leaves them out.
#[derive(Debug, PartialEq, Eq)]
struct Toleration<'a> {
    key: &'a str,
    operator: &'a str,
    value: &'a str,
    effect: &'a str,
    seconds: Option<i64>,
}

impl<'a> Toleration<'a> {
    fn of(v: &'a Value) -> Self {
        let text = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("");
        Self {
            key: text("key"),
            operator: text("operator"),
            value: text("value"),
            effect: text("effect"),
            seconds: v.get("tolerationSeconds").and_then(Value::as_i64),
        }
    }

    /// Whether `self` tolerates everything `t` does.
    fn is_superset(&self, t: &Toleration) -> bool {
        if self == t {
            return true;
        }
        let matches_all_keys = self.key.is_empty() && self.operator == "Exists";
        if t.key != self.key && !matches_all_keys {
            return false;
        }
        if t.effect != self.effect && !self.effect.is_empty() {
            return false;
        }
        if self.effect == "NoExecute" {
            if let Some(limit) = self.seconds {
                if t.seconds.is_none_or(|s| s > limit) {
                    return false;
                }
            }
        }
        match self.operator {
            "Equal" | "" => t.operator == "Equal" && t.value == self.value,
            "Exists" => true,
            _ => false,
        }
    }
}

/// The merged list, in order: the first of equal ones, no toleration a
/// kept or a later one covers.
pub fn merge(first: &[Value], second: &[Value]) -> Vec<Value> {
    let all: Vec<&Value> = first.iter().chain(second).collect();
    let parsed: Vec<Toleration> = all.iter().map(|v| Toleration::of(v)).collect();
    let mut kept: Vec<usize> = Vec::new();
    for (i, t) in parsed.iter().enumerate() {
        let covered = kept.iter().any(|&k| parsed[k].is_superset(t));
        let later_covers = parsed[i + 1..]
            .iter()
            .any(|later| later != t && later.is_superset(t));
        if !covered && !later_covers {
            kept.push(i);
        }
    }
    kept.into_iter().map(|i| all[i].clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::json;

    #[test]
    fn merging_keeps_supersets_only() {
        let pod = [
            json!({"key": "a", "operator": "Equal", "value": "1", "effect": "NoSchedule"}),
            json!({"key": "b", "operator": "Exists"}),
        ];
        let class = [
            json!({"key": "a", "operator": "Exists", "effect": "NoSchedule"}),
            json!({"key": "b", "operator": "Exists"}),
            json!({"key": "c", "operator": "Exists"}),
        ];
        let merged = merge(&pod, &class);
        assert_eq!(merged, [pod[1].clone(), class[0].clone(), class[2].clone()]);
    }

    #[test]
    fn no_execute_seconds_bound_the_superset() {
        let short = json!({"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10});
        let long = json!({"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60});
        let merged = merge(std::slice::from_ref(&long), std::slice::from_ref(&short));
        assert_eq!(merged, [long]);
        let forever = json!({"key": "k", "operator": "Exists", "effect": "NoExecute"});
        assert_eq!(merge(&[short], std::slice::from_ref(&forever)), [forever]);
    }
}
