//! Tests of the service account token authenticator with tokens signed here
//! (p256) and objects in the SDK's test double.

use super::*;
use base64::Engine;
use capstan_plugin_sdk::access::TokenReviewSpec;
use capstan_plugin_sdk::{json, testing, Value};
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};

const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";
const SA_UID: &str = "11111111-2222-3333-4444-555555555555";

fn key(seed: u8) -> SigningKey {
    let mut bytes = [seed; 32];
    bytes[0] = 1;
    SigningKey::from_slice(&bytes).unwrap()
}

fn point(key: &SigningKey) -> Vec<u8> {
    key.verifying_key()
        .to_encoded_point(false)
        .as_bytes()
        .to_vec()
}

fn kid(key: &SigningKey) -> String {
    config::key_id(&point(key))
}

fn b64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn sign(key: &SigningKey, header: &Value, claims: &Value) -> String {
    let input = format!(
        "{}.{}",
        b64url(header.to_string().as_bytes()),
        b64url(claims.to_string().as_bytes())
    );
    let signature: Signature = key.sign(input.as_bytes());
    format!("{input}.{}", b64url(&signature.to_bytes()))
}

fn mint(claims: &Value) -> String {
    let k = key(7);
    sign(
        &k,
        &json!({"alg": "ES256", "kid": kid(&k), "typ": "JWT"}),
        claims,
    )
}

fn now() -> i64 {
    kube_time::now_unix()
}

/// Claims of a fresh token for default/builder, valid for an hour.
fn claims() -> Value {
    let now = now();
    json!({"aud": [ISSUER], "exp": now + 3600, "iat": now, "iss": ISSUER, "jti": "jti-1",
        "kubernetes.io": {"namespace": "default", "serviceaccount": {"name": "builder", "uid": SA_UID}},
        "nbf": now, "sub": "system:serviceaccount:default:builder"})
}

/// Resets the double: configuration with key 7, and the ServiceAccount.
fn setup() {
    testing::reset();
    let public = base64::engine::general_purpose::STANDARD.encode(point(&key(7)));
    testing::set_config(json!({"issuer": ISSUER, "publicKeys": [public]}));
    put("serviceaccounts", "builder", SA_UID, None);
}

fn put(resource: &str, name: &str, uid: &str, deleted: Option<String>) {
    let ns = if resource == "nodes" {
        Value::Null
    } else {
        json!("default")
    };
    let mut object = json!({"metadata": {"name": name, "namespace": ns, "uid": uid}});
    if let Some(ts) = deleted {
        object["metadata"]["deletionTimestamp"] = json!(ts);
    }
    testing::put_object("v1", resource, object);
}

