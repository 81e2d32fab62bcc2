//! apiregistration.k8s.io/v1 APIService (`ValidateAPIService` of
//! kube-aggregator): the name is `<version>.<group>`, group and version
//! are DNS names, priorities are in range, and a local APIService has no
//! TLS settings while a service-backed one names its service.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common::{self, int, text};
use kube_rules::gofmt;

/// An APIService create or update (an update validates it whole again).
pub fn api_service(object: &Value) -> Vec<Cause> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let (group, version) = (text(spec, "group"), text(spec, "version"));
    let mut causes = Vec::new();
    let name = crate::json::name(object).unwrap_or_default();
    let required_name = format!("{version}.{group}");
    if kube_rules::path_segment_name(name).is_empty() && name != required_name {
        let detail = format!(
            "must be `spec.version+\".\"+spec.group`: {}",
            gofmt::quote(&required_name)
        );
        causes.push(common::invalid_str("metadata.name", name, &detail));
    }
    if group.is_empty() && version != "v1" {
        let detail = "only v1 may have an empty group and it better be legacy kube";
        causes.push(common::required("spec.group", detail));
    }
    if !group.is_empty() {
        common::invalid_each(
            &mut causes,
            "spec.group",
            group,
            kube_rules::dns1123_subdomain(group),
        );
    }
    common::invalid_each(
        &mut causes,
        "spec.version",
        version,
        kube_rules::dns1035_label(version),
    );
    priority(spec, "groupPriorityMinimum", 20000, &mut causes);
    priority(spec, "versionPriority", 1000, &mut causes);
    causes.extend(service(spec));
    causes
}

fn priority(spec: &Value, key: &str, max: i64, causes: &mut Vec<Cause>) {
    let value = int(spec, key);
    if value <= 0 || value > max {
        let detail = format!("must be positive and less than {max}");
        causes.push(common::invalid(
            &format!("spec.{key}"),
            &value.to_string(),
            &detail,
        ));
    }
}

/// The decoded length of the base64 `caBundle`.
fn ca_bundle_len(spec: &Value) -> usize {
    let encoded = text(spec, "caBundle").trim_end_matches('=');
    encoded.len() * 3 / 4
}

fn service(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let insecure = spec.get("insecureSkipTLSVerify").and_then(Value::as_bool) == Some(true);
    let bundle = ca_bundle_len(spec);
    let Some(service) = spec.get("service").filter(|s| !s.is_null()) else {
        if bundle != 0 {
            let shown = gofmt::quote(&format!("{bundle} bytes"));
            let detail = "local APIServices may not have a caBundle";
            causes.push(common::invalid("spec.caBundle", &shown, detail));
        }
        if insecure {
            let detail = "local APIServices may not have insecureSkipTLSVerify";
            causes.push(common::invalid(
                "spec.insecureSkipTLSVerify",
                "true",
                detail,
            ));
        }
        return causes;
    };
    for key in ["namespace", "name"] {
        if text(service, key).is_empty() {
            causes.push(common::required(&format!("spec.service.{key}"), ""));
        }
    }
    let port = service.get("port").and_then(Value::as_i64).unwrap_or(443);
    if let Some(msg) = kube_rules::port_num(port) {
        let detail = format!("port is not valid: {msg}");
        causes.push(common::invalid(
            "spec.service.port",
            &port.to_string(),
            &detail,
        ));
    }
    if insecure && bundle > 0 {
        let detail = "may not be true if caBundle is present";
        causes.push(common::invalid(
            "spec.insecureSkipTLSVerify",
            "true",
            detail,
        ));
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::messages;
    use serde_json::json;

    #[test]
    fn names_priorities_and_services() {
        let bad = json!({"metadata": {"name": "bad"}, "spec": {"group": "x", "version": "v1"}});
        assert_eq!(
            messages(&api_service(&bad)),
            vec![
                "metadata.name: Invalid value: \"bad\": must be `spec.version+\".\"+spec.group`: \"v1.x\"",
                "spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000",
                "spec.versionPriority: Invalid value: 0: must be positive and less than 1000",
            ]
        );
        let local = json!({"metadata": {"name": "v1.x"}, "spec": {"group": "x", "version": "v1",
            "groupPriorityMinimum": 100, "versionPriority": 10, "insecureSkipTLSVerify": true, "caBundle": "YWJj"}});
        assert_eq!(
            messages(&api_service(&local)),
            vec![
                "spec.caBundle: Invalid value: \"3 bytes\": local APIServices may not have a caBundle",
                "spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify",
            ]
        );
    }
}
