//! Tests of the x509 authenticator with certificates made by rcgen and,
//! for subjects rcgen cannot express (repeated attributes), by hand.

use super::*;
use base64::Engine;
use capstan_plugin_sdk::{json, testing, Value};
use rcgen::{CertificateParams, DistinguishedName, DnType, DnValue, KeyPair};

fn review(certificate: &[u8]) -> TokenReview {
    let b64 = base64::engine::general_purpose::STANDARD.encode(certificate);
    serde_json::from_value(json!({
        "metadata": {"annotations": {"authentication.capstan.dev/client-certificate": b64}},
        "spec": {"token": ""}
    }))
    .unwrap()
}

fn rcgen_cert(entries: Vec<(DnType, DnValue)>) -> Vec<u8> {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    let mut dn = DistinguishedName::new();
    for (ty, value) in entries {
        dn.push(ty, value);
    }
    params.distinguished_name = dn;
    let key = KeyPair::generate().unwrap();
    params.self_signed(&key).unwrap().der().to_vec()
}

fn uid_type() -> DnType {
    DnType::CustomDnType(vec![1, 3, 6, 1, 4, 1, 57683, 2])
}

/// A DER element.
fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    match content.len() {
        n if n < 0x80 => out.push(n as u8),
        n if n < 0x100 => out.extend([0x81, n as u8]),
        n => out.extend([0x82, (n >> 8) as u8, n as u8]),
    }
    out.extend_from_slice(content);
    out
}

const CN: &[u8] = &[0x55, 0x04, 0x03];
const O: &[u8] = &[0x55, 0x04, 0x0a];
const UID: &[u8] = &[0x2b, 0x06, 0x01, 0x04, 0x01, 0x83, 0xc2, 0x53, 0x02];

/// A certificate-shaped DER whose subject has one RDN per `(oid, tag, value)`.
fn handmade_cert(subject: &[(&[u8], u8, &[u8])]) -> Vec<u8> {
    let rdns: Vec<u8> = subject
        .iter()
        .flat_map(|(oid, tag, value)| {
            let atv = [tlv(0x06, oid), tlv(*tag, value)].concat();
            tlv(0x31, &tlv(0x30, &atv))
        })
        .collect();
    let alg = tlv(
        0x30,
        &tlv(0x06, &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02]),
    );
    let tbs = [
        tlv(0xa0, &tlv(0x02, &[2])),
        tlv(0x02, &[1]),
        alg.clone(),
        tlv(0x30, &[]),
        tlv(0x30, &[]),
        tlv(0x30, &rdns),
    ]
    .concat();
    tlv(0x30, &[tlv(0x30, &tbs), alg, tlv(0x03, &[0])].concat())
}

fn user(status: &TokenReviewStatus) -> &UserInfo {
    assert!(status.authenticated, "{status:?}");
    status.user.as_ref().unwrap()
}

#[test]
fn maps_common_name_organization_and_uid() {
    testing::reset();
    let der = rcgen_cert(vec![
        (DnType::OrganizationName, "devs".into()),
        (DnType::CommonName, "alice".into()),
        (uid_type(), DnValue::Utf8String("u-123".into())),
    ]);
    let status = X509::authenticate(&review(&der)).unwrap();
    let user = user(&status);
    assert_eq!(user.username, "alice");
    assert_eq!(user.groups, ["devs"]);
    assert_eq!(user.uid, "u-123");
    let id = &user.extra[CREDENTIAL_ID_KEY];
    let digest: String = Sha256::digest(&der)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(id, &vec![format!("X509SHA256={digest}")]);
    assert_eq!(id[0].len(), "X509SHA256=".len() + 64);
}

