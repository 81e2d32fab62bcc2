//! JSON field names and "always present" flags for one message's fields,
//! taken from the OpenAPI component schema when there is one (property whose
//! name, lowercased without underscores, equals the prost name without
//! underscores; `required` list), else from the generated table, else the
//! lowerCamelCase of the prost name.

use crate::catalogue::Schemas;
use std::collections::HashMap;

use serde_json::Value;

use super::table::Message;

/// Pointer fields where an explicit zero/false means something, so a zero
/// value on the wire is kept (Go's JSON would have sent it too). Entries are
/// (message short name, JSON name); a message of `*Suffix` matches by suffix,
/// `*` matches every message.
const KEEP_ZERO: &[(&str, &str)] = &[
    ("*Spec", "replicas"),
    ("*", "expirationSeconds"),
    ("*", "gracePeriodSeconds"),
    ("*", "terminationGracePeriodSeconds"),
    ("*", "activeDeadlineSeconds"),
    ("*", "revisionHistoryLimit"),
    ("*", "progressDeadlineSeconds"),
    ("*", "backoffLimit"),
    ("*", "backoffLimitPerIndex"),
    ("*", "parallelism"),
    ("*", "completions"),
    ("*", "ttlSecondsAfterFinished"),
    ("*", "startingDeadlineSeconds"),
    ("*", "successfulJobsHistoryLimit"),
    ("*", "failedJobsHistoryLimit"),
    ("*", "suspend"),
    ("*", "defaultMode"),
    ("*", "mode"),
    ("*", "runAsUser"),
    ("*", "runAsGroup"),
    ("*", "fsGroup"),
    ("*", "runAsNonRoot"),
    ("*", "privileged"),
    ("*", "allowPrivilegeEscalation"),
    ("*", "readOnlyRootFilesystem"),
    ("*", "automountServiceAccountToken"),
    ("*", "enableServiceLinks"),
    ("*", "hostUsers"),
    ("*", "allocateLoadBalancerNodePorts"),
    ("*", "optional"),
    ("*", "immutable"),
    ("*", "orphanDependents"),
    ("PodSpec", "priority"),
];

/// Resolved names of one message's fields, in the message's field order.
#[derive(Debug)]
pub struct Names {
    /// (JSON name, keep zero values) per field. An empty name marks an
    /// embedded struct (Go's `json:",inline"`): its fields belong to the parent.
    pub fields: Vec<(String, bool)>,
}

/// `pod_i_ps` → `podIPs`; `host_ipc` → `hostIpc` (only a last resort).
pub fn lower_camel(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn squash(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// A property name some built-in schema spells `squashed` with: the casing
/// of a field of a message without a schema of its own (VolumeSource's
/// `downwardAPI`, `scaleIO`, inlined into Volume's schema).
fn known_property(squashed: &str) -> Option<String> {
    static KNOWN: std::sync::OnceLock<HashMap<String, String>> = std::sync::OnceLock::new();
    let known = KNOWN.get_or_init(|| {
        let cat = crate::catalogue::Catalogue::builtin();
        let mut names = HashMap::new();
        for (_, schema) in cat.schemas().iter() {
            let props = schema.get("properties").and_then(Value::as_object);
            for name in props.into_iter().flat_map(|p| p.keys()) {
                names.entry(squash(name)).or_insert_with(|| name.clone());
            }
        }
        names
    });
    known.get(squashed).cloned()
}

fn keeps_zero(message_name: &str, json: &str) -> bool {
    let short = message_name.rsplit('.').next().unwrap_or(message_name);
    KEEP_ZERO.iter().any(|(msg, field)| {
        *field == json
            && match msg.strip_prefix('*') {
                Some(suffix) => short.ends_with(suffix),
                None => *msg == short,
            }
    })
}

/// A single message field the parent's schema does not list is an embedded
/// struct (VolumeSource in Volume, IngressRuleValue in IngressRule, ...).
fn is_inline(has_schema: bool, f: &crate::api::protobuf::table::Field) -> bool {
    has_schema
        && f.kind == crate::api::protobuf::table::Kind::Message
        && !f.repeated
        && f.json.is_none()
}

/// Builds the names of `message` (called `message_name`) using `schemas`.
pub fn resolve(message_name: &str, message: &Message, schemas: &Schemas) -> Names {
    let schema = schemas.get(message_name);
    let props: HashMap<String, &str> = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|p| p.keys().map(|k| (squash(k), k.as_str())).collect())
        .unwrap_or_default();
    let required: Vec<&str> = schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let fields = message
        .fields
        .iter()
        .map(|f| {
            let json = match props.get(&squash(&f.rust_name)) {
                Some(p) => p.to_string(),
                None if is_inline(schema.is_some(), f) => String::new(),
                None => f
                    .json
                    .clone()
                    .or_else(|| known_property(&squash(&f.rust_name)))
                    .unwrap_or_else(|| lower_camel(&f.rust_name)),
            };
            let keep =
                f.required || required.contains(&json.as_str()) || keeps_zero(message_name, &json);
            (json, keep)
        })
        .collect();
    Names { fields }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::protobuf::table::parse;
    use serde_json::json;

    #[test]
    fn schema_property_names_win_over_camel_case() {
        let t = parse("message x.PodSpec\n1 host_ipc bool\n2 pod_i_ps string repeated\n3 priority int32\n4 node_name string\n");
        let schemas = json!({"x.PodSpec": {"properties": {"hostIPC": {}, "podIPs": {}, "nodeName": {}},
                              "required": ["nodeName"]}});
        let names = resolve(
            "x.PodSpec",
            &t.messages["x.PodSpec"],
            &Schemas::from(schemas.as_object().unwrap().clone()),
        );
        assert_eq!(names.fields[0], ("hostIPC".to_string(), false));
        assert_eq!(names.fields[1], ("podIPs".to_string(), false));
        assert_eq!(names.fields[2], ("priority".to_string(), true));
        assert_eq!(names.fields[3], ("nodeName".to_string(), true));
    }

    #[test]
    fn without_schema_uses_table_then_camel_case() {
        let t = parse("message x.DeploymentSpec\n1 replicas int32\n2 non_resource_ur_ls string json=nonResourceURLs\n3 min_ready_seconds int32\n");
        let names = resolve(
            "x.DeploymentSpec",
            &t.messages["x.DeploymentSpec"],
            &Schemas::default(),
        );
        assert_eq!(names.fields[0], ("replicas".to_string(), true));
        assert_eq!(names.fields[1], ("nonResourceURLs".to_string(), false));
        assert_eq!(names.fields[2], ("minReadySeconds".to_string(), false));
        assert!(!keeps_zero("x.DeploymentStatus", "replicas"));
    }
}
