//! kube's default table convertor (apiserver's `DefaultTableConvertor`) for
//! kinds without a printer: NAME and CREATED AT (RFC 3339, UTC), described
//! with ObjectMeta's own field descriptions.

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{json, Value};

const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
/// ObjectMeta's description of `creationTimestamp`.
pub const CREATION_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// The NAME column definition (of the default and of CRD tables).
pub fn name_column() -> Value {
    json!({"name": "Name", "type": "string", "format": "name",
           "description": NAME_DESCRIPTION, "priority": 0})
}

/// The column definitions of the default table.
pub(super) fn columns() -> Vec<Value> {
    vec![
        name_column(),
        json!({"name": "Created At", "type": "date", "format": "",
               "description": CREATION_DESCRIPTION, "priority": 0}),
    ]
}

/// One object's cells: its name and creation time (the zero time if unset).
pub(super) fn cells(obj: &Value) -> Vec<Value> {
    let created = obj
        .pointer("/metadata/creationTimestamp")
        .and_then(Value::as_str)
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .map(|t| {
            t.with_timezone(&Utc)
                .to_rfc3339_opts(SecondsFormat::Secs, true)
        })
        .unwrap_or_else(|| "0001-01-01T00:00:00Z".to_string());
    let name = obj.pointer("/metadata/name").cloned().unwrap_or(json!(""));
    vec![name, Value::from(created)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_and_creation_time_in_utc() {
        let obj = json!({"metadata": {"name": "r",
                                      "creationTimestamp": "2024-05-06T07:08:09.5+02:00"}});
        assert_eq!(cells(&obj), [json!("r"), json!("2024-05-06T05:08:09Z")]);
        assert_eq!(cells(&json!({}))[1], "0001-01-01T00:00:00Z");
        assert_eq!(columns()[1]["type"], "date");
    }
}
