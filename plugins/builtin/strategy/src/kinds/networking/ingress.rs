//! networking.k8s.io/v1 Ingress and IngressClass (`ValidateIngressCreate`,
//! `ValidateIngressUpdate`, `ValidateIngressClass*` of kube's
//! `pkg/apis/networking/validation`): hosts, paths, backends, TLS, the
//! class's controller and parameters.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common::{self, int, list, text};
use crate::netparse;

const PATH_TYPES: [&str; 3] = ["Exact", "ImplementationSpecific", "Prefix"];
const BAD_SEQUENCES: [&str; 5] = ["//", "/./", "/../", "%2f", "%2F"];
const BAD_SUFFIXES: [&str; 2] = ["/..", "/."];
const CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";

/// What an update tolerates because the stored object already had it.
#[derive(Default, Clone, Copy)]
struct Allowances {
    invalid_secret_names: bool,
    invalid_wildcard_rules: bool,
}

/// An Ingress create or update.
pub fn ingress(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let allow = old.map(allowances).unwrap_or_default();
    let mut causes = ingress_spec(spec, allow);
    if old.is_none() {
        class_annotation(object, spec, &mut causes);
    }
    causes
}

fn allowances(old: &Value) -> Allowances {
    let spec = old.get("spec").unwrap_or(&Value::Null);
    let invalid_secret_names = list(spec, "tls")
        .iter()
        .any(|tls| !secret_name(tls).is_empty());
    let invalid_wildcard_rules = list(spec, "rules").iter().any(|rule| {
        text(rule, "host").contains('*') && !rule_value(rule, "", Allowances::default()).is_empty()
    });
    Allowances {
        invalid_secret_names,
        invalid_wildcard_rules,
    }
}

fn secret_name(tls: &Value) -> Vec<String> {
    match text(tls, "secretName") {
        "" => Vec::new(),
        name => kube_rules::dns1123_subdomain(name),
    }
}

fn class_annotation(object: &Value, spec: &Value, causes: &mut Vec<Cause>) {
    let annotation = object
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(CLASS_ANNOTATION))
        .and_then(Value::as_str);
    let class = spec.get("ingressClassName").and_then(Value::as_str);
    if let (Some(annotation), Some(class)) = (annotation, class) {
        if annotation != class {
            let field = format!("annotations.{CLASS_ANNOTATION}");
            let detail = "must match `ingressClassName` when both are specified";
            causes.push(common::invalid_str(&field, annotation, detail));
        }
    }
}

fn ingress_spec(spec: &Value, allow: Allowances) -> Vec<Cause> {
    let mut causes = Vec::new();
    let rules = list(spec, "rules");
    let default_backend = spec.get("defaultBackend").filter(|b| !b.is_null());
    if rules.is_empty() && default_backend.is_none() {
        let shown = if spec.get("rules").is_some_and(Value::is_array) {
            "[]networking.IngressRule{}"
        } else {
            "[]networking.IngressRule(nil)"
        };
        let detail = "either `defaultBackend` or `rules` must be specified";
        causes.push(common::invalid("spec", shown, detail));
    }
    if let Some(backend) = default_backend {
        causes.extend(backend_causes(backend, "spec.defaultBackend"));
    }
    for (i, rule) in rules.iter().enumerate() {
        causes.extend(rule_causes(rule, &format!("spec.rules[{i}]"), allow));
    }
    for (i, tls) in list(spec, "tls").iter().enumerate() {
        tls_causes(tls, &format!("spec.tls[{i}]"), allow, &mut causes);
    }
    if let Some(class) = spec.get("ingressClassName").and_then(Value::as_str) {
        let field = "spec.ingressClassName";
        common::invalid_each(
            &mut causes,
            field,
            class,
            kube_rules::dns1123_subdomain(class),
        );
    }
    causes
}

fn host_problems(host: &str) -> Vec<String> {
    if host.contains('*') {
        kube_rules::wildcard_dns1123_subdomain(host)
    } else {
        kube_rules::dns1123_subdomain(host)
    }
}

fn rule_causes(rule: &Value, at: &str, allow: Allowances) -> Vec<Cause> {
    let mut causes = Vec::new();
    let host = text(rule, "host");
    let field = format!("{at}.host");
    if !host.is_empty() {
        if netparse::parse_ip(host).is_some() {
            let detail = "must be a DNS name, not an IP address";
            causes.push(common::invalid_str(&field, host, detail));
        }
        common::invalid_each(&mut causes, &field, host, host_problems(host));
    }
    if !host.contains('*') || !allow.invalid_wildcard_rules {
        causes.extend(rule_value(rule, at, allow));
    }
    causes
}

