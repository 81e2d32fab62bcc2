//! `ValidatePodUpdate`: a pod's spec is immutable except container images,
//! activeDeadlineSeconds (only lowered), added tolerations, removed
//! scheduling gates and a negative terminationGracePeriodSeconds set to 1.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common::{self, list, normalized, same, text};
use kube_rules::gofmt;

/// kube's message for any other change (followed by a diff of the specs).
pub const UPDATABLE_FIELDS: &str = "pod updates may not change fields other than \
`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,\
`spec.tolerations` (only additions to existing tolerations),\
`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

const MAX_DIFF_LINES: usize = 8;

/// The causes of an update from `old` to `new` (both pod specs).
pub fn validate(new: &Value, old: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    for key in ["containers", "initContainers"] {
        if !container_updates(new, old, key, &mut causes) {
            return causes;
        }
    }
    if !deadline_update(new, old, &mut causes) {
        return causes;
    }
    tolerations_update(new, old, &mut causes);
    let munged = munge(new, old);
    if !same(Some(&munged), Some(old)) {
        let diff = diff_lines(old, &munged);
        let detail = format!("{UPDATABLE_FIELDS}\n{}", diff.join("\n"));
        causes.push(common::forbidden("spec", &detail));
    }
    causes
}

/// Same number of containers, each still with an image; false stops here.
fn container_updates(new: &Value, old: &Value, key: &str, causes: &mut Vec<Cause>) -> bool {
    let containers = list(new, key);
    if containers.len() != list(old, key).len() {
        let detail = "pod updates may not add or remove containers";
        causes.push(common::forbidden(&format!("spec.{key}"), detail));
        return false;
    }
    for (i, container) in containers.iter().enumerate() {
        let image = text(container, "image");
        if image.trim() != image {
            let field = format!("spec.{key}[{i}].image");
            let detail = "must not have leading or trailing whitespace";
            causes.push(common::invalid_str(&field, image, detail));
        }
    }
    true
}

/// activeDeadlineSeconds may be set, or lowered, but not raised or removed.
fn deadline_update(new: &Value, old: &Value, causes: &mut Vec<Cause>) -> bool {
    let field = "spec.activeDeadlineSeconds";
    let old_value = old.get("activeDeadlineSeconds").and_then(Value::as_i64);
    let Some(value) = new.get("activeDeadlineSeconds").and_then(Value::as_i64) else {
        if old_value.is_some() {
            let detail = "must not update from a positive integer to nil value";
            causes.push(common::invalid(field, &gofmt::scalar(None), detail));
        }
        return true;
    };
    if !(0..=i64::from(i32::MAX)).contains(&value) {
        let detail = kube_rules::inclusive_range_error(0, i64::from(i32::MAX));
        causes.push(common::invalid(field, &value.to_string(), &detail));
        return false;
    }
    if old_value.is_some_and(|old| old < value) {
        let detail = "must be less than or equal to previous value";
        causes.push(common::invalid(field, &value.to_string(), detail));
        return false;
    }
    true
}

/// Every existing toleration must still be there (its seconds may change).
fn tolerations_update(new: &Value, old: &Value, causes: &mut Vec<Cause>) {
    let without_seconds = |t: &Value| {
        let mut t = t.clone();
        if let Some(map) = t.as_object_mut() {
            map.remove("tolerationSeconds");
        }
        t
    };
    let kept: Vec<Value> = list(new, "tolerations")
        .iter()
        .map(without_seconds)
        .collect();
    let all_kept = list(old, "tolerations").iter().all(|t| {
        let t = without_seconds(t);
        kept.iter().any(|k| same(Some(k), Some(&t)))
    });
    if !all_kept {
        let detail = "existing toleration can not be modified except its tolerationSeconds";
        causes.push(common::forbidden("spec.tolerations", detail));
    }
}

