//! What an update of these kinds may not change (kube's `Validate*Update`):
//! a claim's spec (but a bound claim's storage request, which may only
//! grow), a volume's source and mode, a quota's scopes, a node's pod CIDRs
//! and provider, a slice's address type. kube appends a go-cmp diff of its
//! internal structs to the spec messages; only their first line is given.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common;

/// An EndpointSlice's `addressType`.
pub fn endpoint_slice(new: &Value, old: &Value, causes: &mut Vec<Cause>) {
    immutable_text(new, old, "addressType", "addressType", causes);
}

fn immutable_text(new: &Value, old: &Value, key: &str, field: &str, causes: &mut Vec<Cause>) {
    let (n, o) = (new.get(key), old.get(key));
    if n != o {
        let shown = n
            .and_then(Value::as_str)
            .map_or("<nil>".to_string(), kube_rules::gofmt::quote);
        causes.push(common::immutable(field, &shown));
    }
}

pub fn claim(new: &Value, old: &Value, causes: &mut Vec<Cause>) {
    let mut was = old["spec"].clone();
    let mut now = new["spec"].clone();
    if common::text(&was, "volumeName").is_empty() {
        was["volumeName"] = now.get("volumeName").cloned().unwrap_or(Value::Null);
    }
    let bound = new.pointer("/status/phase").and_then(Value::as_str) == Some("Bound");
    if bound {
        for spec in [&mut was, &mut now] {
            if let Some(requests) = spec
                .pointer_mut("/resources/requests")
                .and_then(Value::as_object_mut)
            {
                requests.remove("storage");
            }
            if let Some(spec) = spec.as_object_mut() {
                spec.remove("volumeAttributesClassName");
            }
        }
    }
    if common::normalized(&was) != common::normalized(&now) {
        let detail = "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims";
        causes.push(common::forbidden("spec", detail));
    }
    let size = |o: &Value| {
        o.pointer("/spec/resources/requests/storage")
            .map(super::quantities::of)
            .unwrap_or_default()
    };
    if size(new) < size(old) {
        let field = "spec.resources.requests.storage";
        causes.push(common::forbidden(
            field,
            "field can not be less than previous value",
        ));
    }
    volume_mode(new, old, causes);
}

/// kube reports a changed volume mode at `volumeMode` (not under spec).
fn volume_mode(new: &Value, old: &Value, causes: &mut Vec<Cause>) {
    immutable_text(
        &new["spec"],
        &old["spec"],
        "volumeMode",
        "volumeMode",
        causes,
    );
}

pub fn volume(new: &Value, old: &Value, causes: &mut Vec<Cause>) {
    let source = |pv: &Value| -> Vec<(String, Value)> {
        let mut fields: Vec<(String, Value)> = pv["spec"]
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| super::volumes::is_source(k))
            .map(|(k, v)| (k.clone(), common::normalized(v).unwrap_or(Value::Null)))
            .collect();
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        // A CSI volume may gain a controllerExpandSecretRef.
        for (key, value) in &mut fields {
            if key == "csi" {
                if let Some(csi) = value.as_object_mut() {
                    csi.remove("controllerExpandSecretRef");
                }
            }
        }
        fields
    };
    if source(new) != source(old) {
        let detail = "spec.persistentvolumesource is immutable after creation";
        causes.push(common::forbidden("spec.persistentvolumesource", detail));
    }
    volume_mode(new, old, causes);
}

pub fn quota(new: &Value, old: &Value, causes: &mut Vec<Cause>) {
    let scopes = |q: &Value| -> std::collections::BTreeSet<String> {
        common::list(&q["spec"], "scopes")
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect()
    };
    if scopes(new) != scopes(old) {
        let listed: Vec<String> = common::list(&new["spec"], "scopes")
            .iter()
            .filter_map(Value::as_str)
            .map(kube_rules::gofmt::quote)
            .collect();
        let shown = format!("[]core.ResourceQuotaScope{{{}}}", listed.join(", "));
        causes.push(common::immutable("spec.scopes", &shown));
    }
}

pub fn node(new: &Value, old: &Value, causes: &mut Vec<Cause>) {
    let cidrs = |n: &Value| -> Vec<String> {
        let list: Vec<String> = common::list(&n["spec"], "podCIDRs")
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect();
        let single = common::text(&n["spec"], "podCIDR");
        if list.is_empty() && !single.is_empty() {
            vec![single.to_string()]
        } else {
            list
        }
    };
    let (was, now) = (cidrs(old), cidrs(new));
    let detail = "node updates may not change podCIDR except from \"\" to valid";
    if !was.is_empty() {
        let changes = if was.len() != now.len() {
            1
        } else {
            was.iter().zip(&now).filter(|(a, b)| a != b).count()
        };
        for _ in 0..changes {
            causes.push(common::forbidden("spec.podCIDRs", detail));
        }
    }
    let provider = |n: &Value| common::text(&n["spec"], "providerID").to_string();
    if !provider(old).is_empty() && provider(old) != provider(new) {
        let detail = "node updates may not change providerID except from \"\" to valid";
        causes.push(common::forbidden("spec.providerID", detail));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::messages;
    use serde_json::json;

    /// The causes of one kind's update rules.
    fn run(rules: fn(&Value, &Value, &mut Vec<Cause>), new: &Value, old: &Value) -> Vec<Cause> {
        let mut causes = Vec::new();
        rules(new, old, &mut causes);
        causes
    }

    #[test]
    fn a_claims_spec_is_fixed_but_a_bound_claim_may_grow() {
        let claim = |class: &str, size: &str, phase: &str| {
            json!({"spec": {"storageClassName": class,
            "resources": {"requests": {"storage": size}}}, "status": {"phase": phase}})
        };
        let changed = messages(&run(
            super::claim,
            &claim("b", "1Gi", "Pending"),
            &claim("a", "1Gi", "Pending"),
        ));
        assert_eq!(changed, ["spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"]);
        assert!(run(
            super::claim,
            &claim("a", "2Gi", "Bound"),
            &claim("a", "1Gi", "Bound")
        )
        .is_empty());
        let shrunk = messages(&run(
            super::claim,
            &claim("a", "1Gi", "Bound"),
            &claim("a", "2Gi", "Bound"),
        ));
        assert_eq!(shrunk, ["spec.resources.requests.storage: Forbidden: field can not be less than previous value"]);
    }

    #[test]
    fn sources_scopes_and_cidrs_stay() {
        let pv = |path: &str| json!({"spec": {"hostPath": {"path": path}, "capacity": {"storage": "1Gi"}}});
        assert_eq!(messages(&run(volume, &pv("/b"), &pv("/a"))).len(), 1);
        let q = |scope: &str| json!({"spec": {"scopes": [scope]}});
        assert_eq!(
            messages(&run(quota, &q("NotBestEffort"), &q("BestEffort"))),
            ["spec.scopes: Invalid value: []core.ResourceQuotaScope{\"NotBestEffort\"}: field is immutable"]
        );
        let n = |cidr: &str| json!({"spec": {"podCIDR": cidr}});
        assert_eq!(
            messages(&run(node, &n("10.0.1.0/24"), &n("10.0.0.0/24"))).len(),
            1
        );
        assert!(run(node, &n("10.0.1.0/24"), &json!({"spec": {}})).is_empty());
    }
}
