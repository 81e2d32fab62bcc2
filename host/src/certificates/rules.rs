//! kube's CertificateSigningRequest strategy and validation
//! (pkg/registry/certificates/certificates/strategy.go,
//! pkg/apis/certificates/validation): the requester is stamped on create,
//! the main resource changes only metadata, `/approval` only the
//! conditions, `/status` the status but not the approval; conditions and
//! certificates are checked as kube checks them.

use crate::apimachinery::meta;
use crate::apimachinery::status::Cause;
use crate::apimachinery::user::UserInfo;
use serde_json::{json, Value};

/// Every key usage kube accepts, sorted as its error message lists them.
const USAGES: [&str; 23] = [
    "any",
    "cert sign",
    "client auth",
    "code signing",
    "content commitment",
    "crl sign",
    "data encipherment",
    "decipher only",
    "digital signature",
    "email protection",
    "encipher only",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "key agreement",
    "key encipherment",
    "microsoft sgc",
    "netscape sgc",
    "ocsp signing",
    "s/mime",
    "server auth",
    "signing",
    "timestamping",
];

/// PrepareForCreate: the requester from the request, no status.
pub fn prepare_create(csr: &mut Value, user: &UserInfo) {
    let Some(spec) = csr.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    for field in ["username", "uid", "groups", "extra"] {
        spec.remove(field);
    }
    spec.insert("username".into(), json!(user.username));
    if !user.uid.is_empty() {
        spec.insert("uid".into(), json!(user.uid));
    }
    if !user.groups.is_empty() {
        spec.insert("groups".into(), json!(user.groups));
    }
    if !user.extra.is_empty() {
        spec.insert("extra".into(), json!(user.extra));
    }
    csr["status"] = json!({});
}

/// What a write through `subresource` ("" for the resource) may change.
pub fn prepare_update(subresource: &str, old: &Value, mut new: Value) -> Value {
    new["spec"] = old.get("spec").cloned().unwrap_or(json!({}));
    let old_status = old.get("status").cloned().unwrap_or(json!({}));
    match subresource {
        "approval" => {
            let conditions = new.pointer("/status/conditions").cloned();
            new["status"] = old_status;
            match conditions {
                Some(c) => new["status"]["conditions"] = c,
                None => {
                    if let Some(s) = new["status"].as_object_mut() {
                        s.remove("conditions");
                    }
                }
            }
        }
        "status" => {}
        _ => new["status"] = old_status,
    }
    stamp_conditions(&mut new, old);
    new
}

/// populateConditionTimestamps: new conditions get now; an unchanged
/// status keeps its transition time.
fn stamp_conditions(new: &mut Value, old: &Value) {
    let now = meta::now();
    let old_conditions = conditions(old).to_vec();
    let Some(list) = new
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for c in list.iter_mut().filter_map(Value::as_object_mut) {
        if c.get("lastUpdateTime").is_none_or(Value::is_null) {
            c.insert("lastUpdateTime".into(), json!(now));
        }
        if c.get("lastTransitionTime").is_none_or(Value::is_null) {
            let same = old_conditions
                .iter()
                .find(|o| o["type"] == c["type"] && o["status"] == c["status"]);
            let t = same
                .map(|o| o["lastTransitionTime"].clone())
                .filter(|t| !t.is_null());
            c.insert("lastTransitionTime".into(), t.unwrap_or_else(|| json!(now)));
        }
    }
}

