//! Built-in authenticator `x509`: kube-apiserver's client certificate
//! authentication with `CommonNameUserConversion`
//! (staging/src/k8s.io/apiserver/pkg/authentication/request/x509/x509.go).
//!
//! The host verified the certificate chain against its client CA and passes
//! the leaf as base64 DER in the annotation
//! `authentication.capstan.dev/client-certificate`; this plugin only reads
//! the subject:
//! - user name = the subject's CommonName (the last one, as Go's `pkix.Name`);
//!   none or empty → unauthenticated, without error;
//! - groups = the subject's Organization values, in order;
//! - uid = the single `1.3.6.1.4.1.57683.2` attribute, when present (kube's
//!   `AllowParsingUserUIDFromCertAuth`, on by default since 1.33); several
//!   or an empty one is an error;
//! - extra `authentication.kubernetes.io/credential-id` =
//!   `X509SHA256=<hex SHA-256 of the certificate DER>`.
//!
//! Configuration: `{"parseUserUID": false}` turns off the uid attribute
//! (default true). No certificate → unauthenticated with an empty error.

mod der;
mod name;

use std::collections::BTreeMap;

use capstan_plugin_sdk::{host, AuthenticatorPlugin, TokenReview, TokenReviewStatus, UserInfo};
use serde::Deserialize;
use sha2::{Digest, Sha256};

/// `commonName` (2.5.4.3).
const COMMON_NAME: &str = "2.5.4.3";
/// `organizationName` (2.5.4.10).
const ORGANIZATION: &str = "2.5.4.10";
/// Kubernetes' user UID attribute (CNCF PEN 57683, suffix 2; k8s.io/apiserver/pkg/util/asn1).
const USER_UID: &str = "1.3.6.1.4.1.57683.2";
/// `user.CredentialIDKey`.
const CREDENTIAL_ID_KEY: &str = "authentication.kubernetes.io/credential-id";

/// The plugin.
pub struct X509;

#[derive(Debug, Deserialize)]
struct Config {
    #[serde(rename = "parseUserUID", default = "yes")]
    parse_user_uid: bool,
}

fn yes() -> bool {
    true
}

impl AuthenticatorPlugin for X509 {
    fn authenticate(review: &TokenReview) -> Result<TokenReviewStatus, String> {
        let Some(certificate) = review.client_certificate() else {
            return Ok(TokenReviewStatus::unauthenticated(""));
        };
        let config: Config = host::config()?;
        Ok(match user_of(&certificate, config.parse_user_uid) {
            Ok(Some(user)) => TokenReviewStatus::authenticated(user),
            Ok(None) => TokenReviewStatus::unauthenticated(""),
            Err(e) => TokenReviewStatus::unauthenticated(format!("x509: {e}")),
        })
    }
}

/// The user a certificate names; `None` when its subject has no CommonName.
fn user_of(certificate: &[u8], parse_uid: bool) -> Result<Option<UserInfo>, String> {
    let subject = name::subject(certificate)?;
    let values = |oid: &str| -> Vec<String> {
        subject
            .iter()
            .filter(|a| a.oid == oid)
            .map(|a| a.value.clone())
            .collect()
    };
    let common_name = values(COMMON_NAME).pop().unwrap_or_default();
    if common_name.is_empty() {
        return Ok(None);
    }
    let uid = if parse_uid {
        single_uid(values(USER_UID))?
    } else {
        String::new()
    };
    Ok(Some(UserInfo {
        username: common_name,
        uid,
        groups: values(ORGANIZATION),
        extra: BTreeMap::from([(
            CREDENTIAL_ID_KEY.to_string(),
            vec![credential_id(certificate)],
        )]),
    }))
}

/// kube's `parseUIDFromCert`: none → "", exactly one non-empty → it.
fn single_uid(uids: Vec<String>) -> Result<String, String> {
    match uids.as_slice() {
        [] => Ok(String::new()),
        [uid] if uid.is_empty() => Err("UID cannot be an empty string".into()),
        [uid] => Ok(uid.clone()),
        many => Err(format!(
            "expected 1 UID, but found multiple: [{}]",
            many.join(" ")
        )),
    }
}

/// `X509SHA256=` and the lowercase hex SHA-256 of the certificate's DER.
fn credential_id(certificate: &[u8]) -> String {
    let digest = Sha256::digest(certificate);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("X509SHA256={hex}")
}

capstan_plugin_sdk::authenticator_plugin!(X509);

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod tests;
