//! Closed-loop load generator: `concurrency` workers pull operation indices from a shared
//! counter until `ops` have been issued, timing each one.

use super::stats::PhaseResult;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What one worker saw.
#[derive(Default)]
struct WorkerTally {
    latencies: Vec<Duration>,
    errors: usize,
    first_error: Option<(usize, String)>,
}

/// Runs `op(0..ops)` with `concurrency` workers. An operation returns `Ok(None)` to be
/// timed by the runner, or `Ok(Some(d))` when it measured its own latency.
pub async fn run_phase<F, Fut>(phase: &str, concurrency: usize, ops: usize, op: F) -> PhaseResult
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = anyhow::Result<Option<Duration>>> + Send + 'static,
{
    let op = Arc::new(op);
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let workers: Vec<_> = (0..concurrency.max(1))
        .map(|_| tokio::spawn(worker(op.clone(), next.clone(), ops)))
        .collect();
    let mut all = WorkerTally::default();
    for handle in workers {
        match handle.await {
            Ok(tally) => merge(&mut all, tally),
            Err(e) => tracing::error!(phase, error = %e, "benchmark worker panicked"),
        }
    }
    let wall = started.elapsed();
    let mut result = PhaseResult::new(phase, concurrency, all.latencies, all.errors, wall);
    result.first_error = all.first_error.map(|(_, e)| e);
    result
}

async fn worker<F, Fut>(op: Arc<F>, next: Arc<AtomicUsize>, ops: usize) -> WorkerTally
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = anyhow::Result<Option<Duration>>>,
{
    let mut tally = WorkerTally::default();
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= ops {
            return tally;
        }
        let start = Instant::now();
        match op(i).await {
            Ok(own) => tally.latencies.push(own.unwrap_or_else(|| start.elapsed())),
            Err(e) => {
                tally.errors += 1;
                if tally.first_error.is_none() {
                    tally.first_error = Some((i, format!("{e:#}")));
                }
            }
        }
    }
}

/// Adds `b` to `a`, keeping the error of the lowest operation index as "first".
fn merge(a: &mut WorkerTally, b: WorkerTally) {
    a.latencies.extend(b.latencies);
    a.errors += b.errors;
    a.first_error = match (a.first_error.take(), b.first_error) {
        (Some(x), Some(y)) => Some(if y.0 < x.0 { y } else { x }),
        (x, y) => x.or(y),
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[tokio::test]
    async fn every_index_runs_exactly_once_and_errors_are_counted() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let r = run_phase("create", 8, 100, move |i| {
            let log = log.clone();
            async move {
                log.lock().unwrap().push(i);
                if i % 10 == 3 {
                    anyhow::bail!("op {i} failed");
                }
                Ok(None)
            }
        })
        .await;
        let mut seen = seen.lock().unwrap().clone();
        seen.sort();
        assert_eq!(seen, (0..100).collect::<Vec<_>>());
        assert_eq!((r.ops, r.errors, r.concurrency), (100, 10, 8));
        assert_eq!(r.first_error.as_deref(), Some("op 3 failed"));
    }

    #[tokio::test]
    async fn workers_overlap_and_self_measured_latency_is_kept() {
        let active = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let (a, p) = (active.clone(), peak.clone());
        let r = run_phase("watch", 4, 16, move |_| {
            let (a, p) = (a.clone(), p.clone());
            async move {
                let now = a.fetch_add(1, Ordering::SeqCst) + 1;
                p.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(5)).await;
                a.fetch_sub(1, Ordering::SeqCst);
                Ok(Some(Duration::from_millis(42)))
            }
        })
        .await;
        assert_eq!(peak.load(Ordering::SeqCst), 4);
        assert_eq!((r.ops, r.errors), (16, 0));
        assert_eq!((r.latency.p50_ms, r.latency.p99_ms), (42.0, 42.0));
        assert!(r.throughput > 0.0);
    }
}
