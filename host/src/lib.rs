//! Capstan: a Kubernetes-compatible API server. The modules follow the path
//! of a request: server (TLS, routing) → request_info → handlers (per verb) →
//! registry (generic store) → storage; the catalogue describes every resource.

pub mod accept;
pub mod admission;
pub mod audit;
pub mod auth;
pub mod bundles;
pub mod catalogue;
pub mod certificates;
pub mod cli;
pub mod client_certificates;
pub mod connection;
pub mod controllers;
pub mod cosign;
pub mod cpu;
pub mod crd;
pub mod discovery_routes;
pub mod flowcontrol;
pub mod go_json;
pub mod handlers;
pub mod health;
pub mod held_body;
pub mod https_webhook;
pub mod inflight;
pub mod kube_client;
pub mod kube_json;
pub mod kubeconfig;
pub mod logging;
pub mod managed_fields;
pub mod metrics;
pub mod otel;
pub mod panic_recovery;
pub mod patch;
pub mod pki;
pub mod plugin_componentize;
pub mod plugin_new;
pub mod plugin_run;
pub mod plugins;
pub mod policy_bundles;
pub mod policy_cli;
pub mod policy_registry_cli;
pub mod policy_reports;
pub mod protobuf;
pub mod registry;
pub mod request_info;
pub mod request_metrics;
pub mod selectors;
pub mod serve;
pub mod server;
pub mod shutdown;
pub mod simulated_nodes;
pub mod state;
pub mod status;
pub mod storage;
pub mod table;
pub mod unread_body;
pub mod watch_metrics;
pub mod yaml;

#[cfg(test)]
mod fuzz;
