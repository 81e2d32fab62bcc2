//! CPU-heavy steps of a request (decoding and validating a body, applying a
//! patch, server-side apply, encoding a large response) must not hold one of
//! the async workers that serve `/readyz` and every other client: a heavy
//! request may slow itself, never the others.

use std::cell::Cell;
use std::future::Future;
use std::time::Instant;
use tokio::runtime::{Handle, RuntimeFlavor};

/// From this size on, a request's body or stored object makes it "large":
/// its later steps (admission reviews, plugin answers, decoding, encoding)
/// then also run through [`heavy`]. Smaller requests run them in place,
/// where handing the worker off would cost more than the work.
pub const LARGE_BYTES: usize = 64 * 1024;

tokio::task_local! {
    static LARGE_REQUEST: Cell<bool>;
    static DEADLINE: Instant;
}

/// Runs one request's future knowing when its `--request-timeout` passes,
/// so that long synchronous steps (CEL validation) can stop there.
pub async fn with_deadline<F: Future>(deadline: Instant, request: F) -> F::Output {
    DEADLINE.scope(deadline, request).await
}

/// When the current request must be answered by, if it has a deadline.
pub fn deadline() -> Option<Instant> {
    DEADLINE.try_with(|d| *d).ok()
}

/// Runs one request's future, which may learn (through [`mark_large`])
/// that it carries a large body or object.
pub async fn request_scope<F: Future>(request: F) -> F::Output {
    LARGE_REQUEST.scope(Cell::new(false), request).await
}

/// Notes that the current request handles `len` bytes of one body or object.
pub fn mark_large(len: usize) {
    if len >= LARGE_BYTES {
        let _ = LARGE_REQUEST.try_with(|large| large.set(true));
    }
}

/// Whether the current request was marked large.
pub fn is_large() -> bool {
    LARGE_REQUEST.try_with(Cell::get).unwrap_or(false)
}

/// Runs a step whose cost grows with the request's objects: through
/// [`heavy`] when the request is large, in place otherwise.
pub fn for_request<T>(work: impl FnOnce() -> T) -> T {
    if is_large() {
        heavy(work)
    } else {
        work()
    }
}

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

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn only_requests_marked_large_hand_their_worker_off() {
        let worker = || std::thread::current().id();
        let (small, here) = request_scope(async { (for_request(worker), worker()) }).await;
        assert_eq!(small, here, "a small request's step runs in place");
        let large = tokio::spawn(request_scope(async move {
            mark_large(LARGE_BYTES);
            let (tx, rx) = std::sync::mpsc::channel::<()>();
            let light = tokio::spawn(async move { tx.send(()).is_ok() });
            // With one worker, only a hand-off lets `light` run meanwhile.
            let saw = for_request(|| rx.recv_timeout(Duration::from_secs(10)).is_ok());
            saw && light.await.unwrap_or(false)
        }));
        assert!(
            large.await.unwrap(),
            "the large request's step let another task run"
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn runs_inline_on_a_current_thread_runtime() {
        assert_eq!(heavy(|| 41 + 1), 42);
    }
}
