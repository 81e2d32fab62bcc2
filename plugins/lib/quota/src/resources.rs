//! Resource lists (`corev1.ResourceList`: resource name → quantity) and the
//! set operations of kube's `quota/v1/resources.go` the evaluators and the
//! admission check use.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::quantity::Quantity;

/// Resource name → quantity, sorted by name (the order kube prints in).
pub type ResourceList = BTreeMap<String, Quantity>;

/// Reads a JSON ResourceList (`{"cpu": "500m", "pods": 2}`); entries that
/// are not quantities are skipped.
pub fn from_json(value: Option<&Value>) -> ResourceList {
    let Some(map) = value.and_then(Value::as_object) else {
        return ResourceList::new();
    };
    map.iter()
        .filter_map(|(name, v)| quantity_of(v).map(|q| (name.clone(), q)))
        .collect()
}

/// A quantity written as a JSON string or number.
fn quantity_of(value: &Value) -> Option<Quantity> {
    match value {
        Value::String(s) => Quantity::parse(s).ok(),
        Value::Number(n) => Quantity::parse(&n.to_string()).ok(),
        _ => None,
    }
}

/// Reads a map of quantity texts (e.g. a `status.used`); unparsable entries are skipped.
pub fn from_strings(map: &BTreeMap<String, String>) -> ResourceList {
    map.iter()
        .filter_map(|(k, v)| Quantity::parse(v).ok().map(|q| (k.clone(), q)))
        .collect()
}

/// Each quantity as kube's canonical text.
pub fn to_strings(list: &ResourceList) -> BTreeMap<String, String> {
    list.iter()
        .map(|(k, v)| (k.clone(), v.to_string()))
        .collect()
}

/// a + b for every name in either (`quota.Add`).
pub fn add(a: &ResourceList, b: &ResourceList) -> ResourceList {
    let mut sum = a.clone();
    add_into(&mut sum, b);
    sum
}

/// Adds `other` into `list` (`addResourceList`).
pub fn add_into(list: &mut ResourceList, other: &ResourceList) {
    for (name, q) in other {
        let entry = list.entry(name.clone()).or_insert(Quantity::ZERO);
        *entry = *entry + *q;
    }
}

/// Keeps the larger quantity of each name (`maxResourceList`).
pub fn max_into(list: &mut ResourceList, other: &ResourceList) {
    for (name, q) in other {
        match list.get(name) {
            Some(current) if q <= current => {}
            _ => {
                list.insert(name.clone(), *q);
            }
        }
    }
}

/// a − b, never below zero, for every name in either
/// (`quota.SubtractWithNonNegativeResult`).
pub fn subtract_non_negative(a: &ResourceList, b: &ResourceList) -> ResourceList {
    let mut result: ResourceList = b.keys().map(|k| (k.clone(), Quantity::ZERO)).collect();
    for (name, q) in a {
        let diff = match b.get(name) {
            Some(other) => *q - *other,
            None => *q,
        };
        let kept = if diff > Quantity::ZERO {
            diff
        } else {
            Quantity::ZERO
        };
        result.insert(name.clone(), kept);
    }
    result
}

/// Only the entries whose name is in `names` (`quota.Mask`).
pub fn mask<'a>(list: &ResourceList, names: impl IntoIterator<Item = &'a String>) -> ResourceList {
    let keep: BTreeSet<&String> = names.into_iter().collect();
    list.iter()
        .filter(|(k, _)| keep.contains(k))
        .map(|(k, v)| (k.clone(), *v))
        .collect()
}

/// Only the non-zero entries (`quota.RemoveZeros`).
pub fn remove_zeros(list: &ResourceList) -> ResourceList {
    list.iter()
        .filter(|(_, v)| !v.is_zero())
        .map(|(k, v)| (k.clone(), *v))
        .collect()
}

/// The names whose quantity is negative (`quota.IsNegative`).
pub fn negative_names(list: &ResourceList) -> Vec<String> {
    list.iter()
        .filter(|(_, v)| v.is_negative())
        .map(|(k, _)| k.clone())
        .collect()
}

/// The names of `limits` that `usage` exceeds (`quota.LessThanOrEqual`'s
/// second result): present in both, with usage > limit.
pub fn exceeded(usage: &ResourceList, limits: &ResourceList) -> Vec<String> {
    limits
        .iter()
        .filter(|(name, limit)| usage.get(*name).is_some_and(|u| u > *limit))
        .map(|(name, _)| name.clone())
        .collect()
}

/// `name=value` pairs sorted by name, joined by "," (the admission plugin's `prettyPrint`).
pub fn pretty_print(list: &ResourceList) -> String {
    list.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn list(pairs: &[(&str, &str)]) -> ResourceList {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), Quantity::parse(v).unwrap()))
            .collect()
    }

    #[test]
    fn reads_json_lists_skipping_garbage() {
        let l = from_json(Some(
            &json!({"cpu": "500m", "pods": 2, "bad": "x", "n": null}),
        ));
        assert_eq!(pretty_print(&l), "cpu=500m,pods=2");
        assert!(from_json(None).is_empty());
    }

    #[test]
    fn add_subtract_mask_and_compare() {
        let a = list(&[("cpu", "1"), ("memory", "1Gi")]);
        let b = list(&[("cpu", "500m"), ("pods", "1")]);
        assert_eq!(pretty_print(&add(&a, &b)), "cpu=1500m,memory=1Gi,pods=1");
        assert_eq!(
            pretty_print(&subtract_non_negative(&b, &a)),
            "cpu=0,memory=0,pods=1"
        );
        let names = ["cpu".to_string()];
        assert_eq!(pretty_print(&mask(&a, &names)), "cpu=1");
        assert_eq!(
            exceeded(&a, &list(&[("cpu", "999m"), ("memory", "2Gi")])),
            ["cpu"]
        );
        assert!(exceeded(&a, &list(&[("pods", "0")])).is_empty());
        assert_eq!(
            pretty_print(&remove_zeros(&list(&[("a", "0"), ("b", "1")]))),
            "b=1"
        );
        assert_eq!(negative_names(&list(&[("a", "-1"), ("b", "1")])), ["a"]);
    }

    #[test]
    fn max_keeps_the_first_when_equal() {
        let mut l = list(&[("memory", "1Gi")]);
        max_into(&mut l, &list(&[("memory", "1073741824"), ("cpu", "1")]));
        assert_eq!(pretty_print(&l), "cpu=1,memory=1Gi");
        max_into(&mut l, &list(&[("memory", "2Gi")]));
        assert_eq!(l["memory"].to_string(), "2Gi");
    }

    #[test]
    fn strings_round_trip() {
        let mut m = BTreeMap::new();
        m.insert("cpu".to_string(), "1000m".to_string());
        m.insert("bad".to_string(), "?".to_string());
        assert_eq!(to_strings(&from_strings(&m))["cpu"], "1");
        assert_eq!(from_strings(&m).len(), 1);
    }
}
