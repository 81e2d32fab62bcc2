//! The heavy-load phase's `cel` load: custom objects as costly to validate
//! as the limits allow. The CRD (`hostilecels.bench.capstan.dev`, within
//! kube's estimated cost limits) has 200 items whose rule matches a
//! 1000-character string against a pattern taken from the item, and three
//! chained `replace`s that build 64³ characters; each object sends 200
//! patterns never seen before (`\w{n}` for a fresh n), so none is compiled
//! already, and fails its rules (a 422): nothing is stored.

use super::client::Client;
use super::custom;
use anyhow::Result;
use bytes::Bytes;
use http::Method;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};

const GROUP: &str = "bench.capstan.dev";
const PLURAL: &str = "hostilecels";
/// Items per object (the CRD's maxItems).
pub const ITEMS: usize = 200;

pub fn crd_name() -> String {
    format!("{PLURAL}.{GROUP}")
}

pub fn collection_path(namespace: &str) -> String {
    format!("/apis/{GROUP}/v1/namespaces/{namespace}/{PLURAL}")
}

/// The CRD: kube estimates each item's rule at 101 × 250 (× 200 items),
/// the replaces at 13 + 820 + 52 429.
pub fn crd() -> Value {
    let long = json!({"type": "string", "maxLength": 1000});
    let short = json!({"type": "string", "maxLength": 64});
    let item = json!({"type": "object", "properties": {"s": long, "p": long},
        "x-kubernetes-validations": [{"rule": "self.s.matches(self.p)"}]});
    let replaces = "self.a.replace('a', self.b).replace('a', self.b).replace('a', self.b) == ''";
    let spec = json!({"type": "object",
        "properties": {"a": short, "b": short,
            "items": {"type": "array", "maxItems": ITEMS, "items": item}},
        "x-kubernetes-validations": [{"rule": replaces}]});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": crd_name(), "labels": {"app.kubernetes.io/name": "capstan-bench"}},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": PLURAL, "singular": "hostilecel", "kind": "HostileCel"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}],
        },
    })
}

pub async fn install(client: &Client, namespace: &str) -> Result<bool> {
    custom::install_definition(client, &crd(), &collection_path(namespace)).await
}

pub async fn remove(client: &Client) {
    custom::remove_definition(client, &crd_name()).await
}

/// Patterns sent so far: each object's are new.
static PATTERNS: AtomicUsize = AtomicUsize::new(0);

/// The next object: 200 fresh patterns that its strings do not match.
pub fn object(name: &str) -> Bytes {
    let items: Vec<Value> = (0..ITEMS)
        .map(|_| {
            let n = PATTERNS.fetch_add(1, Ordering::Relaxed);
            let pattern = format!("\\w{{{}}}#{n}", 1000 - n % 1000);
            json!({"s": "!".repeat(1000), "p": pattern})
        })
        .collect();
    let a64 = "a".repeat(64);
    let body = json!({"apiVersion": format!("{GROUP}/v1"), "kind": "HostileCel",
        "metadata": {"name": name}, "spec": {"a": a64, "b": a64, "items": items}});
    Bytes::from(body.to_string())
}

/// POSTs one such object.
pub async fn send(client: &Client, namespace: &str, name: &str) -> Result<super::client::Reply> {
    client
        .request(
            Method::POST,
            &collection_path(namespace),
            Some(object(name)),
        )
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_carry_fresh_patterns_at_the_crds_bounds() {
        let first: Value = serde_json::from_slice(&object("a")).unwrap();
        let second: Value = serde_json::from_slice(&object("b")).unwrap();
        let items = first["spec"]["items"].as_array().unwrap();
        assert_eq!(items.len(), ITEMS);
        assert_eq!(items[0]["s"].as_str().map(str::len), Some(1000));
        assert_ne!(items[0]["p"], second["spec"]["items"][0]["p"]);
        let rules = kube_cel::ValidationRules::problems(
            &crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"],
            "openAPIV3Schema",
        );
        assert!(rules.is_empty(), "kube's limits accept the CRD: {rules:?}");
    }
}
