//! The API's verbs over HTTP: the per-verb handlers, Table output and
//! protobuf bodies. Generic over the catalogue; below the server, above
//! admission and the registry.

pub mod handlers;
pub mod protobuf;
pub mod table;
