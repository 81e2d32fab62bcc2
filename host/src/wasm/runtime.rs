//! `PluginRuntime` (one per server: engine, linker, cache, epoch ticker) and
//! `Plugin` (one loaded component, pre-linked for its world): loading checks
//! that the wasm is a component exporting the expected world; every call runs
//! with the call's limits, in an instance kept from an earlier successful
//! call or a new one (see `warm.rs`).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use wasmtime::component::Component;
use wasmtime::{Store, UpdateDeadline};

use super::abi;
use super::bindings::{admission, authenticator, authorizer, converter, strategy};
use super::cache::{self, Source};
use super::context::{CallContext, Limits};
use super::engine::MAX_MEMORY_BYTES;
use super::failure::{classify, Observed, PluginFailure};
use super::host_imports::PluginState;
use super::tiers::{Code, CodeSlot, Compiler, Optimizer};
use super::warm::{Bound, Instance, WarmPool};

/// Extra wall-clock time granted beyond the timeout before the host stops
/// waiting for a call stuck in a host import.
const HOST_GRACE: Duration = Duration::from_millis(100);

/// Which world a plugin implements (in a manifest: `"admission"`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PluginKind {
    Admission,
    Authenticator,
    Authorizer,
    Strategy,
    Converter,
}

impl PluginKind {
    /// The WIT world's name.
    pub fn world(self) -> &'static str {
        match self {
            PluginKind::Admission => "admission",
            PluginKind::Authenticator => "authenticator",
            PluginKind::Authorizer => "authorizer",
            PluginKind::Strategy => "strategy",
            PluginKind::Converter => "converter",
        }
    }

    /// The function the world exports.
    pub fn export(self) -> &'static str {
        match self {
            PluginKind::Admission => "review",
            PluginKind::Authenticator => "authenticate",
            PluginKind::Authorizer => "authorize",
            PluginKind::Strategy => "call",
            PluginKind::Converter => "convert",
        }
    }
}

/// The server's plugin runtime.
pub struct PluginRuntime {
    /// Cranelift: the code plugins run once optimized.
    optimizing: Compiler,
    /// Winch: the code of components not in the cache, at once.
    baseline: Compiler,
    optimizer: Optimizer,
    cache_dir: Option<PathBuf>,
    /// What `precompile` loaded, by cache path, for `load` to take.
    precompiled: Mutex<HashMap<PathBuf, (Component, Source)>>,
}

impl PluginRuntime {
    /// Creates the engines and starts their epoch tickers and the
    /// optimizer. With `cache_dir`, compiled plugins are kept there across
    /// restarts (see `cache.rs` for why that directory must be writable only
    /// by the server).
    pub fn new(cache_dir: Option<PathBuf>) -> anyhow::Result<Arc<PluginRuntime>> {
        let optimizing = Compiler::new(false)?;
        let optimizer = Optimizer::start(optimizing.clone(), cache_dir.clone())?;
        Ok(Arc::new(PluginRuntime {
            optimizing,
            baseline: Compiler::new(true)?,
            optimizer,
            cache_dir,
            precompiled: Mutex::default(),
        }))
    }

    /// Holds the optimizer until the value returned is dropped (a server
    /// holds it until it is ready).
    pub fn hold_optimizer(&self) -> super::tiers::OptimizerHold {
        self.optimizer.hold()
    }

