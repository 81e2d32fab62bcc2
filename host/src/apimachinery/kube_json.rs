//! JSON as kube-apiserver encodes it. Go's encoder writes struct fields in
//! declaration order: `kind`, `apiVersion` (TypeMeta), `metadata`, then the
//! kind's own fields (`spec`, `status`, or ConfigMap's `immutable`, `data`,
//! `binaryData`, …); a Status is `status, message, reason, details, code`.
//! Every response body ends with a newline, as kube's serializer writes it.
//!
//! [`Ordered`] serializes a `serde_json::Value` in that order without
//! copying it; fields the tables here do not know keep their own order,
//! after the known ones. Nested fields other than `metadata` and a Status's
//! `details` keep the order they have.

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

/// TypeMeta and ObjectMeta, first in every object.
const LEADING: &[&str] = &["kind", "apiVersion", "metadata"];

/// The fields of most kinds after metadata.
const SPEC_STATUS: &[&str] = &["spec", "status"];

/// ObjectMeta in Go order, with ListMeta's `continue` and
/// `remainingItemCount` where ListMeta has them (after `resourceVersion`).
const METADATA: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "continue",
    "remainingItemCount",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// metav1.StatusDetails.
const DETAILS: &[&str] = &[
    "name",
    "group",
    "kind",
    "uid",
    "causes",
    "retryAfterSeconds",
];

/// metav1.StatusCause.
const CAUSE: &[&str] = &["reason", "message", "field"];

/// The fields after metadata of a kind, in its Go struct's order.
fn body_order(api_version: &str, kind: &str) -> &'static [&'static str] {
    match (api_version, kind) {
        ("v1", "Status") => &["status", "message", "reason", "details", "code"],
        ("v1", "Event") => &[
            "involvedObject",
            "reason",
            "message",
            "source",
            "firstTimestamp",
            "lastTimestamp",
            "count",
            "type",
            "eventTime",
            "series",
            "action",
            "related",
            "reportingComponent",
            "reportingInstance",
        ],
        ("events.k8s.io/v1", "Event") => &[
            "eventTime",
            "series",
            "reportingController",
            "reportingInstance",
            "action",
            "reason",
            "regarding",
            "related",
            "note",
            "type",
            "deprecatedSource",
            "deprecatedFirstTimestamp",
            "deprecatedLastTimestamp",
            "deprecatedCount",
        ],
        (_, "ConfigMap") => &["immutable", "data", "binaryData"],
        (_, "Secret") => &["immutable", "data", "stringData", "type"],
        (_, "ServiceAccount") => &[
            "secrets",
            "imagePullSecrets",
            "automountServiceAccountToken",
        ],
        (_, "Endpoints") => &["subsets"],
        (_, "PodTemplate") => &["template"],
        (_, "Role") => &["rules"],
        (_, "ClusterRole") => &["rules", "aggregationRule"],
        (_, "RoleBinding" | "ClusterRoleBinding") => &["subjects", "roleRef"],
        (_, "StorageClass") => &[
            "provisioner",
            "parameters",
            "reclaimPolicy",
            "mountOptions",
            "allowVolumeExpansion",
            "volumeBindingMode",
            "allowedTopologies",
        ],
        (_, "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration") => &["webhooks"],
        (_, "PriorityClass") => &["value", "globalDefault", "description", "preemptionPolicy"],
        (_, "ControllerRevision") => &["data", "revision"],
        ("v1", "Binding") => &["target"],
        (_, "CSIStorageCapacity") => &[
            "nodeTopology",
            "storageClassName",
            "capacity",
            "maximumVolumeSize",
        ],
        (_, "RuntimeClass") => &["handler", "overhead", "scheduling"],
        (_, "EndpointSlice") => &["addressType", "endpoints", "ports"],
        (_, "Table") => &["columnDefinitions", "rows"],
        (_, list) if list.ends_with("List") => &["items"],
        _ => SPEC_STATUS,
    }
}

/// What a JSON object is, which decides the order of its fields.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    /// An API object, a list, a Status or a watch event.
    Object,
    /// An API object as stored: its metadata has no resourceVersion.
    Stored,
    Metadata,
    /// Metadata as stored: resourceVersion is left out.
    StoredMetadata,
    Details,
    Cause,
    /// Anything else: kept as it is.
    Plain,
}

