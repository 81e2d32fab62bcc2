//! batch/v1 Job and CronJob (`ValidateJob`, `ValidateJobUpdate`,
//! `ValidateCronJobCreate`, `ValidateCronJobUpdate` of kube's
//! `pkg/apis/batch/validation`): counts, completion modes, pod failure and
//! success policies, the template's restart policy, the schedule as
//! robfig/cron reads it, and what a Job may not change.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use super::cron;
use super::job_policies;
use crate::common::{self, list, opt_int, same, text};
use crate::kinds::core::pods;
use crate::selector;
use kube_rules::gofmt;

const MAX_PARALLELISM_INDEXED: i64 = 100_000;
const MAX_FAILED_INDEXES: i64 = 100_000;
const COMPLETIONS_SOFT_LIMIT: i64 = 100_000;
const PARALLELISM_HIGH_COMPLETIONS: i64 = 10_000;
const MAX_FAILED_HIGH_COMPLETIONS: i64 = 10_000;
const CONCURRENCY: [&str; 3] = ["Allow", "Forbid", "Replace"];

fn spec_of(object: &Value) -> &Value {
    object.get("spec").unwrap_or(&Value::Null)
}

/// A Job create or update.
pub fn job(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let spec = spec_of(object);
    let prefixed = old.is_none_or(|old| {
        let labels = old.pointer("/spec/template/metadata/labels");
        PREFIXED_LABELS
            .iter()
            .all(|key| labels.and_then(|l| l.get(*key)).is_some())
    });
    let mut causes = generated_selector(object, spec, prefixed);
    causes.extend(job_spec(spec, "spec"));
    indexed_host_names(object, spec, &mut causes);
    if let Some(old) = old {
        job_update(spec, spec_of(old), &mut causes);
    }
    causes
}

const PREFIXED_LABELS: [&str; 2] = [
    "batch.kubernetes.io/controller-uid",
    "batch.kubernetes.io/job-name",
];

/// `validateGeneratedSelector`: a generated selector selects the Job's
/// own uid and name, and the template carries those labels.
fn generated_selector(object: &Value, spec: &Value, prefixed: bool) -> Vec<Cause> {
    let uid = object
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let manual = spec.get("manualSelector").and_then(Value::as_bool) == Some(true);
    let Some(sel) = spec
        .get("selector")
        .filter(|s| !s.is_null() && !manual && !uid.is_empty())
    else {
        return Vec::new();
    };
    let name = crate::json::name(object).unwrap_or_default();
    let labels = spec.pointer("/template/metadata/labels");
    let mut expected = vec![("controller-uid", uid), ("job-name", name)];
    if prefixed {
        expected.extend([(PREFIXED_LABELS[0], uid), (PREFIXED_LABELS[1], name)]);
    }
    let mut causes = Vec::new();
    for (key, value) in &expected {
        let field = format!("spec.template.metadata.labels[{key}]");
        let detail = format!("must be '{value}'");
        match labels.and_then(|l| l.get(*key)).and_then(Value::as_str) {
            None => causes.push(common::required(&field, &detail)),
            Some(actual) if actual != *value => {
                causes.push(common::invalid(&field, &gofmt::string_map(labels), &detail))
            }
            Some(_) => {}
        }
    }
    let generated: serde_json::Map<String, Value> = expected
        .iter()
        .map(|(k, v)| (k.to_string(), Value::from(*v)))
        .collect();
    if selector::check(sel, "").1 && !selector::matches(sel, Some(&Value::Object(generated))) {
        let detail = "`selector` not auto-generated";
        causes.push(common::invalid(
            "spec.selector",
            &gofmt::label_selector(sel),
            detail,
        ));
    }
    causes
}

/// `ValidateJobSpec`: the spec, a selector, and the selector matching.
fn job_spec(spec: &Value, at: &str) -> Vec<Cause> {
    let mut causes = job_spec_fields(spec, at);
    let field = format!("{at}.selector");
    let sel = spec.get("selector").filter(|s| !s.is_null());
    let usable = match sel {
        None => {
            causes.push(common::required(&field, ""));
            true
        }
        Some(sel) => {
            let (problems, usable) = selector::check(sel, &field);
            causes.extend(problems);
            usable
        }
    };
    let labels = spec.pointer("/template/metadata/labels");
    let matched = sel.is_some_and(|s| selector::is_empty(s) || selector::matches(s, labels));
    if usable && !matched {
        causes.push(common::invalid(
            &format!("{at}.template.metadata.labels"),
            &gofmt::string_map(labels),
            "`selector` does not match template `labels`",
        ));
    }
    causes
}

