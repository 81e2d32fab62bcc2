//! The benchmark report: a readable table for people and a JSON object for scripts.

use super::startup::StartupResult;
use super::stats::PhaseResult;
use serde::Serialize;
use std::fmt::Write;

/// API phases of a run against one server.
#[derive(Debug, Clone, Serialize)]
pub struct ApiRun {
    pub server: String,
    pub protocol: String,
    pub namespace: String,
    pub ops: usize,
    pub concurrency: Vec<usize>,
    pub phases: Vec<PhaseResult>,
}

/// Everything one invocation measured.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub api: Option<ApiRun>,
    pub startup: Option<StartupResult>,
}

impl Report {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    pub fn to_table(&self) -> String {
        let mut out = String::new();
        if let Some(api) = &self.api {
            api_table(&mut out, api);
        }
        if let Some(startup) = &self.startup {
            startup_lines(&mut out, startup);
        }
        out
    }
}

fn api_table(out: &mut String, api: &ApiRun) {
    let _ = writeln!(
        out,
        "server {} ({}), namespace {}, {} ops per phase",
        api.server, api.protocol, api.namespace, api.ops
    );
    let _ = writeln!(
        out,
        "{:<8} {:>5} {:>7} {:>7} {:>11} {:>9} {:>9} {:>9}",
        "phase", "conc", "ops", "errors", "ops/s", "p50 ms", "p99 ms", "max ms"
    );
    for p in &api.phases {
        let l = &p.latency;
        let _ = writeln!(
            out,
            "{:<8} {:>5} {:>7} {:>7} {:>11.1} {:>9.3} {:>9.3} {:>9.3}",
            p.phase, p.concurrency, p.ops, p.errors, p.throughput, l.p50_ms, l.p99_ms, l.max_ms
        );
    }
    for p in api.phases.iter().filter(|p| p.first_error.is_some()) {
        let error = p.first_error.as_deref().unwrap_or_default();
        let _ = writeln!(
            out,
            "first error in {} (concurrency {}): {error}",
            p.phase, p.concurrency
        );
    }
}

fn startup_lines(out: &mut String, s: &StartupResult) {
    let ok = s.samples_ms.len();
    let _ = writeln!(
        out,
        "startup of {} to first 200 from /readyz: {ok}/{} runs ok, median {:.1} ms, max {:.1} ms",
        s.binary, s.runs, s.median_ms, s.max_ms
    );
    for failure in &s.failures {
        let _ = writeln!(out, "startup failure: {failure}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn sample() -> Report {
        let ms = |v: u64| Duration::from_millis(v);
        let mut failed = PhaseResult::new("update", 32, vec![ms(3)], 1, ms(10));
        failed.first_error = Some("HTTP 409 Conflict: the object has been modified".into());
        Report {
            api: Some(ApiRun {
                server: "https://127.0.0.1:6443".into(),
                protocol: "HTTP/2".into(),
                namespace: "bench-abc".into(),
                ops: 2,
                concurrency: vec![1, 32],
                phases: vec![
                    PhaseResult::new("create", 1, vec![ms(1), ms(2)], 0, ms(4)),
                    failed,
                ],
            }),
            startup: Some(StartupResult {
                binary: "capstan".into(),
                runs: 5,
                samples_ms: vec![10.0, 30.0, 20.0, 40.0, 50.0],
                median_ms: 30.0,
                max_ms: 50.0,
                failures: vec![],
            }),
        }
    }

    #[test]
    fn table_has_a_row_per_phase_errors_and_startup() {
        let table = sample().to_table();
        let row = table.lines().find(|l| l.starts_with("create")).unwrap();
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            cols,
            ["create", "1", "2", "0", "500.0", "1.000", "2.000", "2.000"]
        );
        assert!(table.contains("first error in update (concurrency 32): HTTP 409 Conflict"));
        assert!(table.contains("5/5 runs ok, median 30.0 ms, max 50.0 ms"));
    }

    #[test]
    fn json_exposes_flat_phase_records() {
        let v: serde_json::Value = serde_json::from_str(&sample().to_json()).unwrap();
        let phase = &v["api"]["phases"][0];
        assert_eq!(phase["phase"], "create");
        assert_eq!(phase["throughput"], 500.0);
        assert_eq!(phase["p99_ms"], 2.0);
        assert_eq!(v["api"]["phases"][1]["errors"], 1);
        assert_eq!(v["api"]["protocol"], "HTTP/2");
        assert_eq!(v["startup"]["median_ms"], 30.0);
        let empty: serde_json::Value = serde_json::from_str(&Report::default().to_json()).unwrap();
        assert!(empty["api"].is_null() && empty["startup"].is_null());
    }
}
