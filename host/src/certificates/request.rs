//! The parts of a PKCS#10 certificate request (`spec.request` of a
//! CertificateSigningRequest) the API and its signer need: the subject's
//! common name and organizations, and the public key, read straight from the
//! DER (kube's parseCSR wording for what is not one).

use base64::Engine;

/// A parsed request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub common_name: String,
    pub organizations: Vec<String>,
    /// The SubjectPublicKeyInfo's algorithm.
    pub key: KeyKind,
    /// The subjectPublicKey bits.
    pub public_key: Vec<u8>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKind {
    EcdsaP256,
    EcdsaP384,
    Rsa,
    Ed25519,
}

const OID_CN: &[u8] = &[0x55, 0x04, 0x03];
const OID_O: &[u8] = &[0x55, 0x04, 0x0a];
const OID_EC: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const OID_P256: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
const OID_P384: &[u8] = &[0x2b, 0x81, 0x04, 0x00, 0x22];
const OID_RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
const OID_ED25519: &[u8] = &[0x2b, 0x65, 0x70];

/// One DER element: (tag, contents, the rest after it).
fn tlv(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (first as usize, rest)
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |acc, b| (acc << 8) | *b as usize);
        (len, &rest[n..])
    };
    if rest.len() < len {
        return None;
    }
    Some((tag, &rest[..len], &rest[len..]))
}

/// The elements of a constructed value's contents.
fn children(mut contents: &[u8]) -> Option<Vec<(u8, &[u8])>> {
    let mut out = Vec::new();
    while !contents.is_empty() {
        let (tag, value, rest) = tlv(contents)?;
        out.push((tag, value));
        contents = rest;
    }
    Some(out)
}

/// The DER inside a `CERTIFICATE REQUEST` PEM block.
fn pem_der(pem: &[u8]) -> Result<Vec<u8>, String> {
    let text = std::str::from_utf8(pem)
        .map_err(|_| "PEM block type must be CERTIFICATE REQUEST".to_string())?;
    let begin = "-----BEGIN CERTIFICATE REQUEST-----";
    let end = "-----END CERTIFICATE REQUEST-----";
    let start = text
        .find(begin)
        .ok_or("PEM block type must be CERTIFICATE REQUEST")?;
    let body = &text[start + begin.len()..];
    let stop = body
        .find(end)
        .ok_or("PEM block type must be CERTIFICATE REQUEST")?;
    let b64: String = body[..stop]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_err(|e| format!("asn1: structure error: {e}"))
}

fn subject(name: &[u8]) -> Option<(String, Vec<String>)> {
    let mut cn = String::new();
    let mut orgs = Vec::new();
    for (_, set) in children(name)? {
        for (_, attr) in children(set)? {
            let parts = children(attr)?;
            let (oid, value) = (parts.first()?.1, parts.get(1)?.1);
            let value = String::from_utf8_lossy(value).to_string();
            if oid == OID_CN {
                cn = value;
            } else if oid == OID_O {
                orgs.push(value);
            }
        }
    }
    Some((cn, orgs))
}

fn key_kind(algorithm: &[u8]) -> Option<KeyKind> {
    let parts = children(algorithm)?;
    let oid = parts.first()?.1;
    let param = parts.get(1).map(|p| p.1);
    Some(match (oid, param) {
        (OID_EC, Some(OID_P256)) => KeyKind::EcdsaP256,
        (OID_EC, Some(OID_P384)) => KeyKind::EcdsaP384,
        (OID_RSA, _) => KeyKind::Rsa,
        (OID_ED25519, _) => KeyKind::Ed25519,
        _ => return None,
    })
}

fn parse_der(der: &[u8]) -> Option<Result<Request, String>> {
    let (_, outer, _) = tlv(der)?;
    let (_, info, _) = tlv(outer)?;
    let fields = children(info)?;
    let (cn, orgs) = subject(fields.get(1)?.1)?;
    let spki = children(fields.get(2)?.1)?;
    let Some(key) = key_kind(spki.first()?.1) else {
        return Some(Err("unsupported public key algorithm".to_string()));
    };
    let bits = spki.get(1)?.1;
    Some(Ok(Request {
        common_name: cn,
        organizations: orgs,
        key,
        public_key: bits.get(1..)?.to_vec(),
    }))
}

/// Parses `spec.request` (the PEM bytes).
pub fn parse(pem: &[u8]) -> Result<Request, String> {
    let der = pem_der(pem)?;
    parse_der(&der)
        .unwrap_or_else(|| Err("asn1: structure error: malformed certificate request".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subject_and_key_are_read_from_a_request() {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "jane");
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, "dev");
        let pem = params.serialize_request(&key).unwrap().pem().unwrap();
        let req = parse(pem.as_bytes()).unwrap();
        assert_eq!(
            (req.common_name.as_str(), req.organizations.as_slice()),
            ("jane", &["dev".to_string()][..])
        );
        assert_eq!(req.key, KeyKind::EcdsaP256);
        assert_eq!(req.public_key, key.public_key_raw());
        assert_eq!(
            parse(b"nope").unwrap_err(),
            "PEM block type must be CERTIFICATE REQUEST"
        );
    }
}