fn push_non_negative(causes: &mut Vec<Cause>, spec: &Value, at: &str, key: &str) {
    if let Some(value) = opt_int(spec, key) {
        causes.extend(common::non_negative(&format!("{at}.{key}"), value));
    }
}

/// `validateJobSpec`: what a Job and a CronJob's job template share.
fn job_spec_fields(spec: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    for key in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
        "maxFailedIndexes",
    ] {
        push_non_negative(&mut causes, spec, at, key);
    }
    let has = |key: &str| spec.get(key).is_some_and(|v| !v.is_null());
    if has("maxFailedIndexes") && !has("backoffLimitPerIndex") {
        let field = format!("{at}.backoffLimitPerIndex");
        causes.push(common::required(
            &field,
            "when maxFailedIndexes is specified",
        ));
    }
    if let Some(managed_by) = spec.get("managedBy").and_then(Value::as_str) {
        let field = format!("{at}.managedBy");
        causes.extend(common::domain_prefixed_path(&field, managed_by));
        if managed_by.len() > 63 {
            causes.push(common::too_long(&field, 63));
        }
    }
    completion_mode(spec, at, &mut causes);
    if spec.get("podFailurePolicy").is_some_and(Value::is_object) {
        causes.extend(job_policies::pod_failure_policy(spec, at));
    }
    if let Some(policy) = spec.get("successPolicy").filter(|p| p.is_object()) {
        if text(spec, "completionMode") != "Indexed" {
            let field = format!("{at}.successPolicy");
            let detail = "requires indexed completion mode";
            causes.push(common::invalid(
                &field,
                &job_policies::render_success(policy),
                detail,
            ));
        } else {
            causes.extend(job_policies::success_policy(spec, at));
        }
    }
    replacement_policy(spec, at, &mut causes);
    template(spec, at, &mut causes);
    causes
}

fn completion_mode(spec: &Value, at: &str, causes: &mut Vec<Cause>) {
    let mode = spec.get("completionMode").and_then(Value::as_str);
    let value = |key: &str| opt_int(spec, key);
    let field = |key: &str| format!("{at}.{key}");
    match mode {
        None | Some("NonIndexed") => {
            for key in ["backoffLimitPerIndex", "maxFailedIndexes"] {
                if let Some(v) = value(key) {
                    let detail = "requires indexed completion mode";
                    causes.push(common::invalid(&field(key), &v.to_string(), detail));
                }
            }
        }
        Some("Indexed") => indexed(spec, at, causes),
        Some(other) => causes.push(common::not_supported(
            &field("completionMode"),
            other,
            &["NonIndexed", "Indexed"],
        )),
    }
}

fn indexed(spec: &Value, at: &str, causes: &mut Vec<Cause>) {
    let value = |key: &str| opt_int(spec, key);
    let field = |key: &str| format!("{at}.{key}");
    let completions = value("completions");
    let (parallelism, max_failed) = (value("parallelism"), value("maxFailedIndexes"));
    if completions.is_none() {
        causes.push(common::required(
            &field("completions"),
            "when completion mode is Indexed",
        ));
    }
    if let Some(p) = parallelism.filter(|p| *p > MAX_PARALLELISM_INDEXED) {
        let detail = format!(
            "must be less than or equal to {MAX_PARALLELISM_INDEXED} when completion mode is Indexed"
        );
        causes.push(common::invalid(
            &field("parallelism"),
            &p.to_string(),
            &detail,
        ));
    }
    if let (Some(c), Some(m)) = (completions, max_failed) {
        if m > c {
            let detail = "must be less than or equal to completions";
            causes.push(common::invalid(
                &field("maxFailedIndexes"),
                &m.to_string(),
                detail,
            ));
        }
    }
    if let Some(m) = max_failed.filter(|m| *m > MAX_FAILED_INDEXES) {
        let detail = format!("must be less than or equal to {MAX_FAILED_INDEXES}");
        causes.push(common::invalid(
            &field("maxFailedIndexes"),
            &m.to_string(),
            &detail,
        ));
    }
    let per_index = value("backoffLimitPerIndex").is_some();
    if completions.is_some_and(|c| c > COMPLETIONS_SOFT_LIMIT) && per_index {
        high_completions(parallelism, max_failed, at, causes);
    }
}

