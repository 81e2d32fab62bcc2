//! Admission: the ordered chain of mutating and validating entries that every
//! write passes through. Built-in plugins, user Wasm plugins and the API's
//! webhooks are entries of one list, matched by one matcher and called with
//! one contract (AdmissionReview), over two transports (Wasm, HTTPS).

pub mod assemble;
pub mod cel_policy;
pub mod chain;
pub mod config;
pub mod manifest;
pub mod match_conditions;
pub mod matcher;
pub mod metrics;
pub mod review;
mod trace;
pub mod watched;
pub mod webhook;

pub use chain::{Chain, RequestAdmission};
