//! cosign's key files: the public key as PEM `PUBLIC KEY` (PKIX), the
//! private key as PEM `ENCRYPTED SIGSTORE PRIVATE KEY` (or the older
//! `ENCRYPTED COSIGN PRIVATE KEY`): a JSON document of go-securesystemslib's
//! `encrypted` package (scrypt N=32768 r=8 p=1 → a 32-byte key, NaCl
//! secretbox with a random 24-byte nonce) over the PKCS#8 DER of an ECDSA
//! P-256 key. Only ECDSA P-256 (cosign's default) is supported.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use crypto_secretbox::aead::{Aead, KeyInit};
use crypto_secretbox::XSalsa20Poly1305;
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_ASN1_SIGNING};
use serde::{Deserialize, Serialize};

pub const PUBLIC_KEY_PEM: &str = "PUBLIC KEY";
pub const SIGSTORE_PRIVATE_KEY_PEM: &str = "ENCRYPTED SIGSTORE PRIVATE KEY";
pub const COSIGN_PRIVATE_KEY_PEM: &str = "ENCRYPTED COSIGN PRIVATE KEY";

/// The DER prefix of a P-256 SubjectPublicKeyInfo (id-ecPublicKey,
/// prime256v1, a 66-byte BIT STRING); the 65-byte uncompressed point follows.
const P256_SPKI_PREFIX: [u8; 26] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
    0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];

/// scrypt's parameters as cosign writes them (log2 N = 15).
const SCRYPT_LOG_N: u8 = 15;
const SCRYPT_R: u32 = 8;
const SCRYPT_P: u32 = 1;
/// The most work a key file may ask of scrypt (N = 2^20, as securesystemslib's "high" profile).
const MAX_SCRYPT_LOG_N: u8 = 20;
/// A key file's bound.
pub const MAX_KEY_FILE_BYTES: usize = 64 << 10;

/// A public key: the uncompressed P-256 point.
#[derive(Clone, Debug, PartialEq)]
pub struct PublicKey(pub Vec<u8>);

impl PublicKey {
    /// From a PEM `PUBLIC KEY` (PKIX) of an ECDSA P-256 key.
    pub fn from_pem(text: &str) -> Result<PublicKey, String> {
        let (label, der) = pem_decode(text)?;
        if label != PUBLIC_KEY_PEM {
            return Err(format!("a PEM {label:?} block, not {PUBLIC_KEY_PEM:?}"));
        }
        match der.strip_prefix(&P256_SPKI_PREFIX[..]) {
            Some(point) if point.len() == 65 && point[0] == 4 => Ok(PublicKey(point.to_vec())),
            _ => Err(
                "not an ECDSA P-256 public key (the only kind cosign key pairs use here)".into(),
            ),
        }
    }

    pub fn to_pem(&self) -> String {
        let mut der = P256_SPKI_PREFIX.to_vec();
        der.extend_from_slice(&self.0);
        pem_encode(PUBLIC_KEY_PEM, &der)
    }

    /// Whether `signature` (ASN.1 DER ECDSA) signs `message` with SHA-256.
    pub fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        ring::signature::UnparsedPublicKey::new(&ring::signature::ECDSA_P256_SHA256_ASN1, &self.0)
            .verify(message, signature)
            .is_ok()
    }
}

/// A private key able to sign (ECDSA P-256, SHA-256, ASN.1 DER signatures as cosign's).
pub struct PrivateKey {
    pair: EcdsaKeyPair,
    pkcs8: Vec<u8>,
}

impl std::fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrivateKey").finish_non_exhaustive()
    }
}

impl PrivateKey {
    pub fn generate() -> Result<PrivateKey, String> {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &rng)
            .map_err(|_| "generating a P-256 key failed".to_string())?;
        PrivateKey::from_pkcs8(pkcs8.as_ref())
    }

    pub fn from_pkcs8(der: &[u8]) -> Result<PrivateKey, String> {
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, der, &SystemRandom::new())
                .map_err(|e| format!("not a PKCS#8 ECDSA P-256 private key: {e}"))?;
        Ok(PrivateKey {
            pair,
            pkcs8: der.to_vec(),
        })
    }

    pub fn public_key(&self) -> PublicKey {
        PublicKey(self.pair.public_key().as_ref().to_vec())
    }

    pub fn sign(&self, message: &[u8]) -> Result<Vec<u8>, String> {
        self.pair
            .sign(&SystemRandom::new(), message)
            .map(|s| s.as_ref().to_vec())
            .map_err(|_| "signing failed".to_string())
    }

    /// Decrypts a cosign private key file (either PEM label) with `password`.
    pub fn from_encrypted_pem(text: &str, password: &[u8]) -> Result<PrivateKey, String> {
        let (label, body) = pem_decode(text)?;
        if label != SIGSTORE_PRIVATE_KEY_PEM && label != COSIGN_PRIVATE_KEY_PEM {
            return Err(format!("unsupported PEM type {label:?}: expected {SIGSTORE_PRIVATE_KEY_PEM:?} or {COSIGN_PRIVATE_KEY_PEM:?}"));
        }
        let pkcs8 = decrypt(&body, password)?;
        PrivateKey::from_pkcs8(&pkcs8)
    }

    /// The key as cosign writes it: PEM `ENCRYPTED SIGSTORE PRIVATE KEY`.
    pub fn to_encrypted_pem(&self, password: &[u8]) -> Result<String, String> {
        Ok(pem_encode(
            SIGSTORE_PRIVATE_KEY_PEM,
            &encrypt(&self.pkcs8, password)?,
        ))
    }
}

