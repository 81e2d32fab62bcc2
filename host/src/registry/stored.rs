//! Stored values and their served JSON. The registry stores an object as
//! [`crate::apimachinery::kube_json::to_stored`] encodes it: kube's field order without
//! `metadata.resourceVersion`. Its served JSON (what a GET, a LIST item or
//! a watch event carries) is then those bytes with `"resourceVersion"`
//! put back after `name`, `generateName`, `namespace`, `selfLink` and
//! `uid`, where kube's order has it: two copies of slices, no decoding or
//! encoding, and nothing kept besides the stored value.
//!
//! A value not in that form (written by an older Capstan, whose values kept
//! the client's field order) is decoded and encoded once, and the result
//! kept with its key-value ([`crate::storage::KeyValue::served`]).

use bytes::Bytes;

use crate::storage::{KeyValue, Revision, ServedForm};

/// The metadata fields kube's order puts before `resourceVersion`.
const BEFORE_RESOURCE_VERSION: &[&[u8]] =
    &[b"name", b"generateName", b"namespace", b"selfLink", b"uid"];

/// A key-value's served JSON: the stored value with the revision spliced
/// in, or bytes kept with the key-value. Written out by [`Served::write_to`]
/// (into a list body or a watch line) without an intermediate copy.
pub struct Served {
    value: Bytes,
    /// Where the revision's field goes in `value`, and with which comma.
    splice: Option<Splice>,
}

/// Where `"resourceVersion":"<revision>"` goes in a stored value.
#[derive(Clone, Copy)]
struct Splice {
    at: usize,
    revision: Revision,
    /// The field is metadata's last (a comma before it unless it is its
    /// only one) or comes before another (a comma after it).
    comma: Comma,
}

#[derive(Clone, Copy, PartialEq)]
enum Comma {
    None,
    Before,
    After,
}

impl Comma {
    /// As kept in [`ServedForm::Spliced`].
    fn code(self) -> u8 {
        self as u8
    }

    fn from_code(code: u8) -> Self {
        match code {
            1 => Comma::Before,
            2 => Comma::After,
            _ => Comma::None,
        }
    }
}

const FIELD_HEAD: &[u8] = b"\"resourceVersion\":\"";

impl Splice {
    /// The field's length with its comma.
    fn len(&self) -> usize {
        let digits = self.revision.checked_ilog10().map_or(1, |d| d as usize + 1);
        let sign = usize::from(self.revision < 0);
        FIELD_HEAD.len() + sign + digits + 1 + usize::from(self.comma != Comma::None)
    }

    fn write_to(&self, out: &mut Vec<u8>) {
        if self.comma == Comma::Before {
            out.push(b',');
        }
        out.extend_from_slice(FIELD_HEAD);
        push_decimal(out, self.revision);
        out.push(b'"');
        if self.comma == Comma::After {
            out.push(b',');
        }
    }
}

impl Served {
    /// The served JSON's length in bytes.
    pub fn len(&self) -> usize {
        self.value.len() + self.splice.map_or(0, |s| s.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends the served JSON to `out`.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        let Some(splice) = self.splice else {
            return out.extend_from_slice(&self.value);
        };
        out.extend_from_slice(&self.value[..splice.at]);
        splice.write_to(out);
        out.extend_from_slice(&self.value[splice.at..]);
    }

    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len() + 1);
        self.write_to(&mut out);
        out
    }
}

/// A LIST item of a built-in kind: its served JSON without the leading
/// `kind` and `apiVersion` (kube encodes a typed list's items without
/// them), cut from the same bytes; watch events and single objects keep
/// them.
pub struct ListItem<'a>(pub &'a Served);

impl ListItem<'_> {
    /// How many bytes after the opening brace are `"kind":…,"apiVersion":…,`
    /// (0 when the value does not begin with both).
    fn type_meta_len(&self) -> usize {
        let b = &self.0.value;
        let after = expect(b, 0, b"{\"kind\":")
            .and_then(|at| skip_string(b, at))
            .and_then(|at| expect(b, at, b",\"apiVersion\":"))
            .and_then(|at| skip_string(b, at))
            .and_then(|at| expect(b, at, b","));
        after.map_or(0, |at| at - 1)
    }
}

impl crate::apimachinery::kube_json::Item for ListItem<'_> {
    fn byte_len(&self) -> usize {
        self.0.len() - self.type_meta_len()
    }

    fn write_to(&self, out: &mut Vec<u8>) {
        let skip = self.type_meta_len();
        if skip == 0 {
            return self.0.write_to(out);
        }
        let value = &self.0.value;
        out.push(b'{');
        match self.0.splice {
            Some(splice) if splice.at > skip => {
                out.extend_from_slice(&value[skip + 1..splice.at]);
                splice.write_to(out);
                out.extend_from_slice(&value[splice.at..]);
            }
            _ => out.extend_from_slice(&value[skip + 1..]),
        }
    }
}

impl crate::apimachinery::kube_json::Item for Served {
    fn byte_len(&self) -> usize {
        Served::len(self)
    }

    fn write_to(&self, out: &mut Vec<u8>) {
        Served::write_to(self, out)
    }
}

