//! Small read helpers over objects held as `serde_json::Value`.

use serde_json::Value;

/// The value at a path of object keys, if every step exists.
pub(crate) fn get<'a>(object: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(object, |v, key| v.get(*key))
}

/// The string at a path, if it exists and is a string.
pub(crate) fn get_str<'a>(object: &'a Value, path: &[&str]) -> Option<&'a str> {
    get(object, path).and_then(Value::as_str)
}

/// The string at a path, "" when absent or not a string.
pub(crate) fn str_or_empty<'a>(object: &'a Value, path: &[&str]) -> &'a str {
    get_str(object, path).unwrap_or("")
}

/// The array at a path, empty when absent or not an array.
pub(crate) fn array<'a>(object: &'a Value, path: &[&str]) -> &'a [Value] {
    get(object, path)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// True when the path holds something other than null.
pub(crate) fn present(object: &Value, path: &[&str]) -> bool {
    get(object, path).is_some_and(|v| !v.is_null())
}
