//! The printers of Jobs and CronJobs (kube's printers.go, wide cells included).

use crate::table::access::{
    age, format_label_selector, human_duration, int, list, name, opt_int, since, text, time,
};
use crate::table::columns;
use crate::table::workloads::{with_template, TEMPLATE_CONTAINERS};
use crate::table::Column;
use chrono::{DateTime, Utc};
use serde_json::Value;

pub(crate) fn cron_job_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text("Schedule", "The cron schedule."),
        columns::text("Timezone", "Time zone of the schedule."),
        columns::col("Suspend", "boolean", "Whether new runs are suspended.", 0),
        columns::int("Active", "Number of running jobs."),
        columns::text("Last Schedule", "Time since the job was last scheduled."),
        columns::AGE,
        columns::CONTAINERS,
        columns::IMAGES,
        columns::SELECTOR,
    ]
}

pub(crate) fn job_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text("Status", "Status of the job."),
        columns::text(
            "Completions",
            "Succeeded pods out of the completions wanted.",
        ),
        columns::text("Duration", "Time required to complete the job."),
        columns::AGE,
        columns::CONTAINERS,
        columns::IMAGES,
        columns::SELECTOR,
    ]
}

/// The status of the first condition of a type is "True".
fn job_condition(obj: &Value, kind: &str) -> bool {
    list(obj, "/status/conditions")
        .iter()
        .find(|c| text(c, "/type") == kind)
        .is_some_and(|c| text(c, "/status") == "True")
}

fn job_status(obj: &Value) -> &'static str {
    let deleting = obj
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null());
    if job_condition(obj, "Complete") {
        "Complete"
    } else if job_condition(obj, "Failed") {
        "Failed"
    } else if deleting {
        "Terminating"
    } else if job_condition(obj, "Suspended") {
        "Suspended"
    } else if job_condition(obj, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    }
}

fn job_completions(obj: &Value) -> String {
    let succeeded = int(obj, "/status/succeeded");
    if let Some(c) = opt_int(obj, "/spec/completions") {
        return format!("{succeeded}/{c}");
    }
    match int(obj, "/spec/parallelism") {
        p if p > 1 => format!("{succeeded}/1 of {p}"),
        _ => format!("{succeeded}/1"),
    }
}

fn job_duration(obj: &Value, now: DateTime<Utc>) -> String {
    match (
        time(obj, "/status/startTime"),
        time(obj, "/status/completionTime"),
    ) {
        (None, _) => String::new(),
        (Some(start), None) => human_duration(now - start),
        (Some(start), Some(done)) => human_duration(done - start),
    }
}

pub(crate) fn job_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let cells = vec![
        name(obj),
        Value::from(job_status(obj)),
        Value::from(job_completions(obj)),
        Value::from(job_duration(obj, now)),
        age(obj, now),
    ];
    let mut cells = with_template(cells, obj, TEMPLATE_CONTAINERS);
    cells.push(Value::from(format_label_selector(
        obj.pointer("/spec/selector"),
    )));
    cells
}

/// kube's `printBoolPtr`: "True" / "False" / "<unset>".
fn bool_ptr(v: Option<&Value>) -> &'static str {
    match v.and_then(Value::as_bool) {
        Some(true) => "True",
        Some(false) => "False",
        None => "<unset>",
    }
}

pub(crate) fn cron_job_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let last = match time(obj, "/status/lastScheduleTime") {
        Some(t) => since(Some(t), now),
        None => "<none>".to_string(),
    };
    let tz = obj
        .pointer("/spec/timeZone")
        .and_then(Value::as_str)
        .unwrap_or("<none>");
    let cells = vec![
        name(obj),
        Value::from(text(obj, "/spec/schedule")),
        Value::from(tz),
        Value::from(bool_ptr(obj.pointer("/spec/suspend"))),
        Value::from(list(obj, "/status/active").len() as i64),
        Value::from(last),
        age(obj, now),
    ];
    let pointer = "/spec/jobTemplate/spec/template/spec/containers";
    let mut cells = with_template(cells, obj, pointer);
    let selector = obj.pointer("/spec/jobTemplate/spec/selector");
    cells.push(Value::from(format_label_selector(selector)));
    cells
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        crate::table::at("2024-01-02T00:00:00Z")
    }

    #[test]
    fn job_status_completions_duration() {
        let job = json!({
            "metadata": {"name": "pi"},
            "spec": {"completions": 1, "selector": {}},
            "status": {"succeeded": 1, "startTime": "2024-01-01T00:00:00Z",
                       "completionTime": "2024-01-01T00:00:45Z",
                       "conditions": [{"type": "Complete", "status": "True"}]}
        });
        let cells = job_row(&job, now());
        assert_eq!(cells[1..4], [json!("Complete"), json!("1/1"), json!("45s")]);
        assert_eq!(cells[7], json!("<none>"));
        let par = json!({"spec": {"parallelism": 3}, "status": {}});
        assert_eq!(job_completions(&par), "0/1 of 3");
        assert_eq!(job_status(&par), "Running");
    }

    #[test]
    fn cron_job_cells() {
        let cj = json!({"metadata": {"name": "c"},
                        "spec": {"schedule": "*/5 * * * *", "suspend": false},
                        "status": {"active": [{"name": "j1"}],
                                   "lastScheduleTime": "2024-01-01T23:58:00Z"}});
        let cells = cron_job_row(&cj, now());
        assert_eq!(
            cells[1..6],
            [
                json!("*/5 * * * *"),
                json!("<none>"),
                json!("False"),
                json!(1),
                json!("2m")
            ]
        );
    }
}
