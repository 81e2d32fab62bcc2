//! Calls that leave the process: the HTTPS client of webhooks (admission,
//! authentication, authorization, CRD conversion, audit).

pub mod https;
