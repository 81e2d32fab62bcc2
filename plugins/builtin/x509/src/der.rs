//! A minimal DER reader: just enough to walk from a certificate to its
//! subject Name. Every read is bounds-checked; malformed input is an error,
//! never a panic.

/// ASN.1 tags used while walking a certificate.
pub const SEQUENCE: u8 = 0x30;
pub const SET: u8 = 0x31;
pub const OID: u8 = 0x06;
pub const INTEGER: u8 = 0x02;
/// `[0] EXPLICIT` (the TBSCertificate version).
pub const CONTEXT_0: u8 = 0xa0;

/// One element: its tag and content bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Element<'a> {
    pub tag: u8,
    pub content: &'a [u8],
}

/// A cursor over a run of DER elements.
#[derive(Debug, Clone, Copy)]
pub struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(input: &'a [u8]) -> Self {
        Reader { rest: input }
    }

    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// The tag of the next element, without consuming it.
    pub fn peek_tag(&self) -> Option<u8> {
        self.rest.first().copied()
    }

    /// Reads the next element of any tag.
    pub fn read_any(&mut self) -> Result<Element<'a>, String> {
        let (&tag, after_tag) = self.rest.split_first().ok_or("truncated element")?;
        if tag & 0x1f == 0x1f {
            return Err("multi-byte tags are not supported".into());
        }
        let (len, after_len) = read_length(after_tag)?;
        if after_len.len() < len {
            return Err("element longer than its input".into());
        }
        let (content, rest) = after_len.split_at(len);
        self.rest = rest;
        Ok(Element { tag, content })
    }

    /// Reads the next element, which must have `tag`.
    pub fn read(&mut self, tag: u8) -> Result<&'a [u8], String> {
        let element = self.read_any()?;
        if element.tag != tag {
            return Err(format!(
                "expected tag 0x{tag:02x}, found 0x{:02x}",
                element.tag
            ));
        }
        Ok(element.content)
    }
}

/// A DER length (short form, or long form of up to 4 bytes); returns it and the rest.
fn read_length(input: &[u8]) -> Result<(usize, &[u8]), String> {
    let (&first, rest) = input.split_first().ok_or("truncated length")?;
    if first < 0x80 {
        return Ok((usize::from(first), rest));
    }
    let count = usize::from(first & 0x7f);
    if count == 0 || count > 4 || rest.len() < count {
        return Err("unsupported or truncated length".into());
    }
    let (bytes, rest) = rest.split_at(count);
    let len = bytes
        .iter()
        .fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
    Ok((len, rest))
}

/// Dotted text of an OBJECT IDENTIFIER's content ("2.5.4.3").
pub fn oid_to_string(content: &[u8]) -> Result<String, String> {
    let mut arcs: Vec<u64> = Vec::new();
    let mut value: u64 = 0;
    for (i, b) in content.iter().enumerate() {
        value = value
            .checked_mul(128)
            .and_then(|v| v.checked_add(u64::from(b & 0x7f)))
            .ok_or("object identifier arc too large")?;
        if b & 0x80 == 0 {
            if arcs.is_empty() {
                let first = (value / 40).min(2);
                arcs.extend([first, value - first * 40]);
            } else {
                arcs.push(value);
            }
            value = 0;
        } else if i + 1 == content.len() {
            return Err("truncated object identifier".into());
        }
    }
    if arcs.is_empty() {
        return Err("empty object identifier".into());
    }
    let parts: Vec<String> = arcs.iter().map(u64::to_string).collect();
    Ok(parts.join("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_short_and_long_lengths() {
        let mut long = vec![0x04, 0x81, 0x80];
        long.extend([7u8; 0x80]);
        long.extend([0x05, 0x00]);
        let mut r = Reader::new(&long);
        assert_eq!(r.read(0x04).unwrap().len(), 0x80);
        assert_eq!(r.peek_tag(), Some(0x05));
        assert_eq!(r.read(0x05).unwrap(), &[] as &[u8]);
        assert!(r.is_empty());
    }

    #[test]
    fn rejects_truncated_and_wrong_elements() {
        assert!(Reader::new(&[]).read_any().is_err());
        assert!(Reader::new(&[0x30]).read_any().is_err());
        assert!(Reader::new(&[0x30, 0x05, 0x00]).read_any().is_err());
        assert!(Reader::new(&[0x30, 0x80, 0x00, 0x00]).read_any().is_err());
        assert!(Reader::new(&[0x30, 0x85, 1, 1, 1, 1, 1])
            .read_any()
            .is_err());
        assert!(Reader::new(&[0x1f, 0x01, 0x00]).read_any().is_err());
        let err = Reader::new(&[0x31, 0x00]).read(SEQUENCE).unwrap_err();
        assert_eq!(err, "expected tag 0x30, found 0x31");
    }

    #[test]
    fn formats_object_identifiers() {
        assert_eq!(oid_to_string(&[0x55, 0x04, 0x03]).unwrap(), "2.5.4.3");
        let uid = [0x2b, 0x06, 0x01, 0x04, 0x01, 0x83, 0xc2, 0x53, 0x02];
        assert_eq!(oid_to_string(&uid).unwrap(), "1.3.6.1.4.1.57683.2");
        assert!(oid_to_string(&[0x2b, 0x86]).is_err());
        assert!(oid_to_string(&[]).is_err());
    }
}
