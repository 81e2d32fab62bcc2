//! A minimal protobuf wire-format reader: varints, 64-bit, length-delimited
//! and 32-bit fields, plus the packed encoding of repeated scalars. It knows
//! nothing about message types; `convert.rs` gives the fields meaning.

/// One field's raw value as it appears on the wire.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WireValue<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
    Fixed32(u32),
}

impl WireValue<'_> {
    /// The wire type's name, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            WireValue::Varint(_) => "varint",
            WireValue::Fixed64(_) => "64-bit",
            WireValue::Bytes(_) => "length-delimited",
            WireValue::Fixed32(_) => "32-bit",
        }
    }
}

/// Reads varints and fields from a byte slice.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// A base-128 varint of at most ten bytes.
    pub fn varint(&mut self) -> Result<u64, String> {
        let mut value: u64 = 0;
        for shift in (0..70).step_by(7) {
            let Some(&byte) = self.buf.get(self.pos) else {
                return Err("truncated varint".to_string());
            };
            self.pos += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("varint longer than ten bytes".to_string())
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], String> {
        let end = self
            .pos
            .checked_add(len)
            .filter(|end| *end <= self.buf.len())
            .ok_or_else(|| format!("truncated field: {len} bytes announced, fewer left"))?;
        let out = &self.buf[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn fixed<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let bytes = self.take(N)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    /// The next field's number and value, or None at the end of the buffer.
    pub fn field(&mut self) -> Result<Option<(u32, WireValue<'a>)>, String> {
        if self.is_empty() {
            return Ok(None);
        }
        let key = self.varint()?;
        let tag =
            u32::try_from(key >> 3).map_err(|_| format!("field number {} too large", key >> 3))?;
        if tag == 0 {
            return Err("field number 0 is not allowed".to_string());
        }
        let value = match key & 7 {
            0 => WireValue::Varint(self.varint()?),
            1 => WireValue::Fixed64(u64::from_le_bytes(self.fixed::<8>()?)),
            2 => {
                let len =
                    usize::try_from(self.varint()?).map_err(|_| "length too large".to_string())?;
                WireValue::Bytes(self.take(len)?)
            }
            5 => WireValue::Fixed32(u32::from_le_bytes(self.fixed::<4>()?)),
            other => return Err(format!("unsupported wire type {other} for field {tag}")),
        };
        Ok(Some((tag, value)))
    }
}

/// Every field of one message, in wire order.
pub fn fields(buf: &[u8]) -> Result<Vec<(u32, WireValue<'_>)>, String> {
    let mut reader = Reader::new(buf);
    let mut out = Vec::new();
    while let Some(field) = reader.field()? {
        out.push(field);
    }
    Ok(out)
}

/// The varints packed into one length-delimited field.
pub fn packed_varints(buf: &[u8]) -> Result<Vec<u64>, String> {
    let mut reader = Reader::new(buf);
    let mut out = Vec::new();
    while !reader.is_empty() {
        out.push(reader.varint()?);
    }
    Ok(out)
}

/// The 64-bit values packed into one length-delimited field.
pub fn packed_fixed64(buf: &[u8]) -> Result<Vec<u64>, String> {
    if !buf.len().is_multiple_of(8) {
        return Err("packed 64-bit field has a partial value".to_string());
    }
    Ok(buf
        .chunks_exact(8)
        .map(|c| {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            u64::from_le_bytes(b)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_wire_type() {
        // field 1 varint 300, field 2 bytes "hi", field 3 fixed64 1, field 4 fixed32 2
        let buf = [
            0x08, 0xac, 0x02, 0x12, 0x02, b'h', b'i', 0x19, 1, 0, 0, 0, 0, 0, 0, 0, 0x25, 2, 0, 0,
            0,
        ];
        let got = fields(&buf).unwrap();
        assert_eq!(
            got,
            vec![
                (1, WireValue::Varint(300)),
                (2, WireValue::Bytes(b"hi")),
                (3, WireValue::Fixed64(1)),
                (4, WireValue::Fixed32(2)),
            ]
        );
    }

    #[test]
    fn negative_int32_is_a_ten_byte_varint() {
        let buf = [
            0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ];
        let got = fields(&buf).unwrap();
        assert_eq!(got, vec![(1, WireValue::Varint(u64::MAX))]);
        assert_eq!(u64::MAX as i64 as i32, -1);
    }

    #[test]
    fn truncated_input_is_an_error() {
        assert!(fields(&[0x08, 0x80])
            .unwrap_err()
            .contains("truncated varint"));
        assert!(fields(&[0x12, 0x05, b'a'])
            .unwrap_err()
            .contains("truncated field"));
        assert!(fields(&[0x19, 1, 2])
            .unwrap_err()
            .contains("truncated field"));
        assert!(fields(&[0x0b]).unwrap_err().contains("wire type 3"));
        assert!(fields(&[0x00, 0x01])
            .unwrap_err()
            .contains("field number 0"));
    }

    #[test]
    fn packed_values() {
        assert_eq!(packed_varints(&[1, 0xac, 0x02]).unwrap(), vec![1, 300]);
        assert!(packed_varints(&[0x80]).is_err());
        assert_eq!(packed_fixed64(&[1, 0, 0, 0, 0, 0, 0, 0]).unwrap(), vec![1]);
        assert!(packed_fixed64(&[1, 0]).is_err());
    }
}
