//! The server's shared state: catalogue, storage and the registry over it.

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
        AppState {
            catalogue,
            openapi,
            storage,
            registry,
            server_address,
        }
    }
}
