//! The `kubernetes.io/kube-apiserver-client` signer (kube-controller-manager's
//! csrsigning controller): every approved request for it, neither denied nor
//! failed and not yet issued, gets `status.certificate` signed by the data
//! directory's CA, valid for `spec.expirationSeconds` (at most a year, kube's
//! default); a request with usages a client certificate may not have is
//! marked Failed, as kube's signer does. Issued certificates authenticate
//! with this server's x509 authenticator.

use crate::api::state::AppState;
use crate::apimachinery::meta;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::certificates::pki::{Authority, ClientIssue};
use crate::certificates::request::{self, Request};
use crate::certificates::rules::{conditions, has_condition, request_bytes};
use crate::certificates::KUBE_APISERVER_CLIENT;
use crate::registry::{decode, keys, WriteOptions};
use crate::storage::{EventKind, StorageError};
use base64::Engine;
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// kube-controller-manager's default --cluster-signing-duration.
const MAX_LIFETIME: Duration = Duration::from_secs(365 * 24 * 3600);

pub fn spawn(state: Arc<AppState>) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let Some(paths) = state.pki.clone() else {
                return;
            };
            let ca = match Authority::load_or_create(&paths) {
                Ok(ca) => ca,
                Err(e) => {
                    tracing::warn!(error = %e, "CSR signer: cannot load the CA");
                    return;
                }
            };
            if let Err(e) = run(&state, &ca).await {
                tracing::warn!(error = %e, "CSR signer restarting");
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    })
}

/// kube's validAPIServerClientUsages.
pub fn check_usages(csr: &Value) -> Result<bool, String> {
    let usages: Vec<&str> = csr
        .pointer("/spec/usages")
        .and_then(Value::as_array)
        .map(|u| u.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut client_auth = false;
    for u in &usages {
        match *u {
            "digital signature" | "key encipherment" => {}
            "client auth" => client_auth = true,
            other => return Err(format!("invalid usage for client certificate: {other}")),
        }
    }
    if !client_auth {
        return Err("missing required usage for client certificate: client auth".to_string());
    }
    Ok(usages.contains(&"key encipherment"))
}

/// Whether the signer has something to do with this request.
/// The signer's status writes, recorded as kube-controller-manager's.
fn status_writer(state: &AppState) -> WriteOptions<'_> {
    super::written_by(state, super::CONTROLLER_MANAGER, "status")
}

fn pending(csr: &Value) -> bool {
    csr.pointer("/spec/signerName").and_then(Value::as_str) == Some(KUBE_APISERVER_CLIENT)
        && has_condition(csr, "Approved")
        && !has_condition(csr, "Denied")
        && !has_condition(csr, "Failed")
        && csr
            .pointer("/status/certificate")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
}

fn lifetime(csr: &Value) -> Duration {
    match csr
        .pointer("/spec/expirationSeconds")
        .and_then(Value::as_u64)
    {
        Some(secs) => Duration::from_secs(secs).min(MAX_LIFETIME),
        None => MAX_LIFETIME,
    }
}

/// The status the signer gives a pending request: the certificate, or Failed.
pub fn signed_status(csr: &Value, ca: &Authority) -> Value {
    let mut status = csr.get("status").cloned().unwrap_or(json!({}));
    let parsed: Result<(Request, bool), String> =
        request::parse(&request_bytes(csr)).and_then(|req| check_usages(csr).map(|enc| (req, enc)));
    let issued = parsed.and_then(|(req, key_encipherment)| {
        let issue = ClientIssue {
            lifetime: lifetime(csr),
            key_encipherment,
        };
        ca.sign_request(&req, &issue).map_err(|e| e.to_string())
    });
    match issued {
        Ok(pem) => {
            status["certificate"] = json!(base64::engine::general_purpose::STANDARD.encode(pem))
        }
        Err(why) => {
            let mut list = conditions(csr).to_vec();
            list.push(json!({"type": "Failed", "status": "True", "reason": "SignerValidationFailure",
                             "message": why, "lastUpdateTime": meta::now(), "lastTransitionTime": meta::now()}));
            status["conditions"] = Value::Array(list);
        }
    }
    status
}

