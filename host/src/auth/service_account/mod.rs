//! The host side of service account tokens: the server's ES256 signing key
//! ([`SigningKey`]) and the TokenRequest subresource ([`token_request`]).
//! The `service-account-token` authenticator plugin verifies what this signs;
//! give it [`SigningKey::public_key_sec1_base64`] in its `publicKeys`.

pub mod token_request;

use std::fs;
use std::io::{ErrorKind, Write};
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use base64::Engine;
use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use serde_json::{json, Value};

/// DER prefix of a P-256 SubjectPublicKeyInfo, before the 65-byte point.
const SPKI_P256_PREFIX: [u8; 26] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
    0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];

/// The `iss` of this server's tokens and its default audience (kube's
/// conventional `--service-account-issuer`).
pub const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

/// What a server needs to answer TokenRequests.
pub struct TokenIssuer {
    pub key: SigningKey,
    pub settings: token_request::TokenSettings,
}

impl TokenIssuer {
    /// The issuer with the key of a data directory (created on first start).
    pub fn load_or_create(path: &Path) -> Result<Self> {
        Ok(TokenIssuer {
            key: SigningKey::load_or_create(path)?,
            settings: token_request::TokenSettings::new(ISSUER, vec![ISSUER.to_string()]),
        })
    }

    /// The configuration the `service-account-token` plugin verifies with.
    pub fn plugin_config(&self) -> Value {
        json!({
            "issuer": self.settings.issuer,
            "publicKeys": [self.key.public_key_sec1_base64()],
            "audiences": self.settings.audiences,
        })
    }
}

/// The server's token signing key: ECDSA P-256, JWS algorithm ES256.
pub struct SigningKey {
    pair: EcdsaKeyPair,
    kid: String,
    rng: SystemRandom,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// Reads the PEM PKCS#8 key at `path`, or creates one there (mode 0600)
    /// when the file does not exist.
    pub fn load_or_create(path: &Path) -> Result<Self> {
        let context = || format!("service account signing key {}", path.display());
        match fs::read_to_string(path) {
            Ok(pem) => Self::from_pem(&pem).with_context(context),
            Err(e) if e.kind() == ErrorKind::NotFound => {
                let pem = Self::generate_pem()?;
                write_private(path, &pem).with_context(context)?;
                // Another process may have won the race: use what is on disk.
                Self::from_pem(&fs::read_to_string(path).with_context(context)?)
                    .with_context(context)
            }
            Err(e) => Err(e).with_context(context),
        }
    }

    /// A new key as PEM PKCS#8.
    pub fn generate_pem() -> Result<String> {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)
            .map_err(|e| anyhow!("cannot generate a P-256 key: {e}"))?;
        Ok(key.serialize_pem())
    }

    /// The key in a PEM PKCS#8 document, which must hold a P-256 key.
    pub fn from_pem(pem: &str) -> Result<Self> {
        let key =
            rcgen::KeyPair::from_pem(pem).map_err(|e| anyhow!("not a PEM PKCS#8 key: {e}"))?;
        if !key.is_compatible(&rcgen::PKCS_ECDSA_P256_SHA256) {
            bail!("not an ECDSA P-256 key");
        }
        let rng = SystemRandom::new();
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &key.serialize_der(), &rng)
                .map_err(|e| anyhow!("not a usable P-256 key: {e}"))?;
        let kid = key_id(pair.public_key().as_ref());
        Ok(SigningKey { pair, kid, rng })
    }

    /// The public key as base64 of its uncompressed SEC1 point (65 bytes):
    /// an entry of the authenticator plugin's `publicKeys`.
    pub fn public_key_sec1_base64(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(self.pair.public_key().as_ref())
    }

    /// kube's key ID: unpadded base64url of the SHA-256 of the public key's
    /// PKIX DER (pkg/serviceaccount/jwt.go `keyIDFromPublicKey`).
    pub fn key_id(&self) -> &str {
        &self.kid
    }

    /// The ES256 JWS (compact form) of `claims`, with header
    /// `{"alg":"ES256","kid":<key ID>,"typ":"JWT"}`.
    pub fn mint(&self, claims: &Value) -> Result<String> {
        let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        let header = json!({"alg": "ES256", "kid": self.kid, "typ": "JWT"});
        let input = format!(
            "{}.{}",
            b64(&serde_json::to_vec(&header)?),
            b64(&serde_json::to_vec(claims)?)
        );
        let signature = self
            .pair
            .sign(&self.rng, input.as_bytes())
            .map_err(|_| anyhow!("signing the token failed"))?;
        Ok(format!("{input}.{}", b64(signature.as_ref())))
    }
}

