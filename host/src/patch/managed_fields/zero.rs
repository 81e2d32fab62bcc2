//! The object a create is compared with: kube compares a built-in kind's
//! new object with its Go zero value (`scope.Creater.New(kind)`), in which
//! non-pointer structs are present (empty) and fields without `omitempty`
//! are present at their zero value (`""`, `0`, `false`, null). Which
//! fields those are is `go_zero.txt`, made by
//! `tools/go-zero-from-golden.py` from kube's OpenAPI (its `default: {}`
//! and `required`). A custom resource's (or an unknown type's) is empty.

use std::collections::HashMap;
use std::sync::LazyLock;

use serde_json::{Map, Value};

/// Deepest struct nesting followed (Go's non-pointer structs cannot nest
/// without end; this only guards the table).
const MAX_DEPTH: usize = 32;

/// Per type, its zero value's fields: (field, zero) with the zero a JSON
/// scalar or the name of the struct type whose zero it is.
static TABLE: LazyLock<HashMap<&'static str, Vec<(&'static str, &'static str)>>> =
    LazyLock::new(|| {
        include_str!("go_zero.txt")
            .lines()
            .filter_map(|line| {
                let mut words = line.split_whitespace();
                let name = words.next()?;
                let fields = words.filter_map(|w| w.split_once('=')).collect();
                Some((name, fields))
            })
            .collect()
    });

/// The Go zero value of the type called `name`.
pub fn zero_object(name: &str) -> Value {
    Value::Object(zero_struct(name, 0))
}

fn zero_struct(name: &str, depth: usize) -> Map<String, Value> {
    let mut out = Map::new();
    let Some(fields) = TABLE.get(name) else {
        return out;
    };
    for (field, zero) in fields {
        let value = match *zero {
            "null" => Value::Null,
            "\"\"" => Value::String(String::new()),
            "0" => Value::from(0),
            "false" => Value::Bool(false),
            "{}" => Value::Object(Map::new()),
            _ if depth < MAX_DEPTH => Value::Object(zero_struct(zero, depth + 1)),
            _ => Value::Object(Map::new()),
        };
        out.insert((*field).to_string(), value);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn non_pointer_structs_and_fields_without_omitempty() {
        let zero = zero_object("io.k8s.api.apps.v1.StatefulSet");
        assert_eq!(zero["spec"]["serviceName"], json!(""));
        assert_eq!(zero["spec"]["selector"], Value::Null);
        assert_eq!(zero["spec"]["template"]["spec"]["containers"], Value::Null);
        assert_eq!(zero["metadata"], json!({}));
        assert!(
            zero["spec"].get("replicas").is_none(),
            "a pointer is absent"
        );
        assert_eq!(zero_object("com.example.v1.Unknown"), json!({}));
    }
}
