//! The span of one admission entry's call: kube's `Call mutating webhook` /
//! `Call validating webhook` for webhooks, the same shape for Wasm plugins,
//! with the verdict once answered. The webhook's HTTPS call carries this
//! span's trace context.

use super::chain::CallableEntry;
use super::review::{ReviewRequest, Verdict};
use crate::apimachinery::status::ApiResult;
use crate::telemetry::otel::Span;
use opentelemetry::KeyValue;

pub fn entry_span(e: &CallableEntry, req: &ReviewRequest, mutating: bool) -> Span {
    let webhook = e.config.module == "webhook";
    let name = match (webhook, mutating) {
        (true, true) => "Call mutating webhook",
        (true, false) => "Call validating webhook",
        (false, true) => "Call mutating admission plugin",
        (false, false) => "Call validating admission plugin",
    };
    Span::start(
        || name,
        || {
            vec![
                KeyValue::new(
                    if webhook { "webhook" } else { "plugin" },
                    e.config.name.clone(),
                ),
                KeyValue::new("module", e.config.module.clone()),
                // Go's GroupVersionResource.String().
                KeyValue::new(
                    "resource",
                    format!("{}/{}, Resource={}", req.group, req.version, req.resource),
                ),
                KeyValue::new("subresource", req.subresource.clone()),
                KeyValue::new("operation", req.operation),
            ]
        },
    )
}

/// What the entry answered: allowed, patched, denied, or a failure its
/// failurePolicy ignored.
pub fn record_verdict(span: &Span, called: &ApiResult<Option<Verdict>>) {
    let verdict = match called {
        Err(_) => "denied",
        Ok(None) => "ignored failure",
        Ok(Some(v)) if v.denial.is_some() => "denied",
        Ok(Some(v)) if v.patch.is_some() => "patched",
        Ok(Some(_)) => "allowed",
    };
    span.set("verdict", verdict);
}
