//! The API's verbs over HTTP: the per-verb handlers, the three patch types
//! and server-side apply's field manager, Table output and protobuf bodies.
//! Generic over the catalogue; below the server, above admission and the
//! registry.

pub mod handlers;
pub mod managed_fields;
pub mod patch;
pub mod protobuf;
pub mod table;
