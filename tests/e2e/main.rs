//! End-to-end tests: the real `capstan` binary driven by the real kubectl
//! (a fixed version) and by raw HTTPS requests (curl with the admin certificate).

// A test harness: a failed assumption fails the run, so unwrapping is fine here
// (the server itself never unwraps; see the workspace lints).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod access_control;
mod admission_plugins;
mod admission_policies;
mod api_discovery;
mod audit;
mod c_plugins;
mod cluster_apis;
mod connections;
mod control_plane;
mod core_validation;
mod custom_resource_definitions;
mod custom_resources;
mod doc_commands;
mod encoding;
mod errors;
mod etcd;
mod go_encoding;
mod go_plugins;
mod go_toolchain;
mod golden;
mod hardening;
mod header_bytes;
mod hostile_custom_resources;
mod hostile_registry;
mod hostile_requests;
mod js_plugins;
mod kind_validation;
mod kube_132_kinds;
mod lifecycle;
mod logging;
mod metadata_informers;
mod metrics;
mod mutating_admission_policies;
mod namespaces;
mod objects;
mod openapi_v2;
mod otel_tracing;
mod patching;
mod plugin_cache;
mod pod_subresources;
mod policy_bundle_api;
mod policy_bundles;
mod policy_examples;
mod policy_hostile_sources;
mod policy_registry;
mod policy_reports;
mod priority_and_fairness;
mod protobuf_bodies;
mod protobuf_responses;
mod python_client;
mod python_plugins;
mod real_crds;
mod real_crds_invalid;
mod replicas;
mod rust_plugins;
mod sdk_install_sequence;
mod shutdown;
mod simulated_nodes;
mod tables;
mod toolchains;
mod type_safety;
mod watching;
mod webhooks;
