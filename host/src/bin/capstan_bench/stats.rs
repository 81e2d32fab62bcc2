//! Latency statistics and the per-phase result record (what the table and JSON show).

use super::kinds::Kind;
use serde::Serialize;
use std::time::Duration;

/// Latency summary of the successful operations of one phase, in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Latency {
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub mean_ms: f64,
    pub max_ms: f64,
}

/// One phase at one concurrency level.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseResult {
    pub phase: String,
    /// The kind of object the phase worked on.
    pub kind: Kind,
    pub concurrency: usize,
    /// Operations attempted.
    pub ops: usize,
    /// Operations that failed (transport error, non-2xx status, missed event).
    pub errors: usize,
    /// Wall-clock time of the phase.
    pub seconds: f64,
    /// Successful operations per second of wall-clock time.
    pub throughput: f64,
    #[serde(flatten)]
    pub latency: Latency,
    /// The first error seen, to tell what went wrong.
    pub first_error: Option<String>,
}

impl PhaseResult {
    /// Builds the record from raw samples (`latencies` of the successful operations).
    pub fn new(
        phase: &str,
        concurrency: usize,
        mut latencies: Vec<Duration>,
        errors: usize,
        wall: Duration,
    ) -> Self {
        let ok = latencies.len();
        let seconds = wall.as_secs_f64();
        let throughput = if seconds > 0.0 {
            ok as f64 / seconds
        } else {
            0.0
        };
        PhaseResult {
            phase: phase.to_string(),
            kind: Kind::ConfigMap,
            concurrency,
            ops: ok + errors,
            errors,
            seconds,
            throughput,
            latency: summarize(&mut latencies),
            first_error: None,
        }
    }

    /// A phase that could not run at all (e.g. its watch could not be opened).
    pub fn failed(phase: &str, concurrency: usize, ops: usize, error: String) -> Self {
        let mut result = PhaseResult::new(phase, concurrency, Vec::new(), ops, Duration::ZERO);
        result.first_error = Some(error);
        result
    }
}

/// Nearest-rank percentiles, mean and max; zeros when there are no samples.
pub fn summarize(latencies: &mut [Duration]) -> Latency {
    if latencies.is_empty() {
        return Latency::default();
    }
    latencies.sort_unstable();
    let total: Duration = latencies.iter().sum();
    Latency {
        p50_ms: ms(percentile(latencies, 50.0)),
        p99_ms: ms(percentile(latencies, 99.0)),
        mean_ms: ms(total) / latencies.len() as f64,
        max_ms: ms(latencies[latencies.len() - 1]),
    }
}

/// Nearest-rank percentile of an ascending, non-empty slice.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Median (mean of the middle two for an even count) of samples in ms; 0 when empty.
pub fn median_ms(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// Duration in fractional milliseconds.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn millis(v: impl IntoIterator<Item = u64>) -> Vec<Duration> {
        v.into_iter().map(Duration::from_millis).collect()
    }

    #[test]
    fn percentiles_use_nearest_rank_regardless_of_input_order() {
        let mut samples = millis((1..=100).rev());
        let l = summarize(&mut samples);
        assert_eq!((l.p50_ms, l.p99_ms, l.max_ms), (50.0, 99.0, 100.0));
        assert!((l.mean_ms - 50.5).abs() < 1e-9);
        let mut few = millis([7, 3, 5]);
        let l = summarize(&mut few);
        assert_eq!((l.p50_ms, l.p99_ms), (5.0, 7.0));
        let mut one = millis([4]);
        assert_eq!(summarize(&mut one).p99_ms, 4.0);
        assert_eq!(summarize(&mut []), Latency::default());
    }

    #[test]
    fn phase_result_counts_errors_and_throughput_over_successes() {
        let r = PhaseResult::new("get", 32, millis([1, 2, 3, 4]), 1, Duration::from_secs(2));
        assert_eq!((r.ops, r.errors), (5, 1));
        assert!((r.throughput - 2.0).abs() < 1e-9);
        let failed = PhaseResult::failed("watch", 1, 10, "boom".into());
        assert_eq!(
            (failed.ops, failed.errors, failed.throughput),
            (10, 10, 0.0)
        );
        assert_eq!(failed.first_error.as_deref(), Some("boom"));
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median_ms(&[30.0, 10.0, 20.0, 50.0, 40.0]), 30.0);
        assert_eq!(median_ms(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median_ms(&[]), 0.0);
    }
}