/// A key-value's served JSON: the stored value with the revision spliced
/// in, or, for a value not in the stored form, encoded by `encode` (the
/// decoded object in kube's order). Either way what was worked out (where
/// the splice goes, or the encoding) is kept for the next reader.
pub fn served_item<E>(
    kv: &KeyValue,
    encode: impl FnOnce() -> Result<Vec<u8>, E>,
) -> Result<Served, E> {
    let form = match kv.served.get() {
        Some(form) => form,
        None => match splice_point(&kv.value) {
            Some((at, comma)) => kv.served.keep(ServedForm::Spliced {
                at,
                how: comma.code(),
            }),
            None => kv.served.keep(ServedForm::Encoded(Bytes::from(encode()?))),
        },
    };
    Ok(match form {
        ServedForm::Encoded(value) => Served {
            value,
            splice: None,
        },
        ServedForm::Spliced { at, how } => Served {
            value: kv.value.clone(),
            splice: Some(Splice {
                at: at as usize,
                revision: kv.mod_revision,
                comma: Comma::from_code(how),
            }),
        },
    })
}

/// Whether `encoded` (an object just encoded for the store) is the object
/// `stored` holds: the same bytes, or, for a value an older Capstan wrote in
/// another field order, the same JSON (so that a write changing nothing
/// stays a no-op across an upgrade).
pub fn same_object(stored: &[u8], encoded: &[u8]) -> bool {
    if stored == encoded {
        return true;
    }
    if splice_point(stored).is_some() {
        return false;
    }
    let parse = |b: &[u8]| serde_json::from_slice::<serde_json::Value>(b).ok();
    crate::cpu::for_request(
        || matches!((parse(stored), parse(encoded)), (Some(a), Some(b)) if a == b),
    )
}

/// Where in `stored` the revision's field goes, and with which comma; `None`
/// when `stored` is not in the stored form (it must begin
/// `{"kind":…,"apiVersion":…,"metadata":{` and list the fields before
/// `resourceVersion` first, as strings).
fn splice_point(stored: &[u8]) -> Option<(u32, Comma)> {
    let (at, first) = insertion_point(stored)?;
    let comma = match (first, stored.get(at)) {
        (_, Some(b'"')) => Comma::After,
        (true, _) => Comma::None,
        (false, _) => Comma::Before,
    };
    Some((u32::try_from(at).ok()?, comma))
}

/// Appends `n` in decimal.
fn push_decimal(out: &mut Vec<u8>, n: Revision) {
    if n < 0 {
        out.push(b'-');
    }
    let mut digits = [0u8; 20];
    let mut rest = n.unsigned_abs();
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[start..]);
}

/// Where the field goes: the offset of the first metadata field that comes
/// after it (or of metadata's closing brace), and whether metadata had no
/// field before that point.
fn insertion_point(b: &[u8]) -> Option<(usize, bool)> {
    let mut at = expect(b, 0, b"{\"kind\":")?;
    at = skip_string(b, at)?;
    at = expect(b, at, b",\"apiVersion\":")?;
    at = skip_string(b, at)?;
    at = expect(b, at, b",\"metadata\":{")?;
    let mut first = true;
    loop {
        match b.get(at)? {
            b'}' => return Some((at, first)),
            b'"' => {}
            _ => return None,
        }
        let key_end = skip_string(b, at)?;
        let key = &b[at + 1..key_end - 1];
        if key == b"resourceVersion" || key.contains(&b'\\') {
            return None;
        }
        if !BEFORE_RESOURCE_VERSION.contains(&key) {
            return Some((at, first));
        }
        let value_end = skip_string(b, expect(b, key_end, b":")?)?;
        first = false;
        at = match b.get(value_end)? {
            b',' => value_end + 1,
            b'}' => value_end,
            _ => return None,
        };
    }
}

/// The offset after `literal`, which must be at `at`.
fn expect(b: &[u8], at: usize, literal: &[u8]) -> Option<usize> {
    b.get(at..at + literal.len())
        .filter(|s| *s == literal)
        .map(|_| at + literal.len())
}

