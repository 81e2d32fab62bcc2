//! `wgpolicyk8s.io/v1alpha2` `PolicyReport` (namespaced, `polr`) and
//! `ClusterPolicyReport` (cluster-scoped, `cpolr`): served from the built-in
//! catalogue, declared as the CRDs Kyverno ships declare them (the schema
//! policy-reporter and Kyverno users read, no subresources, the same
//! printer columns: PASS, FAIL, WARN, ERROR, SKIP, AGE; KIND and NAME of
//! the scope with `-o wide`), never stored as CRDs.

use crate::catalogue::live::CustomEntry;
use serde_json::{json, Value};

pub const GROUP: &str = "wgpolicyk8s.io";
pub const VERSION: &str = "v1alpha2";
pub const NAMESPACED: &str = "policyreports";
pub const CLUSTER: &str = "clusterpolicyreports";

/// The catalogue entries of both resources.
pub fn entries() -> Vec<CustomEntry> {
    let mut out = crate::catalogue::custom::resource::entries(
        &definition("PolicyReport", "polr", "Namespaced"),
        &Default::default(),
    );
    out.extend(crate::catalogue::custom::resource::entries(
        &definition("ClusterPolicyReport", "cpolr", "Cluster"),
        &Default::default(),
    ));
    out
}

/// One of the two resources as a CustomResourceDefinition, Established.
fn definition(kind: &str, short: &str, scope: &str) -> Value {
    let plural = format!("{}s", kind.to_lowercase());
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{GROUP}"), "resourceVersion": "1"},
        "spec": {
            "group": GROUP,
            "scope": scope,
            "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind,
                      "listKind": format!("{kind}List"), "shortNames": [short]},
            "versions": [{
                "name": VERSION, "served": true, "storage": true,
                "additionalPrinterColumns": columns(),
                "schema": {"openAPIV3Schema": schema(kind)},
            }],
        },
        "status": {"conditions": [{"type": "Established", "status": "True"}]},
    })
}

/// Kyverno's printer columns for both kinds.
fn columns() -> Value {
    let count = |name: &str, field: &str| json!({"name": name, "type": "integer", "jsonPath": format!(".summary.{field}")});
    json!([
        {"name": "Kind", "type": "string", "jsonPath": ".scope.kind", "priority": 1},
        {"name": "Name", "type": "string", "jsonPath": ".scope.name", "priority": 1},
        count("Pass", "pass"),
        count("Fail", "fail"),
        count("Warn", "warn"),
        count("Error", "error"),
        count("Skip", "skip"),
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ])
}

fn schema(kind: &str) -> Value {
    json!({
        "type": "object",
        "description": format!("{kind} is the Schema for the {}s API", kind.to_lowercase()),
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "scope": object_reference(),
            "scopeSelector": label_selector(),
            "summary": summary_schema(),
            "results": {"type": "array", "items": result_schema()},
        },
    })
}

fn summary_schema() -> Value {
    let count = json!({"type": "integer"});
    json!({
        "type": "object",
        "description": "PolicyReportSummary provides a summary of results",
        "properties": {"pass": count, "fail": count, "warn": count, "error": count, "skip": count},
    })
}

fn result_schema() -> Value {
    json!({
        "type": "object",
        "description": "PolicyReportResult provides the result for an individual policy",
        "required": ["policy"],
        "properties": {
            "source": {"type": "string"},
            "policy": {"type": "string"},
            "rule": {"type": "string"},
            "category": {"type": "string"},
            "severity": {"type": "string", "enum": ["critical", "high", "low", "medium", "info"]},
            "timestamp": {
                "type": "object",
                "required": ["nanos", "seconds"],
                "properties": {
                    "nanos": {"type": "integer", "format": "int32"},
                    "seconds": {"type": "integer", "format": "int64"},
                },
            },
            "result": {"type": "string", "enum": ["pass", "fail", "warn", "error", "skip"]},
            "scored": {"type": "boolean"},
            "resources": {"type": "array", "items": object_reference()},
            "resourceSelector": label_selector(),
            "message": {"type": "string"},
            "properties": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    })
}

fn object_reference() -> Value {
    let s = json!({"type": "string"});
    json!({
        "type": "object",
        "x-kubernetes-map-type": "atomic",
        "properties": {"apiVersion": s, "fieldPath": s, "kind": s, "name": s,
                       "namespace": s, "resourceVersion": s, "uid": s},
    })
}

fn label_selector() -> Value {
    json!({
        "type": "object",
        "x-kubernetes-map-type": "atomic",
        "properties": {
            "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
            "matchExpressions": {"type": "array", "items": {
                "type": "object",
                "required": ["key", "operator"],
                "properties": {
                    "key": {"type": "string"},
                    "operator": {"type": "string"},
                    "values": {"type": "array", "items": {"type": "string"}},
                },
            }},
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_kinds_are_served_with_kyvernos_names_and_columns() {
        let cat = crate::catalogue::Catalogue::builtin();
        let polr = cat.lookup(GROUP, VERSION, NAMESPACED).unwrap();
        assert_eq!(
            (polr.kind.as_str(), polr.namespaced),
            ("PolicyReport", true)
        );
        assert_eq!(polr.short_names, ["polr"]);
        assert!(polr.subresources.is_empty());
        let cpolr = cat.lookup(GROUP, VERSION, CLUSTER).unwrap();
        assert_eq!(
            (cpolr.kind.as_str(), cpolr.namespaced),
            ("ClusterPolicyReport", false)
        );
        assert_eq!(cpolr.short_names, ["cpolr"]);
        let names: Vec<String> = columns()
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            names,
            ["Kind", "Name", "Pass", "Fail", "Warn", "Error", "Skip", "Age"]
        );
        assert!(cat
            .schemas()
            .contains_key("io.wgpolicyk8s.v1alpha2.ClusterPolicyReportList"));
    }

    #[test]
    fn a_result_outside_the_enums_is_refused() {
        let entries = entries();
        let custom = entries[0].info.custom.as_ref().unwrap();
        let obj = json!({"apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport",
            "metadata": {"name": "r", "namespace": "default"},
            "results": [{"policy": "p", "result": "maybe",
                         "timestamp": {"seconds": 1, "nanos": 0}}]});
        let problems: Vec<String> = crate::crd::strategy::validate(custom, &obj, None)
            .into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with("results[0].result: Unsupported value")),
            "{problems:?}"
        );
    }
}