    /// Loads the components from the cache, or compiles them with the
    /// baseline compiler, in parallel (one thread per core), and keeps them
    /// for the `load`s that follow; a no-op without a cache directory.
    /// Errors are left for `load`, which names the plugin.
    pub fn precompile(&self, modules: &[&[u8]]) {
        let Some(dir) = self.cache_dir.as_deref() else {
            return;
        };
        let started = Instant::now();
        let workers = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .max(1);
        let compiled = self.compile_missing(dir, modules);
        // The largest first: the strategy plugin's compile is the longest,
        // so it starts at once while the other threads take the small ones.
        let mut modules = modules.to_vec();
        modules.sort_by_key(|wasm| std::cmp::Reverse(wasm.len()));
        let next = std::sync::atomic::AtomicUsize::new(0);
        let loaded = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for _ in 0..workers.min(modules.len()) {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(wasm) = modules.get(i) else { break };
                    let path = cache::cache_path(dir, &self.optimizing.engine, wasm);
                    if let Ok(done) = self.load_or_baseline(&path, wasm) {
                        lock(&loaded).push((path, done));
                    }
                });
            }
        });
        let loaded = loaded.into_inner().unwrap_or_else(|e| e.into_inner());
        let optimized = loaded.iter().filter(|(_, (_, s))| s.optimized());
        tracing::info!(
            cache = %dir.display(),
            modules = modules.len(),
            compiled,
            optimized = optimized.count(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "plugins loaded from the cache or compiled by the baseline compiler (optimized in the background)"
        );
        lock(&self.precompiled).extend(loaded);
        super::tiers::release_freed_memory();
    }

    /// Compiles the modules in neither compiler's cache into it, in a child
    /// process (`compile_process.rs`) when this process compiles in one,
    /// else later, in `load_or_baseline`; returns how many.
    fn compile_missing(&self, dir: &std::path::Path, modules: &[&[u8]]) -> usize {
        let cached =
            |engine: &wasmtime::Engine, wasm: &[u8]| cache::cache_path(dir, engine, wasm).is_file();
        let missing: Vec<&[u8]> = modules
            .iter()
            .copied()
            .filter(|wasm| !cached(&self.optimizing.engine, wasm))
            .filter(|wasm| !cached(&self.baseline.engine, wasm))
            .collect();
        super::compile_process::compile(dir, super::compile_process::Tier::Baseline, &missing);
        missing.len()
    }

    fn load_or_baseline(
        &self,
        path: &std::path::Path,
        wasm: &[u8],
    ) -> anyhow::Result<(Component, Source)> {
        super::tiers::load_or_baseline(&self.optimizing.engine, &self.baseline.engine, path, wasm)
    }

    /// The component of `wasm`: kept by `precompile`, else from the cache
    /// directory, else compiled by the baseline compiler.
    fn component(&self, wasm: &[u8]) -> anyhow::Result<(Component, Source)> {
        let Some(dir) = self.cache_dir.as_deref() else {
            return match Component::new(&self.baseline.engine, wasm) {
                Ok(component) => Ok((component, Source::Baseline)),
                Err(e) => {
                    super::tiers::without_baseline(&self.optimizing.engine, None, wasm, &e.into())
                }
            };
        };
        let path = cache::cache_path(dir, &self.optimizing.engine, wasm);
        // Taken, not kept: baseline code must be freed once swapped.
        if let Some(found) = lock(&self.precompiled).remove(&path) {
            return Ok(found);
        }
        if super::compile_process::enabled() {
            self.compile_missing(dir, &[wasm]);
        }
        self.load_or_baseline(&path, wasm)
    }

    fn compiler(&self, source: Source) -> &Compiler {
        match source.optimized() {
            true => &self.optimizing,
            false => &self.baseline,
        }
    }

    /// Compiles (or loads from the cache) `wasm` and pre-links it for the
    /// world of `kind`. Errors name the plugin and say what is wrong.
    pub fn load(&self, name: &str, wasm: &[u8], kind: PluginKind) -> anyhow::Result<Plugin> {
        let (component, source) = self.compile(name, wasm)?;
        let worlds = abi::worlds(&self.compiler(source).engine, &component);
        if !worlds.is_empty() && !worlds.contains(&kind) {
            let names: Vec<&str> = worlds.iter().map(|w| w.world()).collect();
            anyhow::bail!(
                "plugin {name:?} implements the {} world, not the {} world it is configured for",
                names.join(" and "),
                kind.world()
            );
        }
        self.link(name, (wasm, &component), source, kind)
    }

    /// [`load`](Self::load) as the world the component implements (the one
    /// whose function it exports).
    pub fn load_any(&self, name: &str, wasm: &[u8]) -> anyhow::Result<Plugin> {
        let (component, source) = self.compile(name, wasm)?;
        match abi::worlds(&self.compiler(source).engine, &component).as_slice() {
            [kind] => self.link(name, (wasm, &component), source, *kind),
            [] => anyhow::bail!(
                "plugin {name:?} exports none of the worlds' functions (review, authenticate, authorize, call, convert)"
            ),
            several => anyhow::bail!("plugin {name:?} exports the functions of several worlds: {several:?}"),
        }
    }

    /// The compiled component, checked to be a component of a compatible ABI.
    fn compile(&self, name: &str, wasm: &[u8]) -> anyhow::Result<(Component, Source)> {
        check_is_component(name, wasm)?;
        let started = Instant::now();
        let (component, source) = self
            .component(wasm)
            .map_err(|e| anyhow::anyhow!("plugin {name:?}: cannot compile the component: {e:#}"))?;
        abi::check_version(name, &self.compiler(source).engine, &component)?;
        tracing::debug!(plugin = name, ?source, elapsed = ?started.elapsed(), "plugin compiled");
        super::metrics::PLUGINS.compiled(name, started.elapsed());
        Ok((component, source))
    }

    /// The plugin, pre-linked; baseline code is queued for the optimizer.
    fn link(
        &self,
        name: &str,
        (wasm, component): (&[u8], &Component),
        source: Source,
        kind: PluginKind,
    ) -> anyhow::Result<Plugin> {
        let optimized = source.optimized();
        let code = self
            .compiler(source)
            .code(name, component, (kind, optimized))?;
        let plugin = Plugin {
            name: name.into(),
            kind,
            code: Arc::new(RwLock::new(Arc::new(code))),
            from_cache: source == Source::Cache,
            warm: Default::default(),
        };
        if !optimized {
            (self.optimizer).submit(&plugin, wasm);
        }
        Ok(plugin)
    }
}