/// The key ID of an uncompressed P-256 point.
pub fn key_id(point: &[u8]) -> String {
    let mut spki = SPKI_P256_PREFIX.to_vec();
    spki.extend_from_slice(point);
    let digest = ring::digest::digest(&ring::digest::SHA256, &spki);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.as_ref())
}

/// Writes `contents` to a new file at `path` readable by the owner only,
/// atomically: a temporary file, then a hard link that fails if `path` exists.
fn write_private(path: &Path, contents: &str) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options.open(&tmp).and_then(|mut file| {
        file.write_all(contents.as_bytes())?;
        file.sync_all()
    });
    let linked = written.and_then(|()| fs::hard_link(&tmp, path));
    let _ = fs::remove_file(&tmp);
    match linked {
        Err(e) if e.kind() != ErrorKind::AlreadyExists => Err(e.into()),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(part: &str) -> Vec<u8> {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(part)
            .unwrap()
    }

    #[test]
    fn creates_a_private_key_file_once_and_reloads_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys/sa.key");
        let first = SigningKey::load_or_create(&path).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("-----BEGIN PRIVATE KEY-----"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let again = SigningKey::load_or_create(&path).unwrap();
        assert_eq!(
            first.public_key_sec1_base64(),
            again.public_key_sec1_base64()
        );
        assert_eq!(first.key_id(), again.key_id());
        assert_eq!(
            fs::read_dir(path.parent().unwrap()).unwrap().count(),
            1,
            "no temporary file left"
        );
    }

    #[test]
    fn rejects_files_that_are_not_p256_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.key");
        fs::write(&path, "not a key").unwrap();
        let err = format!("{:#}", SigningKey::load_or_create(&path).unwrap_err());
        assert!(err.contains("not a PEM PKCS#8 key"), "{err}");
        let ed25519 = rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519)
            .unwrap()
            .serialize_pem();
        assert!(SigningKey::from_pem(&ed25519)
            .unwrap_err()
            .to_string()
            .contains("not an ECDSA P-256 key"));
    }

    #[test]
    fn public_key_and_key_id_have_kubes_shapes() {
        let key = SigningKey::from_pem(&SigningKey::generate_pem().unwrap()).unwrap();
        let point = base64::engine::general_purpose::STANDARD
            .decode(key.public_key_sec1_base64())
            .unwrap();
        assert_eq!(point.len(), 65);
        assert_eq!(point[0], 4);
        assert_eq!(key.key_id().len(), 43);
        assert_eq!(key.key_id(), key_id(&point));
    }

    #[test]
    fn key_id_matches_a_known_spki_digest() {
        // The P-256 generator point as a public key; its SPKI DER's SHA-256,
        // unpadded base64url (prefix checked against an openssl-made SPKI; digest by Python hashlib).
        let gx = "6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296";
        let gy = "4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5";
        let hex = format!("04{gx}{gy}");
        let point: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        assert_eq!(key_id(&point), EXPECTED_GENERATOR_KID);
    }

    const EXPECTED_GENERATOR_KID: &str = "XNJS-wzokyQ2-vjM0QQJgbie5K1rn-niorfnGqyyfNM";

    #[test]
    fn mints_a_verifiable_es256_jws() {
        let key = SigningKey::from_pem(&SigningKey::generate_pem().unwrap()).unwrap();
        let token = key.mint(&json!({"sub": "x"})).unwrap();
        let parts: Vec<&str> = token.split('.').collect();
        assert_eq!(parts.len(), 3);
        let header: Value = serde_json::from_slice(&decode(parts[0])).unwrap();
        assert_eq!(
            header,
            json!({"alg": "ES256", "kid": key.key_id(), "typ": "JWT"})
        );
        assert_eq!(decode(parts[1]), br#"{"sub":"x"}"#);
        let point = base64::engine::general_purpose::STANDARD
            .decode(key.public_key_sec1_base64())
            .unwrap();
        let public = ring::signature::UnparsedPublicKey::new(
            &ring::signature::ECDSA_P256_SHA256_FIXED,
            point,
        );
        let input = format!("{}.{}", parts[0], parts[1]);
        public.verify(input.as_bytes(), &decode(parts[2])).unwrap();
    }
}
