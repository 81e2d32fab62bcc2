//! Validation: min, max and maxLimitRequestRatio of a LimitRange's
//! Container, Pod and PersistentVolumeClaim items, with kube's messages.

use std::collections::BTreeMap;

use capstan_plugin_sdk::{object, Value};

use crate::quantity::Quantity;

/// A resource list (`cpu` → quantity); unparsable entries are left out.
pub type Resources = BTreeMap<String, Quantity>;

/// Reads `requests` / `limits` style maps.
pub fn resources(value: &Value, path: &[&str]) -> Resources {
    object::get(value, path)
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), Quantity::parse(&quantity_text(v)?)?)))
                .collect()
        })
        .unwrap_or_default()
}

fn quantity_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The errors of a pod against one LimitRange.
pub fn validate_pod(limit_range: &Value, pod: &Value) -> Vec<String> {
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    let mut errors = Vec::new();
    for item in object::array(limit_range, &["spec", "limits"]) {
        match object::get_str(item, &["type"]) {
            Some("Container") => {
                for field in ["containers", "initContainers"] {
                    for c in object::array(spec, &[field]) {
                        let requests = resources(c, &["resources", "requests"]);
                        let limits = resources(c, &["resources", "limits"]);
                        errors.extend(check(item, "Container", &requests, &limits));
                    }
                }
            }
            Some("Pod") => {
                let (requests, limits) = pod_totals(spec);
                errors.extend(check(item, "Pod", &requests, &limits));
            }
            _ => {}
        }
    }
    errors
}

/// The errors of a PersistentVolumeClaim against one LimitRange (requests only).
pub fn validate_claim(limit_range: &Value, claim: &Value) -> Vec<String> {
    let requests = resources(claim, &["spec", "resources", "requests"]);
    let mut errors = Vec::new();
    for item in object::array(limit_range, &["spec", "limits"]) {
        if object::get_str(item, &["type"]) != Some("PersistentVolumeClaim") {
            continue;
        }
        let kind = "PersistentVolumeClaim";
        for (name, min) in resources(item, &["min"]) {
            errors.extend(min_error(kind, &name, &min, &requests, &Resources::new()));
        }
        for (name, max) in resources(item, &["max"]) {
            errors.extend(max_request_error(kind, &name, &max, &requests));
        }
    }
    errors
}

fn check(item: &Value, kind: &str, requests: &Resources, limits: &Resources) -> Vec<String> {
    let mut errors = Vec::new();
    for (name, min) in resources(item, &["min"]) {
        errors.extend(min_error(kind, &name, &min, requests, limits));
    }
    for (name, max) in resources(item, &["max"]) {
        errors.extend(max_error(kind, &name, &max, requests, limits));
    }
    for (name, ratio) in resources(item, &["maxLimitRequestRatio"]) {
        errors.extend(ratio_error(kind, &name, &ratio, requests, limits));
    }
    errors
}

fn min_error(
    kind: &str,
    name: &str,
    min: &Quantity,
    requests: &Resources,
    limits: &Resources,
) -> Option<String> {
    let e = &min.text;
    match (requests.get(name), limits.get(name)) {
        (None, _) => Some(format!(
            "minimum {name} usage per {kind} is {e}.  No request is specified"
        )),
        (Some(r), _) if r.milli < min.milli => Some(format!(
            "minimum {name} usage per {kind} is {e}, but request is {}",
            r.text
        )),
        (_, Some(l)) if l.milli < min.milli => Some(format!(
            "minimum {name} usage per {kind} is {e}, but limit is {}",
            l.text
        )),
        _ => None,
    }
}

fn max_error(
    kind: &str,
    name: &str,
    max: &Quantity,
    requests: &Resources,
    limits: &Resources,
) -> Option<String> {
    let e = &max.text;
    match (requests.get(name), limits.get(name)) {
        (_, None) => Some(format!(
            "maximum {name} usage per {kind} is {e}.  No limit is specified"
        )),
        (_, Some(l)) if l.milli > max.milli => Some(format!(
            "maximum {name} usage per {kind} is {e}, but limit is {}",
            l.text
        )),
        (Some(r), _) if r.milli > max.milli => Some(format!(
            "maximum {name} usage per {kind} is {e}, but request is {}",
            r.text
        )),
        _ => None,
    }
}

fn max_request_error(
    kind: &str,
    name: &str,
    max: &Quantity,
    requests: &Resources,
) -> Option<String> {
    let e = &max.text;
    match requests.get(name) {
        None => Some(format!(
            "maximum {name} usage per {kind} is {e}.  No request is specified"
        )),
        Some(r) if r.milli > max.milli => Some(format!(
            "maximum {name} usage per {kind} is {e}, but request is {}",
            r.text
        )),
        _ => None,
    }
}

fn ratio_error(
    kind: &str,
    name: &str,
    ratio: &Quantity,
    requests: &Resources,
    limits: &Resources,
) -> Option<String> {
    let e = &ratio.text;
    let request = requests.get(name).map(|q| q.milli).filter(|v| *v != 0);
    let limit = limits.get(name).map(|q| q.milli).filter(|v| *v != 0);
    let Some(request) = request else {
        return Some(format!(
            "{name} max limit to request ratio per {kind} is {e}, but no request is specified or request is 0"
        ));
    };
    let Some(limit) = limit else {
        return Some(format!(
            "{name} max limit to request ratio per {kind} is {e}, but no limit is specified or limit is 0"
        ));
    };
    let observed = limit as f64 / request as f64;
    (observed * 1000.0 > ratio.milli as f64).then(|| {
        format!("{name} max limit to request ratio per {kind} is {e}, but provided ratio is {observed:.6}")
    })
}

/// kube's podRequests/podLimits: containers and sidecars add up; a regular
/// init container counts alone (plus the sidecars started before it); the
/// pod needs the larger of the two.
fn pod_totals(spec: &Value) -> (Resources, Resources) {
    let totals = |key: &str| {
        let mut sum = Resources::new();
        for c in object::array(spec, &["containers"]) {
            add(&mut sum, &resources(c, &["resources", key]));
        }
        let mut sidecars = Resources::new();
        let mut init_max = Resources::new();
        for c in object::array(spec, &["initContainers"]) {
            let own = resources(c, &["resources", key]);
            if object::get_str(c, &["restartPolicy"]) == Some("Always") {
                add(&mut sum, &own);
                add(&mut sidecars, &own);
                max(&mut init_max, &sidecars);
            } else {
                let mut alone = own;
                add(&mut alone, &sidecars);
                max(&mut init_max, &alone);
            }
        }
        max(&mut sum, &init_max);
        sum
    };
    (totals("requests"), totals("limits"))
}

fn add(into: &mut Resources, other: &Resources) {
    for (name, q) in other {
        let total = into.get(name).map_or(q.milli, |have| have.milli + q.milli);
        into.insert(name.clone(), Quantity::from_milli(total));
    }
}

fn max(into: &mut Resources, other: &Resources) {
    for (name, q) in other {
        if into.get(name).is_none_or(|have| q.milli > have.milli) {
            into.insert(name.clone(), q.clone());
        }
    }
}
