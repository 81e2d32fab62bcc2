//! Renders bad values the way kube-apiserver 1.33 prints them in field
//! errors: strings quoted like Go's `%q`, integers plainly, and composite
//! values (label maps, string lists, label selectors) like Go's `%#v`.

use serde_json::Value;

/// A string quoted like Go's `strconv.Quote` / `%q`.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        push_escaped(&mut out, c);
    }
    out.push('"');
    out
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{7}' => out.push_str("\\a"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        '\u{b}' => out.push_str("\\v"),
        c if (c as u32) < 0x80 && c.is_control() => {
            out.push_str(&format!("\\x{:02x}", c as u32));
        }
        c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
        c => out.push(c),
    }
}

/// A JSON value printed as Go prints the scalar it decodes to
/// (integers plainly, strings quoted, `null` for nothing).
pub fn scalar(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => quote("null"),
        Some(Value::String(s)) => quote(s),
        Some(other) => other.to_string(),
    }
}

/// A `map[string]string` as `%#v`: keys sorted, `(nil)` when absent.
pub fn string_map(value: Option<&Value>) -> String {
    let Some(map) = value.and_then(Value::as_object) else {
        return "map[string]string(nil)".to_string();
    };
    let mut pairs: Vec<(&String, String)> = map
        .iter()
        .map(|(k, v)| (k, v.as_str().unwrap_or_default().to_string()))
        .collect();
    pairs.sort();
    let body: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{}:{}", quote(k), quote(v)))
        .collect();
    format!("map[string]string{{{}}}", body.join(", "))
}

/// A `[]string` as `%#v`, `(nil)` when absent.
pub fn string_slice(value: Option<&Value>) -> String {
    let Some(items) = value.and_then(Value::as_array) else {
        return "[]string(nil)".to_string();
    };
    let body: Vec<String> = items
        .iter()
        .map(|v| quote(v.as_str().unwrap_or_default()))
        .collect();
    format!("[]string{{{}}}", body.join(", "))
}

/// A `[]string` built from plain strings, as `%#v`.
pub fn strings(items: &[String]) -> String {
    let body: Vec<String> = items.iter().map(|s| quote(s)).collect();
    format!("[]string{{{}}}", body.join(", "))
}

/// A `metav1.LabelSelector` as `%#v` (the pointer is dereferenced first).
pub fn label_selector(selector: &Value) -> String {
    format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{}}}",
        string_map(selector.get("matchLabels")),
        requirements(selector.get("matchExpressions"))
    )
}

fn requirements(value: Option<&Value>) -> String {
    let Some(items) = value.and_then(Value::as_array) else {
        return "[]v1.LabelSelectorRequirement(nil)".to_string();
    };
    let body: Vec<String> = items.iter().map(requirement).collect();
    format!("[]v1.LabelSelectorRequirement{{{}}}", body.join(", "))
}

fn requirement(req: &Value) -> String {
    let text = |key: &str| req.get(key).and_then(Value::as_str).unwrap_or_default();
    format!(
        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{}}}",
        quote(text("key")),
        quote(text("operator")),
        string_slice(req.get("values"))
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quotes_like_go() {
        assert_eq!(quote("Foo"), "\"Foo\"");
        assert_eq!(quote("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
        assert_eq!(quote("\u{1}é"), "\"\\x01é\"");
    }

    #[test]
    fn maps_are_sorted_and_nil_when_absent() {
        let labels = json!({"tier": "web", "app": "x"});
        assert_eq!(
            string_map(Some(&labels)),
            r#"map[string]string{"app":"x", "tier":"web"}"#
        );
        assert_eq!(string_map(None), "map[string]string(nil)");
        assert_eq!(string_map(Some(&json!({}))), "map[string]string{}");
    }

    #[test]
    fn selectors_print_like_the_famous_immutable_error() {
        let sel = json!({"matchLabels": {"app": "nginx"}});
        assert_eq!(
            label_selector(&sel),
            "v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"nginx\"}, \
             MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"
        );
        let sel = json!({"matchExpressions": [{"key": "a", "operator": "In", "values": ["x"]}]});
        assert_eq!(
            label_selector(&sel),
            "v1.LabelSelector{MatchLabels:map[string]string(nil), \
             MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement\
             {Key:\"a\", Operator:\"In\", Values:[]string{\"x\"}}}}"
        );
    }

    #[test]
    fn scalars_and_slices() {
        assert_eq!(scalar(Some(&json!(70000))), "70000");
        assert_eq!(scalar(None), "\"null\"");
        assert_eq!(
            strings(&["10.0.0.1".into(), "fd00::1".into()]),
            r#"[]string{"10.0.0.1", "fd00::1"}"#
        );
    }
}
