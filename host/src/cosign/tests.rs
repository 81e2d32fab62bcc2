//! Compatibility with artefacts cosign made (from sigstore/cosign's and
//! sigstore-rs's test data), and the refusals.

use super::simple_signing::{self, Rejection, Signed};
use super::*;

/// An ECDSA P-256 key cosign encrypted with the password "hello"
/// (sigstore/cosign pkg/cosign/keys_test.go, `pemsigstorekey`).
const COSIGN_ENCRYPTED_KEY: &str = "-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----
eyJrZGYiOnsibmFtZSI6InNjcnlwdCIsInBhcmFtcyI6eyJOIjozMjc2OCwiciI6
OCwicCI6MX0sInNhbHQiOiI3T3VGd2VsbWZZNXVId2NoaURSc210anNwZ2ZlZjFG
Mk5lOGFDTjVLYVpZPSJ9LCJjaXBoZXIiOnsibmFtZSI6Im5hY2wvc2VjcmV0Ym94
Iiwibm9uY2UiOiJQNHk4OGhCb3ZTa09MbXN0bFVBaGJwdDJ0K2xTNUxQSCJ9LCJj
aXBoZXJ0ZXh0IjoiMnB1QzdyZldJOWh3bnJlQ2s4aUZDRlVwQlRrSzRJNlIvbFBF
cnBDekpXUGpJWXl4eGVIL1A2VW52cFJHdVhla1NNb3JMdGhLamdoQ1JlNy82NDVH
QWtoVm1LRC92eEF0S2EvbE1abENSQ3FlekJGUFd1dzNpeFRtZ2xhb2J1ZFVSbUVs
bmNGOGlZbzBTMVl6Y1ZOMVFwY2J2c0dNcUlYRzVlbmdteGp5dCtBcXlyZTF0Q0Y0
V01tU1BlaEljNlBqd2h1Q2xHaVpJUWRvTGc9PSJ9
-----END ENCRYPTED SIGSTORE PRIVATE KEY-----
";

/// An older `ENCRYPTED COSIGN PRIVATE KEY` (scrypt N=65536, password
/// "hello") whose plaintext is a SEC1 EC key, not PKCS#8: cosign decrypts it
/// and then refuses it (sigstore/cosign keys_test.go, `pemcosigneckey`).
const COSIGN_LABELLED_SEC1_KEY: &str = "-----BEGIN ENCRYPTED COSIGN PRIVATE KEY-----
eyJrZGYiOnsibmFtZSI6InNjcnlwdCIsInBhcmFtcyI6eyJOIjo2NTUzNiwiciI6
OCwicCI6MX0sInNhbHQiOiJHK3F5WTYrNzhNS0JzMXNGTGs1ajYwcS9kS3Z1czBW
VkhlSHZybC9POTF3PSJ9LCJjaXBoZXIiOnsibmFtZSI6Im5hY2wvc2VjcmV0Ym94
Iiwibm9uY2UiOiJRc2JGdG13WDRDK2ttV3ZCcVRaMEFGOUFYdk1jRmg1SCJ9LCJj
aXBoZXJ0ZXh0IjoiREM5T28zeldiYVQzSXYwdFVnWEdycjUxYW1samwwNlQ5MTNP
VkxPbWpuMWhnK2o2WXRUbWg3SGhZSlY1N2J5eGE0Q281bE9YYmRqbTJ3aklubEd1
Um5aZCt5OExnekpSNzFSeEhKVzgrWmRlcFJmYWJMTjdHbDgrSFZEcERVQ3NxQnRh
VngyblpGbFEwWUl1anZwbFphblNGaUVvdERLVGkxZ3VhUXIwUHNzYU01NXZxbTRY
WS9rPSJ9
-----END ENCRYPTED COSIGN PRIVATE KEY-----
";

/// A signature cosign made with a key pair (sigstore-rs's
/// `build_correct_signature_layer_without_bundle`): key, payload, signature.
const COSIGN_PUBLIC_KEY: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAENptdY/l3nB0yqkXLBWkZWQwo6+cu
OSWS1X9vPavpiQOoTTGC0xX57OojUadxF1cdQmrsiReWg2Wn4FneJfa8xw==
-----END PUBLIC KEY-----";
const COSIGN_DIGEST: &str =
    "sha256:f3cfc9d0dbf931d3db4685ec659b7ac68e2a578219da4aae65427886e649b06b";
const COSIGN_PAYLOAD: &str = r#"{"critical":{"identity":{"docker-reference":"registry-testing.svc.lan/busybox"},"image":{"docker-manifest-digest":"sha256:f3cfc9d0dbf931d3db4685ec659b7ac68e2a578219da4aae65427886e649b06b"},"type":"cosign container image signature"},"optional":null}"#;
const COSIGN_SIGNATURE: &str = "MEUCIQD6q/COgzOyW0YH1Dk+CCYSt4uAhm3FDHUwvPI55zwnlwIgE0ZK58ZOWpZw8YVmBapJhBqCfdPekIknimuO0xH8Jh8=";

fn cosign_signed() -> Signed {
    Signed {
        payload: COSIGN_PAYLOAD.as_bytes().to_vec(),
        signature: COSIGN_SIGNATURE.into(),
    }
}

