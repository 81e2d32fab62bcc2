//! Tests of the bootstrap token authenticator against Secrets in the SDK's
//! test double.

use super::*;
use base64::Engine;
use capstan_plugin_sdk::{json, testing, Value};

const TOKEN: &str = "abcdef.0123456789abcdef";

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// A valid bootstrap secret for TOKEN, with `data` entries overridden
/// (a `None` value removes the key).
fn secret(overrides: &[(&str, Option<&str>)]) -> Value {
    let mut data = json!({
        "token-id": b64("abcdef"),
        "token-secret": b64("0123456789abcdef"),
        "usage-bootstrap-authentication": b64("true"),
        "auth-extra-groups": b64("system:bootstrappers:kubeadm:default-node-token"),
    });
    for (key, value) in overrides {
        match value {
            Some(v) => data[*key] = json!(b64(v)),
            None => {
                if let Some(map) = data.as_object_mut() {
                    map.remove(*key);
                }
            }
        }
    }
    json!({"metadata": {"name": "bootstrap-token-abcdef", "namespace": "kube-system"},
           "type": "bootstrap.kubernetes.io/token", "data": data})
}

fn authenticate(token: &str) -> TokenReviewStatus {
    let review = TokenReview {
        spec: capstan_plugin_sdk::access::TokenReviewSpec {
            token: token.into(),
            audiences: vec![],
        },
        ..Default::default()
    };
    BootstrapToken::authenticate(&review).unwrap()
}

fn store(object: Value) {
    testing::put_object("v1", "secrets", object);
}

fn last_log() -> String {
    testing::logs()
        .last()
        .map(|(_, m)| m.clone())
        .unwrap_or_default()
}

#[test]
fn valid_token_authenticates_with_sorted_unique_groups() {
    testing::reset();
    let extra = "system:bootstrappers:z,system:bootstrappers:a,system:bootstrappers:z";
    store(secret(&[("auth-extra-groups", Some(extra))]));
    let status = authenticate(TOKEN);
    assert_eq!(
        status,
        TokenReviewStatus::authenticated(UserInfo {
            username: "system:bootstrap:abcdef".into(),
            groups: vec![
                "system:bootstrappers".into(),
                "system:bootstrappers:a".into(),
                "system:bootstrappers:z".into()
            ],
            ..Default::default()
        })
    );
}

#[test]
fn no_extra_groups_and_future_expiration_are_fine() {
    testing::reset();
    store(secret(&[
        ("auth-extra-groups", None),
        ("expiration", Some("2999-01-01T00:00:00Z")),
    ]));
    let status = authenticate(TOKEN);
    assert_eq!(status.user.unwrap().groups, ["system:bootstrappers"]);
}

#[test]
fn malformed_tokens_are_ignored_without_reading_the_store() {
    testing::reset();
    testing::fail_reads(Some("store down"));
    for token in [
        "",
        "abcdef",
        "abcdef.0123456789abcde",
        "ABCDEF.0123456789abcdef",
        "abcdef.0123456789abcdef.x",
        "abcdef:0123456789abcdef",
    ] {
        assert_eq!(
            authenticate(token),
            TokenReviewStatus::unauthenticated(""),
            "{token}"
        );
    }
}

#[test]
fn missing_secret_is_unauthenticated_and_store_errors_fail() {
    testing::reset();
    assert_eq!(authenticate(TOKEN), TokenReviewStatus::unauthenticated(""));
    assert_eq!(
        last_log(),
        "No secret of name bootstrap-token-abcdef to match bootstrap bearer token"
    );
    testing::fail_reads(Some("store down"));
    let review = TokenReview {
        spec: capstan_plugin_sdk::access::TokenReviewSpec {
            token: TOKEN.into(),
            audiences: vec![],
        },
        ..Default::default()
    };
    assert_eq!(
        BootstrapToken::authenticate(&review).unwrap_err(),
        "store down"
    );
}

#[test]
fn each_failed_check_is_unauthenticated_and_logged() {
    let prefix = "Bootstrap secret kube-system/bootstrap-token-abcdef matching bearer token ";
    let cases: Vec<(Value, &str)> = vec![
        (secret(&[("token-secret", Some("ffffffffffffffff"))]), "has invalid value for key token-secret."),
        (secret(&[("token-id", Some("zzzzzz"))]), "has invalid value for key token-id, expected abcdef."),
        (secret(&[("expiration", Some("2000-01-01T00:00:00Z"))]), "has expired."),
        (secret(&[("expiration", Some("tomorrow"))]), "has expired."),
        (secret(&[("usage-bootstrap-authentication", Some("yes"))]), "not marked usage-bootstrap-authentication=true."),
        (secret(&[("usage-bootstrap-authentication", None)]), "not marked usage-bootstrap-authentication=true."),
        (secret(&[("auth-extra-groups", Some("system:masters"))]),
         "has invalid value for key auth-extra-groups: bootstrap group \"system:masters\" is invalid (must match \\Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\\z)."),
    ];
    for (object, why) in cases {
        testing::reset();
        store(object);
        assert_eq!(
            authenticate(TOKEN),
            TokenReviewStatus::unauthenticated(""),
            "{why}"
        );
        assert_eq!(last_log(), format!("{prefix}{why}"));
    }
}

#[test]
fn wrong_type_missing_data_and_deletion_are_refused() {
    let mut wrong_type = secret(&[]);
    wrong_type["type"] = json!("Opaque");
    let mut no_data = secret(&[]);
    if let Some(map) = no_data.as_object_mut() {
        map.remove("data");
    }
    let mut deleting = secret(&[]);
    deleting["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
    for (object, why) in [
        (
            wrong_type,
            "has invalid type, expected bootstrap.kubernetes.io/token.",
        ),
        (
            no_data,
            "has invalid type, expected bootstrap.kubernetes.io/token.",
        ),
        (deleting, "is deleted and awaiting removal"),
    ] {
        testing::reset();
        store(object);
        assert_eq!(authenticate(TOKEN), TokenReviewStatus::unauthenticated(""));
        assert!(last_log().ends_with(why), "{}", last_log());
    }
}
