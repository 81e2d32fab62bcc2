//! CPU-heavy steps of a request (decoding and validating a body, applying a
//! patch, server-side apply, encoding a large response) must not hold one of
//! the async workers that serve `/readyz` and every other client: a heavy
//! request may slow itself, never the others.

use tokio::runtime::{Handle, RuntimeFlavor};

/// Runs `work` (synchronous, possibly long) without stalling the executor:
/// on the multi-threaded runtime the current worker first hands its other
/// tasks to another thread (tokio's `block_in_place`). Elsewhere (unit tests
/// on a current-thread runtime, plain threads) it simply runs.
pub fn heavy<T>(work: impl FnOnce() -> T) -> T {
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// With one worker, a task that computes for a long time inside `heavy`
    /// still lets another task run meanwhile.
    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn other_tasks_run_while_heavy_work_computes() {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let heavy_task =
            tokio::spawn(async move { heavy(|| rx.recv_timeout(Duration::from_secs(10)).is_ok()) });
        tokio::time::sleep(Duration::from_millis(20)).await;
        let light = tokio::spawn(async move { tx.send(()).is_ok() });
        assert!(light.await.unwrap(), "the light task ran");
        assert!(
            heavy_task.await.unwrap(),
            "the heavy work saw the light task's signal"
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn runs_inline_on_a_current_thread_runtime() {
        assert_eq!(heavy(|| 41 + 1), 42);
    }
}