pub fn conditions(csr: &Value) -> &[Value] {
    csr.pointer("/status/conditions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Whether the request has a condition of that type with status True.
pub fn has_condition(csr: &Value, kind: &str) -> bool {
    conditions(csr)
        .iter()
        .any(|c| c["type"] == kind && c["status"] == "True")
}

/// Go's `%#v` of a byte slice, as kube's messages print `spec.request`.
fn go_bytes(bytes: &[u8]) -> String {
    let hex: Vec<String> = bytes.iter().map(|b| format!("0x{b:x}")).collect();
    format!("[]byte{{{}}}", hex.join(", "))
}

fn invalid_raw(field: &str, value: &str, detail: &str) -> Cause {
    Cause {
        reason: "FieldValueInvalid",
        field: field.to_string(),
        message: format!("Invalid value: {value}: {detail}"),
    }
}

fn duplicate(field: &str, value: &str) -> Cause {
    Cause {
        reason: "FieldValueDuplicate",
        field: field.to_string(),
        message: format!("Duplicate value: {}", json!(value)),
    }
}

/// `spec.request` decoded from its base64 JSON form.
pub fn request_bytes(csr: &Value) -> Vec<u8> {
    use base64::Engine;
    let text = csr
        .pointer("/spec/request")
        .and_then(Value::as_str)
        .unwrap_or_default();
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap_or_default()
}

fn validate_spec(csr: &Value, causes: &mut Vec<Cause>) {
    let request = request_bytes(csr);
    if let Err(e) = super::request::parse(&request) {
        causes.push(invalid_raw("spec.request", &go_bytes(&request), &e));
    }
    let usages: Vec<&str> = csr
        .pointer("/spec/usages")
        .and_then(Value::as_array)
        .map(|u| u.iter().map(|v| v.as_str().unwrap_or_default()).collect())
        .unwrap_or_default();
    if usages.is_empty() {
        causes.push(Cause::required("spec.usages", ""));
    }
    for (i, usage) in usages.iter().enumerate() {
        let field = format!("spec.usages[{i}]");
        if !USAGES.contains(usage) {
            causes.push(Cause::not_supported(&field, usage, &USAGES));
        } else if usages[..i].contains(usage) {
            causes.push(duplicate(&field, usage));
        }
    }
    validate_signer_name(
        csr.pointer("/spec/signerName")
            .and_then(Value::as_str)
            .unwrap_or_default(),
        causes,
    );
    if let Some(secs) = csr
        .pointer("/spec/expirationSeconds")
        .and_then(Value::as_i64)
    {
        if secs < 600 {
            causes.push(invalid_raw(
                "spec.expirationSeconds",
                &secs.to_string(),
                "may not specify a duration less than 600 seconds (10 minutes)",
            ));
        }
    }
}

/// ValidateSignerName: `<domain with a dot>/<path>`.
fn validate_signer_name(name: &str, causes: &mut Vec<Cause>) {
    let field = "spec.signerName";
    if name.is_empty() {
        return causes.push(Cause::required(field, ""));
    }
    let segments: Vec<&str> = name.split('/').collect();
    if segments.len() != 2 {
        return causes.push(Cause::invalid(
            field,
            name,
            "must be a fully qualified domain and path of the form 'example.com/signer-name'",
        ));
    }
    if !segments[0].contains('.') {
        causes.push(Cause::invalid(
            field,
            segments[0],
            "should be a domain with at least two segments separated by dots",
        ));
    }
    if segments[1].is_empty() {
        causes.push(Cause::invalid(
            field,
            name,
            "must be a fully qualified domain and path of the form 'example.com/signer-name'",
        ));
    }
}

fn validate_conditions(csr: &Value, causes: &mut Vec<Cause>) {
    let mut seen: Vec<&str> = Vec::new();
    let (mut approved, mut denied) = (false, false);
    for (i, c) in conditions(csr).iter().enumerate() {
        let at = format!("status.conditions[{i}]");
        let kind = c["type"].as_str().unwrap_or_default();
        let status = c["status"].as_str().unwrap_or_default();
        if kind.is_empty() {
            causes.push(Cause::required(&format!("{at}.type"), ""));
        }
        let allowed: &[&str] = if matches!(kind, "Approved" | "Denied" | "Failed") {
            &["True"]
        } else {
            &["False", "True", "Unknown"]
        };
        if status.is_empty() {
            causes.push(Cause::required(&format!("{at}.status"), ""));
        } else if !allowed.contains(&status) {
            causes.push(Cause::not_supported(
                &format!("{at}.status"),
                status,
                allowed,
            ));
        }
        approved |= kind == "Approved";
        denied |= kind == "Denied";
        if (kind == "Approved" || kind == "Denied") && approved && denied {
            causes.push(Cause::invalid(
                &format!("{at}.type"),
                kind,
                "Approved and Denied conditions are mutually exclusive",
            ));
        }
        if seen.contains(&kind) {
            causes.push(duplicate(&format!("{at}.type"), kind));
        }
        seen.push(kind);
    }
}

/// validateCertificate: only CERTIFICATE PEM blocks, at least one.
fn validate_certificate(csr: &Value, causes: &mut Vec<Cause>) {
    use base64::Engine;
    let Some(text) = csr
        .pointer("/status/certificate")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
    else {
        return;
    };
    let pem = base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap_or_default();
    let pem = String::from_utf8_lossy(&pem);
    let types: Vec<&str> = pem
        .lines()
        .filter_map(|l| l.strip_prefix("-----BEGIN ")?.strip_suffix("-----"))
        .collect();
    let problem = match types.iter().find(|t| **t != "CERTIFICATE") {
        Some(other) => Some(format!(
            "only CERTIFICATE PEM blocks are allowed, found {other:?}"
        )),
        None if types.is_empty() => {
            Some("must contain at least one CERTIFICATE PEM block".to_string())
        }
        None => None,
    };
    if let Some(p) = problem {
        causes.push(invalid_raw(
            "status.certificate",
            "\"<certificate data>\"",
            &p,
        ));
    }
}

/// Validation of a request about to be created.
pub fn validate_create(csr: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    validate_spec(csr, &mut causes);
    validate_conditions(csr, &mut causes);
    validate_certificate(csr, &mut causes);
    causes
}

/// Validation of an update from `old` to `new`.
pub fn validate_update(new: &Value, old: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    validate_conditions(new, &mut causes);
    validate_certificate(new, &mut causes);
    for kind in ["Approved", "Denied", "Failed"] {
        let count = |csr: &Value| conditions(csr).iter().filter(|c| c["type"] == kind).count();
        if count(new) < count(old) {
            causes.push(Cause::forbidden(
                "status.conditions",
                &format!("updates may not remove a condition of type {kind:?}"),
            ));
        }
    }
    let certificate = |csr: &Value| {
        csr.pointer("/status/certificate")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    if !certificate(old).is_empty() && certificate(old) != certificate(new) {
        causes.push(invalid_raw(
            "status.certificate",
            "\"<certificate data>\"",
            "updates may not modify existing certificate content",
        ));
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csr_with(conditions: Value) -> Value {
        json!({"spec": {"signerName": "kubernetes.io/kube-apiserver-client", "usages": ["client auth"]},
               "status": {"conditions": conditions}})
    }

    #[test]
    fn the_requester_is_stamped_and_status_cleared() {
        let user = UserInfo {
            username: "jane".into(),
            groups: vec!["dev".into()],
            ..Default::default()
        };
        let mut csr = json!({"spec": {"username": "admin", "groups": ["system:masters"]}, "status": {"conditions": [{"type": "Approved"}]}});
        prepare_create(&mut csr, &user);
        assert_eq!(csr["spec"]["username"], "jane");
        assert_eq!(csr["spec"]["groups"], json!(["dev"]));
        assert_eq!(csr["status"], json!({}));
    }

    #[test]
    fn approval_changes_only_conditions_and_stamps_them() {
        let old = csr_with(json!([]));
        let mut new =
            csr_with(json!([{"type": "Approved", "status": "True", "reason": "KubectlApprove"}]));
        new["spec"]["signerName"] = json!("example.com/other");
        new["status"]["certificate"] = json!("Zm9v");
        let out = prepare_update("approval", &old, new);
        assert_eq!(out["spec"], old["spec"]);
        assert!(out["status"].get("certificate").is_none());
        assert!(out["status"]["conditions"][0]["lastUpdateTime"].is_string());
        let main = prepare_update("", &old, out.clone());
        assert_eq!(main["status"], old["status"]);
    }

    #[test]
    fn conditions_are_checked_as_kube_does() {
        let both = csr_with(
            json!([{"type": "Approved", "status": "True"}, {"type": "Denied", "status": "True"}]),
        );
        let causes = validate_update(&both, &csr_with(json!([])));
        assert_eq!(
            causes[0].message,
            "Invalid value: \"Denied\": Approved and Denied conditions are mutually exclusive"
        );
        let approved = csr_with(json!([{"type": "Approved", "status": "True"}]));
        let causes = validate_update(&csr_with(json!([])), &approved);
        assert_eq!(
            causes[0].message,
            "Forbidden: updates may not remove a condition of type \"Approved\""
        );
        let wrong = csr_with(json!([{"type": "Approved", "status": "False"}]));
        assert_eq!(
            validate_update(&wrong, &wrong)[0].field,
            "status.conditions[0].status"
        );
    }

    #[test]
    fn a_new_request_needs_a_request_usages_and_a_signer() {
        let causes = validate_create(
            &json!({"spec": {"request": "bm9wZQ==", "usages": ["client auth", "flying"], "signerName": "nope", "expirationSeconds": 60}}),
        );
        let fields: Vec<&str> = causes.iter().map(|c| c.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.request",
                "spec.usages[1]",
                "spec.signerName",
                "spec.expirationSeconds"
            ]
        );
        assert_eq!(causes[0].message, "Invalid value: []byte{0x6e, 0x6f, 0x70, 0x65}: PEM block type must be CERTIFICATE REQUEST");
        assert_eq!(causes[2].message, "Invalid value: \"nope\": must be a fully qualified domain and path of the form 'example.com/signer-name'");
    }
}