/// The guarded value, also after a thread panicked holding the lock.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Refuses what is not a component (a core module is told how to become one).
/// A built-in is one (a test checks each), and its header is not read: that
/// read alone mapped 64 KiB of the binary per built-in.
pub(crate) fn check_is_component(name: &str, wasm: &[u8]) -> anyhow::Result<()> {
    if super::embedded::name_of(wasm).is_some() {
        return Ok(());
    }
    match wasm.get(..8) {
        Some([0, b'a', b's', b'm', 0x0d, 0, 1, 0]) => Ok(()),
        Some([0, b'a', b's', b'm', 1, 0, 0, 0]) => anyhow::bail!(
            "plugin {name:?} is a core WebAssembly module, not a component: build it for the wasm32-wasip2 target (or wrap it with `wasm-tools component new`)"
        ),
        _ => anyhow::bail!("plugin {name:?} is not a WebAssembly component (bad header)"),
    }
}

/// The pre-linked instance, typed by world.
#[derive(Clone)]
pub(crate) enum Pre {
    Admission(admission::AdmissionPre<PluginState>),
    Authenticator(authenticator::AuthenticatorPre<PluginState>),
    Authorizer(authorizer::AuthorizerPre<PluginState>),
    Strategy(strategy::StrategyPre<PluginState>),
    Converter(converter::ConverterPre<PluginState>),
}

impl Pre {
    pub(crate) fn new(
        kind: PluginKind,
        pre: wasmtime::component::InstancePre<PluginState>,
    ) -> wasmtime::Result<Pre> {
        Ok(match kind {
            PluginKind::Admission => Pre::Admission(admission::AdmissionPre::new(pre)?),
            PluginKind::Authenticator => {
                Pre::Authenticator(authenticator::AuthenticatorPre::new(pre)?)
            }
            PluginKind::Authorizer => Pre::Authorizer(authorizer::AuthorizerPre::new(pre)?),
            PluginKind::Strategy => Pre::Strategy(strategy::StrategyPre::new(pre)?),
            PluginKind::Converter => Pre::Converter(converter::ConverterPre::new(pre)?),
        })
    }

    /// Instantiates into `store`.
    async fn instantiate(&self, store: &mut Store<PluginState>) -> wasmtime::Result<Bound> {
        Ok(match self {
            Pre::Admission(pre) => Bound::Admission(pre.instantiate_async(store).await?),
            Pre::Authenticator(pre) => Bound::Authenticator(pre.instantiate_async(store).await?),
            Pre::Authorizer(pre) => Bound::Authorizer(pre.instantiate_async(store).await?),
            Pre::Strategy(pre) => Bound::Strategy(pre.instantiate_async(store).await?),
            Pre::Converter(pre) => Bound::Converter(pre.instantiate_async(store).await?),
        })
    }
}

/// A loaded plugin. Cheap to clone; calls may run concurrently.
#[derive(Clone)]
pub struct Plugin {
    pub(super) name: Arc<str>,
    pub(super) kind: PluginKind,
    /// Its current code: the baseline compiler's until optimized.
    pub(super) code: CodeSlot,
    from_cache: bool,
    /// Idle instances, reused by later calls.
    pub(super) warm: Arc<WarmPool>,
}

impl std::fmt::Debug for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugin")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .finish()
    }
}

impl Plugin {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn kind(&self) -> PluginKind {
        self.kind
    }

    /// Whether `load` found the compiled component in the cache directory.
    pub fn loaded_from_cache(&self) -> bool {
        self.from_cache
    }

