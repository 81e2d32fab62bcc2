//! Every PolicyBundle policy's decisions, failures and latency, kept in
//! memory for the life of the process and exposed on `/metrics`:
//!
//! - `capstan_policy_decisions_total{policy_bundle, policy, mode, verdict}`
//!   (verdict: what the policy said, `allowed` or `denied`, whatever the
//!   mode made of it),
//! - `capstan_policy_failures_total{policy_bundle, policy, kind}` (timeout,
//!   out_of_memory, out_of_fuel, trap, returned_error, internal),
//! - `capstan_policy_duration_seconds{policy_bundle, policy}`, a histogram
//!   of each call's wall time, failures included.

use super::mode::Mode;
use crate::telemetry::metrics::{Exposition, MetricSource};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// Upper bounds of the latency buckets, in seconds: in-process policies
/// take microseconds, a slow one up to its deadline.
const BOUNDS: [f64; 14] = [
    0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1,
    0.5, 2.5,
];

#[derive(Default)]
struct Stats {
    decisions: BTreeMap<(Mode, &'static str), u64>,
    failures: BTreeMap<&'static str, u64>,
    /// One count per bucket of BOUNDS, then the overflow.
    latency: [u64; BOUNDS.len() + 1],
    seconds: f64,
}

/// Per `<PolicyBundle>/<policy>`; and a signal of Audit-mode violations.
#[derive(Default)]
pub struct PolicyMetrics {
    stats: Mutex<BTreeMap<String, Stats>>,
    /// Notified on each violation audited (the background audit then
    /// reports it soon).
    pub violations: tokio::sync::Notify,
}

impl PolicyMetrics {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Stats>> {
        self.stats
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn with(&self, policy: &str, f: impl FnOnce(&mut Stats)) {
        let mut all = self.lock();
        match all.get_mut(policy) {
            Some(stats) => f(stats),
            None => f(all.entry(policy.to_string()).or_default()),
        }
    }

    /// One call of `policy`, however it ended.
    pub fn timed(&self, policy: &str, took: Duration) {
        let seconds = took.as_secs_f64();
        let bucket = BOUNDS
            .iter()
            .position(|b| seconds <= *b)
            .unwrap_or(BOUNDS.len());
        self.with(policy, |s| {
            s.latency[bucket] += 1;
            s.seconds += seconds;
        });
    }

    pub fn decided(&self, policy: &str, verdict: &'static str, mode: Mode) {
        self.with(policy, |s| {
            *s.decisions.entry((mode, verdict)).or_default() += 1
        });
    }

    pub fn failed(&self, policy: &str, kind: &'static str) {
        self.with(policy, |s| *s.failures.entry(kind).or_default() += 1);
    }

    /// The count for one policy, verdict and mode.
    pub fn get(&self, policy: &str, verdict: &str, mode: Mode) -> u64 {
        let all = self.lock();
        all.get(policy)
            .and_then(|s| {
                s.decisions
                    .iter()
                    .find(|((m, v), _)| *m == mode && *v == verdict)
                    .map(|(_, n)| *n)
            })
            .unwrap_or(0)
    }
}

impl MetricSource for PolicyMetrics {
    fn render(&self, out: &mut Exposition) {
        let all = self.lock();
        let names = |policy: &str| -> (String, String) {
            let (b, p) = policy.split_once('/').unwrap_or((policy, ""));
            (b.to_string(), p.to_string())
        };
        const DECISIONS: &str = "capstan_policy_decisions_total";
        out.family(
            DECISIONS,
            "counter",
            "PolicyBundle policy decisions by mode and verdict (what the policy said).",
        );
        for (policy, s) in all.iter() {
            let (b, p) = names(policy);
            for ((mode, verdict), n) in &s.decisions {
                let labels = [
                    ("policy_bundle", b.as_str()),
                    ("policy", p.as_str()),
                    ("mode", mode.as_str()),
                    ("verdict", verdict),
                ];
                out.sample(DECISIONS, &labels, *n as f64);
            }
        }
        const FAILURES: &str = "capstan_policy_failures_total";
        out.family(
            FAILURES,
            "counter",
            "PolicyBundle policy calls that failed, by kind of failure.",
        );
        for (policy, s) in all.iter() {
            let (b, p) = names(policy);
            for (kind, n) in &s.failures {
                let labels = [
                    ("policy_bundle", b.as_str()),
                    ("policy", p.as_str()),
                    ("kind", kind),
                ];
                out.sample(FAILURES, &labels, *n as f64);
            }
        }
        const DURATION: &str = "capstan_policy_duration_seconds";
        out.family(
            DURATION,
            "histogram",
            "Wall time of each PolicyBundle policy call.",
        );
        for (policy, s) in all.iter() {
            let (b, p) = names(policy);
            let labels = [("policy_bundle", b.as_str()), ("policy", p.as_str())];
            out.histogram(DURATION, &labels, &BOUNDS, &s.latency, s.seconds);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_failures_and_latency_are_exposed_per_policy() {
        let m = PolicyMetrics::default();
        m.decided("baseline/latest", "denied", Mode::Enforce);
        m.decided("baseline/latest", "denied", Mode::Enforce);
        m.decided("baseline/latest", "allowed", Mode::Audit);
        m.failed("baseline/loop", "timeout");
        m.timed("baseline/latest", Duration::from_micros(20));
        m.timed("baseline/loop", Duration::from_secs(5));
        assert_eq!(m.get("baseline/latest", "denied", Mode::Enforce), 2);
        assert_eq!(m.get("baseline/latest", "denied", Mode::Audit), 0);
        let mut out = Exposition::default();
        m.render(&mut out);
        let text = out.into_text();
        for line in [
            "capstan_policy_decisions_total{policy_bundle=\"baseline\",policy=\"latest\",mode=\"Enforce\",verdict=\"denied\"} 2",
            "capstan_policy_decisions_total{policy_bundle=\"baseline\",policy=\"latest\",mode=\"Audit\",verdict=\"allowed\"} 1",
            "capstan_policy_failures_total{policy_bundle=\"baseline\",policy=\"loop\",kind=\"timeout\"} 1",
            "capstan_policy_duration_seconds_bucket{policy_bundle=\"baseline\",policy=\"latest\",le=\"0.00001\"} 0",
            "capstan_policy_duration_seconds_bucket{policy_bundle=\"baseline\",policy=\"latest\",le=\"0.000025\"} 1",
            "capstan_policy_duration_seconds_bucket{policy_bundle=\"baseline\",policy=\"loop\",le=\"2.5\"} 0",
            "capstan_policy_duration_seconds_bucket{policy_bundle=\"baseline\",policy=\"loop\",le=\"+Inf\"} 1",
            "capstan_policy_duration_seconds_count{policy_bundle=\"baseline\",policy=\"loop\"} 1",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing:\n{text}");
        }
    }
}
