//! The API's verbs over HTTP: the per-verb handlers, Table output and
//! protobuf bodies. Generic over the catalogue; below the server, above
//! admission and the registry.

pub mod client_certificates;
pub mod flowcontrol;
pub mod handlers;
pub mod inflight;
pub mod protobuf;
pub mod request_metrics;
pub mod shutdown;
pub mod state;
mod status_response;
pub mod table;
pub mod watch_metrics;