/// The new spec with every updatable field put back to its old value.
fn munge(new: &Value, old: &Value) -> Value {
    let mut munged = new.clone();
    let Some(map) = munged.as_object_mut() else {
        return munged;
    };
    for key in ["containers", "initContainers"] {
        if let Some(items) = map.get_mut(key).and_then(Value::as_array_mut) {
            for (item, before) in items.iter_mut().zip(list(old, key)) {
                if let Some(container) = item.as_object_mut() {
                    let image = before.get("image").cloned().unwrap_or(Value::Null);
                    container.insert("image".to_string(), image);
                }
            }
        }
    }
    for key in ["activeDeadlineSeconds", "tolerations", "schedulingGates"] {
        match old.get(key) {
            Some(value) => map.insert(key.to_string(), value.clone()),
            None => map.remove(key),
        };
    }
    let grace = "terminationGracePeriodSeconds";
    let old_grace = old.get(grace).and_then(Value::as_i64);
    if old_grace.is_some_and(|g| g < 0) && map.get(grace).and_then(Value::as_i64) == Some(1) {
        map.insert(
            grace.to_string(),
            old.get(grace).cloned().unwrap_or(Value::Null),
        );
    }
    munged
}

/// A short listing of what differs ("- path: old" / "+ path: new").
pub(crate) fn diff_lines(old: &Value, new: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    let (old, new) = (normalized(old), normalized(new));
    diff_into(old.as_ref(), new.as_ref(), "spec", &mut lines);
    lines
}

fn diff_into(old: Option<&Value>, new: Option<&Value>, path: &str, lines: &mut Vec<String>) {
    if lines.len() >= MAX_DIFF_LINES || old == new {
        return;
    }
    match (old, new) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let keys = a.keys().chain(b.keys().filter(|k| !a.contains_key(*k)));
            for key in keys {
                diff_into(a.get(key), b.get(key), &format!("{path}.{key}"), lines);
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                diff_into(Some(x), Some(y), &format!("{path}[{i}]"), lines);
            }
        }
        _ => {
            let show = |v: Option<&Value>| v.map_or("<unset>".to_string(), Value::to_string);
            lines.push(format!("- {path}: {}", show(old)));
            lines.push(format!("+ {path}: {}", show(new)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec() -> Value {
        json!({"containers": [{"name": "web", "image": "nginx:1.26",
            "ports": [{"containerPort": 80}]}],
            "tolerations": [{"key": "a", "operator": "Exists", "effect": "NoExecute",
                             "tolerationSeconds": 300}],
            "terminationGracePeriodSeconds": 30})
    }

    #[test]
    fn image_deadline_and_new_tolerations_may_change() {
        let mut new = spec();
        new["containers"][0]["image"] = json!("nginx:1.27");
        new["activeDeadlineSeconds"] = json!(60);
        new["tolerations"][0]["tolerationSeconds"] = json!(10);
        new["tolerations"]
            .as_array_mut()
            .unwrap()
            .push(json!({"key": "b", "operator": "Exists"}));
        assert!(validate(&new, &spec()).is_empty());
    }

    #[test]
    fn other_changes_are_forbidden_with_kubes_message() {
        let mut new = spec();
        new["containers"][0]["ports"][0]["containerPort"] = json!(81);
        let causes = validate(&new, &spec());
        assert_eq!(causes.len(), 1);
        assert_eq!(causes[0].field, "spec");
        assert_eq!(causes[0].cause_type, "FieldValueForbidden");
        assert!(causes[0].message.starts_with(
            "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,\
             `spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` \
             (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` \
             (allow it to be set to 1 if it was previously negative)\n"
        ));
        assert!(causes[0]
            .message
            .contains("- spec.containers[0].ports[0].containerPort: 80\n+ spec.containers[0].ports[0].containerPort: 81"));
    }

    #[test]
    fn containers_may_not_be_added_and_tolerations_not_removed() {
        let mut new = spec();
        new["containers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "b", "image": "x"}));
        let causes = validate(&new, &spec());
        assert_eq!(
            causes[0].message,
            "Forbidden: pod updates may not add or remove containers"
        );
        assert_eq!(causes[0].field, "spec.containers");
        let mut new = spec();
        new["tolerations"] = json!([]);
        let causes = validate(&new, &spec());
        assert_eq!(causes[0].field, "spec.tolerations");
        assert_eq!(
            causes[0].message,
            "Forbidden: existing toleration can not be modified except its tolerationSeconds"
        );
    }

    #[test]
    fn deadline_may_only_go_down() {
        let mut old = spec();
        old["activeDeadlineSeconds"] = json!(60);
        let mut new = old.clone();
        new["activeDeadlineSeconds"] = json!(120);
        assert_eq!(
            validate(&new, &old)[0].message,
            "Invalid value: 120: must be less than or equal to previous value"
        );
        let causes = validate(&spec(), &old);
        assert_eq!(
            causes[0].message,
            "Invalid value: \"null\": must not update from a positive integer to nil value"
        );
    }
}
