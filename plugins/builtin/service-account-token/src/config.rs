//! The plugin's configuration:
//! `{"issuer": "https://...", "publicKeys": ["<base64 SEC1 P-256 point>"], "audiences": [...]}`.
//! `audiences` are the server's own (kube's `--api-audiences`), used when a
//! TokenReview names none and for tokens without `aud`; absent, they default
//! to `[issuer]` as in kube. Parsed once and cached while the text is unchanged.

use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine;
use capstan_plugin_sdk::host;
use p256::ecdsa::VerifyingKey;
use serde::Deserialize;
use sha2::{Digest, Sha256};

/// The configuration as written.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawConfig {
    issuer: String,
    #[serde(default)]
    public_keys: Vec<String>,
    #[serde(default)]
    audiences: Option<Vec<String>>,
}

/// The configuration ready to use.
#[derive(Debug)]
pub struct Config {
    pub issuer: String,
    pub keys: Vec<PublicKey>,
    pub audiences: Vec<String>,
}

/// A verification key and its kube key ID.
#[derive(Debug)]
pub struct PublicKey {
    pub kid: String,
    pub key: VerifyingKey,
}

/// DER prefix of a P-256 SubjectPublicKeyInfo, before the 65-byte point.
const SPKI_P256_PREFIX: [u8; 26] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
    0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];

static CACHE: Mutex<Option<(RawConfig, Arc<Config>)>> = Mutex::new(None);

/// The current configuration (parsed again only when it changed).
pub fn current() -> Result<Arc<Config>, String> {
    let raw: RawConfig = host::config()?;
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((cached, config)) = cache.as_ref() {
        if *cached == raw {
            return Ok(Arc::clone(config));
        }
    }
    let config = Arc::new(Config::from_raw(raw.clone())?);
    *cache = Some((raw, Arc::clone(&config)));
    Ok(config)
}

impl Config {
    fn from_raw(raw: RawConfig) -> Result<Self, String> {
        if raw.issuer.is_empty() {
            return Err("invalid plugin configuration: issuer must not be empty".into());
        }
        let keys = raw
            .public_keys
            .iter()
            .enumerate()
            .map(|(i, text)| {
                PublicKey::from_base64(text)
                    .map_err(|e| format!("invalid plugin configuration: publicKeys[{i}]: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let audiences = raw.audiences.unwrap_or_else(|| vec![raw.issuer.clone()]);
        Ok(Config {
            issuer: raw.issuer,
            keys,
            audiences,
        })
    }

    /// The keys to try for a token's `kid` (all of them when it has none).
    pub fn keys_for(&self, kid: Option<&str>) -> Vec<&PublicKey> {
        match kid.filter(|k| !k.is_empty()) {
            Some(kid) => self.keys.iter().filter(|k| k.kid == kid).collect(),
            None => self.keys.iter().collect(),
        }
    }
}

impl PublicKey {
    /// A key from the base64 of its uncompressed SEC1 point (65 bytes).
    pub fn from_base64(text: &str) -> Result<Self, String> {
        let point = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|e| format!("not base64: {e}"))?;
        if point.len() != 65 || point[0] != 4 {
            return Err("not an uncompressed SEC1 P-256 point (65 bytes)".into());
        }
        let key = VerifyingKey::from_sec1_bytes(&point).map_err(|_| "not a P-256 point")?;
        Ok(PublicKey {
            kid: key_id(&point),
            key,
        })
    }
}

/// kube's `keyIDFromPublicKey`: unpadded base64url of the SHA-256 of the
/// key's PKIX (SubjectPublicKeyInfo) DER.
pub fn key_id(point: &[u8]) -> String {
    let digest = Sha256::new()
        .chain_update(SPKI_P256_PREFIX)
        .chain_update(point)
        .finalize();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::{json, testing};

    const POINT: &str =
        "BGsX0fLhLEJH+Lzm5WOkQPJ3A32BLeszoPShOUXYmMKWT+NC4v4af5uO5+tKfA+eFivOM1drMV7Oy7ZAaDe/UfU=";

    #[test]
    fn reads_keys_and_defaults_audiences_to_the_issuer() {
        testing::reset();
        testing::set_config(json!({"issuer": "https://k", "publicKeys": [POINT]}));
        let config = current().unwrap();
        assert_eq!(config.audiences, ["https://k"]);
        assert_eq!(config.keys.len(), 1);
        assert_eq!(config.keys[0].kid.len(), 43);
        assert_eq!(config.keys_for(None).len(), 1);
        assert_eq!(config.keys_for(Some("")).len(), 1);
        assert_eq!(config.keys_for(Some(&config.keys[0].kid)).len(), 1);
        assert!(config.keys_for(Some("other")).is_empty());
    }

    #[test]
    fn explicit_audiences_win_even_when_empty() {
        testing::reset();
        testing::set_config(json!({"issuer": "https://k", "audiences": []}));
        assert!(current().unwrap().audiences.is_empty());
    }

    #[test]
    fn rejects_bad_keys_and_missing_issuer() {
        testing::reset();
        testing::set_config(json!({"issuer": "https://k", "publicKeys": ["!!"]}));
        assert!(current().unwrap_err().contains("publicKeys[0]: not base64"));
        testing::set_config(json!({"issuer": "https://k", "publicKeys": ["AAAA"]}));
        assert!(current().unwrap_err().contains("65 bytes"));
        let mut bad = [0u8; 65];
        bad[0] = 4;
        let bad = base64::engine::general_purpose::STANDARD.encode(bad);
        testing::set_config(json!({"issuer": "https://k", "publicKeys": [bad]}));
        assert!(current().unwrap_err().contains("not a P-256 point"));
        testing::set_config(json!({"issuer": ""}));
        assert!(current().unwrap_err().contains("issuer must not be empty"));
        testing::set_config(json!({"publicKeys": []}));
        assert!(current().unwrap_err().contains("missing field `issuer`"));
    }
}
