//! Fuzz harness (proptest, bounded like the host's `host/src/fuzz`): any
//! bytes as a client certificate give a user, none or an error, never a
//! panic; certificates made by rcgen are mutated byte by byte.

use super::user_of;
use proptest::prelude::*;
use proptest::test_runner::Config;

fn config() -> Config {
    let mut config = Config::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = 256;
    }
    config.failure_persistence = None;
    config
}

/// A certificate for `system:node:n` in group `ops`, with a UID.
fn certificate() -> Vec<u8> {
    use rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair};
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, "system:node:n");
    dn.push(DnType::OrganizationName, "ops");
    dn.push(
        DnType::CustomDnType(vec![1, 3, 6, 1, 4, 1, 57683, 2]),
        "uid-1",
    );
    params.distinguished_name = dn;
    let key = KeyPair::generate().expect("key");
    params
        .self_signed(&key)
        .expect("certificate")
        .der()
        .to_vec()
}

fn mutated(bytes: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    let len = bytes.len();
    proptest::collection::vec((0..len, any::<u8>(), any::<bool>()), 1..6).prop_map(move |edits| {
        let mut out = bytes.clone();
        for (at, byte, insert) in edits {
            let at = at.min(out.len().saturating_sub(1));
            if insert {
                out.insert(at, byte);
            } else if let Some(b) = out.get_mut(at) {
                *b = byte;
            }
        }
        out
    })
}

fn read(bytes: &[u8]) {
    for parse_uid in [false, true] {
        let _ = user_of(bytes, parse_uid);
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_bytes_as_a_certificate(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        read(&bytes);
    }

    #[test]
    fn mutated_certificates(bytes in mutated(certificate())) {
        read(&bytes);
    }

    #[test]
    fn truncated_certificates(cut in any::<prop::sample::Index>()) {
        let cert = certificate();
        read(&cert[..cut.index(cert.len())]);
    }
}

#[test]
fn the_seed_certificate_names_its_user() {
    let user = user_of(&certificate(), true).unwrap().unwrap();
    assert_eq!(user.username, "system:node:n");
    assert_eq!(user.groups, vec!["ops"]);
    assert_eq!(user.uid, "uid-1");
}
