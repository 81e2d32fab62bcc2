//! Small read helpers over objects held as `serde_json::Value`: names,
//! labels, nested strings, and the container lists of a pod spec.

use std::collections::BTreeMap;

use serde_json::Value;

/// The container lists of a PodSpec, in kube's visiting order.
pub const POD_CONTAINER_FIELDS: [&str; 3] = ["initContainers", "containers", "ephemeralContainers"];

/// The value at a path of object keys, if every step exists.
pub fn get<'a>(object: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(object, |v, key| v.get(*key))
}

/// The string at a path, if it exists and is a string.
pub fn get_str<'a>(object: &'a Value, path: &[&str]) -> Option<&'a str> {
    get(object, path).and_then(Value::as_str)
}

/// `metadata.name`, "" when absent.
pub fn name(object: &Value) -> &str {
    get_str(object, &["metadata", "name"]).unwrap_or("")
}

/// `metadata.namespace`, "" when absent.
pub fn namespace(object: &Value) -> &str {
    get_str(object, &["metadata", "namespace"]).unwrap_or("")
}

/// `metadata.name`, else `metadata.generateName`, when either is non-empty.
pub fn name_or_generate_name(object: &Value) -> Option<String> {
    ["name", "generateName"]
        .iter()
        .filter_map(|key| get_str(object, &["metadata", key]))
        .find(|s| !s.is_empty())
        .map(str::to_string)
}

/// `metadata.labels` (string values only).
pub fn labels(object: &Value) -> BTreeMap<String, String> {
    string_map(object, &["metadata", "labels"])
}

/// `metadata.annotations` (string values only).
pub fn annotations(object: &Value) -> BTreeMap<String, String> {
    string_map(object, &["metadata", "annotations"])
}

fn string_map(object: &Value, path: &[&str]) -> BTreeMap<String, String> {
    get(object, path)
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// The array at a path, empty when absent or not an array.
pub fn array<'a>(object: &'a Value, path: &[&str]) -> &'a [Value] {
    get(object, path)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// Every container of a pod spec as (list field, index, container).
pub fn pod_containers(spec: &Value) -> Vec<(&'static str, usize, &Value)> {
    POD_CONTAINER_FIELDS
        .iter()
        .flat_map(|field| {
            array(spec, &[field])
                .iter()
                .enumerate()
                .map(move |(i, c)| (*field, i, c))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_names_and_labels() {
        let o =
            json!({"metadata": {"name": "", "generateName": "g-", "labels": {"a": "1", "n": 2}}});
        assert_eq!(name_or_generate_name(&o).as_deref(), Some("g-"));
        assert_eq!(labels(&o).len(), 1);
        assert_eq!(name(&o), "");
    }

    #[test]
    fn lists_containers_in_kube_order() {
        let spec = json!({"containers": [{"name": "b"}], "initContainers": [{"name": "a"}],
                          "ephemeralContainers": [{"name": "c"}, {"name": "d"}]});
        let order: Vec<_> = pod_containers(&spec)
            .iter()
            .map(|(f, i, c)| format!("{f}/{i}/{}", c["name"].as_str().unwrap()))
            .collect();
        assert_eq!(
            order,
            [
                "initContainers/0/a",
                "containers/0/b",
                "ephemeralContainers/0/c",
                "ephemeralContainers/1/d"
            ]
        );
    }
}
