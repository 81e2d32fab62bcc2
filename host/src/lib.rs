//! Capstan: a Kubernetes-compatible API server. One folder per layer, top
//! first: cli → config → server → controllers → api → policy → admission →
//! auth → audit → crd → registry → patch → catalogue → wasm → cosign →
//! transport → storage → certificates → kube_client → telemetry →
//! apimachinery → cpu; a layer imports only those below it (ARCHITECTURE.md,
//! checked by `tools/import-graph.py --check`).

// The request path's futures hold plugin calls and webhook calls several
// layers deep; proving them Send takes more than the default 128 steps.
#![recursion_limit = "256"]

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
