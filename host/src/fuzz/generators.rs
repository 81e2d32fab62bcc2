//! Generators of hostile inputs: JSON values shaped like Kubernetes objects
//! (with strategic-merge directives), byte mutations of valid documents,
//! YAML and selector texts assembled from their grammar's tokens.

use proptest::prelude::*;
use serde_json::{Map, Value};

/// Keys an object may have: Kubernetes fields, patch directives, oddities.
const KEYS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "name",
    "namespace",
    "labels",
    "annotations",
    "finalizers",
    "managedFields",
    "spec",
    "status",
    "containers",
    "image",
    "ports",
    "containerPort",
    "protocol",
    "env",
    "value",
    "$patch",
    "$retainKeys",
    "$setElementOrder/containers",
    "$deleteFromPrimitiveList/finalizers",
    "a",
    "",
    "~1",
    "/",
    "é",
];

/// Strings a value may be: names, directives, empty, odd characters.
const STRINGS: &[&str] = &[
    "x",
    "app",
    "delete",
    "replace",
    "merge",
    "retainKeys",
    "v1",
    "Pod",
    "ConfigMap",
    "",
    "-",
    "TCP",
    "9223372036854775808",
    "\u{0}",
    "jos\u{e9}",
];

pub fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::sample::select(KEYS).prop_map(String::from),
        1 => "\\PC{0,8}",
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        proptest::sample::select(STRINGS).prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::from),
    ]
}

/// Any JSON value, a few levels deep, keyed like Kubernetes objects.
pub fn json_value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec((key(), inner), 0..6)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A Pod-like object (what patches and apply usually meet), with random
/// parts put in random places.
pub fn object() -> impl Strategy<Value = Value> {
    (json_value(), json_value(), json_value(), 0usize..4).prop_map(|(labels, container, extra, at)| {
        let mut pod = serde_json::json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "labels": {"app": "x"}, "finalizers": ["a", "b"]},
            "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80, "protocol": "TCP"}]}]},
        });
        match at {
            0 => pod["metadata"]["labels"] = labels,
            1 => pod["spec"]["containers"][0] = container,
            2 => pod["spec"]["extra"] = extra,
            _ => pod["metadata"] = labels,
        }
        pod
    })
}

/// JSON pointers into Pod-like objects, valid and not.
pub fn pointer() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::sample::select(
            &[
                "",
                "/",
                "/metadata",
                "/metadata/labels/app",
                "/metadata/finalizers/0",
                "/metadata/finalizers/-",
                "/spec/containers/0/image",
                "/spec/containers/-",
                "/spec/containers/99999999999999999999",
                "/spec/containers/-1",
                "/spec/containers/01",
                "/a/b/c",
                "/~1",
                "/~2",
                "metadata",
            ][..]
        )
        .prop_map(String::from),
        "(/[a-z0-9~-]{0,4}){0,4}",
    ]
}

/// A JSON patch document: mostly an array of operations, sometimes not.
pub fn json_patch() -> impl Strategy<Value = Value> {
    let op = (
        proptest::sample::select(
            &["add", "remove", "replace", "move", "copy", "test", "bogus"][..],
        ),
        pointer(),
        pointer(),
        json_value(),
        0u8..4,
    )
        .prop_map(|(op, path, from, value, drop)| {
            let mut o = serde_json::json!({"op": op, "path": path, "from": from, "value": value});
            if let (Some(map), Some(field)) = (
                o.as_object_mut(),
                ["op", "path", "value", "from"].get(usize::from(drop)),
            ) {
                if drop < 3 {
                    map.remove(*field);
                }
            }
            o
        });
    prop_oneof![
        8 => proptest::collection::vec(op, 0..6).prop_map(Value::Array),
        1 => json_value(),
    ]
}

/// `bytes` with a few random bytes replaced, inserted or removed.
pub fn mutated(bytes: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    let len = bytes.len().max(1);
    proptest::collection::vec((0..len, any::<u8>(), 0u8..3), 0..6).prop_map(move |edits| {
        let mut out = bytes.clone();
        for (at, byte, how) in edits {
            let at = at.min(out.len());
            match how {
                0 if at < out.len() => out[at] = byte,
                1 => out.insert(at, byte),
                _ if at < out.len() => {
                    out.remove(at);
                }
                _ => out.push(byte),
            }
        }
        out
    })
}

/// Text assembled from `tokens` (and a little noise).
pub fn from_tokens(tokens: &'static [&'static str], max: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            9 => proptest::sample::select(tokens).prop_map(String::from),
            1 => "\\PC{0,3}",
        ],
        0..max,
    )
    .prop_map(|parts| parts.concat())
}

/// YAML's syntax, anchors, aliases, tags and merge keys.
pub const YAML_TOKENS: &[&str] = &[
    "a",
    "b: ",
    ": ",
    "- ",
    "\n",
    "  ",
    "&x ",
    "*x",
    "&y ",
    "*y",
    "<<: ",
    "!custom ",
    "!!str ",
    "!!binary ",
    "!!map ",
    "? ",
    "[",
    "]",
    "{",
    "}",
    ", ",
    "'",
    "\"",
    "|",
    ">",
    "#",
    "---\n",
    "...\n",
    "%YAML 1.1\n",
    "yes",
    "0777",
    "1_000",
    ".inf",
    "~",
    "null",
    "\t",
    "\\u00e9",
    "1e400",
];

/// Label and field selector syntax.
pub const SELECTOR_TOKENS: &[&str] = &[
    "a",
    "app",
    "x/y",
    "example.com/",
    "metadata.name",
    "metadata.namespace",
    "status.phase",
    "spec.nodeName",
    "=",
    "==",
    "!=",
    "!",
    " in ",
    " notin ",
    "(",
    ")",
    ",",
    " ",
    "-",
    ".",
    "_",
    "123",
    "\\",
    "\\,",
    "é",
    "gt",
    " > ",
    " < ",
    "in",
    "notin",
    "'",
    "\"",
];
