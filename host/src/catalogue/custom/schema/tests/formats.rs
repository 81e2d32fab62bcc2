//! String formats: the ones kube validates, and the ones it strips.

use super::spec_errors;
use serde_json::{json, Value};

fn accepts(format: &str, value: Value) -> bool {
    spec_errors(
        json!({"v": {"type": "string", "format": format}}),
        json!({ "v": value }),
    )
    .is_empty()
}

#[test]
fn a_bad_value_is_a_type_error_naming_the_format() {
    assert_eq!(
        spec_errors(
            json!({"t": {"type": "string", "format": "date-time"}}),
            json!({"t": "yesterday"})
        ),
        vec![
            r#"spec.t: Invalid value: "yesterday": spec.t in body must be of type date-time: "yesterday""#
        ]
    );
}

#[test]
fn date_time_and_date() {
    assert!(accepts("date-time", json!("2024-01-02T03:04:05Z")));
    assert!(accepts("date-time", json!("2024-01-02t03:04:05.123+01:00")));
    assert!(!accepts("date-time", json!("2024-01-02T24:00:00Z")));
    assert!(!accepts("date-time", json!("2024-01-02 03:04:05Z")));
    assert!(accepts("date", json!("2024-02-29")));
    assert!(!accepts("date", json!("2023-02-29")));
    assert!(!accepts("date", json!("2024-1-02")));
}

#[test]
fn addresses() {
    assert!(accepts("ipv4", json!("10.0.0.1")));
    assert!(!accepts("ipv4", json!("10.0.0")));
    assert!(!accepts("ipv4", json!("010.0.0.1")));
    assert!(!accepts("ipv4", json!("::1")));
    assert!(accepts("ipv6", json!("fe80::1")));
    assert!(!accepts("ipv6", json!("10.0.0.1")));
    assert!(accepts("cidr", json!("10.0.0.0/8")));
    assert!(accepts("cidr", json!("fd00::/64")));
    assert!(!accepts("cidr", json!("10.0.0.0/33")));
    assert!(!accepts("cidr", json!("10.0.0.0")));
    assert!(accepts("mac", json!("00:00:5e:00:53:01")));
    assert!(accepts("mac", json!("0000.5e00.5301")));
    assert!(!accepts("mac", json!("00:00:5e:00:53")));
    assert!(accepts("hostname", json!("my-host.example.com")));
    assert!(!accepts("hostname", json!("-bad.example.com")));
    assert!(accepts("uri", json!("https://example.com/x?y=1")));
    assert!(!accepts("uri", json!("relative/path")));
    assert!(accepts("email", json!("someone@example.com")));
    assert!(!accepts("email", json!("not-an-email")));
}

#[test]
fn identifiers_and_encodings() {
    assert!(accepts(
        "uuid",
        json!("123e4567-e89b-12d3-a456-426614174000")
    ));
    assert!(!accepts("uuid", json!("123e4567")));
    assert!(accepts(
        "uuid4",
        json!("123e4567-e89b-42d3-a456-426614174000")
    ));
    assert!(!accepts(
        "uuid4",
        json!("123e4567-e89b-12d3-a456-426614174000")
    ));
    assert!(accepts("byte", json!("aGVsbG8=")));
    assert!(!accepts("byte", json!("hello!")));
    assert!(accepts("bsonobjectid", json!("507f1f77bcf86cd799439011")));
    assert!(accepts("isbn10", json!("0-321-75104-3")));
    assert!(accepts("isbn13", json!("978-0321751041")));
    assert!(!accepts("isbn13", json!("978-0321751042")));
    assert!(accepts("creditcard", json!("4111 1111 1111 1111")));
    assert!(!accepts("creditcard", json!("4111 1111 1111 1112")));
    assert!(accepts("ssn", json!("123-45-6789")));
    assert!(accepts("hexcolor", json!("#FFAA00")));
    assert!(accepts("rgbcolor", json!("rgb(255, 0, 10)")));
    assert!(accepts("password", json!("anything at all")));
}

#[test]
fn durations_in_go_and_strfmt_forms() {
    assert!(accepts("duration", json!("1h30m")));
    assert!(accepts("duration", json!("1.5s")));
    assert!(accepts("duration", json!("3 days")));
    assert!(!accepts("duration", json!("soon")));
}

#[test]
fn formats_kube_does_not_validate_are_ignored() {
    let props = json!({"n": {"type": "integer", "format": "int32"},
        "s": {"type": "string", "format": "not-a-format"}});
    assert!(spec_errors(props.clone(), json!({"n": 1_099_511_627_776_i64, "s": "x"})).is_empty());
    assert_eq!(
        spec_errors(props, json!({"n": 1.5})),
        vec![
            r#"spec.n: Invalid value: "number": spec.n in body must be of type integer: "number""#
        ]
    );
}

#[test]
fn a_format_on_a_non_string_names_the_go_format_it_got() {
    assert_eq!(
        spec_errors(
            json!({"d": {"type": "string", "format": "date"}}),
            json!({"d": 5})
        ),
        vec![r#"spec.d: Invalid value: "int64": spec.d in body must be of type date: "int64""#]
    );
}

#[test]
fn a_float_against_a_string_format_is_named_float64() {
    assert_eq!(
        spec_errors(
            json!({"d": {"type": "string", "format": "date"}}),
            json!({"d": 1.5})
        ),
        vec![r#"spec.d: Invalid value: "float64": spec.d in body must be of type date: "float64""#]
    );
}
