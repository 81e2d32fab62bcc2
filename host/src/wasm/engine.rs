//! The one wasmtime `Engine` of a server, and the thread that advances its
//! epoch so that running plugins can be interrupted at their deadline.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Strategy};

/// How often the epoch advances: a running plugin yields to the executor and
/// checks its deadline this often.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Largest linear memory any instance may have (per-call limits are capped to it).
pub(crate) const MAX_MEMORY_BYTES: usize = 256 << 20;

/// Most plugin instances alive at once (concurrent calls plus the idle ones
/// authenticators and authorizers keep); more fail to instantiate.
const MAX_CONCURRENT_INSTANCES: u32 = 512;

/// Builds an engine: component model, async, epoch interruption, fuel
/// metering. The optimizing one (Cranelift) serves from a modest pooling
/// allocator; the baseline one (Winch, `tiers.rs`) allocates on demand, its
/// instances being few and short-lived.
pub(crate) fn build_engine(baseline: bool) -> anyhow::Result<Engine> {
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .epoch_interruption(true)
        .consume_fuel(true)
        .memory_reservation(MAX_MEMORY_BYTES as u64);
    match baseline {
        true => config.strategy(Strategy::Winch),
        false => config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool())),
    };
    Ok(Engine::new(&config)?)
}

fn pool() -> PoolingAllocationConfig {
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(MAX_CONCURRENT_INSTANCES)
        .total_core_instances(MAX_CONCURRENT_INSTANCES * 8)
        .total_memories(MAX_CONCURRENT_INSTANCES * 2)
        .total_tables(MAX_CONCURRENT_INSTANCES * 8)
        .total_stacks(MAX_CONCURRENT_INSTANCES)
        .max_memory_size(MAX_MEMORY_BYTES);
    pool
}

/// Advances the engine's epoch every [`EPOCH_TICK`] on a thread of its own
/// until dropped.
pub(crate) struct EpochTicker {
    stop: Arc<AtomicBool>,
}

impl EpochTicker {
    pub(crate) fn start(engine: &Engine) -> anyhow::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let (engine, flag) = (engine.clone(), stop.clone());
        std::thread::Builder::new()
            .name("plugin-epoch".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(EPOCH_TICK);
                    engine.increment_epoch();
                }
            })?;
        Ok(EpochTicker { stop })
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
