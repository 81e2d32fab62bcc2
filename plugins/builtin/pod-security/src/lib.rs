//! Built-in admission plugin `pod-security`, kube-apiserver's PodSecurity
//! admission (Pod Security Standards): the namespace labels
//! `pod-security.kubernetes.io/enforce` and `.../warn` (privileged, baseline,
//! restricted; optional `-version`) decide. Pods violating the enforce level
//! are rejected (`violates PodSecurity "restricted:latest": ...`); violations
//! of the warn level become warnings (`would violate PodSecurity ...`); pod
//! templates of workload resources only ever get warnings. kube's audit
//! annotations: `pod-security.kubernetes.io/enforce-policy` on every pod
//! evaluated, `.../audit-violations` for the audit level's violations,
//! `.../exempt` for an exempt request.
//!
//! Configuration (all optional), like kube's PodSecurityConfiguration:
//! `{"defaults": {"enforce": "privileged", "warn": "privileged", "audit": "privileged"},
//!   "exemptions": {"usernames": [], "namespaces": [], "runtimeClasses": []}}`.

mod checks;
mod config;

use capstan_plugin_sdk::{
    host, object, AdmissionPlugin, AdmissionRequest, AdmissionResponse, Operation, Value,
};

use crate::config::{Config, Policy};

/// The plugin.
pub struct PodSecurity;

impl AdmissionPlugin for PodSecurity {
    fn review(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
        let Some((spec, is_pod)) = target(req) else {
            return Ok(AdmissionResponse::allow());
        };
        let config: Config = host::config()?;
        if let Some(why) = config.exemption(req, spec) {
            return Ok(AdmissionResponse::allow().with_audit_annotation(annotation("exempt"), why));
        }
        let namespace = host::get_object("v1", "namespaces", None, &req.namespace)?;
        let labels = namespace.as_ref().map(object::labels).unwrap_or_default();
        let d = &config.defaults;
        let levels = Levels {
            enforce: Policy::from_labels(&labels, "enforce", &d.enforce),
            warn: Policy::from_labels(&labels, "warn", &d.warn),
            audit: Policy::from_labels(&labels, "audit", &d.audit),
        };
        let response = decide(req, spec, is_pod, &levels);
        Ok(audited(response, spec, is_pod, &levels))
    }
}

/// The namespace's three levels.
struct Levels {
    enforce: Policy,
    warn: Policy,
    audit: Policy,
}

/// kube's audit annotation key `pod-security.kubernetes.io/<key>`.
fn annotation(key: &str) -> String {
    format!("pod-security.kubernetes.io/{key}")
}

/// The response with kube's audit annotations: the enforced policy of a
/// pod, and the audit level's violations.
fn audited(
    mut response: AdmissionResponse,
    spec: &Value,
    is_pod: bool,
    l: &Levels,
) -> AdmissionResponse {
    if is_pod {
        response = response.with_audit_annotation(annotation("enforce-policy"), l.enforce.label());
    }
    if let Some(reasons) = l.audit.check(spec) {
        let text = format!(
            "would violate PodSecurity \"{}\": {reasons}",
            l.audit.label()
        );
        response = response.with_audit_annotation(annotation("audit-violations"), text);
    }
    response
}

fn decide(
    req: &AdmissionRequest,
    spec: &Value,
    is_pod: bool,
    levels: &Levels,
) -> AdmissionResponse {
    let (enforce, warn) = (&levels.enforce, &levels.warn);
    let enforced = enforce.check(spec);
    if is_pod {
        if let Some(reasons) = &enforced {
            return AdmissionResponse::forbidden(
                req,
                &format!("violates PodSecurity \"{}\": {reasons}", enforce.label()),
            );
        }
    }
    let mut warnings = Vec::new();
    if !is_pod {
        if let Some(reasons) = enforced {
            warnings.push(format!(
                "would violate PodSecurity \"{}\": {reasons}",
                enforce.label()
            ));
        }
    }
    if let Some(reasons) = warn.check(spec) {
        let text = format!("would violate PodSecurity \"{}\": {reasons}", warn.label());
        if !warnings.contains(&text) {
            warnings.push(text);
        }
    }
    warnings
        .into_iter()
        .fold(AdmissionResponse::allow(), |r, w| r.with_warning(w))
}

/// The pod spec to check and whether it is a pod (vs. a workload template).
fn target(req: &AdmissionRequest) -> Option<(&Value, bool)> {
    let obj = req.object.as_ref()?;
    if !matches!(req.operation, Operation::Create | Operation::Update) {
        return None;
    }
    let group = req.resource.group.as_str();
    let path: &[&str] = match (group, req.resource.resource.as_str(), req.subresource()) {
        ("", "pods", "" | "ephemeralcontainers") => return pod_target(req, obj),
        ("", "replicationcontrollers", "")
        | ("apps", "deployments" | "replicasets" | "statefulsets" | "daemonsets", "")
        | ("batch", "jobs", "") => &["spec", "template", "spec"],
        ("batch", "cronjobs", "") => &["spec", "jobTemplate", "spec", "template", "spec"],
        ("", "podtemplates", "") => &["template", "spec"],
        _ => return None,
    };
    object::get(obj, path).map(|spec| (spec, false))
}

/// Pods on create, and on updates that change the spec (or add ephemeral containers).
fn pod_target<'a>(req: &AdmissionRequest, pod: &'a Value) -> Option<(&'a Value, bool)> {
    let spec = pod.get("spec")?;
    let unchanged = req.operation == Operation::Update
        && req.subresource().is_empty()
        && req.old_object.as_ref().and_then(|o| o.get("spec")) == Some(spec);
    (!unchanged).then_some((spec, true))
}

capstan_plugin_sdk::admission_plugin!(PodSecurity);

#[cfg(test)]
mod tests;
