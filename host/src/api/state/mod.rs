//! The server's shared state: catalogue, storage and the registry over it.

pub mod selection;

use crate::admission::chain::ChainEntry;
use crate::admission::config::Phase;
use crate::admission::Chain;
use crate::api::handlers::event_lines::EventLines;
use crate::api::inflight::InFlight;
use crate::auth::service_account::TokenIssuer;
use crate::auth::Auth;
use crate::catalogue::live::LiveCatalogue;
use crate::catalogue::Catalogue;
use crate::registry::store_reader::StoreReader;
use crate::registry::Registry;
use crate::storage::watermarks::{TrackedStorage, Watermarks};
use crate::storage::Storage;
use std::sync::Arc;

pub struct AppState {
    /// The served resources: the built-ins and, as they come and go, CRDs'.
    pub catalogue: Arc<LiveCatalogue>,
    pub storage: Arc<dyn Storage>,
    /// Audit logging (`--audit-policy-file` and its backends).
    pub audit: Arc<crate::audit::Auditor>,
    /// Authentication and authorization attempts.
    pub auth_metrics: Arc<crate::auth::metrics::AuthMetrics>,
    /// Client certificates' remaining lifetimes.
    pub certificates: Arc<crate::api::client_certificates::Expirations>,
    /// Events sent to watchers, by kind.
    pub watch_events: Arc<crate::api::watch_metrics::WatchMetrics>,
    /// Set on SIGTERM (`shutdown.rs`).
    pub shutdown: crate::api::shutdown::Shutdown,
    /// Per-resource write revisions (the plugins' `watermark` import).
    pub watermarks: Arc<Watermarks>,
    pub registry: Registry,
    /// The admission chain every write passes through.
    pub admission: Arc<Chain>,
    /// The authentication and authorization chains every request passes through.
    pub auth: Arc<Auth>,
    /// Issues service account tokens (TokenRequest), when configured.
    pub tokens: Option<Arc<TokenIssuer>>,
    /// Watch event lines encoded once and shared by all watchers.
    pub event_lines: Arc<EventLines>,
    /// `host:port` clients reach this server at (for /api's serverAddressByClientCIDRs).
    pub server_address: String,
    /// The in-flight limits (unlimited unless `serve` sets them).
    pub inflight: InFlight,
    /// API Priority and Fairness (None: the in-flight limits alone).
    pub flow_control: Option<Arc<crate::api::flowcontrol::FlowControl>>,
    /// The data directory's CA and certificates (the root CA publisher and
    /// the CSR signer use them); `None` in states built without one.
    pub pki: Option<crate::certificates::pki::PkiPaths>,
    /// Whether the store is etcd (componentstatuses then lists etcd-0).
    pub on_etcd: bool,
    /// What CRDs' converters are built from: the configured converter
    /// plugins and webhook services (`catalogue::custom::conversion::Converter::from_crd`).
    pub conversion: Arc<crate::catalogue::custom::conversion::ConversionSetup>,
    /// What `GET /metrics` shows (the requests' counts among them).
    pub metrics: crate::telemetry::metrics::Sources,
    pub requests: Arc<crate::api::request_metrics::RequestMetrics>,
    /// The PolicyBundles' policies in effect (the chain's `policies`
    /// markers and the background audit run them).
    pub policies: Arc<crate::policy::resources::PolicySet>,
    /// How often the background audit scans (`--policy-audit-interval`).
    pub policy_audit_interval: std::time::Duration,
    /// Which controllers doing kube-controller-manager's work run (`--controllers`).
    pub controllers: crate::api::state::selection::Selection,
    /// False while a kube-controller-manager leads, so that the selected
    /// controllers stand down (`controllers::defer_to_kcm`, in every replica).
    pub no_kcm_leads: tokio::sync::watch::Sender<bool>,
}

impl AppState {
    pub fn new(catalogue: Catalogue, storage: Arc<dyn Storage>, server_address: String) -> Self {
        let catalogue = Arc::new(LiveCatalogue::new(catalogue));
        let watermarks = Arc::new(Watermarks::default());
        let storage: Arc<dyn Storage> = Arc::new(TrackedStorage::new(storage, watermarks.clone()));
        let registry = Registry::new(storage.clone());
        let markers = vec![
            ChainEntry::Webhooks(Phase::Mutating),
            ChainEntry::Webhooks(Phase::Validating),
        ];
        let admission = Arc::new(Chain::new(
            markers,
            registry.clone(),
            &catalogue.get(),
            Default::default(),
        ));
        let requests = Arc::new(crate::api::request_metrics::RequestMetrics::default());
        let watch_events = Arc::new(crate::api::watch_metrics::WatchMetrics::default());
        let certificates = Arc::new(crate::api::client_certificates::Expirations::default());
        let auth_metrics = Arc::new(crate::auth::metrics::AuthMetrics::default());
        AppState {
            metrics: vec![
                requests.clone() as Arc<dyn crate::telemetry::metrics::MetricSource>,
                watch_events.clone(),
                certificates.clone(),
                auth_metrics.clone(),
                Arc::new(crate::wasm::metrics::Source),
                Arc::new(crate::telemetry::metrics::ProcessMetrics::new()),
            ],
            requests,
            catalogue,
            storage,
            audit: Arc::default(),
            shutdown: Default::default(),
            watch_events: watch_events.clone(),
            certificates: certificates.clone(),
            auth_metrics: auth_metrics.clone(),
            watermarks,
            registry,
            admission,
            auth: Arc::new(Auth::closed()),
            tokens: None,
            event_lines: Arc::new(EventLines::default()),
            server_address,
            inflight: InFlight::default(),
            flow_control: None,
            pki: None,
            on_etcd: false,
            conversion: Arc::default(),
            policies: Arc::default(),
            policy_audit_interval: std::time::Duration::from_secs(300),
            controllers: Default::default(),
            no_kcm_leads: tokio::sync::watch::channel(true).0,
        }
    }

    /// Whether Capstan's own controller `name` (kube-controller-manager's
    /// name for it) does its work now: selected by `--controllers`, and no
    /// kube-controller-manager leads.
    pub fn runs_own_controller(&self, name: &str) -> bool {
        self.controllers.is_enabled(name) && *self.no_kcm_leads.borrow()
    }

    /// The read-only view of the store that plugins get through their imports.
    pub fn reader(&self) -> Arc<StoreReader> {
        Arc::new(StoreReader {
            registry: self.registry.clone(),
            catalogue: self.catalogue.clone(),
            watermarks: self.watermarks.clone(),
        })
    }
}
