//! What the server tells its operators: Prometheus metrics (`/metrics`), the
//! logs as kube's `-v`/`--vmodule` shape them, and OpenTelemetry traces.

pub mod logging;
pub mod metrics;
pub mod otel;
pub mod webhook_time;