fn rfc3339(unix: i64) -> String {
    // Only for tests: a timestamp `unix` seconds after the epoch, via days.
    let (days, secs) = (unix.div_euclid(86_400), unix.rem_euclid(86_400));
    let (y, m, d) = civil(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

fn civil(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn review_with(token: &str, audiences: &[&str]) -> TokenReview {
    TokenReview {
        spec: TokenReviewSpec {
            token: token.to_string(),
            audiences: audiences.iter().map(|a| a.to_string()).collect(),
        },
        ..Default::default()
    }
}

fn authenticate(token: &str) -> TokenReviewStatus {
    ServiceAccountToken::authenticate(&review_with(token, &[])).unwrap()
}

fn error_of(token: &str) -> String {
    let status = authenticate(token);
    assert!(!status.authenticated, "{status:?}");
    status.error
}

fn with(mut value: Value, pointer: &str, new: Value) -> Value {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    value.pointer_mut(parent).unwrap()[key] = new;
    value
}

#[test]
fn a_valid_token_authenticates_as_the_service_account() {
    setup();
    let status = authenticate(&mint(&claims()));
    assert!(status.authenticated, "{status:?}");
    let user = status.user.unwrap();
    assert_eq!(user.username, "system:serviceaccount:default:builder");
    assert_eq!(user.uid, SA_UID);
    assert_eq!(
        user.groups,
        ["system:serviceaccounts", "system:serviceaccounts:default"]
    );
    assert_eq!(
        user.extra,
        BTreeMap::from([(
            "authentication.kubernetes.io/credential-id".to_string(),
            vec!["JTI=jti-1".to_string()]
        )])
    );
    assert_eq!(status.audiences, [ISSUER]);
}

#[test]
fn pod_bound_tokens_carry_pod_and_node_in_extra() {
    setup();
    put("pods", "web-0", "pod-uid", None);
    let pod_claims = with(
        claims(),
        "/kubernetes.io/pod",
        json!({"name": "web-0", "uid": "pod-uid"}),
    );
    let token = mint(&with(
        pod_claims,
        "/kubernetes.io/node",
        json!({"name": "n1", "uid": "node-uid"}),
    ));
    let user = authenticate(&token).user.unwrap();
    let extra = |k: &str| user.extra[&format!("authentication.kubernetes.io/{k}")][0].clone();
    assert_eq!(extra("pod-name"), "web-0");
    assert_eq!(extra("pod-uid"), "pod-uid");
    assert_eq!(extra("node-name"), "n1");
    assert_eq!(extra("node-uid"), "node-uid");
}

#[test]
fn bound_pod_must_exist_with_its_uid_and_not_be_long_deleted() {
    setup();
    let token = mint(&with(
        claims(),
        "/kubernetes.io/pod",
        json!({"name": "web-0", "uid": "pod-uid"}),
    ));
    assert_eq!(
        error_of(&token),
        "service account token has been invalidated"
    );
    put("pods", "web-0", "other-uid", None);
    assert_eq!(
        error_of(&token),
        "pod UID (other-uid) does not match service account pod ref claim (pod-uid)"
    );
    put("pods", "web-0", "pod-uid", Some(rfc3339(now() - 120)));
    assert_eq!(
        error_of(&token),
        "service account token has been invalidated"
    );
    put("pods", "web-0", "pod-uid", Some(rfc3339(now() - 5)));
    assert!(
        authenticate(&token).authenticated,
        "deleted within the leeway"
    );
}

#[test]
fn bound_secret_and_node_are_checked_like_pods() {
    setup();
    let token = mint(&with(
        claims(),
        "/kubernetes.io/secret",
        json!({"name": "s", "uid": "s-uid"}),
    ));
    assert_eq!(
        error_of(&token),
        "service account token has been invalidated"
    );
    put("secrets", "s", "x", None);
    assert_eq!(
        error_of(&token),
        "secret UID (x) does not match service account secret ref claim (s-uid)"
    );
    put("secrets", "s", "s-uid", None);
    assert!(authenticate(&token).authenticated);

    let token = mint(&with(
        claims(),
        "/kubernetes.io/node",
        json!({"name": "n1", "uid": "n-uid"}),
    ));
    assert_eq!(
        error_of(&token),
        "service account token has been invalidated"
    );
    put("nodes", "n1", "x", None);
    assert_eq!(
        error_of(&token),
        "node UID (x) does not match service account node ref claim (n-uid)"
    );
    put("nodes", "n1", "n-uid", Some(rfc3339(now() - 3600)));
    assert_eq!(
        error_of(&token),
        "service account token has been invalidated"
    );
    put("nodes", "n1", "n-uid", None);
    let user = authenticate(&token).user.unwrap();
    assert_eq!(user.extra["authentication.kubernetes.io/node-name"], ["n1"]);
    assert!(!user
        .extra
        .contains_key("authentication.kubernetes.io/pod-name"));
}

#[test]
fn service_account_must_exist_with_the_claimed_uid() {
    setup();
    let token = mint(&claims());
    put("serviceaccounts", "builder", "new-uid", None);
    assert_eq!(
        error_of(&token),
        format!("service account UID (new-uid) does not match claim ({SA_UID})")
    );
    put(
        "serviceaccounts",
        "builder",
        SA_UID,
        Some(rfc3339(now() - 61 - 60)),
    );
    assert_eq!(
        error_of(&token),
        "service account default/builder has been deleted"
    );
    testing::remove_object("v1", "serviceaccounts", "default", "builder");
    assert_eq!(error_of(&token), "serviceaccounts \"builder\" not found");
}

#[test]
fn times_are_checked_with_leeway() {
    setup();
    let now = now();
    assert_eq!(
        error_of(&mint(&with(claims(), "/exp", json!(now - 61)))),
        "service account token has expired"
    );
    assert!(authenticate(&mint(&with(claims(), "/exp", json!(now - 30)))).authenticated);
    assert_eq!(
        error_of(&mint(&with(claims(), "/nbf", json!(now + 120)))),
        "service account token is not valid yet"
    );
    assert_eq!(
        error_of(&mint(&with(claims(), "/iat", json!(now + 120)))),
        "service account token is issued in the future"
    );
}

#[test]
fn audiences_must_meet_the_review_or_the_server() {
    setup();
    let token = mint(&with(claims(), "/aud", json!(["vault", ISSUER])));
    let status = ServiceAccountToken::authenticate(&review_with(&token, &["vault"])).unwrap();
    assert_eq!(status.audiences, ["vault"]);
    let status = ServiceAccountToken::authenticate(&review_with(&token, &["other"])).unwrap();
    assert_eq!(
        status.error,
        format!("token audiences [\"vault\" \"{ISSUER}\"] is invalid for the target audiences [\"other\"]")
    );
    let vault_only = mint(&with(claims(), "/aud", json!("vault")));
    assert_eq!(
        error_of(&vault_only),
        format!("token audiences [\"vault\"] is invalid for the target audiences [\"{ISSUER}\"]")
    );
}

#[test]
fn foreign_or_malformed_tokens_are_not_ours() {
    setup();
    testing::fail_reads(Some("store down"));
    let foreign = mint(&with(claims(), "/iss", json!("https://elsewhere")));
    for token in [
        "",
        "abcdef.0123456789abcdef",
        "a.b.c",
        "{\"iss\":1}",
        foreign.as_str(),
    ] {
        assert_eq!(
            authenticate(token),
            TokenReviewStatus::unauthenticated(""),
            "{token}"
        );
    }
    let unparsable_header = format!(
        "%%.{}",
        mint(&claims())
            .split('.')
            .skip(1)
            .collect::<Vec<_>>()
            .join(".")
    );
    assert_eq!(
        authenticate(&unparsable_header),
        TokenReviewStatus::unauthenticated("")
    );
}

#[test]
fn signatures_must_verify_with_a_configured_key() {
    setup();
    let other = key(9);
    let claims = claims();
    let unknown_kid = sign(
        &other,
        &json!({"alg": "ES256", "kid": kid(&other)}),
        &claims,
    );
    assert_eq!(error_of(&unknown_kid), "invalid signature, no keys found");
    let our_kid = sign(
        &other,
        &json!({"alg": "ES256", "kid": kid(&key(7))}),
        &claims,
    );
    assert_eq!(error_of(&our_kid), jws::CRYPTO_FAILURE);
    let no_kid = sign(&other, &json!({"alg": "ES256"}), &claims);
    assert_eq!(error_of(&no_kid), jws::CRYPTO_FAILURE);
    let wrong_alg = sign(
        &key(7),
        &json!({"alg": "ES384", "kid": kid(&key(7))}),
        &claims,
    );
    assert_eq!(error_of(&wrong_alg), jws::CRYPTO_FAILURE);
    let mut tampered = mint(&claims);
    tampered.push('A');
    assert!(!authenticate(&tampered).authenticated);
}

#[test]
fn any_configured_key_verifies_during_rotation() {
    setup();
    let keys: Vec<String> = [key(9), key(7)]
        .iter()
        .map(|k| base64::engine::general_purpose::STANDARD.encode(point(k)))
        .collect();
    testing::set_config(json!({"issuer": ISSUER, "publicKeys": keys}));
    let token = sign(&key(7), &json!({"alg": "ES256"}), &claims());
    assert!(authenticate(&token).authenticated);
}

#[test]
fn store_failures_are_errors() {
    setup();
    testing::fail_reads(Some("store down"));
    let err = ServiceAccountToken::authenticate(&review_with(&mint(&claims()), &[])).unwrap_err();
    assert_eq!(err, "store down");
}

#[test]
fn full_token_review_round_trip() {
    setup();
    let input = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
        "spec": {"token": mint(&claims()), "audiences": [ISSUER]}});
    let out =
        capstan_plugin_sdk::run_authenticator::<ServiceAccountToken>(&input.to_string()).unwrap();
    let out: Value = out.parse().unwrap();
    assert_eq!(out["status"]["authenticated"], true);
    assert_eq!(out["status"]["audiences"], json!([ISSUER]));
    assert_eq!(
        out["status"]["user"]["username"],
        "system:serviceaccount:default:builder"
    );
}
