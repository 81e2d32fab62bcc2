//! Shared pieces of validation: building causes with kube's wording
//! (`field.Required`, `field.Invalid`, ...), `IsDomainPrefixedPath`, and
//! small JSON readers. The name, label and port checks themselves
//! (`k8s.io/apimachinery/pkg/util/validation`) are `kube_rules`'.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use kube_rules::gofmt;

/// kube's `core.MaxSecretSize`, also the ConfigMap limit (1 MiB).
pub const MAX_DATA_SIZE: usize = 1024 * 1024;

/// The protocols of container and service ports, sorted as kube lists them.
pub const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];

fn cause(cause_type: &str, field: &str, message: String) -> Cause {
    Cause {
        cause_type: cause_type.to_string(),
        field: field.to_string(),
        message,
    }
}

fn with_detail(body: String, detail: &str) -> String {
    if detail.is_empty() {
        body
    } else {
        format!("{body}: {detail}")
    }
}

/// `field.Required`: "Required value[: detail]".
pub fn required(field: &str, detail: &str) -> Cause {
    let message = with_detail("Required value".to_string(), detail);
    cause("FieldValueRequired", field, message)
}

/// `field.NotFound` for a string value.
pub fn not_found(field: &str, value: &str) -> Cause {
    let message = format!("Not found: {}", gofmt::quote(value));
    cause("FieldValueNotFound", field, message)
}

/// `field.Forbidden`: "Forbidden: detail".
pub fn forbidden(field: &str, detail: &str) -> Cause {
    let message = with_detail("Forbidden".to_string(), detail);
    cause("FieldValueForbidden", field, message)
}

/// `field.Invalid` with an already rendered value (see [`gofmt`]).
pub fn invalid(field: &str, rendered: &str, detail: &str) -> Cause {
    let message = with_detail(format!("Invalid value: {rendered}"), detail);
    cause("FieldValueInvalid", field, message)
}

/// `field.Invalid` for a string value.
pub fn invalid_str(field: &str, value: &str, detail: &str) -> Cause {
    invalid(field, &gofmt::quote(value), detail)
}

/// `field.NotSupported` for a string value and the accepted values.
pub fn not_supported(field: &str, value: &str, supported: &[&str]) -> Cause {
    let listed: Vec<String> = supported.iter().map(|s| gofmt::quote(s)).collect();
    let body = format!("Unsupported value: {}", gofmt::quote(value));
    let message = with_detail(body, &format!("supported values: {}", listed.join(", ")));
    cause("FieldValueNotSupported", field, message)
}

/// `field.NotSupported` for an already rendered value.
pub fn not_supported_rendered(field: &str, rendered: &str, supported: &[&str]) -> Cause {
    let listed: Vec<String> = supported.iter().map(|s| gofmt::quote(s)).collect();
    let body = format!("Unsupported value: {rendered}");
    let message = with_detail(body, &format!("supported values: {}", listed.join(", ")));
    cause("FieldValueNotSupported", field, message)
}

/// `field.Duplicate` with an already rendered value.
pub fn duplicate(field: &str, rendered: &str) -> Cause {
    cause(
        "FieldValueDuplicate",
        field,
        format!("Duplicate value: {rendered}"),
    )
}

/// `field.TooMany` for a list of `actual` items with at most `max`.
pub fn too_many(field: &str, actual: usize, max: usize) -> Cause {
    let message = format!("Too many: {actual}: must have at most {max} items");
    cause("FieldValueTooMany", field, message)
}

/// `field.TooLong` for a byte limit.
pub fn too_long(field: &str, max_bytes: usize) -> Cause {
    let message = format!("Too long: may not be more than {max_bytes} bytes");
    cause("FieldValueTooLong", field, message)
}

/// `ValidateImmutableField`'s failure for an already rendered new value.
pub fn immutable(field: &str, rendered: &str) -> Cause {
    invalid(field, rendered, "field is immutable")
}

