//! Instances kept between calls: a plugin's instance that answered is put
//! back and serves a later call (instantiating costs far more than a call).
//! A few idle ones per plugin; an instance is dropped after a failure of any
//! kind (trap, timeout, out of memory, bad answer, an error it returned) and
//! after [`MAX_CALLS`] calls, so state a plugin keeps (a cache keyed by the
//! `watermark` import, or a slow leak) stays bounded. An instance whose
//! memory grew past [`MAX_IDLE_MEMORY`] (a call with a large object) is
//! dropped too, so what one large call needed is returned, not kept idle.

use std::sync::Mutex;

use wasmtime::Store;

use super::bindings::{admission, authenticator, authorizer, converter, strategy};
use super::host_imports::PluginState;

/// Calls one instance serves before it is replaced (bounds slow leaks).
const MAX_CALLS: u32 = 10_000;

/// Idle instances kept per plugin.
const MAX_IDLE: usize = 2;

/// Largest linear memory an idle instance may keep: a plugin's default
/// limit, so only a call beyond what ordinary plugins may use (a built-in
/// given a large object) costs a fresh instance next time.
const MAX_IDLE_MEMORY: usize = 64 << 20;

/// An instantiated plugin, typed by world.
pub(crate) enum Bound {
    Admission(admission::Admission),
    Authenticator(authenticator::Authenticator),
    Authorizer(authorizer::Authorizer),
    Strategy(strategy::Strategy),
    Converter(converter::Converter),
}

impl Bound {
    /// Calls the world's export.
    pub(crate) async fn call(
        &self,
        store: &mut Store<PluginState>,
        input: &str,
    ) -> wasmtime::Result<Result<String, String>> {
        match self {
            Bound::Admission(b) => b.call_review(store, input).await,
            Bound::Authenticator(b) => b.call_authenticate(store, input).await,
            Bound::Authorizer(b) => b.call_authorize(store, input).await,
            Bound::Strategy(b) => b.call_call(store, input).await,
            Bound::Converter(b) => b.call_convert(store, input).await,
        }
    }
}

/// A store with (once the first call instantiated it) its instance.
pub(crate) struct Instance {
    pub store: Store<PluginState>,
    pub bound: Option<Bound>,
    pub calls: u32,
    /// The code it runs (its store is of that code's engine).
    pub code: std::sync::Arc<super::tiers::Code>,
}

/// The idle instances of one plugin.
#[derive(Default)]
pub(crate) struct WarmPool {
    idle: Mutex<Vec<Instance>>,
}

impl WarmPool {
    /// An idle instance, if there is one.
    pub(crate) fn take(&self) -> Option<Instance> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop()
    }

    /// Drops every idle instance (their code was replaced).
    pub(crate) fn clear(&self) {
        let idle = std::mem::take(&mut *self.idle.lock().unwrap_or_else(|e| e.into_inner()));
        drop(idle);
    }

    /// Keeps `instance` for a later call unless it served its share or the pool is full.
    pub(crate) fn give_back(&self, instance: Instance) {
        let grown = instance.store.data().limiter.grown_to() > MAX_IDLE_MEMORY;
        if instance.calls >= MAX_CALLS || instance.bound.is_none() || grown {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < MAX_IDLE {
            idle.push(instance);
        }
    }
}