fn high_completions(
    parallelism: Option<i64>,
    max_failed: Option<i64>,
    at: &str,
    causes: &mut Vec<Cause>,
) {
    let tail = format!(
        "when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
    );
    match max_failed {
        None => causes.push(common::required(
            &format!("{at}.maxFailedIndexes"),
            &format!("must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}"),
        )),
        Some(m) if m > MAX_FAILED_HIGH_COMPLETIONS => causes.push(common::invalid(
            &format!("{at}.maxFailedIndexes"),
            &m.to_string(),
            &format!("must be less than or equal to {MAX_FAILED_HIGH_COMPLETIONS} {tail}"),
        )),
        Some(_) => {}
    }
    if let Some(p) = parallelism.filter(|p| *p > PARALLELISM_HIGH_COMPLETIONS) {
        causes.push(common::invalid(
            &format!("{at}.parallelism"),
            &p.to_string(),
            &format!("must be less than or equal to {PARALLELISM_HIGH_COMPLETIONS} {tail}"),
        ));
    }
}

fn replacement_policy(spec: &Value, at: &str, causes: &mut Vec<Cause>) {
    let Some(policy) = spec.get("podReplacementPolicy").and_then(Value::as_str) else {
        return;
    };
    let field = format!("{at}.podReplacementPolicy");
    let supported: &[&str] = if spec.get("podFailurePolicy").is_some_and(Value::is_object) {
        &["Failed"]
    } else {
        &["Failed", "TerminatingOrFailed"]
    };
    if !supported.contains(&policy) {
        causes.push(common::not_supported(&field, policy, supported));
    }
}

/// The pod template and its restart policy.
fn template(spec: &Value, at: &str, causes: &mut Vec<Cause>) {
    let pod = spec.pointer("/template/spec").unwrap_or(&Value::Null);
    causes.extend(pods::validate_spec(pod, &format!("{at}.template.spec")));
    let field = format!("{at}.template.spec.restartPolicy");
    match text(pod, "restartPolicy") {
        "" | "Always" => causes.push(common::required(
            &field,
            "valid values: \"OnFailure\", \"Never\"",
        )),
        "OnFailure" if spec.get("podFailurePolicy").is_some_and(Value::is_object) => {
            let detail = "only \"Never\" is supported when podFailurePolicy is specified";
            causes.push(common::invalid_str(&field, "OnFailure", detail));
        }
        "OnFailure" | "Never" => {}
        other => causes.push(common::not_supported(
            &field,
            other,
            &["OnFailure", "Never"],
        )),
    }
}

/// An Indexed Job's pods are named `<job>-<index>`: the last must be a DNS label.
fn indexed_host_names(object: &Value, spec: &Value, causes: &mut Vec<Cause>) {
    let completions = opt_int(spec, "completions").unwrap_or(0);
    if text(spec, "completionMode") != "Indexed" || completions <= 0 {
        return;
    }
    let name = crate::json::name(object).unwrap_or_default();
    let host = format!("{name}-{}", completions - 1);
    if !kube_rules::dns1123_label(&host).is_empty() {
        let detail = format!("will not able to create pod with invalid DNS label: {host}");
        causes.push(common::invalid_str("metadata.name", name, &detail));
    }
}

/// `ValidateJobSpecUpdate`'s immutable fields.
fn job_update(spec: &Value, old: &Value, causes: &mut Vec<Cause>) {
    let changed = |key: &str| !same(spec.get(key), old.get(key));
    let indexed = text(spec, "completionMode") == "Indexed";
    if changed("completions") {
        let shown = gofmt::scalar(spec.get("completions"));
        if !indexed {
            causes.push(common::immutable("spec.completions", &shown));
        } else if spec.get("completions").is_some_and(|c| !c.is_null())
            && spec.get("completions") != spec.get("parallelism")
        {
            let detail = "can only be modified in tandem with spec.parallelism";
            causes.push(common::invalid("spec.completions", &shown, detail));
        }
    }
    if changed("selector") {
        let shown = spec
            .get("selector")
            .filter(|s| !s.is_null())
            .map_or_else(|| gofmt::scalar(None), gofmt::label_selector);
        causes.push(common::immutable("spec.selector", &shown));
    }
    if !job_policies::template_unchanged(spec, old) {
        causes.push(common::immutable(
            "spec.template",
            "core.PodTemplateSpec{...}",
        ));
    }
    for key in [
        "completionMode",
        "podFailurePolicy",
        "backoffLimitPerIndex",
        "managedBy",
        "successPolicy",
    ] {
        if changed(key) {
            let field = format!("spec.{key}");
            causes.push(common::immutable(&field, &gofmt::scalar(spec.get(key))));
        }
    }
}

