//! Mirror pods (static pods the kubelet mirrors into the API) may not use
//! service accounts, secrets or token projections: kube's checks and words.

use capstan_plugin_sdk::{object, AdmissionRequest, AdmissionResponse, Value};

/// Allows a mirror pod only when it references no service account and no secret.
pub fn validate(req: &AdmissionRequest, pod: &Value) -> AdmissionResponse {
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    let named = object::get_str(spec, &["serviceAccountName"]).unwrap_or("");
    if !named.is_empty() {
        return AdmissionResponse::forbidden(
            req,
            "a mirror pod may not reference service accounts",
        );
    }
    if references_secrets(spec) {
        return AdmissionResponse::forbidden(req, "a mirror pod may not reference secrets");
    }
    if projects_tokens(spec) {
        return AdmissionResponse::forbidden(
            req,
            "a mirror pod may not use ServiceAccountToken volume projections",
        );
    }
    AdmissionResponse::allow()
}

fn projected_sources(spec: &Value) -> impl Iterator<Item = &Value> {
    object::array(spec, &["volumes"])
        .iter()
        .flat_map(|v| object::array(v, &["projected", "sources"]))
}

fn projects_tokens(spec: &Value) -> bool {
    projected_sources(spec).any(|s| s.get("serviceAccountToken").is_some())
}

/// Secret volumes, projected secrets, pull secrets, and env/envFrom secret refs.
fn references_secrets(spec: &Value) -> bool {
    let volumes = object::array(spec, &["volumes"]);
    volumes.iter().any(|v| v.get("secret").is_some())
        || projected_sources(spec).any(|s| s.get("secret").is_some())
        || !object::array(spec, &["imagePullSecrets"]).is_empty()
        || object::pod_containers(spec)
            .iter()
            .any(|(_, _, c)| container_uses_secret(c))
}

fn container_uses_secret(container: &Value) -> bool {
    let env = object::array(container, &["env"]);
    let env_from = object::array(container, &["envFrom"]);
    env.iter()
        .any(|e| object::get(e, &["valueFrom", "secretKeyRef"]).is_some())
        || env_from.iter().any(|e| e.get("secretRef").is_some())
}
