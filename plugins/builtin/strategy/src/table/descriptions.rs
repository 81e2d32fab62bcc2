//! The description of each column as kube's printers give it (the API
//! field's own documentation), recorded from kube-apiserver 1.32 by
//! `tools/table-descriptions-from-golden.py` into `descriptions.txt`.

use serde_json::Value;
use std::collections::HashMap;
use std::sync::OnceLock;

const RECORDED: &str = include_str!("descriptions.txt");

/// `(group/plural, column)` → description.
fn table() -> &'static HashMap<(&'static str, &'static str), String> {
    static TABLE: OnceLock<HashMap<(&'static str, &'static str), String>> = OnceLock::new();
    TABLE.get_or_init(|| {
        RECORDED
            .lines()
            .filter_map(|line| {
                let mut parts = line.splitn(3, '\t');
                let (resource, column, text) = (parts.next()?, parts.next()?, parts.next()?);
                let description = serde_json::from_str::<String>(text).ok()?;
                Some(((resource, column), description))
            })
            .collect()
    })
}

/// Gives each of `columns` (column definitions) kube's description for
/// `group`'s `plural`, where one was recorded.
pub fn apply(group: &str, plural: &str, columns: &mut [Value]) {
    let resource = format!("{group}/{plural}");
    for column in columns {
        let name = column
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if let Some(text) = table().get(&(resource.as_str(), name)) {
            column["description"] = Value::String(text.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn columns_get_kubes_descriptions() {
        let mut columns = vec![
            json!({"name": "Ready", "description": "ours"}),
            json!({"name": "Nope"}),
        ];
        apply("apps", "replicasets", &mut columns);
        assert_eq!(
            columns[0]["description"],
            "The number of ready replicas for this replica set."
        );
        assert!(columns[1].get("description").is_none());
    }
}