/// A CronJob create or update.
pub fn cron_job(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let spec = spec_of(object);
    let old_spec = old.map(spec_of);
    let mut causes = Vec::new();
    match text(spec, "schedule") {
        "" => causes.push(common::required("spec.schedule", "")),
        schedule => {
            let allow_tz = old_spec.is_some_and(|o| text(o, "schedule").contains("TZ"));
            schedule_format(schedule, allow_tz, spec.get("timeZone"), &mut causes);
        }
    }
    if let Some(deadline) = opt_int(spec, "startingDeadlineSeconds") {
        causes.extend(common::non_negative(
            "spec.startingDeadlineSeconds",
            deadline,
        ));
    }
    let zone = spec.get("timeZone").filter(|z| !z.is_null());
    if old_spec.is_none_or(|o| o.get("timeZone").filter(|z| !z.is_null()) != zone) {
        if let Some(zone) = zone.and_then(Value::as_str) {
            time_zone(zone, &mut causes);
        }
    }
    match text(spec, "concurrencyPolicy") {
        "" => causes.push(common::required("spec.concurrencyPolicy", "")),
        policy if !CONCURRENCY.contains(&policy) => causes.push(common::not_supported(
            "spec.concurrencyPolicy",
            policy,
            &CONCURRENCY,
        )),
        _ => {}
    }
    let template = spec.pointer("/jobTemplate/spec").unwrap_or(&Value::Null);
    job_template(template, &mut causes);
    for key in ["successfulJobsHistoryLimit", "failedJobsHistoryLimit"] {
        push_non_negative(&mut causes, spec, "spec", key);
    }
    if old.is_none() {
        let name = crate::json::name(object).unwrap_or_default();
        if name.len() > 52 {
            let detail = "must be no more than 52 characters";
            causes.push(common::invalid_str("metadata.name", name, detail));
        }
    }
    causes
}

fn schedule_format(schedule: &str, allow_tz: bool, zone: Option<&Value>, causes: &mut Vec<Cause>) {
    let field = "spec.schedule";
    if let Some(err) = cron::parse_error(schedule) {
        causes.push(common::invalid_str(field, schedule, &err));
    }
    let has_tz = schedule.contains("TZ");
    if allow_tz && has_tz && zone.is_some_and(|z| !z.is_null()) {
        let detail = "cannot use both timeZone field and TZ or CRON_TZ in schedule";
        causes.push(common::invalid_str(field, schedule, detail));
    } else if !allow_tz && has_tz {
        let detail = "cannot use TZ or CRON_TZ in schedule, use timeZone field instead";
        causes.push(common::invalid_str(field, schedule, detail));
    }
}

/// `validateTimeZone`: a well-formed name Go's time zone database knows.
fn time_zone(zone: &str, causes: &mut Vec<Cause>) {
    let field = "spec.timeZone";
    if zone.is_empty() {
        let detail = "timeZone must be nil or non-empty string";
        causes.push(common::invalid_str(field, zone, detail));
        return;
    }
    let part_ok = |part: &str| {
        let allowed = |c: char| c.is_ascii_alphanumeric() || ".-_+".contains(c);
        part != "."
            && part != ".."
            && !part.starts_with('-')
            && (1..=14).contains(&part.len())
            && part.chars().all(allowed)
    };
    if !zone.split('/').all(part_ok) {
        causes.push(common::invalid_str(
            field,
            zone,
            &format!("unknown time zone {zone}"),
        ));
        return;
    }
    if zone.eq_ignore_ascii_case("Local") {
        let detail =
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones";
        causes.push(common::invalid_str(field, zone, detail));
    }
    if !known_time_zone(zone) {
        let detail = format!("unknown time zone {zone}");
        causes.push(common::invalid_str(field, zone, &detail));
    }
}

