//! One metric (spec or status) between v2's form (`metric`, `target`,
//! `current`) and v1's (the v2beta1-style flat fields kube keeps in v1's
//! annotations), field by field as kube's conversion functions.

use serde_json::{json, Map, Value};

/// The source kinds, in the Go order of MetricSpec/MetricStatus.
const SOURCES: [(&str, &str); 5] = [
    ("Object", "object"),
    ("Pods", "pods"),
    ("Resource", "resource"),
    ("ContainerResource", "containerResource"),
    ("External", "external"),
];

/// Builds an object from the present (non-null) values, in order.
fn fields(pairs: &[(&str, &Value)]) -> Value {
    let kept = pairs
        .iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.to_string(), (*v).clone()));
    Value::Object(kept.collect::<Map<String, Value>>())
}

/// A required v1 quantity: Go writes a zero Quantity as "0".
fn quantity(value: &Value) -> Value {
    match value {
        Value::Null => json!("0"),
        other => other.clone(),
    }
}

/// `{"type": T, "<source>": converted}` for the metric's own source.
fn per_source(metric: &Value, convert: impl Fn(&str, &Value) -> Value) -> Value {
    let kind = metric["type"].as_str().unwrap_or_default();
    let mut out = Map::new();
    out.insert("type".into(), json!(kind));
    for (name, field) in SOURCES {
        if let Some(source) = metric.get(field).filter(|s| s.is_object()) {
            out.insert(field.into(), convert(name, source));
        }
    }
    Value::Object(out)
}

/// A v2 MetricSpec in v1's form.
pub(super) fn spec_to_v1(metric: &Value) -> Value {
    per_source(metric, |kind, s| {
        let (m, t) = (&s["metric"], &s["target"]);
        match kind {
            "Object" => fields(&[
                ("target", &s["describedObject"]),
                ("metricName", &m["name"]),
                ("targetValue", &quantity(&t["value"])),
                ("selector", &m["selector"]),
                ("averageValue", &t["averageValue"]),
            ]),
            "Pods" => fields(&[
                ("metricName", &m["name"]),
                ("targetAverageValue", &quantity(&t["averageValue"])),
                ("selector", &m["selector"]),
            ]),
            "External" => fields(&[
                ("metricName", &m["name"]),
                ("metricSelector", &m["selector"]),
                ("targetValue", &t["value"]),
                ("targetAverageValue", &t["averageValue"]),
            ]),
            _ => fields(&[
                ("name", &s["name"]),
                ("targetAverageUtilization", &t["averageUtilization"]),
                ("targetAverageValue", &t["averageValue"]),
                ("container", &s["container"]),
            ]),
        }
    })
}

/// v2's MetricTarget type for the values set.
fn target(kind: &str, value: &Value, average: &Value, utilization: &Value) -> Value {
    fields(&[
        ("type", &json!(kind)),
        ("value", value),
        ("averageValue", average),
        ("averageUtilization", utilization),
    ])
}

fn identifier(name: &Value, selector: &Value) -> Value {
    fields(&[("name", name), ("selector", selector)])
}

/// A v1 MetricSpec (from the annotation) in v2's form.
pub(super) fn spec_to_v2(metric: &Value) -> Value {
    per_source(metric, |kind, s| match kind {
        "Object" => {
            let average = &s["averageValue"];
            let kind = if average.is_null() {
                "Value"
            } else {
                "AverageValue"
            };
            let value = quantity(&s["targetValue"]);
            fields(&[
                ("describedObject", &s["target"]),
                ("target", &target(kind, &value, average, &Value::Null)),
                ("metric", &identifier(&s["metricName"], &s["selector"])),
            ])
        }
        "Pods" => {
            let average = quantity(&s["targetAverageValue"]);
            let target = target("AverageValue", &Value::Null, &average, &Value::Null);
            fields(&[
                ("metric", &identifier(&s["metricName"], &s["selector"])),
                ("target", &target),
            ])
        }
        "External" => {
            let value = &s["targetValue"];
            let kind = if value.is_null() {
                "AverageValue"
            } else {
                "Value"
            };
            let target = target(kind, value, &s["targetAverageValue"], &Value::Null);
            fields(&[
                (
                    "metric",
                    &identifier(&s["metricName"], &s["metricSelector"]),
                ),
                ("target", &target),
            ])
        }
        _ => {
            let utilization = &s["targetAverageUtilization"];
            let kind = if utilization.is_null() {
                "AverageValue"
            } else {
                "Utilization"
            };
            let target = target(kind, &Value::Null, &s["targetAverageValue"], utilization);
            fields(&[
                ("name", &s["name"]),
                ("target", &target),
                ("container", &s["container"]),
            ])
        }
    })
}

/// A v2 MetricStatus in v1's form.
pub(super) fn status_to_v1(metric: &Value) -> Value {
    per_source(metric, |kind, s| {
        let (m, c) = (&s["metric"], &s["current"]);
        match kind {
            "Object" => fields(&[
                ("target", &s["describedObject"]),
                ("metricName", &m["name"]),
                ("currentValue", &quantity(&c["value"])),
                ("selector", &m["selector"]),
                ("averageValue", &c["averageValue"]),
            ]),
            "Pods" => fields(&[
                ("metricName", &m["name"]),
                ("currentAverageValue", &quantity(&c["averageValue"])),
                ("selector", &m["selector"]),
            ]),
            "External" => fields(&[
                ("metricName", &m["name"]),
                ("metricSelector", &m["selector"]),
                ("currentValue", &quantity(&c["value"])),
                ("currentAverageValue", &c["averageValue"]),
            ]),
            _ => fields(&[
                ("name", &s["name"]),
                ("currentAverageUtilization", &c["averageUtilization"]),
                ("currentAverageValue", &quantity(&c["averageValue"])),
                ("container", &s["container"]),
            ]),
        }
    })
}

fn current(value: &Value, average: &Value, utilization: &Value) -> Value {
    fields(&[
        ("value", value),
        ("averageValue", average),
        ("averageUtilization", utilization),
    ])
}

/// A v1 MetricStatus (from the annotation) in v2's form.
pub(super) fn status_to_v2(metric: &Value) -> Value {
    per_source(metric, |kind, s| match kind {
        "Object" => fields(&[
            ("metric", &identifier(&s["metricName"], &s["selector"])),
            (
                "current",
                &current(
                    &quantity(&s["currentValue"]),
                    &s["averageValue"],
                    &Value::Null,
                ),
            ),
            ("describedObject", &s["target"]),
        ]),
        "Pods" => fields(&[
            ("metric", &identifier(&s["metricName"], &s["selector"])),
            (
                "current",
                &current(
                    &Value::Null,
                    &quantity(&s["currentAverageValue"]),
                    &Value::Null,
                ),
            ),
        ]),
        "External" => fields(&[
            (
                "metric",
                &identifier(&s["metricName"], &s["metricSelector"]),
            ),
            (
                "current",
                &current(
                    &quantity(&s["currentValue"]),
                    &s["currentAverageValue"],
                    &Value::Null,
                ),
            ),
        ]),
        _ => fields(&[
            ("name", &s["name"]),
            (
                "current",
                &current(
                    &Value::Null,
                    &quantity(&s["currentAverageValue"]),
                    &s["currentAverageUtilization"],
                ),
            ),
            ("container", &s["container"]),
        ]),
    })
}
