//! kube-apiserver's authentication and authorization metrics:
//! `authentication_attempts{result}` and `authentication_duration_seconds`
//! (success or error), `authorization_attempts_total{result}` and
//! `authorization_duration_seconds` (allowed, denied, no-opinion).

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use crate::telemetry::metrics::{Exposition, Histogram, MetricSource};

/// kube's buckets: 1 ms doubling up to 16.384 s.
const BUCKETS: &[f64] = &[
    0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096,
    8.192, 16.384,
];

#[derive(Default)]
pub struct AuthMetrics(Mutex<Figures>);

#[derive(Default)]
struct Figures {
    authentication: BTreeMap<&'static str, (u64, Histogram)>,
    authorization: BTreeMap<&'static str, (u64, Histogram)>,
}

fn add(map: &mut BTreeMap<&'static str, (u64, Histogram)>, result: &'static str, took: Duration) {
    let (n, h) = map
        .entry(result)
        .or_insert_with(|| (0, Histogram::new(BUCKETS)));
    *n += 1;
    h.observe(took.as_secs_f64());
}

impl AuthMetrics {
    fn lock(&self) -> MutexGuard<'_, Figures> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn authenticated(&self, ok: bool, took: Duration) {
        let result = if ok { "success" } else { "error" };
        add(&mut self.lock().authentication, result, took);
    }

    /// `result`: allowed, denied or no-opinion.
    pub fn authorized(&self, result: &'static str, took: Duration) {
        add(&mut self.lock().authorization, result, took);
    }
}

impl MetricSource for AuthMetrics {
    fn render(&self, out: &mut Exposition) {
        let all = self.lock();
        let families = [
            (
                "authentication_attempts",
                "[ALPHA] Counter of authenticated attempts.",
                "authentication_duration_seconds",
                "[ALPHA] Authentication duration in seconds broken out by result.",
                &all.authentication,
            ),
            (
                "authorization_attempts_total",
                "[ALPHA] Counter of authorization attempts broken down by result. It can be either 'allowed', 'denied', 'no-opinion' or 'error'.",
                "authorization_duration_seconds",
                "[ALPHA] Authorization duration in seconds broken out by result.",
                &all.authorization,
            ),
        ];
        for (count, count_help, duration, duration_help, map) in families {
            out.family(count, "counter", count_help);
            for (result, (n, _)) in map {
                out.sample(count, &[("result", result)], *n as f64);
            }
            out.family(duration, "histogram", duration_help);
            for (result, (_, h)) in map {
                h.render(out, duration, &[("result", result)]);
            }
        }
    }
}