fn rule_value(rule: &Value, at: &str, _allow: Allowances) -> Vec<Cause> {
    let Some(http) = rule.get("http").filter(|h| !h.is_null()) else {
        return Vec::new();
    };
    let mut causes = Vec::new();
    let paths = list(http, "paths");
    if paths.is_empty() {
        causes.push(common::required(&format!("{at}.http.paths"), ""));
    }
    for (i, path) in paths.iter().enumerate() {
        causes.extend(path_causes(path, &format!("{at}.http.paths[{i}]")));
    }
    causes
}

fn path_causes(path: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let Some(path_type) = path.get("pathType").and_then(Value::as_str) else {
        let field = format!("{at}.pathType");
        return vec![common::required(&field, "pathType must be specified")];
    };
    let value = text(path, "path");
    let field = format!("{at}.path");
    match path_type {
        "Exact" | "Prefix" => {
            if !value.starts_with('/') {
                causes.push(common::invalid_str(
                    &field,
                    value,
                    "must be an absolute path",
                ));
            }
            for bad in BAD_SEQUENCES.iter().filter(|b| value.contains(**b)) {
                let detail = format!("must not contain '{bad}'");
                causes.push(common::invalid_str(&field, value, &detail));
            }
            for bad in BAD_SUFFIXES.iter().filter(|b| value.ends_with(**b)) {
                let detail = format!("cannot end with '{bad}'");
                causes.push(common::invalid_str(&field, value, &detail));
            }
        }
        "ImplementationSpecific" => {
            if !value.is_empty() && !value.starts_with('/') {
                causes.push(common::invalid_str(
                    &field,
                    value,
                    "must be an absolute path",
                ));
            }
        }
        other => {
            let field = format!("{at}.pathType");
            causes.push(common::not_supported(&field, other, &PATH_TYPES));
        }
    }
    let backend = path.get("backend").unwrap_or(&Value::Null);
    causes.extend(backend_causes(backend, &format!("{at}.backend")));
    causes
}

/// `validateIngressBackend`.
fn backend_causes(backend: &Value, at: &str) -> Vec<Cause> {
    let resource = backend.get("resource").filter(|r| !r.is_null());
    let service = backend.get("service").filter(|s| !s.is_null());
    match (resource, service) {
        (Some(_), Some(_)) => {
            vec![common::invalid_str(
                at,
                "",
                "cannot set both resource and service backends",
            )]
        }
        (Some(resource), None) => local_reference(resource, &format!("{at}.resource")),
        (None, Some(service)) => service_backend(service, at),
        (None, None) => vec![common::invalid_str(
            at,
            "",
            "resource or service backend is required",
        )],
    }
}

fn service_backend(service: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let field = format!("{at}.service.name");
    match text(service, "name") {
        "" => causes.push(common::required(&field, "")),
        name => common::invalid_each(&mut causes, &field, name, kube_rules::dns1035_label(name)),
    }
    let port = service.get("port").unwrap_or(&Value::Null);
    let (name, number) = (text(port, "name"), int(port, "number"));
    match (name.is_empty(), number == 0) {
        (false, false) => causes.push(common::invalid_str(
            at,
            "",
            "cannot set both port name & port number",
        )),
        (false, true) => {
            let field = format!("{at}.service.port.name");
            common::invalid_each(&mut causes, &field, name, kube_rules::port_name(name));
        }
        (true, false) => {
            if let Some(msg) = kube_rules::port_num(number) {
                let field = format!("{at}.service.port.number");
                causes.push(common::invalid(&field, &number.to_string(), &msg));
            }
        }
        (true, true) => causes.push(common::required(at, "port name or number is required")),
    }
    causes
}

/// `validateIngressTypedLocalObjectReference`.
fn local_reference(reference: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    if let Some(group) = reference.get("apiGroup").and_then(Value::as_str) {
        let field = format!("{at}.apiGroup");
        common::invalid_each(
            &mut causes,
            &field,
            group,
            kube_rules::dns1123_subdomain(group),
        );
    }
    for key in ["kind", "name"] {
        let field = format!("{at}.{key}");
        match text(reference, key) {
            "" => causes.push(common::required(&field, &format!("{key} is required"))),
            value => common::invalid_each(
                &mut causes,
                &field,
                value,
                kube_rules::path_segment_name(value),
            ),
        }
    }
    causes
}

