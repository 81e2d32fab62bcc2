//! End-to-end tests: the real `capstan` binary driven by the real kubectl
//! (a fixed version) and by raw HTTPS requests (curl with the admin certificate).

mod support;

mod access_control;
mod admission_plugins;
mod api_discovery;
mod c_plugins;
mod cluster_apis;
mod connections;
mod custom_resource_definitions;
mod custom_resources;
mod encoding;
mod errors;
mod etcd;
mod go_plugins;
mod go_toolchain;
mod hardening;
mod header_bytes;
mod hostile_custom_resources;
mod hostile_registry;
mod hostile_requests;
mod js_plugins;
mod kube_132_kinds;
mod lifecycle;
mod objects;
mod openapi_v2;
mod patching;
mod plugin_cache;
mod pod_subresources;
mod policy_bundle_api;
mod policy_bundles;
mod policy_examples;
mod policy_hostile_sources;
mod policy_registry;
mod policy_reports;
mod python_client;
mod python_plugins;
mod real_crds;
mod real_crds_invalid;
mod replicas;
mod rust_plugins;
mod tables;
mod toolchains;
mod type_safety;
mod watching;
mod webhooks;
