//! The texts kube-apiserver's ResourceQuota admission rejects with. The
//! plugin wraps each in `<resource> "<name>" is forbidden: ...`
//! (`admission.NewForbidden`). Sources: the admission plugin's
//! `CheckRequest` (apiserver `admission/plugin/resourcequota/controller.go`)
//! and the pod evaluator's `Constraints` (`pkg/quota/v1/evaluator/core/pods.go`).

use std::collections::{BTreeMap, BTreeSet};

use crate::resources::{pretty_print, ResourceList};

/// `exceeded quota: <name>, requested: <r>, used: <u>, limited: <l>`, each
/// list as sorted `name=value` pairs joined by ",".
pub(crate) fn exceeded(
    quota: &str,
    requested: &ResourceList,
    used: &ResourceList,
    limited: &ResourceList,
) -> String {
    format!(
        "exceeded quota: {quota}, requested: {}, used: {}, limited: {}",
        pretty_print(requested),
        pretty_print(used),
        pretty_print(limited)
    )
}

/// `failed quota: <name>: <reason>` (a constraint the object breaks).
pub(crate) fn failed(quota: &str, reason: &str) -> String {
    format!("failed quota: {quota}: {reason}")
}

/// `must specify limits.cpu for: a,b; limits.memory for: a`: resources
/// sorted, container names sorted and joined by ",", groups by "; ".
pub(crate) fn must_specify(missing: &BTreeMap<String, BTreeSet<String>>) -> String {
    let parts: Vec<String> = missing
        .iter()
        .map(|(resource, containers)| {
            let names: Vec<&str> = containers.iter().map(String::as_str).collect();
            format!("{resource} for: {}", names.join(","))
        })
        .collect();
    format!("must specify {}", parts.join("; "))
}

/// `quota usage is negative for resource(s): a,b` (sorted).
pub(crate) fn negative_usage(names: &[String]) -> String {
    let mut names = names.to_vec();
    names.sort();
    format!(
        "quota usage is negative for resource(s): {}",
        names.join(",")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quantity::Quantity;

    fn list(pairs: &[(&str, &str)]) -> ResourceList {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), Quantity::parse(v).unwrap()))
            .collect()
    }

    #[test]
    fn exceeded_lists_sorted_pairs() {
        let m = exceeded(
            "compute",
            &list(&[("requests.memory", "1Gi"), ("requests.cpu", "500m")]),
            &list(&[("requests.cpu", "1500m"), ("requests.memory", "0")]),
            &list(&[("requests.cpu", "2"), ("requests.memory", "512Mi")]),
        );
        assert_eq!(
            m,
            "exceeded quota: compute, requested: requests.cpu=500m,requests.memory=1Gi, \
             used: requests.cpu=1500m,requests.memory=0, limited: requests.cpu=2,requests.memory=512Mi"
        );
    }

    #[test]
    fn must_specify_groups_containers_by_resource() {
        let mut missing: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (r, c) in [
            ("limits.memory", "web"),
            ("limits.cpu", "web"),
            ("limits.cpu", "init"),
        ] {
            missing.entry(r.into()).or_default().insert(c.into());
        }
        assert_eq!(
            failed("q", &must_specify(&missing)),
            "failed quota: q: must specify limits.cpu for: init,web; limits.memory for: web"
        );
        assert_eq!(
            negative_usage(&["b".into(), "a".into()]),
            "quota usage is negative for resource(s): a,b"
        );
    }
}
