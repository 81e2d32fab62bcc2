//! /healthz, /livez, /readyz (with `?verbose` and per-check paths) and /version.

use crate::api::state::AppState;
use axum::response::{IntoResponse, Response};
use http::StatusCode;

/// The checks of every probe (`/readyz` adds `shutdown`), as kube names them.
const CHECKS: [&str; 3] = ["ping", "log", "etcd"];

/// The probes' paths, with each check's own, for `GET /`'s list.
pub fn paths() -> Vec<String> {
    let mut out = Vec::new();
    for endpoint in ["healthz", "livez", "readyz"] {
        out.push(format!("/{endpoint}"));
        let shutdown = (endpoint == "readyz").then_some("shutdown");
        for check in CHECKS.iter().copied().chain(shutdown) {
            out.push(format!("/{endpoint}/{check}"));
        }
    }
    out
}

/// Serves `/healthz`, `/livez`, `/readyz` and their `/<check>` paths.
pub async fn probe(state: &AppState, path: &str, verbose: bool) -> Option<Response> {
    let mut parts = path.trim_matches('/').split('/');
    let endpoint = parts.next()?;
    if !matches!(endpoint, "healthz" | "livez" | "readyz") {
        return None;
    }
    let only = parts.next();
    let storage = state.storage.is_ready().await.map_err(|e| e.to_string());
    let [ping, log, etcd] = CHECKS;
    let mut checks: Vec<(&str, Result<(), String>)> =
        vec![(ping, Ok(())), (log, Ok(())), (etcd, storage)];
    if endpoint == "readyz" {
        // kube's: ready until a shutdown begins.
        let shutdown = match state.shutdown.is_shutting_down() {
            true => Err("shutting down".to_string()),
            false => Ok(()),
        };
        checks.push(("shutdown", shutdown));
    }
    if let Some(name) = only {
        let (_, r) = checks.iter().find(|(n, _)| *n == name)?;
        return Some(match r {
            Ok(()) => (StatusCode::OK, "ok").into_response(),
            Err(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("internal server error: {name} failed"),
            )
                .into_response(),
        });
    }
    let healthy = checks.iter().all(|(_, r)| r.is_ok());
    let code = if healthy {
        StatusCode::OK
    } else {
        StatusCode::INTERNAL_SERVER_ERROR
    };
    if !verbose && healthy {
        return Some((code, "ok").into_response());
    }
    let mut text = String::new();
    for (name, r) in &checks {
        match r {
            Ok(()) => text.push_str(&format!("[+]{name} ok\n")),
            Err(_) => text.push_str(&format!("[-]{name} failed: reason withheld\n")),
        }
    }
    let verdict = if healthy { "passed" } else { "failed" };
    text.push_str(&format!("{endpoint} check {verdict}\n"));
    Some((code, text).into_response())
}
