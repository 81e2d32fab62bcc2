//! Two compilers, so that a component never waits for the slow one: a
//! component not in the cache is compiled by Winch, wasmtime's baseline
//! compiler (5–7× faster to compile: the built-in strategy plugin in 0.3 s
//! instead of 1.7 s, a JS policy in 1.2 s instead of 7.4 s), serves at once,
//! and is compiled again by Cranelift on the optimizer's thread (one, at a
//! lower CPU priority, never an async worker). The optimized code is cached
//! and swapped in: calls after the swap run it, calls under way finish on
//! the baseline code, idle baseline instances are not reused. A component in
//! the cache is loaded as before (Cranelift's, or else Winch's).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Condvar, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::Engine;

use super::bindings::host;
use super::cache::{self, Source};
use super::compile_process::{self, Tier};
use super::engine::{self, EpochTicker};
use super::host_imports::PluginState;
use super::runtime::{Plugin, PluginKind, Pre};
use super::warm::WarmPool;

/// The optimized component in the cache at `path`, else the baseline
/// compiler's (from the cache in `path`'s folder, or compiled now).
pub(crate) fn load_or_baseline(
    optimizing: &Engine,
    baseline: &Engine,
    path: &std::path::Path,
    wasm: &[u8],
) -> anyhow::Result<(Component, Source)> {
    if let Some(found) = cache::load(optimizing, path) {
        return Ok((found, Source::Cache));
    }
    let dir = path.parent();
    match cache::load_or_compile(baseline, dir, wasm) {
        Ok((component, Source::Cache)) => Ok((component, Source::BaselineCache)),
        Ok((component, _)) => Ok((component, Source::Baseline)),
        Err(e) => without_baseline(optimizing, dir, wasm, &e),
    }
}

/// A component the baseline compiler cannot compile (a proposal Winch
/// lacks) is compiled by Cranelift at once: slower to load, as before.
pub(crate) fn without_baseline(
    optimizing: &Engine,
    dir: Option<&std::path::Path>,
    wasm: &[u8],
    why: &anyhow::Error,
) -> anyhow::Result<(Component, Source)> {
    tracing::info!(error = %why, "the baseline compiler refused a component; compiling it with Cranelift");
    cache::load_or_compile(optimizing, dir, wasm)
}

/// One compiler's engine, with the linker and epoch ticker of that engine.
#[derive(Clone)]
pub(crate) struct Compiler {
    pub(crate) engine: Engine,
    pub(crate) linker: Linker<PluginState>,
    pub(crate) ticker: Arc<EpochTicker>,
}

impl Compiler {
    pub(crate) fn new(baseline: bool) -> anyhow::Result<Compiler> {
        let engine = engine::build_engine(baseline)?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        host::add_to_linker::<_, HasSelf<PluginState>>(&mut linker, |state| state)?;
        let ticker = Arc::new(EpochTicker::start(&engine)?);
        Ok(Compiler {
            engine,
            linker,
            ticker,
        })
    }

    /// The pre-linked code of `component` (compiled by this engine);
    /// errors name the plugin and say what is wrong.
    pub(crate) fn code(
        &self,
        name: &str,
        component: &Component,
        (kind, optimized): (PluginKind, bool),
    ) -> anyhow::Result<Code> {
        let instance_pre = self.linker.instantiate_pre(component).map_err(|e| {
            anyhow::anyhow!("plugin {name:?}: imports something the host does not offer (only capstan:plugin/host and WASI): {e:#}")
        })?;
        let pre = Pre::new(kind, instance_pre).map_err(|e| {
            anyhow::anyhow!(
                "plugin {name:?} does not implement the {} world (expected export `{}`); is it a plugin of another kind? {e:#}",
                kind.world(),
                kind.export()
            )
        })?;
        Ok(Code {
            pre,
            engine: self.engine.clone(),
            optimized,
            _ticker: self.ticker.clone(),
        })
    }
}

/// The code a plugin's calls run: its pre-linked instance and the engine
/// that compiled it.
pub(crate) struct Code {
    pub(crate) pre: Pre,
    pub(crate) engine: Engine,
    /// Compiled by Cranelift (else by Winch, until swapped).
    pub(crate) optimized: bool,
    _ticker: Arc<EpochTicker>,
}

/// A plugin's current code, replaced once when optimized.
pub(crate) type CodeSlot = Arc<RwLock<Arc<Code>>>;

struct Job {
    name: Arc<str>,
    kind: PluginKind,
    /// A built-in's bytes are the binary's own, not copied.
    wasm: std::borrow::Cow<'static, [u8]>,
    slot: Weak<RwLock<Arc<Code>>>,
    /// Its idle instances, of the code being replaced.
    warm: Weak<WarmPool>,
}

/// The optimizer's queue: components compiled by Cranelift one at a time,
/// none while it is held.
pub(crate) struct Optimizer {
    jobs: Mutex<Sender<Job>>,
    holds: Arc<Holds>,
}

/// How many [`OptimizerHold`]s are alive; the optimizer waits for none.
#[derive(Default)]
struct Holds {
    count: Mutex<usize>,
    released: Condvar,
}

impl Holds {
    fn wait_for_none(&self) {
        let count = self.count.lock().unwrap_or_else(|e| e.into_inner());
        let _none = (self.released)
            .wait_while(count, |n| *n > 0)
            .unwrap_or_else(|e| e.into_inner());
    }
}