    /// Calls the world's export with `input` (JSON text) in an idle instance
    /// of an earlier call or a new one. An `Ok` answer is
    /// passed through unparsed: the caller must parse it and treat text that
    /// does not parse as a failure.
    pub async fn call(&self, input: &str, ctx: CallContext) -> Result<String, PluginFailure> {
        let started = Instant::now();
        let timeout = ctx.limits.timeout;
        let (mut instance, reused) = self.instance(ctx)?;
        let plugin = self.clone();
        let input_len = input.len();
        let input = input.to_owned();
        let job = async move {
            let call = plugin.invoke(&mut instance, &input);
            let outcome = tokio::time::timeout(timeout + HOST_GRACE, call).await;
            (instance, outcome)
        };
        let (instance, outcome) = super::offload::run(input_len, job)
            .await
            .map_err(|e| PluginFailure::Internal(format!("plugin call did not finish: {e}")))?;
        let state = instance.store.data();
        let stderr = state.output.take_text();
        if !stderr.is_empty() {
            tracing::info!(plugin = &*self.name, output = %stderr.trim_end(), "plugin output");
        }
        let result = match outcome {
            Err(_) => Err(PluginFailure::Timeout(timeout)),
            Ok(Ok(Ok(answer))) => Ok(answer),
            Ok(Ok(Err(message))) => Err(PluginFailure::Returned(message)),
            Ok(Err(error)) => Err(classify(
                &error,
                Observed {
                    timeout,
                    memory_refused: state.limiter.refused(),
                    stderr: &stderr,
                },
            )),
        };
        let kind = match &result {
            Ok(_) => {
                self.warm.give_back(instance);
                "ok"
            }
            Err(failure) => {
                tracing::debug!(plugin = &*self.name, %failure, "plugin call failed");
                super::tiers::instance_dropped();
                failure.kind()
            }
        };
        super::metrics::PLUGINS.called(&self.name, kind, started.elapsed(), reused);
        result
    }

    /// The code calls run now.
    fn current(&self) -> Arc<Code> {
        self.code.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Whether its code is the optimizing compiler's (loaded from the cache,
    /// or swapped in once compiled).
    pub fn optimized(&self) -> bool {
        self.current().optimized
    }

    /// A reused instance rearmed for this call (true), or a new store. An
    /// idle instance of code since replaced is dropped.
    fn instance(&self, ctx: CallContext) -> Result<(Instance, bool), PluginFailure> {
        let code = self.current();
        let reused = self.warm.take().filter(|i| Arc::ptr_eq(&i.code, &code));
        let was_reused = reused.is_some();
        let mut instance = match reused {
            Some(mut instance) => {
                instance.store.data_mut().rearm(ctx.config, ctx.reader);
                instance
            }
            None => {
                let memory = ctx.limits.memory_bytes.min(MAX_MEMORY_BYTES);
                let state = PluginState::new(self.name.clone(), ctx.config, ctx.reader, memory);
                let mut store = Store::new(&code.engine, state);
                store.limiter(|state| &mut state.limiter);
                Instance {
                    store,
                    bound: None,
                    calls: 0,
                    code,
                }
            }
        };
        arm(&mut instance.store, &ctx.limits)?;
        Ok((instance, was_reused))
    }

    /// Instantiates if needed, then calls.
    async fn invoke(
        &self,
        instance: &mut Instance,
        input: &str,
    ) -> wasmtime::Result<Result<String, String>> {
        if instance.bound.is_none() {
            let pre = instance.code.pre.clone();
            instance.bound = Some(pre.instantiate(&mut instance.store).await?);
        }
        instance.calls += 1;
        match &instance.bound {
            Some(bound) => bound.call(&mut instance.store, input).await,
            None => Err(wasmtime::Error::msg("plugin instance missing")),
        }
    }
}

/// Fuel and an epoch callback for one call: yield to the executor every
/// tick, interrupt at the deadline.
fn arm(store: &mut Store<PluginState>, limits: &Limits) -> Result<(), PluginFailure> {
    let fuel = limits.fuel.unwrap_or(u64::MAX);
    store
        .set_fuel(fuel)
        .map_err(|e| PluginFailure::Internal(e.to_string()))?;
    let deadline = Instant::now() + limits.timeout;
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |_| {
        if Instant::now() >= deadline {
            Ok(UpdateDeadline::Interrupt)
        } else {
            Ok(UpdateDeadline::Yield(1))
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_modules_are_refused_with_a_hint() {
        let core = [0, b'a', b's', b'm', 1, 0, 0, 0];
        let err = check_is_component("p", &core).unwrap_err().to_string();
        assert!(err.contains("core WebAssembly module"), "{err}");
        assert!(err.contains("wasm32-wasip2"), "{err}");
        assert!(check_is_component("p", b"hello world").is_err());
    }

    #[test]
    fn kinds_name_their_world_and_export() {
        assert_eq!(PluginKind::Authorizer.world(), "authorizer");
        assert_eq!(PluginKind::Strategy.export(), "call");
    }
}