fn tls_causes(tls: &Value, at: &str, allow: Allowances, causes: &mut Vec<Cause>) {
    for (i, host) in list(tls, "hosts").iter().enumerate() {
        let host = host.as_str().unwrap_or_default();
        let field = format!("{at}.hosts[{i}]");
        common::invalid_each(causes, &field, host, host_problems(host));
    }
    if !allow.invalid_secret_names {
        let field = format!("{at}.secretName");
        common::invalid_each(causes, &field, text(tls, "secretName"), secret_name(tls));
    }
}

/// An IngressClass create or update.
pub fn ingress_class(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut causes = Vec::new();
    let controller = text(spec, "controller");
    if let Some(old) = old {
        let before = old.pointer("/spec/controller").and_then(Value::as_str);
        if before.unwrap_or_default() != controller {
            let shown = kube_rules::gofmt::quote(controller);
            causes.push(common::immutable("spec.controller", &shown));
        }
    }
    if controller.len() > 250 {
        causes.push(common::too_long("spec.controller", 250));
    }
    causes.extend(common::domain_prefixed_path("spec.controller", controller));
    if let Some(params) = spec.get("parameters").filter(|p| !p.is_null()) {
        parameters(params, &mut causes);
    }
    causes
}

/// `validateIngressClassParametersReference`.
fn parameters(params: &Value, causes: &mut Vec<Cause>) {
    let at = "spec.parameters";
    causes.extend(local_reference(params, at));
    let Some(scope) = params.get("scope").and_then(Value::as_str) else {
        causes.push(common::required("spec.parameters.scope", ""));
        return;
    };
    let namespace = params.get("namespace").and_then(Value::as_str);
    let field = "spec.parameters.namespace";
    match (scope, namespace) {
        ("Namespace", None) => causes.push(common::required(
            field,
            "`parameters.scope` is set to 'Namespace'",
        )),
        ("Namespace", Some(ns)) => {
            common::invalid_each(causes, field, ns, kube_rules::dns1123_label(ns))
        }
        ("Cluster", Some(_)) => causes.push(common::forbidden(
            field,
            "`parameters.scope` is set to 'Cluster'",
        )),
        ("Cluster", None) => {}
        (other, _) => causes.push(common::not_supported(
            "spec.parameters.scope",
            other,
            &["Cluster", "Namespace"],
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::messages;
    use serde_json::json;

    #[test]
    fn rules_paths_and_backends() {
        let i = json!({"spec": {"rules": [{"host": "1.2.3.4", "http": {"paths": [
            {"path": "rel", "pathType": "Prefix", "backend": {"service": {"name": "s"}}}]}}]}});
        assert_eq!(
            messages(&ingress(&i, None)),
            vec![
                "spec.rules[0].host: Invalid value: \"1.2.3.4\": must be a DNS name, not an IP address",
                "spec.rules[0].http.paths[0].path: Invalid value: \"rel\": must be an absolute path",
                "spec.rules[0].http.paths[0].backend: Required value: port name or number is required",
            ]
        );
        assert_eq!(
            messages(&ingress(&json!({"spec": {}}), None)),
            vec!["spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified"]
        );
    }

    #[test]
    fn class_controller_and_parameters() {
        let c = json!({"spec": {"controller": "Bad Controller"}});
        assert_eq!(
            messages(&ingress_class(&c, None)),
            vec!["spec.controller: Invalid value: \"Bad Controller\": must be a domain-prefixed path (such as \"acme.io/foo\")"]
        );
        let c = json!({"spec": {"controller": "a.io/x", "parameters": {"kind": "K", "name": "n", "scope": "Namespace"}}});
        assert_eq!(
            messages(&ingress_class(&c, None)),
            vec!["spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'"]
        );
        let old = json!({"spec": {"controller": "a.io/y"}});
        let new = json!({"spec": {"controller": "a.io/x"}});
        assert_eq!(
            messages(&ingress_class(&new, Some(&old))),
            vec!["spec.controller: Invalid value: \"a.io/x\": field is immutable"]
        );
    }
}
