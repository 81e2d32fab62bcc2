//! The server's shared state: catalogue, storage and the registry over it.

use crate::admission::chain::ChainEntry;
use crate::admission::config::Phase;
use crate::admission::Chain;
use crate::catalogue::openapi::OpenApiCache;
use crate::catalogue::Catalogue;
use crate::registry::Registry;
use crate::storage::Storage;
use std::sync::Arc;

pub struct AppState {
    pub catalogue: Arc<Catalogue>,
    pub openapi: OpenApiCache,
    pub storage: Arc<dyn Storage>,
    pub registry: Registry,
    /// The admission chain every write passes through.
    pub admission: Arc<Chain>,
    /// `host:port` clients reach this server at (for /api's serverAddressByClientCIDRs).
    pub server_address: String,
}

impl AppState {
    pub fn new(
        catalogue: Arc<Catalogue>,
        storage: Arc<dyn Storage>,
        server_address: String,
    ) -> Self {
        let openapi = OpenApiCache::new(&catalogue);
        let registry = Registry::new(storage.clone());
        let markers = vec![
            ChainEntry::Webhooks(Phase::Mutating),
            ChainEntry::Webhooks(Phase::Validating),
        ];
        let admission = Arc::new(Chain::new(
            markers,
            registry.clone(),
            &catalogue,
            Default::default(),
        ));
        AppState {
            catalogue,
            openapi,
            storage,
            registry,
            admission,
            server_address,
        }
    }
}
