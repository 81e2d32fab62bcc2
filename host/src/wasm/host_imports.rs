//! The data each plugin call's store holds, and the host side of the `host`
//! WIT interface (log, config, get-object, list-objects) plus the sandboxed
//! WASI context: no preopened directories, environment, arguments or
//! network; stdout/stderr go to a bounded buffer that is logged.

use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime_wasi::cli::AsyncStdoutStream;
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use super::bindings::host::{Host, Level};
use super::context::ObjectReader;
use super::limiter::MemoryLimiter;
use super::output::CapturedOutput;

/// Store data of one call.
pub(crate) struct PluginState {
    pub plugin: Arc<str>,
    pub config: String,
    pub reader: Arc<dyn ObjectReader>,
    pub limiter: MemoryLimiter,
    pub output: CapturedOutput,
    wasi: WasiCtx,
    table: ResourceTable,
}

impl PluginState {
    pub(crate) fn new(
        plugin: Arc<str>,
        config: String,
        reader: Arc<dyn ObjectReader>,
        memory_bytes: usize,
    ) -> Self {
        let output = CapturedOutput::default();
        PluginState {
            plugin,
            config,
            reader,
            limiter: MemoryLimiter::new(memory_bytes),
            wasi: sandboxed_wasi(&output),
            output,
            table: ResourceTable::new(),
        }
    }
}

impl PluginState {
    /// Points a reused instance's imports at the next call's configuration and reader.
    pub(crate) fn rearm(&mut self, config: String, reader: Arc<dyn ObjectReader>) {
        self.config = config;
        self.reader = reader;
    }
}

/// A WASI context that grants nothing: stdin closed, stdout/stderr captured,
/// no env, args or preopens, TCP/UDP and name lookup refused.
fn sandboxed_wasi(output: &CapturedOutput) -> WasiCtx {
    WasiCtxBuilder::new()
        .stdout(AsyncStdoutStream::new(1024, output.clone()))
        .stderr(AsyncStdoutStream::new(1024, output.clone()))
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        .build()
}

impl WasiView for PluginState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl Host for PluginState {
    async fn log(&mut self, level: Level, message: String) {
        let plugin = &*self.plugin;
        match level {
            Level::Trace => tracing::trace!(plugin, "{message}"),
            Level::Debug => tracing::debug!(plugin, "{message}"),
            Level::Info => tracing::info!(plugin, "{message}"),
            Level::Warn => tracing::warn!(plugin, "{message}"),
            Level::Error => tracing::error!(plugin, "{message}"),
        }
    }

    async fn config(&mut self) -> String {
        self.config.clone()
    }

    async fn get_object(
        &mut self,
        api_version: String,
        resource: String,
        namespace: Option<String>,
        name: String,
    ) -> Result<Option<String>, String> {
        let reader = self.reader.clone();
        reader
            .get(&api_version, &resource, namespace.as_deref(), &name)
            .await
    }

    async fn list_objects(
        &mut self,
        api_version: String,
        resource: String,
        namespace: Option<String>,
        label_selector: Option<String>,
        field_selector: Option<String>,
    ) -> Result<String, String> {
        let reader = self.reader.clone();
        reader
            .list(
                &api_version,
                &resource,
                namespace.as_deref(),
                label_selector.as_deref(),
                field_selector.as_deref(),
            )
            .await
    }

    async fn watermark(&mut self, api_version: String, resource: String) -> Result<String, String> {
        self.reader.watermark(&api_version, &resource)
    }
}
