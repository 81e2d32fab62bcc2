//! A Job's PrepareForCreate: its generated selector (job strategy's
//! `generateSelectorIfNeeded`).

use serde_json::{json, Value};

use super::defaults::labels_from_template;
use crate::json::{ensure_object, metadata_mut, object_at};

/// The label that makes a Job's pods its own, and its legacy twin.
const CONTROLLER_UID: [&str; 2] = ["batch.kubernetes.io/controller-uid", "controller-uid"];
/// The label naming the Job on its pods, and its legacy twin.
const JOB_NAME: [&str; 2] = ["batch.kubernetes.io/job-name", "job-name"];

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
    labels_from_template(job);
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
}
