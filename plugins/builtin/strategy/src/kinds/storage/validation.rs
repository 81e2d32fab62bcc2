//! storage.k8s.io/v1 StorageClass and CSINode (`ValidateStorageClass*`,
//! `ValidateCSINode*` of kube's `pkg/apis/storage/validation`): the
//! provisioner, parameters, policies and allowed topologies of a class and
//! what an update may not change; each CSI driver a node reports.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common::{self, list, opt_int, text};
use kube_rules::gofmt;

const MAX_PARAMETERS: usize = 512;
const MAX_PARAMETERS_SIZE: usize = 256 * 1024;
const RECLAIM_POLICIES: [&str; 2] = ["Delete", "Retain"];
const BINDING_MODES: [&str; 2] = ["Immediate", "WaitForFirstConsumer"];
const NODE_ID_MAX: usize = 256;

/// A StorageClass create or update.
pub fn storage_class(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut causes = storage_class_create(object);
    if let Some(old) = old {
        causes.extend(storage_class_update(object, old));
    }
    causes
}

fn storage_class_create(object: &Value) -> Vec<Cause> {
    let mut causes = provisioner(text(object, "provisioner"), "provisioner");
    causes.extend(parameters(object.get("parameters")));
    let reclaim = text(object, "reclaimPolicy");
    if !reclaim.is_empty() && !RECLAIM_POLICIES.contains(&reclaim) {
        causes.push(common::not_supported(
            "reclaimPolicy",
            reclaim,
            &RECLAIM_POLICIES,
        ));
    }
    match object.get("volumeBindingMode").and_then(Value::as_str) {
        None => causes.push(common::required("volumeBindingMode", "")),
        Some(mode) if !BINDING_MODES.contains(&mode) => causes.push(common::not_supported(
            "volumeBindingMode",
            mode,
            &BINDING_MODES,
        )),
        Some(_) => {}
    }
    causes.extend(allowed_topologies(list(object, "allowedTopologies")));
    causes
}

fn storage_class_update(object: &Value, old: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let differs = |key: &str| object.get(key) != old.get(key);
    let params = |o: &Value| o.get("parameters").filter(|p| !p.is_null()).cloned();
    if params(object).unwrap_or_default() != params(old).unwrap_or_default() {
        causes.push(common::forbidden(
            "parameters",
            "updates to parameters are forbidden.",
        ));
    }
    if text(object, "provisioner") != text(old, "provisioner") {
        causes.push(common::forbidden(
            "provisioner",
            "updates to provisioner are forbidden.",
        ));
    }
    if text(object, "reclaimPolicy") != text(old, "reclaimPolicy") {
        causes.push(common::forbidden(
            "reclaimPolicy",
            "updates to reclaimPolicy are forbidden.",
        ));
    }
    if differs("volumeBindingMode") {
        let shown = gofmt::scalar(object.get("volumeBindingMode"));
        causes.push(common::immutable("volumeBindingMode", &shown));
    }
    causes
}

/// `validateProvisioner`: a qualified name, checked in lower case.
fn provisioner(value: &str, field: &str) -> Vec<Cause> {
    if value.is_empty() {
        return vec![common::required(field, "")];
    }
    let lower = value.to_lowercase();
    let mut causes = Vec::new();
    common::invalid_each(
        &mut causes,
        field,
        &lower,
        kube_rules::qualified_name(&lower),
    );
    causes
}

/// `validateParameters` (empty allowed).
fn parameters(params: Option<&Value>) -> Vec<Cause> {
    let Some(map) = params.and_then(Value::as_object) else {
        return Vec::new();
    };
    if map.len() > MAX_PARAMETERS {
        return vec![common::too_long("parameters", MAX_PARAMETERS)];
    }
    let mut causes = Vec::new();
    let mut size = 0;
    for (key, value) in map {
        if key.is_empty() {
            causes.push(common::invalid_str(
                "parameters",
                key,
                "field can not be empty.",
            ));
        }
        size += key.len() + value.as_str().map_or(0, str::len);
    }
    if size > MAX_PARAMETERS_SIZE {
        causes.push(common::too_long("parameters", MAX_PARAMETERS_SIZE));
    }
    causes
}

type Term = BTreeMap<String, BTreeSet<String>>;

/// `validateAllowedTopologies`: each term's requirements, and no term
/// twice (an empty term counts as a repeat, as kube's nil entries do).
fn allowed_topologies(terms: &[Value]) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut seen: Vec<Term> = Vec::new();
    for (i, term) in terms.iter().enumerate() {
        let at = format!("allowedTopologies[{i}].matchLabelExpressions");
        let (map, problems) = topology_term(term, &at);
        causes.extend(problems);
        if map.is_empty() || seen.contains(&map) {
            causes.push(common::duplicate(&at, "\"\""));
        }
        seen.push(map);
    }
    causes
}

fn topology_term(term: &Value, at: &str) -> (Term, Vec<Cause>) {
    let mut causes = Vec::new();
    let mut map = Term::new();
    for (i, req) in list(term, "matchLabelExpressions").iter().enumerate() {
        let idx = format!("{at}[{i}]");
        let values = list(req, "values");
        if values.is_empty() {
            causes.push(common::required(&format!("{idx}.values"), ""));
        }
        let mut set = BTreeSet::new();
        for (j, value) in values.iter().enumerate() {
            let value = value.as_str().unwrap_or_default();
            if !set.insert(value.to_string()) {
                let field = format!("{idx}.values[{j}]");
                causes.push(common::duplicate(&field, &gofmt::quote(value)));
            }
        }
        let key = text(req, "key");
        let field = format!("{idx}.key");
        common::invalid_each(&mut causes, &field, key, kube_rules::qualified_name(key));
        if map.contains_key(key) {
            causes.push(common::duplicate(&field, &gofmt::quote(key)));
        }
        map.insert(key.to_string(), set);
    }
    (map, causes)
}

