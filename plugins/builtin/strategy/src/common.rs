//! Shared pieces of validation: building causes with kube's wording
//! (`field.Required`, `field.Invalid`, ...), the name and port format checks
//! of `k8s.io/apimachinery/pkg/util/validation`, and small JSON readers.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::gofmt;

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

/// `validation.MaxLenError`.
pub fn max_len_error(length: usize) -> String {
    format!("must be no more than {length} characters")
}

/// `validation.RegexError`: the message, examples and the regex.
pub fn regex_error(msg: &str, regex: &str, examples: &[&str]) -> String {
    let quoted: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{msg} (e.g. {}regex used for validation is '{regex}')",
        quoted.join(" or ")
    )
}

fn is_label_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'
}

fn matches_dns1123_label(value: &str) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !value.is_empty()
        && value.chars().all(is_label_char)
        && value.starts_with(alnum)
        && value.ends_with(alnum)
}

fn matches_dns1123_subdomain(value: &str) -> bool {
    value.split('.').all(matches_dns1123_label)
}

/// `validation.IsDNS1123Label`: the problems with `value`, if any.
pub fn dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !matches_dns1123_label(value) {
        if matches_dns1123_subdomain(value) {
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters \
                 or '-', and must start and end with an alphanumeric character",
                "[a-z0-9]([-a-z0-9]*[a-z0-9])?",
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

/// `validation.IsDNS1123Subdomain`: the problems with `value`, if any.
pub fn dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push(max_len_error(253));
    }
    if !matches_dns1123_subdomain(value) {
        errs.push(regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \
             '-' or '.', and must start and end with an alphanumeric character",
            "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
            &["example.com"],
        ));
    }
    errs
}

/// `validation.IsValidPortNum`'s message, when `port` is outside 1..=65535.
pub fn port_num(port: i64) -> Option<String> {
    (!(1..=65535).contains(&port)).then(|| range_error(1, 65535))
}

/// `validation.InclusiveRangeError`.
pub fn range_error(lo: i64, hi: i64) -> String {
    format!("must be between {lo} and {hi}, inclusive")
}

/// `validation.IsValidPortName` (an IANA service name): the problems, if any.
pub fn port_name(port: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if port.len() > 15 {
        errs.push(max_len_error(15));
    }
    if port.is_empty() || !port.chars().all(is_label_char) {
        errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if !port.chars().any(|c| c.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".into());
    }
    if port.contains("--") {
        errs.push("must not contain consecutive hyphens".into());
    }
    if port.starts_with('-') || port.ends_with('-') {
        errs.push("must not begin or end with a hyphen".into());
    }
    errs
}

/// `validation.IsConfigMapKey` (keys of ConfigMaps and Secrets).
pub fn config_key(key: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if key.len() > 253 {
        errs.push(max_len_error(253));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if key.is_empty() || !key.chars().all(allowed) {
        errs.push(regex_error(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
            "[-._a-zA-Z0-9]+",
            &["key.name", "KEY_NAME", "key-name"],
        ));
    }
    if key == "." {
        errs.push("must not be '.'".into());
    } else if key == ".." {
        errs.push("must not be '..'".into());
    } else if key.starts_with("..") {
        errs.push("must not start with '..'".into());
    }
    errs
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

/// `path.IsValidPathSegmentName`: the problems, if any.
pub fn path_segment(value: &str) -> Vec<String> {
    if value == "." || value == ".." {
        return vec![format!("may not be '{value}'")];
    }
    ["/", "%"]
        .iter()
        .filter(|bad| value.contains(**bad))
        .map(|bad| format!("may not contain '{bad}'"))
        .collect()
}

/// `validation.IsDNS1035Label`: the problems with `value`, if any.
pub fn dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len_error(63));
    }
    let ok = matches_dns1123_label(value) && value.starts_with(|c: char| c.is_ascii_lowercase());
    if !ok {
        errs.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', \
             start with an alphabetic character, and end with an alphanumeric character",
            "[a-z]([-a-z0-9]*[a-z0-9])?",
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// `validation.IsWildcardDNS1123Subdomain`: the problems, if any.
pub fn wildcard_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push(max_len_error(253));
    }
    let ok = value
        .strip_prefix("*.")
        .is_some_and(matches_dns1123_subdomain);
    if !ok {
        errs.push(regex_error(
            "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS \
             subdomain, which must consist of lower case alphanumeric characters, '-' or '.' \
             and end with an alphanumeric character",
            "\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
            &["*.example.com"],
        ));
    }
    errs
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
    invalid_each(&mut causes, field, host, dns1123_subdomain(host));
    let allowed = |c: char| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c);
    if !path.chars().all(allowed) {
        let detail =
            "Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')";
        causes.push(invalid_str(field, path, detail));
    }
    causes
}

/// `validation.IsValidPercent`'s message, when `value` is not "<digits>%".
pub fn percent(value: &str) -> Option<String> {
    let digits = value.strip_suffix('%').unwrap_or_default();
    let ok = !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit());
    (!ok).then(|| {
        regex_error(
            "a valid percent string must be a numeric string followed by an ending '%'",
            "[0-9]+%",
            &["1%", "93%"],
        )
    })
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
    fn dns_labels() {
        assert!(dns1123_label("web-1").is_empty());
        assert_eq!(
            dns1123_label("Foo"),
            vec![
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters \
                 or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  \
                 or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
        assert_eq!(dns1123_label("a.b"), vec!["must not contain dots"]);
        assert_eq!(
            dns1123_label(&"a".repeat(64))[0],
            "must be no more than 63 characters"
        );
    }

    #[test]
    fn config_keys() {
        assert!(config_key("key.name").is_empty());
        assert_eq!(
            config_key("a b"),
            vec![
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.' \
                 (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation \
                 is '[-._a-zA-Z0-9]+')"
            ]
        );
        assert_eq!(config_key(".."), vec!["must not be '..'"]);
        assert_eq!(config_key("..a"), vec!["must not start with '..'"]);
    }

    #[test]
    fn port_names_and_numbers() {
        assert!(port_name("http").is_empty());
        assert_eq!(
            port_name("8080"),
            vec!["must contain at least one letter (a-z)"]
        );
        assert_eq!(
            port_name("-web--"),
            vec![
                "must not contain consecutive hyphens",
                "must not begin or end with a hyphen"
            ]
        );
        assert_eq!(
            port_num(70000).as_deref(),
            Some("must be between 1 and 65535, inclusive")
        );
        assert_eq!(port_num(80), None);
    }

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