async fn sign(state: &AppState, ca: &Authority, csr: &Value) -> ApiResult<()> {
    let res = state
        .catalogue
        .builtin()
        .lookup("certificates.k8s.io", "v1", "certificatesigningrequests")
        .ok_or_else(|| ApiError::internal("certificatesigningrequests are not served"))?;
    let name = meta::name(csr).unwrap_or_default();
    let change = |current: Value| {
        if !pending(&current) {
            return Ok(current);
        }
        let mut next = current.clone();
        next["status"] = signed_status(&current, ca);
        Ok(next)
    };
    match state
        .registry
        .guaranteed_update(res, None, name, status_writer(state), &change)
        .await
    {
        Err(e) if e.code == 404 => Ok(()),
        other => other.map(|_| ()),
    }
}

async fn run(state: &AppState, ca: &Authority) -> ApiResult<()> {
    let internal = |e: StorageError| ApiError::internal(e.to_string());
    let res = state
        .catalogue
        .builtin()
        .lookup("certificates.k8s.io", "v1", "certificatesigningrequests")
        .ok_or_else(|| ApiError::internal("certificatesigningrequests are not served"))?;
    let prefix = keys::prefix(res, None);
    let (kvs, mut events) = super::list_and_watch(state, &prefix).await?;
    for kv in &kvs {
        let csr = decode(kv)?;
        if pending(&csr) {
            sign(state, ca, &csr).await?;
        }
    }
    while let Some(ev) = events.next().await {
        let ev = ev.map_err(internal)?;
        if ev.kind == EventKind::Put {
            let csr = decode(&ev.kv)?;
            if pending(&csr) {
                sign(state, ca, &csr).await?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_client_usages_are_signed() {
        let csr = |usages: Value| json!({"spec": {"usages": usages}});
        assert_eq!(check_usages(&csr(json!(["client auth"]))), Ok(false));
        assert_eq!(
            check_usages(&csr(json!([
                "digital signature",
                "key encipherment",
                "client auth"
            ]))),
            Ok(true)
        );
        assert_eq!(
            check_usages(&csr(json!(["client auth", "server auth"]))).unwrap_err(),
            "invalid usage for client certificate: server auth"
        );
        assert_eq!(
            check_usages(&csr(json!(["digital signature"]))).unwrap_err(),
            "missing required usage for client certificate: client auth"
        );
    }

    #[test]
    fn an_approved_request_gets_a_certificate_or_fails() {
        let dir = tempfile::tempdir().unwrap();
        let paths = crate::certificates::pki::ensure(dir.path(), &[]).unwrap();
        let ca = Authority::load_or_create(&paths).unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "jane");
        let pem = params.serialize_request(&key).unwrap().pem().unwrap();
        let request = base64::engine::general_purpose::STANDARD.encode(pem);
        let mut csr = json!({"spec": {"request": request, "signerName": KUBE_APISERVER_CLIENT, "usages": ["client auth"], "expirationSeconds": 600},
                             "status": {"conditions": [{"type": "Approved", "status": "True"}]}});
        assert!(pending(&csr));
        let status = signed_status(&csr, &ca);
        let cert = base64::engine::general_purpose::STANDARD
            .decode(status["certificate"].as_str().unwrap())
            .unwrap();
        assert!(String::from_utf8(cert)
            .unwrap()
            .starts_with("-----BEGIN CERTIFICATE-----"));
        csr["spec"]["usages"] = json!(["server auth"]);
        let failed = signed_status(&csr, &ca);
        assert_eq!(failed["conditions"][1]["type"], "Failed");
        assert_eq!(failed["conditions"][1]["reason"], "SignerValidationFailure");
    }
}