/// `ValidateCSIDriverName` at `field`.
pub fn csi_driver_name(name: &str, field: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    if name.is_empty() {
        causes.push(common::required(field, ""));
    }
    if name.len() > 63 {
        causes.push(common::too_long(field, 63));
    }
    let problems = kube_rules::dns1123_subdomain(&name.to_lowercase());
    common::invalid_each(&mut causes, field, name, problems);
    causes
}

/// A CSINode create or update.
pub fn csi_node(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let drivers = object
        .pointer("/spec/drivers")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let mut causes = Vec::new();
    let mut names = HashSet::new();
    for (i, driver) in drivers.iter().enumerate() {
        causes.extend(csi_node_driver(
            driver,
            &format!("spec.drivers[{i}]"),
            &mut names,
        ));
    }
    let Some(old) = old else {
        return causes;
    };
    let old_drivers = old.pointer("/spec/drivers").and_then(Value::as_array);
    for before in old_drivers.into_iter().flatten() {
        for after in drivers {
            if text(before, "name") == text(after, "name")
                && !common::same(Some(before), Some(after))
            {
                causes.push(common::immutable("CSINodeDriver", &render_driver(after)));
            }
        }
    }
    causes
}

fn csi_node_driver(driver: &Value, at: &str, names: &mut HashSet<String>) -> Vec<Cause> {
    let name = text(driver, "name");
    let mut causes = csi_driver_name(name, &format!("{at}.name"));
    let node_id = text(driver, "nodeID");
    let field = format!("{at}.nodeID");
    if node_id.is_empty() {
        causes.push(common::required(&field, ""));
    }
    if node_id.len() > NODE_ID_MAX {
        let detail = format!("must be {NODE_ID_MAX} characters or less");
        causes.push(common::invalid_str(&field, node_id, &detail));
    }
    if let Some(count) = driver.get("allocatable").and_then(|a| opt_int(a, "count")) {
        causes.extend(common::non_negative(
            &format!("{at}.allocatable.count"),
            count,
        ));
    }
    if !names.insert(name.to_string()) {
        causes.push(common::duplicate(
            &format!("{at}.name"),
            &gofmt::quote(name),
        ));
    }
    let mut keys = HashSet::new();
    for key in list(driver, "topologyKeys") {
        let key = key.as_str().unwrap_or_default();
        if key.is_empty() {
            causes.push(common::required(at, ""));
        }
        if !keys.insert(key) {
            causes.push(common::duplicate(at, &gofmt::quote(key)));
        }
        common::invalid_each(&mut causes, at, key, kube_rules::qualified_name(key));
    }
    causes
}

/// `storage.CSINodeDriver` as `%#v`.
fn render_driver(driver: &Value) -> String {
    let allocatable = match driver.get("allocatable").filter(|a| !a.is_null()) {
        Some(_) => "(*storage.VolumeNodeResources)(0xc000000000)",
        None => "(*storage.VolumeNodeResources)(nil)",
    };
    format!(
        "storage.CSINodeDriver{{Name:{}, NodeID:{}, TopologyKeys:{}, Allocatable:{allocatable}}}",
        gofmt::quote(text(driver, "name")),
        gofmt::quote(text(driver, "nodeID")),
        gofmt::string_slice(driver.get("topologyKeys")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::messages;
    use serde_json::json;

    #[test]
    fn storage_class_rules() {
        let sc = json!({"reclaimPolicy": "Bogus", "volumeBindingMode": "Bogus"});
        assert_eq!(
            messages(&storage_class(&sc, None)),
            vec![
                "provisioner: Required value",
                "reclaimPolicy: Unsupported value: \"Bogus\": supported values: \"Delete\", \"Retain\"",
                "volumeBindingMode: Unsupported value: \"Bogus\": supported values: \"Immediate\", \"WaitForFirstConsumer\"",
            ]
        );
        let old = json!({"provisioner": "a.io/x", "parameters": {"a": "b"}, "reclaimPolicy": "Delete",
                         "volumeBindingMode": "Immediate"});
        let new = json!({"provisioner": "a.io/x", "parameters": {"a": "c"}, "reclaimPolicy": "Delete",
                         "volumeBindingMode": "WaitForFirstConsumer"});
        assert_eq!(
            messages(&storage_class(&new, Some(&old))),
            vec![
                "parameters: Forbidden: updates to parameters are forbidden.",
                "volumeBindingMode: Invalid value: \"WaitForFirstConsumer\": field is immutable",
            ]
        );
    }

    #[test]
    fn csi_node_drivers() {
        let node = json!({"spec": {"drivers": [{"name": "d.io", "nodeID": "n", "topologyKeys": ["a", "a"]},
                                               {"name": "d.io", "nodeID": ""}]}});
        assert_eq!(
            messages(&csi_node(&node, None)),
            vec![
                "spec.drivers[0]: Duplicate value: \"a\"",
                "spec.drivers[1].nodeID: Required value",
                "spec.drivers[1].name: Duplicate value: \"d.io\"",
            ]
        );
    }
}
