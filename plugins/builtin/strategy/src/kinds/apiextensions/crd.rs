//! CustomResourceDefinitions (apiextensions.k8s.io/v1): kube's defaults
//! (`SetDefaults_CustomResourceDefinitionSpec`), the stored version recorded
//! by PrepareForCreate/PrepareForUpdate, and `ValidateCustomResourceDefinition`
//! (k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation) with
//! its messages and field paths. kube validates the internal version, into
//! which v1 is converted first: when every version carries the same schema,
//! the schema moves to `spec.validation` and errors are reported there
//! ([`internal::Spec`]). The schema rules are in [`schema`] and [`structural`],
//! the x-kubernetes-validations checks in [`rules`].

mod internal;
mod names;
mod rules;
mod schema;
mod structural;

use capstan_plugin_sdk::Cause;
use serde_json::{json, Value};

use crate::common::{self, text};
use crate::json::set_default;
use kube_rules::gofmt;

/// `SetDefaults_CustomResourceDefinitionSpec`: singular and listKind from
/// the kind, conversion strategy None, a conversion webhook's service on 443.
pub fn defaults(object: &mut Value) {
    let kind = object
        .pointer("/spec/names/kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let names_present = object.pointer("/spec/names").is_some_and(Value::is_object);
    if names_present && !kind.is_empty() {
        set_default(object, "/spec/names/singular", json!(kind.to_lowercase()));
        set_default(object, "/spec/names/listKind", json!(format!("{kind}List")));
    }
    set_default(object, "/spec/conversion", json!({"strategy": "None"}));
    let service = "/spec/conversion/webhook/clientConfig/service";
    if let Some(service) = object.pointer_mut(service).filter(|s| s.is_object()) {
        set_default(service, "/port", json!(443));
    }
}

/// The status a new CRD starts with: no accepted names yet, the storage
/// version recorded as stored.
pub fn initial_status(object: &Value) -> Value {
    let mut status = json!({"acceptedNames": {"kind": "", "plural": ""}});
    if let Some(storage) = storage_version(object) {
        status["storedVersions"] = json!([storage]);
    }
    status
}

/// PrepareForUpdate's part: the (new) storage version joins storedVersions.
pub fn record_storage_version(object: &mut Value) {
    let Some(storage) = storage_version(object) else {
        return;
    };
    let Some(fields) = object.as_object_mut() else {
        return;
    };
    let status = fields.entry("status").or_insert_with(|| json!({}));
    let Some(status) = status.as_object_mut() else {
        return;
    };
    let stored = status.entry("storedVersions").or_insert_with(|| json!([]));
    if let Some(list) = stored.as_array_mut() {
        if !list.iter().any(|v| v.as_str() == Some(storage.as_str())) {
            list.push(json!(storage));
        }
    }
}

/// The first version marked `storage: true`.
fn storage_version(object: &Value) -> Option<String> {
    common::list(object.get("spec").unwrap_or(&Value::Null), "versions")
        .iter()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .map(|v| text(v, "name").to_string())
}

/// `ValidateCustomResourceDefinition` / `ValidateCustomResourceDefinitionUpdate`.
pub fn validate(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let spec = internal::Spec::from(object.get("spec").unwrap_or(&Value::Null));
    let mut causes = metadata_name(object, &spec);
    causes.extend(spec.validate());
    if let Some(old) = old {
        causes.extend(immutable(object, old));
    }
    let status = object.get("status").unwrap_or(&Value::Null);
    let accepted = status.get("acceptedNames").unwrap_or(&Value::Null);
    causes.extend(names::validate(accepted, "status.acceptedNames"));
    causes.extend(stored_versions(status, &spec));
    causes.extend(api_approval(object, &spec, old));
    causes.extend(preserve_unknown_fields(object, old));
    causes
}

/// kube's annotation for CRDs in protected groups.
const APPROVAL: &str = "api-approved.kubernetes.io";

/// `validateAPIApproval` on create: a group under k8s.io or kubernetes.io
/// (`IsProtectedCommunityGroup`) needs the approval annotation.
fn api_approval(object: &Value, spec: &internal::Spec, old: Option<&Value>) -> Vec<Cause> {
    let group = spec.group();
    let protected = ["k8s.io", "kubernetes.io"]
        .iter()
        .any(|d| group == *d || group.ends_with(&format!(".{d}")));
    let annotated = |o: &Value| {
        o.pointer("/metadata/annotations")
            .and_then(|a| a.get(APPROVAL))
            .is_some()
    };
    if !protected || annotated(object) || old.is_some_and(|o| !annotated(o)) {
        return Vec::new();
    }
    let detail = format!(
        "protected groups must have approval annotation {}, see \
         https://github.com/kubernetes/enhancements/pull/1111",
        gofmt::quote(APPROVAL)
    );
    vec![common::required(
        &format!("metadata.annotations[{APPROVAL}]"),
        &detail,
    )]
}

/// The name rule of `ValidateCustomResourceDefinition`'s nameValidationFn.
fn metadata_name(object: &Value, spec: &internal::Spec) -> Vec<Cause> {
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if name.is_empty() || name == format!("{}.{}", spec.plural(), spec.group()) {
        return Vec::new();
    }
    vec![common::invalid_str(
        "metadata.name",
        name,
        "must be spec.names.plural+\".\"+spec.group",
    )]
}

/// `ValidateCustomResourceDefinitionSpecUpdate`'s immutable fields.
fn immutable(object: &Value, old: &Value) -> Vec<Cause> {
    let established = common::list(old.get("status").unwrap_or(&Value::Null), "conditions")
        .iter()
        .any(|c| text(c, "type") == "Established" && text(c, "status") == "True");
    let mut fields = Vec::new();
    if established {
        fields.push(("/spec/scope", "spec.scope"));
        fields.push(("/spec/names/kind", "spec.names.kind"));
    }
    fields.push(("/spec/group", "spec.group"));
    fields.push(("/spec/names/plural", "spec.names.plural"));
    let at = |o: &Value, p: &str| {
        o.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    fields
        .into_iter()
        .filter(|(p, _)| at(object, p) != at(old, p))
        .map(|(p, field)| common::immutable(field, &gofmt::quote(&at(object, p))))
        .collect()
}

/// `ValidateCustomResourceDefinitionStoredVersions`.
fn stored_versions(status: &Value, spec: &internal::Spec) -> Vec<Cause> {
    const FIELD: &str = "status.storedVersions";
    let stored: Vec<String> = common::list(status, "storedVersions")
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_string())
        .collect();
    let rendered = if stored.is_empty() {
        "[]string(nil)".to_string()
    } else {
        gofmt::strings(&stored)
    };
    if stored.is_empty() {
        return vec![common::invalid(
            FIELD,
            &rendered,
            "must have at least one stored version",
        )];
    }
    let mut causes = Vec::new();
    for version in spec.versions() {
        if version.storage && !stored.contains(&version.name) {
            let detail = format!("must have the storage version {}", version.name);
            causes.push(common::invalid(FIELD, &rendered, &detail));
        }
    }
    for (i, v) in stored.iter().enumerate() {
        if !spec.versions().iter().any(|version| &version.name == v) {
            let detail = format!(
                "missing from spec.versions; {v} was previously a storage version, and must \
                 remain in spec.versions until a storage migration ensures no data remains \
                 persisted in {v} and removes {v} from status.storedVersions"
            );
            causes.push(common::invalid_str(&format!("{FIELD}[{i}]"), v, &detail));
        }
    }
    causes
}

/// `validatePreserveUnknownFields`: v1 CRDs may not set it to true on create.
fn preserve_unknown_fields(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let set = |o: &Value| o.pointer("/spec/preserveUnknownFields") == Some(&json!(true));
    if !set(object) || old.is_some_and(set) {
        return Vec::new();
    }
    vec![common::invalid(
        "spec.preserveUnknownFields",
        "true",
        "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in \
         spec.versions[*].schema instead",
    )]
}

#[cfg(test)]
mod tests;
