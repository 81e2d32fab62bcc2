//! The subject of an X.509 certificate as Go's crypto/x509 parses it
//! (parser.go `parseName` / `parseASN1String`): every attribute of every
//! RDN, in order, with its value decoded as one of the ASN.1 string types;
//! any other value type makes the name invalid, as in Go.

use crate::der::{self, Reader};

/// One attribute of the subject: its OID (dotted) and string value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribute {
    pub oid: String,
    pub value: String,
}

/// The subject attributes of a DER certificate, in the order they appear.
pub fn subject(certificate: &[u8]) -> Result<Vec<Attribute>, String> {
    let mut outer = Reader::new(certificate);
    let mut cert = Reader::new(outer.read(der::SEQUENCE)?);
    let mut tbs = Reader::new(cert.read(der::SEQUENCE)?);
    if tbs.peek_tag() == Some(der::CONTEXT_0) {
        tbs.read(der::CONTEXT_0)?; // version
    }
    tbs.read(der::INTEGER)?; // serialNumber
    tbs.read(der::SEQUENCE)?; // signature AlgorithmIdentifier
    tbs.read(der::SEQUENCE)?; // issuer
    tbs.read(der::SEQUENCE)?; // validity
    parse_name(tbs.read(der::SEQUENCE)?)
}

/// RDNSequence ::= SEQUENCE OF SET OF AttributeTypeAndValue (the SEQUENCE's content).
fn parse_name(content: &[u8]) -> Result<Vec<Attribute>, String> {
    let mut attributes = Vec::new();
    let mut rdns = Reader::new(content);
    while !rdns.is_empty() {
        let mut set = Reader::new(rdns.read(der::SET).map_err(|_| "invalid RDNSequence")?);
        while !set.is_empty() {
            attributes
                .push(parse_attribute(set.read(der::SEQUENCE).map_err(|_| {
                    "invalid RDNSequence: invalid attribute".to_string()
                })?)?);
        }
    }
    Ok(attributes)
}

/// AttributeTypeAndValue ::= SEQUENCE { type OID, value ANY }.
fn parse_attribute(content: &[u8]) -> Result<Attribute, String> {
    let mut atv = Reader::new(content);
    let oid = atv
        .read(der::OID)
        .and_then(der::oid_to_string)
        .map_err(|_| "invalid RDNSequence: invalid attribute type")?;
    let value = atv
        .read_any()
        .map_err(|_| "invalid RDNSequence: failed to read attribute value")?;
    let value = decode_string(value.tag, value.content)
        .map_err(|e| format!("invalid RDNSequence: invalid attribute value: {e}"))?;
    Ok(Attribute { oid, value })
}

/// The ASN.1 string types Go accepts in a name, validated as Go does.
fn decode_string(tag: u8, bytes: &[u8]) -> Result<String, String> {
    match tag {
        0x0c => String::from_utf8(bytes.to_vec()).map_err(|_| "invalid UTF-8 string".into()),
        0x12 => ascii_if(
            bytes,
            |b| b.is_ascii_digit() || b == b' ',
            "invalid NumericString",
        ),
        0x13 => ascii_if(bytes, is_printable, "invalid PrintableString"),
        0x14 => Ok(String::from_utf8_lossy(bytes).into_owned()), // T61String: raw bytes, as Go
        0x16 => ascii_if(bytes, |b| b.is_ascii(), "invalid IA5String"),
        0x1e => decode_bmp(bytes),
        other => Err(format!("unsupported string type: {other}")),
    }
}

/// The bytes as text when every byte passes `valid`.
fn ascii_if(bytes: &[u8], valid: impl Fn(u8) -> bool, error: &str) -> Result<String, String> {
    if bytes.iter().all(|b| valid(*b)) {
        Ok(bytes.iter().map(|b| char::from(*b)).collect())
    } else {
        Err(error.to_string())
    }
}

/// PrintableString's alphabet, plus `*` and `&` which Go tolerates.
fn is_printable(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b" '()+,-./:=?*&".contains(&b)
}

/// BMPString: UTF-16BE of even length; a trailing NUL is dropped (as Go does).
fn decode_bmp(bytes: &[u8]) -> Result<String, String> {
    if !bytes.len().is_multiple_of(2) {
        return Err("invalid BMPString".into());
    }
    let bytes = bytes.strip_suffix(&[0, 0]).unwrap_or(bytes);
    let units: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|pair| u16::from_be_bytes([pair[0], pair[1]]))
        .collect();
    Ok(String::from_utf16_lossy(&units))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_the_string_types_go_accepts() {
        assert_eq!(decode_string(0x0c, "ünï".as_bytes()).unwrap(), "ünï");
        assert_eq!(decode_string(0x12, b"12 34").unwrap(), "12 34");
        assert_eq!(decode_string(0x13, b"Acme, Inc.").unwrap(), "Acme, Inc.");
        assert_eq!(decode_string(0x16, b"a@b.c").unwrap(), "a@b.c");
        assert_eq!(
            decode_string(0x1e, &[0, b'h', 0, b'i', 0, 0]).unwrap(),
            "hi"
        );
        assert_eq!(decode_string(0x14, b"t61").unwrap(), "t61");
    }

    #[test]
    fn rejects_invalid_or_unsupported_values() {
        assert_eq!(
            decode_string(0x0c, &[0xff]).unwrap_err(),
            "invalid UTF-8 string"
        );
        assert_eq!(
            decode_string(0x12, b"1a").unwrap_err(),
            "invalid NumericString"
        );
        assert_eq!(
            decode_string(0x13, b"a@b").unwrap_err(),
            "invalid PrintableString"
        );
        assert_eq!(
            decode_string(0x16, &[0x80]).unwrap_err(),
            "invalid IA5String"
        );
        assert_eq!(decode_string(0x1e, &[0]).unwrap_err(), "invalid BMPString");
        assert_eq!(
            decode_string(0x02, &[1]).unwrap_err(),
            "unsupported string type: 2"
        );
    }

    #[test]
    fn malformed_certificates_are_errors() {
        assert!(subject(&[]).is_err());
        assert!(subject(&[0x30, 0x02, 0x30, 0x00]).is_err());
        assert!(subject(b"not a certificate at all").is_err());
    }
}