impl Shape {
    /// The fields that go first, in order (two runs, one after the other).
    fn order(self, map: &Map<String, Value>) -> [&'static [&'static str]; 2] {
        match self {
            Shape::Object | Shape::Stored => {
                let text = |k: &str| map.get(k).and_then(Value::as_str).unwrap_or_default();
                [LEADING, body_order(text("apiVersion"), text("kind"))]
            }
            Shape::Metadata | Shape::StoredMetadata => [METADATA, &[]],
            Shape::Details => [DETAILS, &[]],
            Shape::Cause => [CAUSE, &[]],
            Shape::Plain => [&[], &[]],
        }
    }

    /// The shape of the value under `key` of an object of this shape.
    fn child(self, key: &str) -> Shape {
        match (self, key) {
            (Shape::Object, "metadata") => Shape::Metadata,
            (Shape::Stored, "metadata") => Shape::StoredMetadata,
            (Shape::Object, "items" | "object") => Shape::Object,
            (Shape::Object, "details") => Shape::Details,
            (Shape::Details, "causes") => Shape::Cause,
            _ => Shape::Plain,
        }
    }
}

/// A value serialized in kube's field order.
pub struct Ordered<'a> {
    value: &'a Value,
    shape: Shape,
}

impl<'a> Ordered<'a> {
    /// An API object, list, Status or watch event.
    pub fn object(value: &'a Value) -> Self {
        Ordered {
            value,
            shape: Shape::Object,
        }
    }
}

impl Serialize for Ordered<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.value {
            Value::Object(map) if self.shape != Shape::Plain => {
                serialize_map(map, self.shape, serializer)
            }
            Value::Array(items) if self.shape != Shape::Plain => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&Ordered {
                        value: item,
                        shape: self.shape,
                    })?;
                }
                seq.end()
            }
            other => other.serialize(serializer),
        }
    }
}

fn serialize_map<S: Serializer>(
    map: &Map<String, Value>,
    shape: Shape,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let order = shape.order(map);
    let known = |key: &str| order.iter().any(|run| run.contains(&key));
    let mut out = serializer.serialize_map(Some(map.len()))?;
    let entry = |key: &str, value| Ordered {
        value,
        shape: shape.child(key),
    };
    let skipped = |key: &str| shape == Shape::StoredMetadata && key == "resourceVersion";
    for key in order.iter().flat_map(|run| run.iter()) {
        if skipped(key) {
            continue;
        }
        if let Some(value) = map.get(*key) {
            out.serialize_entry(key, &entry(key, value))?;
        }
    }
    for (key, value) in map.iter().filter(|(key, _)| !known(key)) {
        out.serialize_entry(key, &entry(key, value))?;
    }
    out.end()
}

/// The response body for `value`: kube's field order and a final newline.
pub fn to_vec(value: &Value) -> Vec<u8> {
    let mut out = to_item(value);
    out.push(b'\n');
    out
}

/// `value` in kube's field order, as it appears inside a list's `items` or
/// a watch event (no newline).
pub fn to_item(value: &Value) -> Vec<u8> {
    serde_json::to_vec(&Ordered::object(value)).unwrap_or_else(|e| {
        tracing::error!(error = %e, "encoding a response failed");
        Vec::new()
    })
}

/// `value` as the store keeps it: [`to_item`]'s encoding without
/// `metadata.resourceVersion` (the store's revision is the version), so
/// that the served JSON of a stored value is that value with the revision
/// put back where kube's order has it (see [`crate::registry::stored`]).
pub fn to_stored(value: &Value) -> Vec<u8> {
    let stored = Ordered {
        value,
        shape: Shape::Stored,
    };
    serde_json::to_vec(&stored).unwrap_or_else(|e| {
        tracing::error!(error = %e, "encoding an object for the store failed");
        Vec::new()
    })
}

/// A list item already encoded by [`to_item`] (or its equivalent).
pub trait Item {
    /// The encoded item's length in bytes.
    fn byte_len(&self) -> usize;
    fn write_to(&self, out: &mut Vec<u8>);
}

impl Item for bytes::Bytes {
    fn byte_len(&self) -> usize {
        self.as_ref().len()
    }

    fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self)
    }
}