/// The string at `key`, "" when absent or not a string.
pub fn text<'a>(object: &'a Value, key: &str) -> &'a str {
    object.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The array at `key`, empty when absent.
pub fn list<'a>(object: &'a Value, key: &str) -> &'a [Value] {
    object
        .get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// The integer at `key`, 0 when absent (Go's zero value).
pub fn int(object: &Value, key: &str) -> i64 {
    object.get(key).and_then(Value::as_i64).unwrap_or_default()
}

/// Adds `detail` messages as `field.Invalid` causes for a string value.
pub fn invalid_each(causes: &mut Vec<Cause>, field: &str, value: &str, details: Vec<String>) {
    for detail in details {
        causes.push(invalid_str(field, value, &detail));
    }
}

/// `ValidateNonnegativeField`: a negative `value` at `field`.
pub fn non_negative(field: &str, value: i64) -> Option<Cause> {
    (value < 0).then(|| invalid(field, &value.to_string(), NEGATIVE))
}

/// kube's `isNegativeErrorMsg`.
pub const NEGATIVE: &str = "must be greater than or equal to 0";

/// The integer at `key` when present (a Go pointer field).
pub fn opt_int(object: &Value, key: &str) -> Option<i64> {
    object.get(key).and_then(Value::as_i64)
}

/// `validation.IsDomainPrefixedPath` at `field`.
pub fn domain_prefixed_path(field: &str, value: &str) -> Vec<Cause> {
    if value.is_empty() {
        return vec![required(field, "")];
    }
    let Some((host, path)) = value
        .split_once('/')
        .filter(|(h, p)| !h.is_empty() && !p.is_empty())
    else {
        let detail = "must be a domain-prefixed path (such as \"acme.io/foo\")";
        return vec![invalid_str(field, value, detail)];
    };
    let mut causes = Vec::new();
    invalid_each(
        &mut causes,
        field,
        host,
        kube_rules::dns1123_subdomain(host),
    );
    let allowed = |c: char| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c);
    if !path.chars().all(allowed) {
        let detail =
            "Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')";
        causes.push(invalid_str(field, path, detail));
    }
    causes
}

/// Drops what Go's semantic equality ignores: nulls, empty strings, empty
/// lists and empty maps, so `{}` and a missing field compare equal.
pub fn normalized(value: &Value) -> Option<Value> {
    match value {
        Value::Null => None,
        Value::String(s) if s.is_empty() => None,
        Value::Array(items) if items.is_empty() => None,
        Value::Array(items) => Some(Value::Array(
            items
                .iter()
                .map(|v| normalized(v).unwrap_or(Value::Null))
                .collect(),
        )),
        Value::Object(map) => {
            let kept: serde_json::Map<String, Value> = map
                .iter()
                .filter_map(|(k, v)| normalized(v).map(|v| (k.clone(), v)))
                .collect();
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
        other => Some(other.clone()),
    }
}

/// Semantic equality of two optional values (see [`normalized`]).
pub fn same(a: Option<&Value>, b: Option<&Value>) -> bool {
    a.and_then(normalized) == b.and_then(normalized)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cause_wording() {
        let c = not_supported(
            "spec.restartPolicy",
            "Sometimes",
            &["Always", "OnFailure", "Never"],
        );
        assert_eq!(c.cause_type, "FieldValueNotSupported");
        assert_eq!(
            c.message,
            "Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\""
        );
        assert_eq!(required("spec.containers", "").message, "Required value");
        assert_eq!(
            too_long("", MAX_DATA_SIZE).message,
            "Too long: may not be more than 1048576 bytes"
        );
    }

    #[test]
    fn semantic_equality_ignores_empty_values() {
        let a = serde_json::json!({"x": 1, "y": [], "z": {"w": null}});
        let b = serde_json::json!({"x": 1});
        assert!(same(Some(&a), Some(&b)));
        assert!(!same(Some(&a), Some(&serde_json::json!({"x": 2}))));
    }
}
