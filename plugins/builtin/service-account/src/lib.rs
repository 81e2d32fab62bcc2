//! Built-in admission plugin `service-account`, kube-apiserver's
//! ServiceAccount admission for pod creation: defaults
//! `spec.serviceAccountName` to "default", rejects pods whose service account
//! does not exist, mounts the projected API token volume
//! (`kube-api-access-xxxxx`) unless automounting is off, copies the service
//! account's imagePullSecrets, and keeps mirror pods away from service
//! accounts and secrets.

mod mirror;
mod token;

use capstan_plugin_sdk::{
    host, json, object, AdmissionPlugin, AdmissionRequest, AdmissionResponse, JsonPatch, Operation,
    Value,
};

/// The annotation that marks a kubelet mirror pod.
const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";
/// The service account pods get when they name none.
const DEFAULT_SERVICE_ACCOUNT: &str = "default";

/// The plugin.
pub struct ServiceAccount;

impl AdmissionPlugin for ServiceAccount {
    fn review(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
        let creates_pod = req.operation == Operation::Create && req.is_resource("", "pods");
        let Some(pod) = req.object.as_ref().filter(|_| creates_pod) else {
            return Ok(AdmissionResponse::allow());
        };
        if object::annotations(pod).contains_key(MIRROR_ANNOTATION) {
            return Ok(mirror::validate(req, pod));
        }
        Ok(admit(req, pod))
    }
}

fn admit(req: &AdmissionRequest, pod: &Value) -> AdmissionResponse {
    let named = object::get_str(pod, &["spec", "serviceAccountName"]).unwrap_or("");
    let name = if named.is_empty() {
        DEFAULT_SERVICE_ACCOUNT
    } else {
        named
    };
    let account = match host::get_object("v1", "serviceaccounts", Some(&req.namespace), name) {
        Ok(Some(account)) => account,
        Ok(None) => {
            return lookup_failed(req, name, &format!("serviceaccount \"{name}\" not found"))
        }
        Err(e) => return lookup_failed(req, name, &e),
    };
    let mut patch = JsonPatch::new();
    if named.is_empty() {
        patch = patch.add(["spec", "serviceAccountName"], json!(name));
    }
    if should_automount(pod, &account) {
        patch = token::mount(req, pod, patch);
    }
    patch = copy_pull_secrets(pod, &account, patch);
    AdmissionResponse::allow().with_patch(patch.ops())
}

fn lookup_failed(req: &AdmissionRequest, name: &str, error: &str) -> AdmissionResponse {
    let message = format!(
        "error looking up service account {}/{}: {}",
        req.namespace, name, error
    );
    AdmissionResponse::forbidden(req, &message)
}

/// The pod's `automountServiceAccountToken` wins, then the account's; default true.
fn should_automount(pod: &Value, account: &Value) -> bool {
    let flag = |v: &Value, path: &[&str]| object::get(v, path).and_then(Value::as_bool);
    flag(pod, &["spec", "automountServiceAccountToken"])
        .or_else(|| flag(account, &["automountServiceAccountToken"]))
        .unwrap_or(true)
}

/// A pod without imagePullSecrets gets the service account's.
fn copy_pull_secrets(pod: &Value, account: &Value, patch: JsonPatch) -> JsonPatch {
    let from_account = object::array(account, &["imagePullSecrets"]);
    if !object::array(pod, &["spec", "imagePullSecrets"]).is_empty() || from_account.is_empty() {
        return patch;
    }
    let refs: Vec<Value> = from_account
        .iter()
        .map(|s| json!({"name": s.get("name").cloned().unwrap_or(Value::Null)}))
        .collect();
    patch.add(["spec", "imagePullSecrets"], Value::Array(refs))
}

capstan_plugin_sdk::admission_plugin!(ServiceAccount);

#[cfg(test)]
mod tests;