/// The offset after the JSON string starting at `at`.
fn skip_string(b: &[u8], at: usize) -> Option<usize> {
    if b.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    while let Some(&c) = b.get(i) {
        match c {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apimachinery::kube_json;
    use serde_json::{json, Value};

    /// What the served JSON must be: the decoded object, resourceVersion
    /// set, encoded in kube's order.
    fn served_by_decoding(stored: &[u8], revision: Revision) -> Vec<u8> {
        let mut obj: Value = serde_json::from_slice(stored).unwrap();
        obj["metadata"]["resourceVersion"] = json!(revision.to_string());
        kube_json::to_item(&obj)
    }

    fn splice(stored: &[u8], revision: Revision) -> Option<Splice> {
        let (at, comma) = splice_point(stored)?;
        let at = at as usize;
        Some(Splice {
            at,
            revision,
            comma,
        })
    }

    fn with_resource_version(stored: &[u8], revision: Revision) -> Option<Vec<u8>> {
        let splice = splice(stored, revision)?;
        let value = Bytes::copy_from_slice(stored);
        Some(
            Served {
                value,
                splice: Some(splice),
            }
            .to_vec(),
        )
    }

    #[test]
    fn the_revision_goes_where_kubes_order_has_it() {
        let objects = [
            json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a", "namespace": "d", "uid": "u-1", "creationTimestamp": "t", "labels": {"x": "y"}}, "data": {"k": "v"}}),
            json!({"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "n"}, "spec": {}}),
            json!({"kind": "Namespace", "apiVersion": "v1", "metadata": {}, "spec": {}}),
            json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"generateName": "p-", "name": "p-\"x\\\\", "selfLink": "/s", "uid": "u", "resourceVersion": "9", "generation": 2}}),
            json!({"kind": "Secret", "apiVersion": "v1", "metadata": {"annotations": {"name": "n"}}, "type": "Opaque"}),
        ];
        for obj in objects {
            let stored = kube_json::to_stored(&obj);
            assert!(!String::from_utf8_lossy(&stored).contains("resourceVersion"));
            for revision in [0, 1, 42, 9_876_543_210, -7] {
                let spliced = with_resource_version(&stored, revision).expect("stored form");
                let len = splice(&stored, revision).map_or(0, |s| s.len()) + stored.len();
                assert_eq!(spliced.len(), len);
                assert_eq!(
                    String::from_utf8(spliced).unwrap(),
                    String::from_utf8(served_by_decoding(&stored, revision)).unwrap()
                );
            }
        }
    }

    #[test]
    fn list_items_leave_out_kind_and_api_version() {
        use crate::apimachinery::kube_json::Item;
        let obj = json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a", "uid": "u"}, "data": {"k": "v"}});
        let stored = kube_json::to_stored(&obj);
        let served = Served {
            value: Bytes::copy_from_slice(&stored),
            splice: splice(&stored, 7),
        };
        let mut out = Vec::new();
        let item = ListItem(&served);
        item.write_to(&mut out);
        assert_eq!(
            String::from_utf8(out.clone()).unwrap(),
            r#"{"metadata":{"name":"a","uid":"u","resourceVersion":"7"},"data":{"k":"v"}}"#
        );
        assert_eq!(item.byte_len(), out.len());
        let odd = Served {
            value: Bytes::from_static(br#"{"metadata":{"name":"a"}}"#),
            splice: None,
        };
        let mut out = Vec::new();
        ListItem(&odd).write_to(&mut out);
        assert_eq!(out, br#"{"metadata":{"name":"a"}}"#);
    }

    #[test]
    fn an_old_value_in_another_order_is_the_same_object_a_changed_one_is_not() {
        let obj = json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a", "labels": {"x": "1"}}, "data": {"k": "v"}});
        let encoded = kube_json::to_stored(&obj);
        let old = br#"{"apiVersion":"v1","data":{"k":"v"},"kind":"ConfigMap","metadata":{"labels":{"x":"1"},"name":"a"}}"#;
        assert!(same_object(old, &encoded));
        assert!(same_object(&encoded, &encoded));
        let changed = kube_json::to_stored(
            &json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a", "labels": {"x": "2"}}, "data": {"k": "v"}}),
        );
        assert!(!same_object(old, &changed));
        assert!(!same_object(&encoded, &changed));
    }

    #[test]
    fn values_in_another_order_are_not_spliced() {
        for old in [
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}"#,
            r#"{"kind":"ConfigMap","apiVersion":"v1","data":{},"metadata":{"name":"a"}}"#,
            r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"1"}}"#,
            r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":7}}"#,
            r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"#,
            "",
        ] {
            assert_eq!(with_resource_version(old.as_bytes(), 1), None, "{old}");
        }
    }

    #[test]
    fn an_old_value_is_encoded_once_and_kept_a_stored_one_keeps_where_to_splice() {
        let kv = |value: &str| KeyValue {
            key: "/registry/configmaps/d/a".into(),
            value: Bytes::from(value.to_string()),
            create_revision: 3,
            mod_revision: 5,
            served: Default::default(),
        };
        let old = kv(r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}"#);
        let encoded = served_item(&old, || Ok::<_, ()>(served_by_decoding(&old.value, 5)));
        let kept = match old.served.get() {
            Some(ServedForm::Encoded(bytes)) => bytes.to_vec(),
            other => panic!("kept {other:?}"),
        };
        assert_eq!(kept, encoded.unwrap().to_vec());
        let again = served_item(&old, || Err("not encoded again"));
        assert!(again.is_ok());

        let stored = kube_json::to_stored(
            &json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a"}}),
        );
        let new = kv(std::str::from_utf8(&stored).unwrap());
        let served = served_item(&new, || Err("spliced, not encoded")).unwrap();
        assert_eq!(served.to_vec(), served_by_decoding(&stored, 5));
        assert_eq!(served.len(), served.to_vec().len());
        let kept = new.served.get();
        assert!(
            matches!(kept, Some(ServedForm::Spliced { .. })),
            "only where the revision goes is kept: {kept:?}"
        );
        let again = served_item(&new, || Err("spliced, not encoded")).unwrap();
        assert_eq!(again.to_vec(), served.to_vec());
    }
}