/// The IANA zone names `time.LoadLocation` finds, one a line: written
/// from a tzdata `/usr/share/zoneinfo` (every TZif file but those under
/// `posix/` and `right/`, `posixrules`, `localtime` and `Factory`).
const TIME_ZONES: &str = include_str!("time_zones.txt");

fn known_time_zone(zone: &str) -> bool {
    matches!(zone, "UTC" | "Local") || TIME_ZONES.lines().any(|name| name == zone)
}

/// `ValidateJobTemplateSpec`.
fn job_template(spec: &Value, causes: &mut Vec<Cause>) {
    let at = "spec.jobTemplate.spec";
    causes.extend(job_spec_fields(spec, at));
    if let Some(sel) = spec.get("selector").filter(|s| !s.is_null()) {
        let field = format!("{at}.selector");
        let detail = "`selector` will be auto-generated";
        causes.push(common::invalid(&field, &gofmt::label_selector(sel), detail));
    }
    if spec.get("manualSelector").and_then(Value::as_bool) == Some(true) {
        let field = format!("{at}.manualSelector");
        causes.push(common::not_supported_rendered(
            &field,
            "true",
            &["nil", "false"],
        ));
    }
}

/// The names of the containers and init containers of a Job's template.
pub fn container_names(spec: &Value) -> Vec<&str> {
    let pod = spec.pointer("/template/spec").unwrap_or(&Value::Null);
    ["containers", "initContainers"]
        .iter()
        .flat_map(|key| list(pod, key))
        .map(|c| text(c, "name"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::messages;
    use serde_json::json;

    fn a_job(spec: Value) -> Value {
        let mut object = json!({"metadata": {"name": "j"}, "spec": {
            "selector": {"matchLabels": {"x": "y"}},
            "template": {"metadata": {"labels": {"x": "y"}},
                         "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}});
        for (key, value) in spec.as_object().cloned().unwrap_or_default() {
            object["spec"][key] = value;
        }
        object
    }

    #[test]
    fn job_counts_modes_and_restart_policy() {
        assert!(job(&a_job(json!({})), None).is_empty());
        let mut bad = a_job(json!({"parallelism": -1, "completionMode": "Indexed"}));
        bad["spec"]["template"]["spec"]["restartPolicy"] = json!("Always");
        assert_eq!(
            messages(&job(&bad, None)),
            vec![
                "spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
                "spec.completions: Required value: when completion mode is Indexed",
                "spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"",
            ]
        );
    }

    #[test]
    fn job_selector_is_immutable() {
        let old = a_job(json!({}));
        let new = a_job(json!({"selector": {"matchLabels": {"x": "y", "z": "w"}}}));
        let got = messages(&job(&new, Some(&old)));
        assert!(got
            .iter()
            .any(|m| m.starts_with("spec.selector: Invalid value: v1.LabelSelector")));
    }

    #[test]
    fn cron_job_schedule_and_policies() {
        let cj = json!({"metadata": {"name": "c"}, "spec": {"schedule": "not a schedule",
            "concurrencyPolicy": "Sometimes", "timeZone": "Local",
            "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "Never",
                "containers": [{"name": "c", "image": "i"}]}}}}}});
        assert_eq!(
            messages(&cron_job(&cj, None)),
            vec![
                "spec.schedule: Invalid value: \"not a schedule\": expected exactly 5 fields, found 3: [not a schedule]",
                "spec.timeZone: Invalid value: \"Local\": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
                "spec.concurrencyPolicy: Unsupported value: \"Sometimes\": supported values: \"Allow\", \"Forbid\", \"Replace\"",
            ]
        );
        let mut mars = cj.clone();
        mars["spec"] = json!({"schedule": "@hourly", "concurrencyPolicy": "Allow", "timeZone": "Mars/Olympus",
            "jobTemplate": cj["spec"]["jobTemplate"].clone()});
        assert_eq!(
            messages(&cron_job(&mars, None)),
            vec!["spec.timeZone: Invalid value: \"Mars/Olympus\": unknown time zone Mars/Olympus"]
        );
        mars["spec"]["timeZone"] = json!("Europe/Paris");
        assert!(cron_job(&mars, None).is_empty());
    }
}
