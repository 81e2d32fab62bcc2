//! The patch errors of encoding/json and mergepatch, worded as kube-apiserver
//! words them; Go's `%v`, `reflect.TypeOf` and JSON kind names of the values
//! they print are `kube_rules::gofmt`'s.

use kube_rules::gofmt::{json_kind, type_of as go_type, v as go_value};
use serde_json::Value;

/// `json: cannot unmarshal <kind> into Go value of type <go_type>`.
pub(crate) fn unmarshal_error(v: &Value, go_type: &str) -> String {
    format!(
        "json: cannot unmarshal {} into Go value of type {go_type}",
        json_kind(v)
    )
}

/// Text for a body that is not JSON; an empty body reads like Go's.
pub(crate) fn syntax_error(body: &[u8], err: &serde_json::Error) -> String {
    if body.iter().all(u8::is_ascii_whitespace) {
        "unexpected end of JSON input".to_string()
    } else {
        err.to_string()
    }
}

/// `mergepatch.ErrBadArgType`: `expected a <expected>, but received a <actual>`.
pub(crate) fn bad_arg_type(expected: &str, actual: &Value) -> String {
    format!("expected a {expected}, but received a {}", go_type(actual))
}

/// `mergepatch.ErrNoMergeKey`: `map: <m> does not contain declared merge key: <k>`.
pub(crate) fn no_merge_key(map: &Value, key: &str) -> String {
    format!(
        "map: {} does not contain declared merge key: {key}",
        go_value(map)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_key_and_type_errors_match_mergepatch() {
        assert_eq!(
            no_merge_key(&json!({"image": "nginx"}), "name"),
            "map: map[image:nginx] does not contain declared merge key: name"
        );
        assert_eq!(
            bad_arg_type("[]interface {}", &json!("x")),
            "expected a []interface {}, but received a string"
        );
        assert_eq!(
            unmarshal_error(&json!([1]), "map[string]interface {}"),
            "json: cannot unmarshal array into Go value of type map[string]interface {}"
        );
    }
}
