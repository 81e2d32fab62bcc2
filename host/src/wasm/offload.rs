//! Plugin calls whose input a client made large run on a runtime of their
//! own, so that a guest parsing megabytes of JSON (and the host copying them
//! into its memory) never occupies the async workers that serve `/readyz`
//! and every other client. Small inputs, the common case, run in place:
//! moving them to another thread would cost more than the call.

use std::future::Future;
use std::sync::LazyLock;
use tokio::runtime::Runtime;

/// Inputs from this size on are offloaded.
pub const OFFLOAD_BYTES: usize = 64 * 1024;

/// The plugin runtime: as many workers as cores; `None` if it could not be
/// built (calls then run in place).
static POOL: LazyLock<Option<Runtime>> = LazyLock::new(|| {
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name("plugin-worker")
        .enable_all()
        .build()
        .inspect_err(
            |e| tracing::warn!(error = %e, "no plugin runtime; large plugin calls run in place"),
        )
        .ok()
});

/// Runs `job` on the plugin runtime when `input_len` is large, else here.
pub async fn run<T: Send + 'static>(
    input_len: usize,
    job: impl Future<Output = T> + Send + 'static,
) -> Result<T, tokio::task::JoinError> {
    match POOL.as_ref().filter(|_| input_len >= OFFLOAD_BYTES) {
        Some(pool) => pool.spawn(job).await,
        None => Ok(job.await),
    }
}

/// Runs `job` on the plugin runtime whatever its input (work whose cost
/// grows with the cluster: the background audit), or here when there is none.
pub async fn run_on_pool<T: Send + 'static>(
    job: impl Future<Output = T> + Send + 'static,
) -> Result<T, tokio::task::JoinError> {
    match POOL.as_ref() {
        Some(pool) => pool.spawn(job).await,
        None => Ok(job.await),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn large_inputs_run_on_the_plugin_runtime_small_ones_here() {
        let name = || std::thread::current().name().map(String::from);
        let here = name();
        let small = run(10, async move { name() }).await.unwrap();
        let large = run(OFFLOAD_BYTES, async move { name() }).await.unwrap();
        assert_eq!(small, here);
        assert_eq!(large.as_deref(), Some("plugin-worker"));
    }
}
