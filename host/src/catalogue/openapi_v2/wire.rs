//! A small protobuf writer (proto3 wire format: varints, 64-bit doubles,
//! length-delimited strings and messages), and, for tests, a reader of one
//! message's fields.

/// One message being written. Scalars equal to their proto3 default are
/// not written; nested messages always are (their presence matters).
#[derive(Default)]
pub(super) struct Msg {
    buf: Vec<u8>,
}

const VARINT: u32 = 0;
const FIXED64: u32 = 1;
const LEN: u32 = 2;

impl Msg {
    pub fn new() -> Msg {
        Msg::default()
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    fn key(&mut self, field: u32, wire: u32) {
        self.varint(u64::from(field << 3 | wire));
    }

    fn bytes(&mut self, field: u32, bytes: &[u8]) {
        self.key(field, LEN);
        self.varint(bytes.len() as u64);
        self.buf.extend_from_slice(bytes);
    }

    pub fn string(&mut self, field: u32, s: &str) {
        if !s.is_empty() {
            self.bytes(field, s.as_bytes());
        }
    }

    /// A repeated string: every element, empty ones included.
    pub fn strings<'a>(&mut self, field: u32, items: impl IntoIterator<Item = &'a str>) {
        for s in items {
            self.bytes(field, s.as_bytes());
        }
    }

    pub fn bool(&mut self, field: u32, b: bool) {
        if b {
            self.key(field, VARINT);
            self.varint(1);
        }
    }

    /// A bool that is written even when false (a `oneof` member).
    pub fn bool_present(&mut self, field: u32, b: bool) {
        self.key(field, VARINT);
        self.varint(u64::from(b));
    }

    pub fn int64(&mut self, field: u32, v: i64) {
        if v != 0 {
            self.key(field, VARINT);
            self.varint(v as u64);
        }
    }

    pub fn double(&mut self, field: u32, v: f64) {
        if v != 0.0 {
            self.key(field, FIXED64);
            self.buf.extend_from_slice(&v.to_le_bytes());
        }
    }

    pub fn message(&mut self, field: u32, m: Msg) {
        self.bytes(field, &m.buf);
    }
}

/// One decoded field (tests only).
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Field<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
}

#[cfg(test)]
impl<'a> Field<'a> {
    pub fn bytes(self) -> &'a [u8] {
        match self {
            Field::Bytes(b) => b,
            other => panic!("not length-delimited: {other:?}"),
        }
    }

    pub fn str(self) -> &'a str {
        std::str::from_utf8(self.bytes()).expect("UTF-8")
    }
}

#[cfg(test)]
fn read_varint(buf: &[u8], pos: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = buf[*pos];
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

/// Every field of one message, in order (tests only; panics on bad input).
#[cfg(test)]
pub(super) fn fields(buf: &[u8]) -> Vec<(u32, Field<'_>)> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < buf.len() {
        let key = read_varint(buf, &mut pos);
        let field = (key >> 3) as u32;
        let value = match key & 7 {
            0 => Field::Varint(read_varint(buf, &mut pos)),
            1 => {
                let mut b = [0u8; 8];
                b.copy_from_slice(&buf[pos..pos + 8]);
                pos += 8;
                Field::Fixed64(u64::from_le_bytes(b))
            }
            2 => {
                let len = read_varint(buf, &mut pos) as usize;
                let b = &buf[pos..pos + len];
                pos += len;
                Field::Bytes(b)
            }
            w => panic!("unexpected wire type {w}"),
        };
        out.push((field, value));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_what_protobuf_readers_expect() {
        let mut inner = Msg::new();
        inner.string(1, "a");
        let mut m = Msg::new();
        m.int64(3, 300);
        m.string(2, "");
        m.bool(4, false);
        m.bool(5, true);
        m.double(6, 1.5);
        m.message(7, inner);
        m.message(8, Msg::new());
        let bytes = m.into_bytes();
        // 300 is the varint ac 02, as in protobuf's encoding guide.
        assert_eq!(&bytes[..3], &[0x18, 0xac, 0x02]);
        let f = fields(&bytes);
        assert_eq!(f[0], (3, Field::Varint(300)));
        assert_eq!(f[1], (5, Field::Varint(1)));
        assert_eq!(f[2], (6, Field::Fixed64(1.5f64.to_bits())));
        assert_eq!(fields(f[3].1.bytes()), vec![(1, Field::Bytes(b"a"))]);
        assert_eq!(f[4], (8, Field::Bytes(&[])));
        assert_eq!(f.len(), 5);
    }
}
