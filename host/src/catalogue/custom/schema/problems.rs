//! kube-openapi's validation errors and how kube 1.33 turns them into the
//! field errors of a 422 (apiextensions' kubeOpenAPIResultToFieldErrors).

use crate::apimachinery::status::Cause;
use kube_rules::gofmt::quote as go_quote;
use kube_rules::gofmt::{bad_value, json as go_json};
use serde_json::Value;

/// What kind of openapi error a problem is; the kinds kube maps specially.
pub(super) enum Code {
    Required,
    Enum(Vec<Value>),
    /// maxLength exceeded; the limit.
    TooLong(i64),
    /// maxItems / maxProperties exceeded: the count and the limit.
    TooMany(i64, i64),
    InvalidType,
    Other,
}

/// One kube-openapi error: its path name (`spec.replicas`), the value it
/// carries and its message (`spec.replicas in body ...`). A composite
/// error (anyOf, oneOf, allOf, not) has no path for kube.
pub(super) struct Problem {
    pub code: Code,
    pub name: String,
    pub value: Option<Value>,
    pub message: String,
    pub composite: bool,
}

impl Problem {
    pub fn new(code: Code, name: &str, value: Option<Value>, message: String) -> Self {
        Problem {
            code,
            name: name.to_string(),
            value,
            message,
            composite: false,
        }
    }

    pub fn composite(message: String) -> Self {
        Problem {
            code: Code::Other,
            name: String::new(),
            value: None,
            message,
            composite: true,
        }
    }

    /// `<name> in body must be of type <type>: "<got>"`.
    pub fn invalid_type(name: &str, type_name: &str, got: &str) -> Self {
        let message = format!(
            "{name} in body must be of type {type_name}: {}",
            go_quote(got)
        );
        Problem::new(Code::InvalidType, name, Some(Value::from(got)), message)
    }

    /// The field error kube reports for this problem, its path under
    /// `prefix` (`""` for the object, `status` for the status subresource).
    pub fn into_cause(self, prefix: &str) -> Cause {
        if self.composite {
            return invalid(prefix, &Value::from(""), &self.message);
        }
        let name = self.name.strip_prefix('.').unwrap_or(&self.name);
        let field = match (prefix, self.name.as_str()) {
            (_, "" | ".") => prefix.to_string(),
            ("", _) => name.to_string(),
            _ => format!("{prefix}.{name}"),
        };
        let value = self.value.unwrap_or_else(|| Value::from(""));
        match self.code {
            Code::Required => Cause::required(&field, ""),
            Code::Enum(values) => not_supported(&field, &value, &values),
            Code::TooLong(max) => Cause {
                reason: "FieldValueTooLong",
                field,
                message: format!("Too long: may not be more than {max} {}", bytes(max)),
            },
            Code::TooMany(actual, max) => Cause {
                reason: "FieldValueTooMany",
                field,
                message: format!("Too many: {actual}: must have at most {max} items"),
            },
            Code::InvalidType => Cause {
                reason: "FieldValueTypeInvalid",
                field,
                message: format!("Invalid value: {}: {}", bad_value(&value), self.message),
            },
            Code::Other => invalid(&field, &value, &self.message),
        }
    }
}

fn bytes(max: i64) -> &'static str {
    if max == 1 {
        "byte"
    } else {
        "bytes"
    }
}

/// field.Invalid: `Invalid value: <value>: <detail>`.
pub(super) fn invalid(field: &str, value: &Value, detail: &str) -> Cause {
    Cause {
        reason: "FieldValueInvalid",
        field: field.to_string(),
        message: format!("Invalid value: {}: {detail}", bad_value(value)),
    }
}

/// field.Duplicate: `Duplicate value: <value>`.
pub(super) fn duplicate(field: &str, value: &Value) -> Cause {
    Cause {
        reason: "FieldValueDuplicate",
        field: field.to_string(),
        message: format!("Duplicate value: {}", bad_value(value)),
    }
}

/// field.NotSupported with the enum's values (strings as they are, other
/// values JSON-encoded), each quoted.
fn not_supported(field: &str, value: &Value, values: &[Value]) -> Cause {
    let quoted: Vec<String> = values
        .iter()
        .map(|v| match v {
            Value::String(s) => go_quote(s),
            other => go_quote(&go_json(other)),
        })
        .collect();
    let mut message = format!("Unsupported value: {}", bad_value(value));
    if !quoted.is_empty() {
        message.push_str(&format!(": supported values: {}", quoted.join(", ")));
    }
    Cause {
        reason: "FieldValueNotSupported",
        field: field.to_string(),
        message,
    }
}