#[test]
fn a_key_cosign_encrypted_decrypts_and_signs() {
    let key = PrivateKey::from_encrypted_pem(COSIGN_ENCRYPTED_KEY, b"hello").unwrap();
    let signed = simple_signing::sign(&key, "example.test/p", COSIGN_DIGEST).unwrap();
    let (index, _) = simple_signing::verify(&[signed], COSIGN_DIGEST, &[key.public_key()]).unwrap();
    assert_eq!(index, 0);
    let wrong = PrivateKey::from_encrypted_pem(COSIGN_ENCRYPTED_KEY, b"wrong").unwrap_err();
    assert!(wrong.contains("wrong password"), "{wrong}");
}

#[test]
fn the_older_cosign_label_decrypts_and_a_non_pkcs8_key_is_refused_as_cosign_does() {
    let e = PrivateKey::from_encrypted_pem(COSIGN_LABELLED_SEC1_KEY, b"hello").unwrap_err();
    assert!(e.starts_with("not a PKCS#8 ECDSA P-256 private key"), "{e}");
    let e = PrivateKey::from_encrypted_pem(COSIGN_LABELLED_SEC1_KEY, b"nope").unwrap_err();
    assert!(e.contains("wrong password"), "{e}");
}

#[test]
fn a_signature_cosign_made_verifies() {
    let key = PublicKey::from_pem(COSIGN_PUBLIC_KEY).unwrap();
    let (_, payload) = simple_signing::verify(&[cosign_signed()], COSIGN_DIGEST, &[key]).unwrap();
    assert_eq!(
        payload["critical"]["identity"]["docker-reference"],
        "registry-testing.svc.lan/busybox"
    );
    // Our payload for the same image is byte for byte cosign's.
    assert_eq!(
        simple_signing::payload("registry-testing.svc.lan/busybox", COSIGN_DIGEST),
        COSIGN_PAYLOAD.as_bytes()
    );
}

#[test]
fn a_tampered_payload_a_wrong_key_or_another_digest_is_refused() {
    let key = PublicKey::from_pem(COSIGN_PUBLIC_KEY).unwrap();
    let mut tampered = cosign_signed();
    tampered.payload = COSIGN_PAYLOAD.replace("busybox", "busyb0x").into_bytes();
    let e =
        simple_signing::verify(&[tampered], COSIGN_DIGEST, std::slice::from_ref(&key)).unwrap_err();
    assert!(
        e.to_string().contains("does not verify with any key"),
        "{e}"
    );
    let other = PrivateKey::generate().unwrap().public_key();
    let e = simple_signing::verify(&[cosign_signed()], COSIGN_DIGEST, &[other]).unwrap_err();
    assert!(matches!(e, Rejection::Invalid(_)), "{e}");
    let elsewhere = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    let e = simple_signing::verify(&[cosign_signed()], elsewhere, std::slice::from_ref(&key))
        .unwrap_err();
    assert!(
        e.to_string()
            .contains(&format!("is for {COSIGN_DIGEST}, not {elsewhere}")),
        "{e}"
    );
    assert_eq!(
        simple_signing::verify(&[], COSIGN_DIGEST, &[key]).unwrap_err(),
        Rejection::Unsigned
    );
}

#[test]
fn generated_keys_round_trip_through_cosigns_formats() {
    let key = PrivateKey::generate().unwrap();
    let pem = key.to_encrypted_pem(b"pw").unwrap();
    assert!(pem.starts_with("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\n"));
    let again = PrivateKey::from_encrypted_pem(&pem, b"pw").unwrap();
    assert_eq!(again.public_key(), key.public_key());
    let public = PublicKey::from_pem(&key.public_key().to_pem()).unwrap();
    assert_eq!(public, key.public_key());
}

#[test]
fn keys_other_than_p256_public_keys_are_refused() {
    let e = PublicKey::from_pem(COSIGN_ENCRYPTED_KEY).unwrap_err();
    assert!(e.contains("not \"PUBLIC KEY\""), "{e}");
    // An Ed25519 SubjectPublicKeyInfo.
    let ed = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAlBZ9GShvbQEtyyaGs+0Nd4aurH7ERq6UOIvXGb5/tXA=\n-----END PUBLIC KEY-----\n";
    assert!(PublicKey::from_pem(ed)
        .unwrap_err()
        .contains("not an ECDSA P-256"));
    assert!(PublicKey::from_pem("hello").is_err());
}

#[test]
fn the_signature_manifest_is_shaped_as_cosigns() {
    let (manifest, blobs) = simple_signing::manifest(&[cosign_signed()]);
    let doc: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
    assert_eq!(doc["layers"][0]["mediaType"], SIMPLE_SIGNING_MEDIA_TYPE);
    assert_eq!(
        doc["layers"][0]["annotations"][SIGNATURE_ANNOTATION],
        COSIGN_SIGNATURE
    );
    assert_eq!(blobs.len(), 2);
    let layers = simple_signing::layers(&manifest).unwrap();
    assert_eq!(
        layers[0].0,
        crate::cosign::digest(COSIGN_PAYLOAD.as_bytes())
    );
    assert_eq!(
        signature_tag(COSIGN_DIGEST),
        format!("sha256-{}.sig", &COSIGN_DIGEST[7..])
    );
}
