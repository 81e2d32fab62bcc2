//! A small Kubernetes API client for Capstan's own tools (`capstan nodes
//! simulate`, the `capstan-bench` binary): a kubeconfig's cluster and user
//! (client certificate, token or basic auth), rustls with the ring provider,
//! HTTP/2 when the server offers it.

pub mod client;
pub mod kubeconfig;
pub mod tls;

/// Test support shared with the bench binary's tests (included there by path).
#[cfg(test)]
pub mod testing;

pub use client::{Client, Reply};
pub use kubeconfig::Kubeconfig;