#[test]
fn reads_bmp_and_printable_strings() {
    testing::reset();
    let der = rcgen_cert(vec![
        (
            DnType::CommonName,
            DnValue::BmpString("bøb".try_into().unwrap()),
        ),
        (
            DnType::OrganizationName,
            DnValue::PrintableString("Acme Co".try_into().unwrap()),
        ),
    ]);
    let status = X509::authenticate(&review(&der)).unwrap();
    assert_eq!(user(&status).username, "bøb");
    assert_eq!(user(&status).groups, ["Acme Co"]);
}

#[test]
fn all_organizations_in_order_and_the_last_common_name() {
    testing::reset();
    let der = handmade_cert(&[
        (O, 0x0c, b"system:masters"),
        (CN, 0x13, b"first"),
        (O, 0x13, b"ops"),
        (CN, 0x0c, b"second"),
    ]);
    let status = X509::authenticate(&review(&der)).unwrap();
    assert_eq!(user(&status).username, "second");
    assert_eq!(user(&status).groups, ["system:masters", "ops"]);
    assert_eq!(user(&status).uid, "");
}

#[test]
fn no_certificate_or_no_common_name_is_unauthenticated_without_error() {
    testing::reset();
    let none: TokenReview = serde_json::from_value(json!({"spec": {"token": "abc"}})).unwrap();
    assert_eq!(
        X509::authenticate(&none).unwrap(),
        TokenReviewStatus::unauthenticated("")
    );
    for subject in [
        vec![(O, 0x0c, b"devs" as &[u8])],
        vec![(CN, 0x0c, b"" as &[u8])],
    ] {
        let status = X509::authenticate(&review(&handmade_cert(&subject))).unwrap();
        assert_eq!(status, TokenReviewStatus::unauthenticated(""));
    }
}

#[test]
fn several_or_empty_uids_are_errors() {
    testing::reset();
    let two = handmade_cert(&[(CN, 0x0c, b"a"), (UID, 0x0c, b"1"), (UID, 0x0c, b"2")]);
    let status = X509::authenticate(&review(&two)).unwrap();
    assert_eq!(
        status,
        TokenReviewStatus::unauthenticated("x509: expected 1 UID, but found multiple: [1 2]")
    );
    let empty = handmade_cert(&[(CN, 0x0c, b"a"), (UID, 0x0c, b"")]);
    let status = X509::authenticate(&review(&empty)).unwrap();
    assert_eq!(status.error, "x509: UID cannot be an empty string");
}

#[test]
fn uid_parsing_can_be_turned_off() {
    testing::reset();
    testing::set_config(json!({"parseUserUID": false}));
    let two = handmade_cert(&[(CN, 0x0c, b"a"), (UID, 0x0c, b"1"), (UID, 0x0c, b"2")]);
    let status = X509::authenticate(&review(&two)).unwrap();
    assert_eq!(user(&status).uid, "");
}

#[test]
fn malformed_certificates_and_values_are_unauthenticated_with_an_error() {
    testing::reset();
    let status = X509::authenticate(&review(b"garbage")).unwrap();
    assert!(!status.authenticated);
    assert!(status.error.starts_with("x509: "), "{}", status.error);
    let bad_value = handmade_cert(&[(CN, 0x02, &[5])]);
    let status = X509::authenticate(&review(&bad_value)).unwrap();
    assert_eq!(
        status.error,
        "x509: invalid RDNSequence: invalid attribute value: unsupported string type: 2"
    );
}

#[test]
fn full_token_review_round_trip() {
    testing::reset();
    let der = rcgen_cert(vec![(DnType::CommonName, "system:node:n1".into())]);
    let input = serde_json::to_string(&review(&der)).unwrap();
    let out: Value =
        serde_json::from_str(&capstan_plugin_sdk::run_authenticator::<X509>(&input).unwrap())
            .unwrap();
    assert_eq!(out["kind"], "TokenReview");
    assert_eq!(out["status"]["authenticated"], true);
    assert_eq!(out["status"]["user"]["username"], "system:node:n1");
    assert!(out["status"]["user"].get("groups").is_none());
}