/// go-securesystemslib's `encrypted` document.
#[derive(Serialize, Deserialize)]
struct Sealed {
    kdf: Kdf,
    cipher: Cipher,
    #[serde(with = "b64")]
    ciphertext: Vec<u8>,
}

#[derive(Serialize, Deserialize)]
struct Kdf {
    name: String,
    params: ScryptParams,
    #[serde(with = "b64")]
    salt: Vec<u8>,
}

#[derive(Serialize, Deserialize)]
struct ScryptParams {
    #[serde(rename = "N")]
    n: u64,
    r: u32,
    p: u32,
}

#[derive(Serialize, Deserialize)]
struct Cipher {
    name: String,
    #[serde(with = "b64")]
    nonce: Vec<u8>,
}

mod b64 {
    use super::{Engine, B64};
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&B64.encode(bytes))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        B64.decode(text).map_err(serde::de::Error::custom)
    }
}

fn derive(password: &[u8], salt: &[u8], log_n: u8, r: u32, p: u32) -> Result<[u8; 32], String> {
    let params = scrypt::Params::new(log_n, r, p).map_err(|e| format!("scrypt parameters: {e}"))?;
    let mut key = [0u8; 32];
    scrypt::scrypt(password, salt, &params, &mut key).map_err(|e| format!("scrypt: {e}"))?;
    Ok(key)
}

fn decrypt(sealed: &[u8], password: &[u8]) -> Result<Vec<u8>, String> {
    let sealed: Sealed =
        serde_json::from_slice(sealed).map_err(|e| format!("not an encrypted key: {e}"))?;
    if sealed.kdf.name != "scrypt" || sealed.cipher.name != "nacl/secretbox" {
        return Err(format!(
            "unsupported encryption {}/{} (expected scrypt/nacl/secretbox)",
            sealed.kdf.name, sealed.cipher.name
        ));
    }
    let ScryptParams { n, r, p } = sealed.kdf.params;
    if !n.is_power_of_two()
        || n < 2
        || n.trailing_zeros() > u32::from(MAX_SCRYPT_LOG_N)
        || r > 32
        || p > 16
    {
        return Err(format!("scrypt parameters N={n} r={r} p={p} out of bounds"));
    }
    let key = derive(password, &sealed.kdf.salt, n.trailing_zeros() as u8, r, p)?;
    let nonce: [u8; 24] = sealed
        .cipher
        .nonce
        .as_slice()
        .try_into()
        .map_err(|_| "the nonce is not 24 bytes".to_string())?;
    XSalsa20Poly1305::new(&key.into())
        .decrypt(&nonce.into(), sealed.ciphertext.as_slice())
        .map_err(|_| "decryption failed: wrong password (COSIGN_PASSWORD) or a corrupt key".into())
}

fn encrypt(plain: &[u8], password: &[u8]) -> Result<Vec<u8>, String> {
    let rng = SystemRandom::new();
    let (mut salt, mut nonce) = ([0u8; 32], [0u8; 24]);
    rng.fill(&mut salt)
        .map_err(|_| "no randomness".to_string())?;
    rng.fill(&mut nonce)
        .map_err(|_| "no randomness".to_string())?;
    let key = derive(password, &salt, SCRYPT_LOG_N, SCRYPT_R, SCRYPT_P)?;
    let ciphertext = XSalsa20Poly1305::new(&key.into())
        .encrypt(&nonce.into(), plain)
        .map_err(|_| "encryption failed".to_string())?;
    let sealed = Sealed {
        kdf: Kdf {
            name: "scrypt".into(),
            params: ScryptParams {
                n: 1 << SCRYPT_LOG_N,
                r: SCRYPT_R,
                p: SCRYPT_P,
            },
            salt: salt.to_vec(),
        },
        cipher: Cipher {
            name: "nacl/secretbox".into(),
            nonce: nonce.to_vec(),
        },
        ciphertext,
    };
    serde_json::to_vec(&sealed).map_err(|e| e.to_string())
}

/// The label and bytes of the first PEM block of `text`.
pub fn pem_decode(text: &str) -> Result<(String, Vec<u8>), String> {
    if text.len() > MAX_KEY_FILE_BYTES {
        return Err(format!("more than {MAX_KEY_FILE_BYTES} bytes"));
    }
    let start = text.find("-----BEGIN ").ok_or("no PEM block")?;
    let rest = &text[start + 11..];
    let label_end = rest.find("-----").ok_or("a malformed PEM header")?;
    let label = &rest[..label_end];
    let body = &rest[label_end + 5..];
    let end = body
        .find(&format!("-----END {label}-----"))
        .ok_or_else(|| format!("no END line for the PEM {label:?} block"))?;
    let b64: String = body[..end].split_whitespace().collect();
    let der = B64
        .decode(b64)
        .map_err(|e| format!("the PEM {label:?} block is not base64: {e}"))?;
    Ok((label.to_string(), der))
}

pub fn pem_encode(label: &str, der: &[u8]) -> String {
    let b64 = B64.encode(der);
    let mut text = format!("-----BEGIN {label}-----\n");
    for line in b64.as_bytes().chunks(64) {
        text.push_str(std::str::from_utf8(line).unwrap_or_default());
        text.push('\n');
    }
    text + &format!("-----END {label}-----\n")
}
