//! The preparations of the controllers' kinds: a Job's generated selector
//! (job strategy's `generateSelectorIfNeeded`) and a DaemonSet's template
//! generation (kept in apps/v1 as the annotation
//! `deprecated.daemonset.template.generation`).

use serde_json::{json, Value};

use crate::defaults::job_labels_from_template;
use crate::json::{ensure_object, metadata_mut, object_at};

/// The label that makes a Job's pods its own, and its legacy twin.
const CONTROLLER_UID: [&str; 2] = ["batch.kubernetes.io/controller-uid", "controller-uid"];
/// The label naming the Job on its pods, and its legacy twin.
const JOB_NAME: [&str; 2] = ["batch.kubernetes.io/job-name", "job-name"];
/// Where apps/v1 keeps a DaemonSet's template generation.
const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

/// Unless the selector is manual: the template is labelled with the Job's
/// name and uid (labels the client set are kept, for validation to judge),
/// and the selector matches the uid.
pub fn job_selector(job: &mut Value) {
    if job.pointer("/spec/manualSelector") == Some(&json!(true)) {
        return;
    }
    let text = |pointer: &str| {
        job.pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let (name, uid) = (text("/metadata/name"), text("/metadata/uid"));
    let Some(template) = job
        .get_mut("spec")
        .and_then(|s| ensure_object(s, "template"))
    else {
        return;
    };
    let labels = metadata_mut(template).and_then(|m| object_at(m, "labels"));
    if let Some(labels) = labels {
        // In the order kube's encoder writes them (sorted keys).
        let generated = [
            (CONTROLLER_UID[0], &uid),
            (JOB_NAME[0], &name),
            (CONTROLLER_UID[1], &uid),
            (JOB_NAME[1], &name),
        ];
        for (key, value) in generated {
            labels.entry(key).or_insert_with(|| json!(value));
        }
    }
    let selector = job
        .get_mut("spec")
        .and_then(|s| ensure_object(s, "selector"));
    let match_labels = selector.and_then(|s| ensure_object(s, "matchLabels"));
    if let Some(match_labels) = match_labels.and_then(Value::as_object_mut) {
        match_labels
            .entry(CONTROLLER_UID[0])
            .or_insert_with(|| json!(uid));
    }
    job_labels_from_template(job);
}

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
    fn a_job_selects_its_own_pods_by_uid() {
        let mut job = json!({"metadata": {"name": "pi", "uid": "u-1"},
                             "spec": {"template": {"spec": {}}}});
        job_selector(&mut job);
        let labels = json!({"batch.kubernetes.io/controller-uid": "u-1",
                            "controller-uid": "u-1",
                            "batch.kubernetes.io/job-name": "pi", "job-name": "pi"});
        assert_eq!(job["spec"]["template"]["metadata"]["labels"], labels);
        assert_eq!(
            job["spec"]["selector"],
            json!({"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}})
        );
        assert_eq!(
            job["metadata"]["labels"], labels,
            "a Job without labels takes its template's"
        );
    }

    #[test]
    fn a_manual_selector_is_left_alone_and_client_labels_kept() {
        let manual = json!({"metadata": {"name": "j", "uid": "u"}, "spec": {"manualSelector": true,
            "selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}}}});
        let mut job = manual.clone();
        job_selector(&mut job);
        assert_eq!(job, manual);
        let mut job = json!({"metadata": {"name": "j", "uid": "u", "labels": {"own": "1"}},
            "spec": {"template": {"metadata": {"labels": {"job-name": "other"}}}}});
        job_selector(&mut job);
        assert_eq!(
            job["spec"]["template"]["metadata"]["labels"]["job-name"],
            "other"
        );
        assert_eq!(job["metadata"]["labels"], json!({"own": "1"}));
    }

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
