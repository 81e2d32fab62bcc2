//! Events (`ValidateEventCreate`): the legacy rules every Event passes and,
//! for events.k8s.io/v1, the strict ones. Both APIs' field names map onto
//! kube's internal Event.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common;
use kube_rules::qualified_name;

/// The API an Event is written through.
#[derive(Clone, Copy, PartialEq)]
pub enum Api {
    CoreV1,
    EventsV1,
}

/// The internal Event's fields, read from either API's object.
struct Fields<'a> {
    event: &'a Value,
    api: Api,
}

impl<'a> Fields<'a> {
    fn get(&self, core: &str, events: &str) -> Option<&'a Value> {
        let key = if self.api == Api::CoreV1 {
            core
        } else {
            events
        };
        self.event.get(key).filter(|v| !v.is_null())
    }
    fn text(&self, core: &str, events: &str) -> &'a str {
        self.get(core, events)
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
}

/// `ValidateEventCreate` for an Event written through `api`.
pub fn event(event: &Value, api: Api) -> Vec<Cause> {
    let f = Fields { event, api };
    let mut causes = legacy(&f);
    if api == Api::EventsV1 {
        strict(&f, &mut causes);
    }
    causes
}

fn legacy(f: &Fields) -> Vec<Cause> {
    let mut causes = Vec::new();
    let namespace = f
        .event
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let involved = f
        .get("involvedObject", "regarding")
        .and_then(|o| o.get("namespace"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mismatch = |causes: &mut Vec<Cause>| {
        causes.push(common::invalid_str(
            "involvedObject.namespace",
            involved,
            "does not match event.namespace",
        ));
    };
    if f.text("eventTime", "eventTime").is_empty() {
        let agrees = if involved.is_empty() {
            namespace.is_empty() || namespace == "default"
        } else {
            namespace == involved
        };
        if !agrees {
            mismatch(&mut causes);
        }
    } else {
        if involved.is_empty() && namespace != "default" && namespace != "kube-system" {
            mismatch(&mut causes);
        }
        reporting(f, &mut causes);
    }
    common::invalid_each(
        &mut causes,
        "namespace",
        namespace,
        kube_rules::dns1123_subdomain(namespace),
    );
    causes
}

fn reporting(f: &Fields, causes: &mut Vec<Cause>) {
    let name = if f.api == Api::CoreV1 {
        "reportingComponent"
    } else {
        "reportingController"
    };
    let controller = f.text("reportingComponent", "reportingController");
    if controller.is_empty() {
        causes.push(common::required(name, ""));
    }
    common::invalid_each(causes, name, controller, qualified_name(controller));
    let limited = [
        (
            "reportingInstance",
            f.text("reportingInstance", "reportingInstance"),
            128,
            true,
        ),
        ("action", f.text("action", "action"), 128, true),
        ("reason", f.text("reason", "reason"), 128, true),
        ("message", f.text("message", "note"), 4096, false),
    ];
    for (field, value, limit, required) in limited {
        if required && value.is_empty() {
            causes.push(common::required(field, ""));
        }
        if value.len() > limit {
            causes.push(common::invalid_str(
                field,
                "",
                &format!("can have at most {limit} characters"),
            ));
        }
    }
}

fn strict(f: &Fields, causes: &mut Vec<Cause>) {
    if let Some(series) = f.get("series", "series") {
        if series
            .get("count")
            .and_then(Value::as_i64)
            .unwrap_or_default()
            < 2
        {
            causes.push(common::invalid_str(
                "series.count",
                "",
                "should be at least 2",
            ));
        }
        if common::text(series, "lastObservedTime").is_empty() {
            causes.push(common::required("series.lastObservedTime", ""));
        }
    }
    if f.text("eventTime", "eventTime").is_empty() {
        causes.push(common::required("eventTime", ""));
    }
    let kind = f.text("type", "type");
    if kind != "Normal" && kind != "Warning" {
        causes.push(common::invalid_str(
            "type",
            "",
            &format!("has invalid value: {kind}"),
        ));
    }
    for (field, key) in [
        ("firstTimestamp", "deprecatedFirstTimestamp"),
        ("lastTimestamp", "deprecatedLastTimestamp"),
    ] {
        if !f.text(field, key).is_empty() {
            causes.push(common::invalid_str(field, "", "needs to be unset"));
        }
    }
    if f.get("count", "deprecatedCount")
        .and_then(Value::as_i64)
        .unwrap_or_default()
        != 0
    {
        causes.push(common::invalid_str("count", "", "needs to be unset"));
    }
    let source = f.get("source", "deprecatedSource");
    let set = |k: &str| source.is_some_and(|s| !common::text(s, k).is_empty());
    if set("component") || set("host") {
        causes.push(common::invalid_str("source", "", "needs to be unset"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_new_style_event_needs_its_reporter_and_a_known_type() {
        let e = json!({"metadata": {"name": "e", "namespace": "default"}, "eventTime": "2024-01-01T00:00:00.000000Z", "type": "Bogus"});
        let shown: Vec<String> = event(&e, Api::EventsV1)
            .into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        assert_eq!(shown[0], "reportingController: Required value");
        assert!(shown[1]
            .starts_with("reportingController: Invalid value: \"\": name part must be non-empty"));
        assert_eq!(
            &shown[3..],
            [
                "reportingInstance: Required value",
                "action: Required value",
                "reason: Required value",
                "type: Invalid value: \"\": has invalid value: Bogus"
            ]
        );
    }
}
