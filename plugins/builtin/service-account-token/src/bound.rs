//! The checks against stored objects (pkg/serviceaccount/claims.go
//! `validator.Validate`): the ServiceAccount must exist with the claimed
//! UID, and a bound Secret, Pod or Node must still exist with its UID and
//! not have been deleted for longer than the leeway.

use capstan_plugin_sdk::{host, object, Value};

use crate::claims::{Kubernetes, Ref, LEEWAY};

/// kube's message when a bound object is gone or being deleted.
const INVALIDATED: &str = "service account token has been invalidated";

/// Why a token is refused: its objects say no, or the store could not be read.
#[derive(Debug, PartialEq, Eq)]
pub enum Failure {
    Rejected(String),
    Store(String),
}

/// What the bound objects add to the user: pod and node names and UIDs.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Binding {
    pub pod: Option<Ref>,
    pub node: Option<Ref>,
}

/// Runs every object check of a token's `kubernetes.io` claim at `now`.
pub fn check(claim: &Kubernetes, now: i64) -> Result<Binding, Failure> {
    let ns = claim.namespace.as_str();
    let sa = &claim.serviceaccount;
    let Some(account) = get("serviceaccounts", Some(ns), &sa.name)? else {
        return Err(Failure::Rejected(format!(
            "serviceaccounts \"{}\" not found",
            sa.name
        )));
    };
    if uid(&account) != sa.uid {
        return reject(format!(
            "service account UID ({}) does not match claim ({})",
            uid(&account),
            sa.uid
        ));
    }
    if deleted_before(&account, now - LEEWAY) {
        return reject(format!("service account {ns}/{} has been deleted", sa.name));
    }
    if let Some(secret) = &claim.secret {
        check_bound(
            "secrets",
            Some(ns),
            secret,
            "secret UID",
            "service account secret ref claim",
            now,
        )?;
    }
    if let Some(pod) = &claim.pod {
        check_bound(
            "pods",
            Some(ns),
            pod,
            "pod UID",
            "service account pod ref claim",
            now,
        )?;
    }
    if let (Some(node), None) = (&claim.node, &claim.pod) {
        check_bound(
            "nodes",
            None,
            node,
            "node UID",
            "service account node ref claim",
            now,
        )?;
    }
    Ok(Binding {
        pod: claim.pod.clone(),
        node: claim.node.clone(),
    })
}

/// A bound object must exist, keep its UID and not be (long) deleted.
fn check_bound(
    resource: &str,
    namespace: Option<&str>,
    bound: &Ref,
    what: &str,
    claim: &str,
    now: i64,
) -> Result<(), Failure> {
    let Some(found) = get(resource, namespace, &bound.name)? else {
        return reject(INVALIDATED.to_string());
    };
    if uid(&found) != bound.uid {
        return reject(format!(
            "{what} ({}) does not match {claim} ({})",
            uid(&found),
            bound.uid
        ));
    }
    if deleted_before(&found, now - LEEWAY) {
        return reject(INVALIDATED.to_string());
    }
    Ok(())
}

fn reject<T>(message: String) -> Result<T, Failure> {
    Err(Failure::Rejected(message))
}

fn get(resource: &str, namespace: Option<&str>, name: &str) -> Result<Option<Value>, Failure> {
    host::get_object("v1", resource, namespace, name).map_err(Failure::Store)
}

fn uid(object: &Value) -> &str {
    object::get_str(object, &["metadata", "uid"]).unwrap_or("")
}

/// Whether `metadata.deletionTimestamp` is set and before `limit`; one that
/// does not parse counts as long past.
fn deleted_before(object: &Value, limit: i64) -> bool {
    match object::get(object, &["metadata", "deletionTimestamp"]) {
        None | Some(Value::Null) => false,
        Some(value) => value
            .as_str()
            .and_then(kube_time::parse_rfc3339)
            .is_none_or(|at| at < limit),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::json;

    #[test]
    fn deletion_counts_only_past_the_leeway() {
        let at = |ts: &str| json!({"metadata": {"deletionTimestamp": ts}});
        let limit = kube_time::parse_rfc3339("2024-01-01T00:00:00Z").unwrap();
        assert!(deleted_before(&at("2023-12-31T23:59:59Z"), limit));
        assert!(!deleted_before(&at("2024-01-01T00:00:00Z"), limit));
        assert!(deleted_before(&at("garbage"), limit));
        assert!(!deleted_before(
            &json!({"metadata": {"deletionTimestamp": null}}),
            limit
        ));
        assert!(!deleted_before(&json!({"metadata": {}}), limit));
    }
}
