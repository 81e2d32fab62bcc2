//! The apps kinds' own preparations: a DaemonSet's template generation
//! (kept in apps/v1 as the annotation
//! `deprecated.daemonset.template.generation`) and a StatefulSet's
//! `maxUnavailable` (MaxUnavailableStatefulSet, off in 1.32).

use serde_json::{json, Value};

use crate::json::{metadata_mut, object_at};

/// Where apps/v1 keeps a DaemonSet's template generation.
const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

/// A new DaemonSet's template generation is at least 1.
pub fn daemon_set_create(daemon_set: &mut Value) {
    let current = template_generation(daemon_set).unwrap_or(0);
    set_template_generation(daemon_set, current.max(1));
}

/// An update keeps the stored template generation, one more when the
/// template changed.
pub fn daemon_set_update(daemon_set: &mut Value, old: &Value) {
    let stored = template_generation(old).unwrap_or(0);
    let changed = daemon_set.pointer("/spec/template") != old.pointer("/spec/template");
    set_template_generation(daemon_set, stored + i64::from(changed));
}

fn template_generation(daemon_set: &Value) -> Option<i64> {
    let pointer = format!(
        "/metadata/annotations/{}",
        TEMPLATE_GENERATION.replace('/', "~1")
    );
    daemon_set.pointer(&pointer)?.as_str()?.parse().ok()
}

fn set_template_generation(daemon_set: &mut Value, generation: i64) {
    let annotations = metadata_mut(daemon_set).and_then(|m| object_at(m, "annotations"));
    if let Some(annotations) = annotations {
        annotations.insert(TEMPLATE_GENERATION.into(), json!(generation.to_string()));
    }
}

/// MaxUnavailableStatefulSet is off in 1.32: a new StatefulSet's
/// `maxUnavailable` is dropped, as on an update unless the stored one used it.
pub fn stateful_set_create(stateful_set: &mut Value) {
    drop_max_unavailable(stateful_set);
}

pub fn stateful_set_update(stateful_set: &mut Value, old: &Value) {
    let pointer = "/spec/updateStrategy/rollingUpdate/maxUnavailable";
    if old.pointer(pointer).is_none_or(Value::is_null) {
        drop_max_unavailable(stateful_set);
    }
}

fn drop_max_unavailable(stateful_set: &mut Value) {
    let rolling = stateful_set.pointer_mut("/spec/updateStrategy/rollingUpdate");
    if let Some(map) = rolling.and_then(Value::as_object_mut) {
        map.remove("maxUnavailable");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn daemon_set_template_generation() {
        let mut ds = json!({"metadata": {}, "spec": {"template": {"spec": {}}}});
        daemon_set_create(&mut ds);
        assert_eq!(ds["metadata"]["annotations"][TEMPLATE_GENERATION], "1");
        let old = ds.clone();
        let mut same = json!({"metadata": {"annotations": {TEMPLATE_GENERATION: "9"}},
                              "spec": {"template": {"spec": {}}}});
        daemon_set_update(&mut same, &old);
        assert_eq!(same["metadata"]["annotations"][TEMPLATE_GENERATION], "1");
        let mut changed =
            json!({"metadata": {}, "spec": {"template": {"spec": {"hostname": "h"}}}});
        daemon_set_update(&mut changed, &old);
        assert_eq!(changed["metadata"]["annotations"][TEMPLATE_GENERATION], "2");
    }

    #[test]
    fn stateful_sets_lose_max_unavailable() {
        let mut s = json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 1, "maxUnavailable": 2}}}});
        stateful_set_create(&mut s);
        assert_eq!(
            s,
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 1}}}})
        );
        let old = json!({"spec": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 1}}}});
        let mut kept =
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 2}}}});
        stateful_set_update(&mut kept, &old);
        assert_eq!(
            kept["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"],
            2
        );
    }
}
