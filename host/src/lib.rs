//! Capstan: a Kubernetes-compatible API server. The modules follow the path
//! of a request: server (TLS, routing) → request_info → handlers (per verb) →
//! registry (generic store) → storage; the catalogue describes every resource.

pub mod admission;
pub mod api;
pub mod apimachinery;
pub mod audit;
pub mod auth;
pub mod catalogue;
pub mod certificates;
pub mod cli;
pub mod config;
pub mod controllers;
pub mod cosign;
pub mod cpu;
pub mod crd;
pub mod kube_client;
pub mod patch;
pub mod policy;
pub mod registry;
pub mod server;
pub mod storage;
pub mod telemetry;
pub mod transport;
pub mod wasm;

#[cfg(test)]
mod fuzz;
