//! Renders JSON values the way Go prints the decoded `interface{}` in kube's
//! error messages (`%v`, `reflect.TypeOf`, encoding/json kind names), so that
//! patch errors read exactly like kube-apiserver's.

use serde_json::Value;

/// Go's `fmt.Sprintf("%v", v)` of a decoded JSON value: `map[a:1 b:[x y]]`.
pub(crate) fn go_value(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => go_number(n),
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(go_value).collect();
            format!("[{}]", parts.join(" "))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", go_value(&map[k])))
                .collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

fn go_number(n: &serde_json::Number) -> String {
    if n.is_f64() {
        n.as_f64().map(|f| f.to_string()).unwrap_or_default()
    } else {
        n.to_string()
    }
}

/// Go's `reflect.TypeOf(v)` string for a decoded JSON value (`%s` of it).
pub(crate) fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "%!s(<nil>)",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// encoding/json's name for a value's JSON kind, as in
/// `json: cannot unmarshal array into Go value of type ...`.
pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

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
    fn maps_print_sorted_like_go() {
        let v = json!({"name": "web", "image": "nginx", "ports": [80, 443], "x": null});
        assert_eq!(
            go_value(&v),
            "map[image:nginx name:web ports:[80 443] x:<nil>]"
        );
    }

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
