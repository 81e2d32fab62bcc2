//! Built-in authenticator `service-account-token`: kube-apiserver's service
//! account token authenticator (pkg/serviceaccount/jwt.go, claims.go) for
//! the ES256 JWTs the host signs (TokenRequest).
//!
//! A bearer token whose unverified `iss` is not the configured issuer, or
//! that is not a compact JWS, is not ours: unauthenticated without error.
//! Otherwise, in kube's order: the signature must verify with a configured
//! key (those with the token's `kid`, or all when it has none); the token's
//! audiences must meet the review's `spec.audiences` (else the server's);
//! `nbf`/`exp`/`iat` must hold with a minute of leeway; the ServiceAccount
//! and any bound Secret, Pod or Node must exist with the claimed UIDs.
//! Failures are unauthenticated with kube's message; an unreadable store is
//! an error. See [`config`] for the configuration.
//!
//! The user: `system:serviceaccount:<ns>:<name>`, uid = the account's UID,
//! groups `system:serviceaccounts` and `system:serviceaccounts:<ns>`, extra
//! pod name/UID, node name/UID and `credential-id` `JTI=<jti>` as kube's
//! `ServiceAccountInfo.UserInfo` (staging/src/k8s.io/apiserver/pkg/
//! authentication/serviceaccount/util.go).

pub mod bound;
pub mod claims;
pub mod config;
pub mod jws;

use std::collections::BTreeMap;

use capstan_plugin_sdk::{AuthenticatorPlugin, TokenReview, TokenReviewStatus, UserInfo};

use bound::{Binding, Failure};
use claims::Claims;
use config::Config;
use jws::Jws;

/// The plugin.
pub struct ServiceAccountToken;

impl AuthenticatorPlugin for ServiceAccountToken {
    fn authenticate(review: &TokenReview) -> Result<TokenReviewStatus, String> {
        let token = review.spec.token.as_str();
        if token.is_empty() {
            return Ok(TokenReviewStatus::unauthenticated(""));
        }
        let config = config::current()?;
        if !jws::issuer_matches(token, &config.issuer) {
            return Ok(TokenReviewStatus::unauthenticated(""));
        }
        let Some(jws) = Jws::parse(token) else {
            return Ok(TokenReviewStatus::unauthenticated(""));
        };
        match validate(&config, &jws, &review.spec.audiences, kube_time::now_unix()) {
            Ok(status) => Ok(status),
            Err(Failure::Rejected(message)) => Ok(TokenReviewStatus::unauthenticated(message)),
            Err(Failure::Store(message)) => Err(message),
        }
    }
}

/// Everything after the issuer pre-check, at `now` (Unix seconds).
pub fn validate(
    config: &Config,
    jws: &Jws,
    requested_audiences: &[String],
    now: i64,
) -> Result<TokenReviewStatus, Failure> {
    let claims = verified_claims(config, jws)?;
    let audiences = claims
        .audiences_for(requested_audiences, &config.audiences)
        .map_err(Failure::Rejected)?;
    claims.check_times(now).map_err(Failure::Rejected)?;
    let binding = bound::check(&claims.kubernetes, now)?;
    Ok(TokenReviewStatus {
        audiences,
        ..TokenReviewStatus::authenticated(user_info(&claims, binding))
    })
}

/// The claims of a JWS signed by one of the configured keys and issuer.
fn verified_claims(config: &Config, jws: &Jws) -> Result<Claims, Failure> {
    let keys = config.keys_for(jws.kid());
    if keys.is_empty() {
        return Err(Failure::Rejected("invalid signature, no keys found".into()));
    }
    if !jws.verified_by(&keys) {
        return Err(Failure::Rejected(jws::CRYPTO_FAILURE.into()));
    }
    let claims: Claims = serde_json::from_slice(&jws.payload).map_err(|e| {
        Failure::Rejected(format!(
            "service account token claims could not be decoded: {e}"
        ))
    })?;
    if claims.iss != config.issuer {
        return Err(Failure::Rejected(format!(
            "token issuer {} is invalid",
            kube_rules::gofmt::quote(&claims.iss)
        )));
    }
    Ok(claims)
}

/// kube's `ServiceAccountInfo.UserInfo()` for validated claims.
fn user_info(claims: &Claims, binding: Binding) -> UserInfo {
    let k = &claims.kubernetes;
    let mut extra = BTreeMap::new();
    let mut put = |key: &str, value: &str| {
        extra.insert(
            format!("authentication.kubernetes.io/{key}"),
            vec![value.to_string()],
        );
    };
    if let Some(pod) = binding
        .pod
        .filter(|p| !p.name.is_empty() && !p.uid.is_empty())
    {
        put("pod-name", &pod.name);
        put("pod-uid", &pod.uid);
    }
    if !claims.jti.is_empty() {
        put("credential-id", &format!("JTI={}", claims.jti));
    }
    if let Some(node) = binding.node.filter(|n| !n.name.is_empty()) {
        put("node-name", &node.name);
        if !node.uid.is_empty() {
            put("node-uid", &node.uid);
        }
    }
    UserInfo {
        username: format!(
            "system:serviceaccount:{}:{}",
            k.namespace, k.serviceaccount.name
        ),
        uid: k.serviceaccount.uid.clone(),
        groups: vec![
            "system:serviceaccounts".to_string(),
            format!("system:serviceaccounts:{}", k.namespace),
        ],
        extra,
    }
}

capstan_plugin_sdk::authenticator_plugin!(ServiceAccountToken);

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod tests;
