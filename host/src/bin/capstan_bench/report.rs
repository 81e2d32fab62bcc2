//! The benchmark report: a readable table for people and a JSON object for scripts.

use super::kinds::Kind;
use super::memory::MemoryResult;
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
    /// Custom resource against ConfigMap, per phase and level (when both ran).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ratios: Vec<Ratio>,
}

/// One phase at one level: the custom resource's figure divided by the ConfigMap's
/// (above 1: the custom resource is slower for latencies, faster for throughput).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ratio {
    pub phase: String,
    pub concurrency: usize,
    pub throughput: f64,
    pub p50: f64,
    pub p99: f64,
}

/// The ratios of every custom-resource phase that has a ConfigMap counterpart.
pub fn ratios(phases: &[PhaseResult]) -> Vec<Ratio> {
    let div = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    phases
        .iter()
        .filter(|p| p.kind == Kind::Custom)
        .filter_map(|cr| {
            let cm = phases.iter().find(|p| {
                p.kind == Kind::ConfigMap && p.phase == cr.phase && p.concurrency == cr.concurrency
            })?;
            Some(Ratio {
                phase: cr.phase.clone(),
                concurrency: cr.concurrency,
                throughput: div(cr.throughput, cm.throughput),
                p50: div(cr.latency.p50_ms, cm.latency.p50_ms),
                p99: div(cr.latency.p99_ms, cm.latency.p99_ms),
            })
        })
        .collect()
}

/// Everything one invocation measured.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub api: Option<ApiRun>,
    /// One result per startup scenario (none without --startup-binary).
    pub startup: Vec<StartupResult>,
    pub memory: Option<MemoryResult>,
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
        for startup in &self.startup {
            startup_lines(&mut out, startup);
        }
        if let Some(memory) = &self.memory {
            memory_lines(&mut out, memory);
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
    let with_kind = api.phases.iter().any(|p| p.kind != Kind::ConfigMap);
    let kind_column = |label: &str| match with_kind {
        true => format!(" {label:<9}"),
        false => String::new(),
    };
    let _ = writeln!(
        out,
        "{:<8}{} {:>5} {:>7} {:>7} {:>11} {:>9} {:>9} {:>9}",
        "phase",
        kind_column("kind"),
        "conc",
        "ops",
        "errors",
        "ops/s",
        "p50 ms",
        "p99 ms",
        "max ms"
    );
    for p in &api.phases {
        let l = &p.latency;
        let _ = writeln!(
            out,
            "{:<8}{} {:>5} {:>7} {:>7} {:>11.1} {:>9.3} {:>9.3} {:>9.3}",
            p.phase,
            kind_column(p.kind.label()),
            p.concurrency,
            p.ops,
            p.errors,
            p.throughput,
            l.p50_ms,
            l.p99_ms,
            l.max_ms
        );
    }
    ratio_table(out, &api.ratios);
    for p in api.phases.iter().filter(|p| p.first_error.is_some()) {
        let error = p.first_error.as_deref().unwrap_or_default();
        let of = match p.kind {
            Kind::ConfigMap => String::new(),
            kind => format!(" of {}", kind.label()),
        };
        let _ = writeln!(
            out,
            "first error in {}{of} (concurrency {}): {error}",
            p.phase, p.concurrency
        );
    }
}

fn ratio_table(out: &mut String, ratios: &[Ratio]) {
    if ratios.is_empty() {
        return;
    }
    let _ = writeln!(out, "custom resource / ConfigMap, same body size:");
    let _ = writeln!(
        out,
        "{:<8} {:>5} {:>11} {:>9} {:>9}",
        "phase", "conc", "ops/s", "p50", "p99"
    );
    for r in ratios {
        let _ = writeln!(
            out,
            "{:<8} {:>5} {:>11.2} {:>9.2} {:>9.2}",
            r.phase, r.concurrency, r.throughput, r.p50, r.p99
        );
    }
}

fn startup_lines(out: &mut String, s: &StartupResult) {
    let ok = s.samples_ms.len();
    let _ = writeln!(
        out,
        "startup of {} ({}) to first 200 from /readyz: {ok}/{} runs ok, median {:.1} ms, max {:.1} ms, median RSS at ready {:.1} MiB",
        s.binary, s.scenario, s.runs, s.median_ms, s.max_ms, s.median_rss_mib
    );
    for failure in &s.failures {
        let _ = writeln!(out, "startup failure: {failure}");
    }
}

fn memory_lines(out: &mut String, m: &MemoryResult) {
    let _ = writeln!(
        out,
        "memory: RSS {:.1} MiB at ready, {:.1} MiB after {} ConfigMaps of {} bytes ({} create errors): {:.0} bytes per object",
        m.rss_ready_mib, m.rss_after_mib, m.objects, m.body_bytes, m.create_errors, m.bytes_per_object
    );
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
                ratios: vec![],
            }),
            startup: vec![StartupResult {
                binary: "capstan".into(),
                scenario: "existing data dir".into(),
                runs: 5,
                samples_ms: vec![10.0, 30.0, 20.0, 40.0, 50.0],
                median_ms: 30.0,
                max_ms: 50.0,
                rss_mib: vec![30.0; 5],
                median_rss_mib: 30.0,
                failures: vec![],
            }],
            memory: None,
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
        assert!(table.contains(
            "(existing data dir) to first 200 from /readyz: 5/5 runs ok, median 30.0 ms, max 50.0 ms, median RSS at ready 30.0 MiB"
        ));
    }

    #[test]
    fn table_with_a_custom_kind_has_a_kind_column_and_ratios() {
        let ms = |v: u64| Duration::from_millis(v);
        let cm = PhaseResult::new("get", 1, vec![ms(1), ms(2)], 0, ms(4));
        let mut cr = PhaseResult::new("get", 1, vec![ms(3), ms(4)], 0, ms(8));
        cr.kind = Kind::Custom;
        let mut report = sample();
        let api = report.api.as_mut().unwrap();
        api.phases = vec![cm, cr];
        api.ratios = ratios(&api.phases);
        assert_eq!(
            api.ratios,
            [Ratio {
                phase: "get".into(),
                concurrency: 1,
                throughput: 0.5,
                p50: 3.0,
                p99: 2.0
            }]
        );
        let table = report.to_table();
        let rows: Vec<Vec<&str>> = table
            .lines()
            .filter(|l| l.starts_with("get"))
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(rows[0][..3], ["get", "configmap", "1"]);
        assert_eq!(rows[1][..3], ["get", "custom", "1"]);
        assert_eq!(rows[2], ["get", "1", "0.50", "3.00", "2.00"]);
        let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(json["api"]["phases"][1]["kind"], "custom");
        assert_eq!(json["api"]["ratios"][0]["p50"], 3.0);
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
        assert_eq!(v["startup"][0]["median_ms"], 30.0);
        assert_eq!(v["startup"][0]["median_rss_mib"], 30.0);
        let empty: serde_json::Value = serde_json::from_str(&Report::default().to_json()).unwrap();
        assert!(empty["api"].is_null() && empty["startup"] == serde_json::json!([]));
        assert!(empty["memory"].is_null());
    }
}