/// The response body of a list whose items are already encoded: `head`
/// (kind, apiVersion, metadata) in kube's order, then `items`.
pub fn list_with_items<I: Item>(head: &Value, items: &[I]) -> Vec<u8> {
    let mut out = to_vec(head);
    out.truncate(out.len().saturating_sub(2));
    let size: usize = items.iter().map(|i| i.byte_len() + 1).sum();
    out.reserve(size + 16);
    out.extend_from_slice(b",\"items\":[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        item.write_to(&mut out);
    }
    out.extend_from_slice(b"]}\n");
    out
}

/// The length of `value` encoded as compact JSON, without building the text.
pub fn encoded_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(value: &Value) -> String {
        String::from_utf8(to_vec(value)).unwrap()
    }

    #[test]
    fn objects_start_with_kind_api_version_and_metadata() {
        let cm = json!({"data": {"b": "1", "a": "2"}, "metadata": {"namespace": "d", "name": "c"}, "apiVersion": "v1", "kind": "ConfigMap", "immutable": true});
        assert_eq!(
            text(&cm),
            "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"c\",\"namespace\":\"d\"},\"immutable\":true,\"data\":{\"b\":\"1\",\"a\":\"2\"}}\n"
        );
    }

    #[test]
    fn spec_comes_before_status_and_unknown_fields_last() {
        let deploy = json!({"status": {}, "extra": 1, "spec": {"replicas": 1}, "kind": "Deployment", "apiVersion": "apps/v1", "metadata": {}});
        assert_eq!(
            text(&deploy),
            "{\"kind\":\"Deployment\",\"apiVersion\":\"apps/v1\",\"metadata\":{},\"spec\":{\"replicas\":1},\"status\":{},\"extra\":1}\n"
        );
    }

    #[test]
    fn a_status_is_in_go_struct_order() {
        let status = json!({"code": 422, "details": {"causes": [{"field": "f", "message": "m", "reason": "r"}], "kind": "pods", "group": "", "name": "p"}, "reason": "Invalid", "message": "x", "status": "Failure", "metadata": {}, "apiVersion": "v1", "kind": "Status"});
        assert_eq!(
            text(&status),
            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"x\",\"reason\":\"Invalid\",\"details\":{\"name\":\"p\",\"group\":\"\",\"kind\":\"pods\",\"causes\":[{\"reason\":\"r\",\"message\":\"m\",\"field\":\"f\"}]},\"code\":422}\n"
        );
    }

    #[test]
    fn list_items_and_watch_objects_are_ordered_too() {
        let list = json!({"items": [{"spec": {}, "metadata": {"name": "a"}}], "metadata": {"resourceVersion": "3"}, "apiVersion": "v1", "kind": "PodList"});
        assert_eq!(
            text(&list),
            "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"3\"},\"items\":[{\"metadata\":{\"name\":\"a\"},\"spec\":{}}]}\n"
        );
        let event = json!({"type": "ADDED", "object": {"data": {}, "kind": "ConfigMap", "apiVersion": "v1"}});
        let line = serde_json::to_string(&Ordered::object(&event)).unwrap();
        assert_eq!(
            line,
            "{\"type\":\"ADDED\",\"object\":{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"data\":{}}}"
        );
    }

    #[test]
    fn nested_fields_keep_their_order() {
        let pod = json!({"kind": "Pod", "apiVersion": "v1", "spec": {"z": 1, "a": {"kind": "x", "b": 2}}});
        assert!(text(&pod).contains("\"spec\":{\"z\":1,\"a\":{\"kind\":\"x\",\"b\":2}}"));
    }

    #[test]
    fn a_list_joined_from_encoded_items_is_the_list_encoded_whole() {
        let items = vec![
            json!({"data": {"a": "1"}, "metadata": {"resourceVersion": "5", "name": "x"},
                   "kind": "ConfigMap", "apiVersion": "v1"}),
            json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "y"}}),
        ];
        let head = json!({"kind": "ConfigMapList", "apiVersion": "v1",
                          "metadata": {"resourceVersion": "9", "continue": "c"}});
        let mut whole = head.clone();
        whole["items"] = json!(items);
        let encoded: Vec<bytes::Bytes> = items
            .iter()
            .map(|i| bytes::Bytes::from(to_item(i)))
            .collect();
        assert_eq!(list_with_items(&head, &encoded), to_vec(&whole));
        whole["items"] = json!([]);
        assert_eq!(list_with_items::<bytes::Bytes>(&head, &[]), to_vec(&whole));
    }
}
