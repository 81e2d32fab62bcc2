//! Fuzz harness (proptest, bounded like the host's `host/src/fuzz`): the
//! JWS and claims parsing of hostile tokens never panics, and a token whose
//! signing input was changed is never verified.

use crate::claims::Claims;
use crate::config::{key_id, PublicKey};
use crate::jws::{issuer_matches, Jws};
use base64::Engine;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::Value;

fn config() -> Config {
    let mut config = Config::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = 256;
    }
    config.failure_persistence = None;
    config
}

fn signing_key() -> SigningKey {
    SigningKey::from_slice(&[7; 32]).expect("a valid P-256 scalar")
}

fn public_key() -> PublicKey {
    let key = *signing_key().verifying_key();
    let point = key.to_encoded_point(false);
    PublicKey {
        kid: key_id(point.as_bytes()),
        key,
    }
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// `header.payload.signature`, signed with [`signing_key`].
fn signed(header: &[u8], payload: &[u8]) -> String {
    let input = format!("{}.{}", b64(header), b64(payload));
    let signature: Signature = signing_key().sign(input.as_bytes());
    format!("{input}.{}", b64(&signature.to_bytes()))
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        proptest::sample::select(&["ES256", "none", "HS256", "https://k", "", "a"][..])
            .prop_map(Value::from),
        "\\PC{0,10}".prop_map(Value::from),
    ];
    let keys = proptest::sample::select(
        &[
            "alg",
            "kid",
            "iss",
            "sub",
            "aud",
            "exp",
            "nbf",
            "iat",
            "kubernetes.io",
            "serviceaccount",
            "pod",
            "name",
            "uid",
            "x",
        ][..],
    );
    leaf.prop_recursive(4, 32, 5, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec((keys.clone().prop_map(String::from), inner), 0..6)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

/// Everything the authenticator does with a token before the store.
fn read(token: &str, key: &PublicKey) {
    let _ = issuer_matches(token, "https://k");
    let Some(jws) = Jws::parse(token) else { return };
    let _ = jws.kid();
    let _ = jws.verified_by(&[key]);
    if let Ok(claims) = serde_json::from_slice::<Claims>(&jws.payload) {
        let _ = claims.check_times(kube_time::now_unix());
        let _ = claims.audiences_for(&[], &["api".to_string()]);
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_text_as_a_token(token in prop_oneof!["\\PC{0,80}", "[A-Za-z0-9_.=-]{0,80}"]) {
        read(&token, &public_key());
    }

    #[test]
    fn signed_tokens_with_any_header_and_claims(header in json_value(), claims in json_value()) {
        let token = signed(header.to_string().as_bytes(), claims.to_string().as_bytes());
        read(&token, &public_key());
    }

    #[test]
    fn a_changed_signing_input_is_never_verified(
        claims in json_value(),
        at in any::<prop::sample::Index>(),
        by in "[A-Za-z0-9_-]",
    ) {
        let token = signed(br#"{"alg":"ES256"}"#, claims.to_string().as_bytes());
        let (input, signature) = token.rsplit_once('.').expect("three parts");
        let at = at.index(input.len());
        let mut changed = input.to_string();
        changed.replace_range(at..at + 1, &by);
        let changed_token = format!("{changed}.{signature}");
        let key = public_key();
        let verified = Jws::parse(&changed_token).is_some_and(|j| j.verified_by(&[&key]));
        prop_assert!(!verified || changed == input, "{} verified", changed);
        read(&changed_token, &key);
    }
}
