//! The batch group's (batch/v1) defaults, from kube's
//! `pkg/apis/batch/v1/defaults.go` with 1.32's default feature gates
//! (JobPodReplacementPolicy on).

use serde_json::{json, Value};

use crate::json::{child_mut, is_empty, items_mut, metadata_mut, set_default, set_if_zero};
use crate::kinds::core::defaults::pod;

/// A Job's backoff limit when it has a per-index one (`math.MaxInt32`).
const UNLIMITED_BACKOFF: i64 = 2_147_483_647;

/// `SetDefaults_Job`: one completion at a time, 6 retries, NonIndexed, not
/// suspended, no manual selector, pods replaced once terminating or failed
/// (once failed under a pod failure policy), the template's labels as the
/// Job's when it has none.
pub fn job(object: &mut Value) {
    labels_from_template(object);
    if let Some(spec) = child_mut(object, "spec") {
        job_spec(spec);
    }
    pod::template(object, "/spec/template");
}

fn job_spec(spec: &mut Value) {
    let unset = |key: &str| spec.get(key).is_none_or(Value::is_null);
    if unset("completions") && unset("parallelism") {
        set_default(spec, "/completions", json!(1));
    }
    set_default(spec, "/parallelism", json!(1));
    let per_index = spec
        .get("backoffLimitPerIndex")
        .is_some_and(|v| !v.is_null());
    let backoff = if per_index { UNLIMITED_BACKOFF } else { 6 };
    set_default(spec, "/backoffLimit", json!(backoff));
    set_default(spec, "/completionMode", json!("NonIndexed"));
    set_default(spec, "/suspend", json!(false));
    let failure_policy = spec.get("podFailurePolicy").is_some_and(Value::is_object);
    if let Some(policy) = child_mut(spec, "podFailurePolicy") {
        for rule in items_mut(policy, "rules") {
            for pattern in items_mut(rule, "onPodConditions") {
                set_if_zero(pattern, "/status", json!("True"));
            }
        }
    }
    let replacement = if failure_policy {
        "Failed"
    } else {
        "TerminatingOrFailed"
    };
    set_default(spec, "/podReplacementPolicy", json!(replacement));
    set_default(spec, "/manualSelector", json!(false));
}

/// A Job without labels takes its pod template's.
pub fn labels_from_template(object: &mut Value) {
    let labels = object
        .pointer("/spec/template/metadata/labels")
        .filter(|l| l.is_object())
        .cloned();
    let Some(labels) = labels else {
        return;
    };
    if is_empty(object.pointer("/metadata/labels")) {
        if let Some(metadata) = metadata_mut(object) {
            metadata.insert("labels".into(), labels);
        }
    }
}

/// `SetDefaults_CronJob`: concurrent runs allowed, not suspended, three
/// successful and one failed Job kept; the Job template's pod template.
pub fn cron_job(object: &mut Value) {
    if let Some(spec) = child_mut(object, "spec") {
        set_if_zero(spec, "/concurrencyPolicy", json!("Allow"));
        set_default(spec, "/suspend", json!(false));
        set_default(spec, "/successfulJobsHistoryLimit", json!(3));
        set_default(spec, "/failedJobsHistoryLimit", json!(1));
    }
    pod::template(object, "/spec/jobTemplate/spec/template");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defaults::with;

    #[test]
    fn a_minimal_job() {
        let j = with(
            job,
            json!({"metadata": {"name": "j"}, "spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}),
        );
        let mut spec = j["spec"].clone();
        let template = spec.as_object_mut().and_then(|s| s.remove("template"));
        assert_eq!(
            spec,
            json!({"parallelism": 1, "completions": 1, "backoffLimit": 6,
                   "completionMode": "NonIndexed", "suspend": false,
                   "podReplacementPolicy": "TerminatingOrFailed", "manualSelector": false})
        );
        let template = template.unwrap_or_default();
        assert_eq!(template["spec"]["restartPolicy"], "Never");
        assert_eq!(
            template["spec"]["containers"][0]["imagePullPolicy"],
            "Always"
        );
        assert!(j["metadata"].get("labels").is_none());
    }

    #[test]
    fn job_counts_and_policies() {
        let parallel = with(job, json!({"spec": {"parallelism": 1}}));
        assert!(parallel["spec"].get("completions").is_none());
        let parallel = with(job, json!({"spec": {"parallelism": 3}}));
        assert_eq!(parallel["spec"]["parallelism"], 3);
        assert!(parallel["spec"].get("completions").is_none());
        let completions = with(job, json!({"spec": {"completions": 5}}));
        assert_eq!(completions["spec"]["parallelism"], 1);
        let per_index = with(
            job,
            json!({"spec": {"backoffLimitPerIndex": 1,
            "podFailurePolicy": {"rules": [{"action": "Ignore",
                "onPodConditions": [{"type": "DisruptionTarget"}]}]}}}),
        );
        assert_eq!(per_index["spec"]["backoffLimit"], 2_147_483_647);
        assert_eq!(per_index["spec"]["podReplacementPolicy"], "Failed");
        assert_eq!(
            per_index["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0],
            json!({"type": "DisruptionTarget", "status": "True"})
        );
    }

    #[test]
    fn a_job_without_labels_takes_its_templates() {
        let j = with(
            job,
            json!({"metadata": {}, "spec": {"template": {
            "metadata": {"labels": {"app": "a"}}}}}),
        );
        assert_eq!(j["metadata"]["labels"], json!({"app": "a"}));
        let own = with(
            job,
            json!({"metadata": {"labels": {"x": "1"}}, "spec": {"template": {
            "metadata": {"labels": {"app": "a"}}}}}),
        );
        assert_eq!(own["metadata"]["labels"], json!({"x": "1"}));
    }

    #[test]
    fn a_minimal_cron_job() {
        let cj = with(
            cron_job,
            json!({"spec": {"schedule": "* * * * *", "jobTemplate": {
            "spec": {"template": {"spec": {"restartPolicy": "OnFailure",
                "containers": [{"name": "c", "image": "busybox:1"}]}}}}}}),
        );
        let spec = &cj["spec"];
        assert_eq!(spec["concurrencyPolicy"], "Allow");
        assert_eq!(spec["suspend"], false);
        assert_eq!(spec["successfulJobsHistoryLimit"], 3);
        assert_eq!(spec["failedJobsHistoryLimit"], 1);
        let job_spec = &spec["jobTemplate"]["spec"];
        assert!(
            job_spec.get("backoffLimit").is_none(),
            "a Job template is not a Job"
        );
        assert_eq!(
            job_spec["template"]["spec"]["containers"][0]["imagePullPolicy"],
            "IfNotPresent"
        );
        assert_eq!(job_spec["template"]["spec"]["restartPolicy"], "OnFailure");
    }
}
