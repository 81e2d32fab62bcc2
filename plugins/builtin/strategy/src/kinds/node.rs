//! The `node.k8s.io` group's kinds.

use capstan_plugin_sdk::Cause;
use chrono::{DateTime, Utc};
use kube_rules::gofmt;
use serde_json::Value;

use super::{KindRules, Printer};
use crate::common::{self, text};
use crate::table::access::{age, name};
use crate::table::{columns, Column};

pub(super) struct RuntimeClasses;

impl KindRules for RuntimeClasses {
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        validate_runtime_class(object, old)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(runtime_class_columns, runtime_class_row))
    }
}

/// `ValidateRuntimeClass`: a DNS-1123 label handler, which stays.
fn validate_runtime_class(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut causes = Vec::new();
    let handler = text(object, "handler");
    common::invalid_each(
        &mut causes,
        "handler",
        handler,
        kube_rules::dns1123_label(handler),
    );
    if old.is_some_and(|old| text(old, "handler") != handler) {
        causes.push(common::immutable("handler", &gofmt::quote(handler)));
    }
    causes
}

fn runtime_class_columns() -> Vec<Column> {
    // kube describes Handler with ObjectMeta's (absent) "handler" doc: empty.
    vec![columns::NAME, columns::text("Handler", ""), columns::AGE]
}

fn runtime_class_row(class: &Value, now: DateTime<Utc>) -> Vec<Value> {
    vec![
        name(class),
        Value::from(crate::table::access::text(class, "/handler")),
        age(class, now),
    ]
}