/// While alive, the optimizer compiles nothing (see [`Optimizer::hold`]).
pub struct OptimizerHold(Arc<Holds>);

impl Drop for OptimizerHold {
    fn drop(&mut self) {
        let mut count = self.0.count.lock().unwrap_or_else(|e| e.into_inner());
        *count = count.saturating_sub(1);
        self.0.released.notify_all();
    }
}

impl Optimizer {
    pub(crate) fn start(compiler: Compiler, cache_dir: Option<PathBuf>) -> anyhow::Result<Self> {
        let (jobs, queue) = channel::<Job>();
        let holds = Arc::new(Holds::default());
        let held = holds.clone();
        std::thread::Builder::new()
            .name("plugin-optimizer".into())
            .spawn(move || {
                lower_priority();
                while let Some(job) = next(&queue) {
                    held.wait_for_none();
                    optimize(&compiler, cache_dir.as_deref(), job);
                }
            })?;
        Ok(Optimizer {
            jobs: Mutex::new(jobs),
            holds,
        })
    }

    /// Holds the optimizer until the returned value is dropped: a server's
    /// start is not slowed by Cranelift on its cores, nor its memory at
    /// ready swollen by Cranelift's working memory and code.
    pub(crate) fn hold(&self) -> OptimizerHold {
        *self.holds.count.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        OptimizerHold(self.holds.clone())
    }

    /// Queues `plugin`'s `wasm` (its code compiled by Winch) for Cranelift.
    pub(crate) fn submit(&self, plugin: &Plugin, wasm: &[u8]) {
        let job = Job {
            name: plugin.name.clone(),
            kind: plugin.kind,
            wasm: match super::embedded::as_builtin(wasm) {
                Some(builtin) => std::borrow::Cow::Borrowed(builtin),
                None => std::borrow::Cow::Owned(wasm.to_vec()),
            },
            slot: Arc::downgrade(&plugin.code),
            warm: Arc::downgrade(&plugin.warm),
        };
        let queue = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        let _ = queue.send(job);
    }
}

fn optimize(compiler: &Compiler, cache_dir: Option<&std::path::Path>, job: Job) {
    // The plugin was dropped (a PolicyBundle replaced): nothing to do.
    if job.slot.strong_count() == 0 {
        return;
    }
    let started = Instant::now();
    if let Some(dir) = cache_dir {
        compile_process::compile(dir, Tier::Optimized, &[&job.wasm]);
    }
    let compiled = cache::load_or_compile(&compiler.engine, cache_dir, &job.wasm)
        .and_then(|(component, _)| compiler.code(&job.name, &component, (job.kind, true)));
    let code = match compiled {
        Ok(code) => code,
        Err(e) => {
            tracing::warn!(plugin = &*job.name, error = %e, "plugin not optimized; it keeps its baseline code");
            return;
        }
    };
    if let Some(slot) = job.slot.upgrade() {
        *slot.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(code);
        if let Some(warm) = job.warm.upgrade() {
            warm.clear();
        }
        let elapsed_ms = started.elapsed().as_millis() as u64;
        tracing::info!(
            plugin = &*job.name,
            elapsed_ms,
            "plugin optimized (Cranelift); new calls run it"
        );
    }
}

/// Set when an instance was dropped after a failure (a trap, out of
/// memory, a timeout): its host-side memory is freed but kept by malloc.
static INSTANCES_DROPPED: AtomicBool = AtomicBool::new(false);

/// How often the optimizer's thread, when idle, returns what dropped
/// instances freed.
const RELEASE_EVERY: Duration = Duration::from_secs(5);

/// Notes that a failed instance was dropped (see [`INSTANCES_DROPPED`]).
pub(crate) fn instance_dropped() {
    INSTANCES_DROPPED.store(true, Ordering::Relaxed);
}

/// The next job; before waiting for one, what the last ones freed is
/// returned to the system, and while waiting, what dropped instances freed.
fn next(queue: &std::sync::mpsc::Receiver<Job>) -> Option<Job> {
    use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
    match queue.try_recv() {
        Ok(job) => return Some(job),
        Err(TryRecvError::Disconnected) => return None,
        Err(TryRecvError::Empty) => release_freed_memory(),
    }
    loop {
        match queue.recv_timeout(RELEASE_EVERY) {
            Ok(job) => return Some(job),
            Err(RecvTimeoutError::Disconnected) => return None,
            Err(RecvTimeoutError::Timeout) => {
                if INSTANCES_DROPPED.swap(false, Ordering::Relaxed) {
                    release_freed_memory();
                }
            }
        }
    }
}

/// Returns to the system what compiling freed: the compilers' working
/// memory is large and glibc keeps freed memory for later allocations.
pub(crate) fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The optimizer yields the CPU to the threads serving requests.
#[cfg(target_os = "linux")]
fn lower_priority() {
    // SAFETY: plain syscalls on the calling thread; a failure is harmless.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, 10);
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_priority() {}

/// A compiling child process yields the CPU to the server's threads.
pub(crate) fn lower_process_priority() {
    #[cfg(unix)]
    // SAFETY: a plain syscall on this process; a failure is harmless.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 10);
    }
}
