//! The WebAssembly plugin runtime: loads components that implement one of the
//! Capstan plugin worlds (see `plugin-sdk/wit/capstan.wit`) and calls them in a
//! sandbox — no files, sockets, environment or processes; a wall-clock
//! timeout, a memory cap and optional fuel per call; instances are reused
//! by later calls and dropped after any failure, so a plugin that traps never
//! affects the next call.
//!
//! ```ignore
//! let runtime = PluginRuntime::new(Some(cache_dir))?;
//! let plugin = runtime.load("deny-latest", wasm, PluginKind::Admission)?;
//! let answer = plugin.call(&review_json, CallContext::new(config, reader)).await?;
//! ```

pub mod abi;
mod bindings;
mod cache;
pub mod cache_dir;
pub mod compile_process;
mod context;
pub mod embedded;
mod engine;
mod failure;
mod host_imports;
mod limiter;
pub mod metrics;
pub mod offline;
mod offload;
mod output;
mod runtime;
mod tiers;
mod transport;
mod warm;

pub use context::{
    CallContext, EmptyReader, Limits, ObjectReader, DEFAULT_MEMORY_MIB, DEFAULT_TIMEOUT,
};
pub use failure::PluginFailure;
pub use offload::run_on_pool;
pub(crate) use runtime::check_is_component;
pub use runtime::{Plugin, PluginKind, PluginRuntime};
pub use tiers::OptimizerHold;
pub use transport::WasmTransport;
