//! etcd v3 implementation of [`Storage`], modelled on kube-apiserver's etcd3
//! store: a resource version is an etcd mod_revision, guarded writes are
//! single-round-trip transactions, past revisions are read with ranges at a
//! revision, and watches are etcd watches with `prev_kv`.
//!
//! Every key is stored under [`EtcdOptions::key_prefix`] (plain string
//! concatenation) and stripped on the way out. The compaction point is
//! tracked the way kube-apiserver's compactor does it, in the global key
//! `compact_rev_key` (see `etcd/compaction.rs`), so that several API servers
//! sharing one etcd agree on it.
//!
//! Every unary request runs under [`EtcdOptions::request_timeout`], so a
//! down or partitioned etcd fails requests with [`StorageError::Unavailable`]
//! instead of hanging; the underlying gRPC channel reconnects by itself once
//! etcd is back. Open watch streams end with an error item when their
//! connection breaks.

mod compaction;
mod errors;
mod keys;
mod kv;
#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;
mod watch;

use std::fmt;
use std::future::Future;
use std::path::Path;
use std::time::Duration;

use bytes::Bytes;
use etcd_client::{
    Certificate, Client, ConnectOptions, Identity, KvClient, TlsOptions, WatchClient,
};
use futures_util::future::BoxFuture;

use crate::storage::{
    KeyValue, ProgressWatch, RangeRequest, RangeResult, Revision, Storage, StorageError,
    StorageResult, WatchStream,
};
use keys::Keys;

/// Largest gRPC message accepted from etcd (a big list or watch batch);
/// the same limit kube-apiserver's etcd client uses (`math.MaxInt32`).
const MAX_MESSAGE_BYTES: usize = i32::MAX as usize;

/// How to reach etcd: the `--etcd-*` flags of the server.
#[derive(Clone, Debug)]
pub struct EtcdOptions {
    /// Client URLs, `http://host:port` or `https://host:port`.
    pub endpoints: Vec<String>,
    /// Prepended to every key in etcd (by concatenation, so give it without
    /// a trailing `/` when keys start with `/`). Empty stores keys as given.
    pub key_prefix: String,
    /// CA and client certificate for `https://` endpoints.
    pub tls: Option<EtcdTls>,
    /// Time allowed to open a connection to an endpoint.
    pub connect_timeout: Duration,
    /// Time allowed for any single request (watch creation included).
    pub request_timeout: Duration,
    /// Time allowed for the readiness probe ([`Storage::is_ready`]).
    pub ready_timeout: Duration,
    /// HTTP/2 keep-alive ping interval while streams are open, so a dead
    /// connection under an idle watch is noticed. etcd rejects pings more
    /// frequent than its `--grpc-keepalive-min-time` (default 5 s).
    pub keep_alive_interval: Duration,
    /// How long a keep-alive ping may stay unanswered.
    pub keep_alive_timeout: Duration,
}

impl EtcdOptions {
    /// Options for `endpoints` with kube-like defaults and no key prefix.
    pub fn new(endpoints: Vec<String>) -> Self {
        EtcdOptions {
            endpoints,
            key_prefix: String::new(),
            tls: None,
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(10),
            ready_timeout: Duration::from_secs(2),
            keep_alive_interval: Duration::from_secs(30),
            keep_alive_timeout: Duration::from_secs(10),
        }
    }

    fn any_https(&self) -> bool {
        self.endpoints.iter().any(|e| e.starts_with("https://"))
    }
}

/// TLS material for `https://` endpoints (PEM bytes).
#[derive(Clone, Default)]
pub struct EtcdTls {
    /// CA bundle that signed etcd's serving certificate (`--etcd-cafile`).
    pub ca_pem: Option<Vec<u8>>,
    /// Client certificate chain (`--etcd-certfile`).
    pub cert_pem: Option<Vec<u8>>,
    /// Client private key (`--etcd-keyfile`).
    pub key_pem: Option<Vec<u8>>,
    /// Name to verify etcd's certificate against, when it differs from the
    /// endpoint's host.
    pub server_name: Option<String>,
}

impl fmt::Debug for EtcdTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EtcdTls")
            .field("ca_pem", &self.ca_pem.is_some())
            .field("cert_pem", &self.cert_pem.is_some())
            .field("key_pem", &self.key_pem.as_ref().map(|_| "<redacted>"))
            .field("server_name", &self.server_name)
            .finish()
    }
}

impl EtcdTls {
    /// Reads the `--etcd-cafile`, `--etcd-certfile` and `--etcd-keyfile` files.
    pub fn from_files(
        ca: Option<&Path>,
        cert: Option<&Path>,
        key: Option<&Path>,
    ) -> StorageResult<Self> {
        if cert.is_some() != key.is_some() {
            return Err(StorageError::Internal(
                "etcd client certificate and key must be given together".into(),
            ));
        }
        Ok(EtcdTls {
            ca_pem: ca.map(read_pem).transpose()?,
            cert_pem: cert.map(read_pem).transpose()?,
            key_pem: key.map(read_pem).transpose()?,
            server_name: None,
        })
    }

    fn to_tls_options(&self) -> TlsOptions {
        let mut tls = TlsOptions::new();
        if let Some(ca) = &self.ca_pem {
            tls = tls.ca_certificate(Certificate::from_pem(ca));
        }
        if let (Some(cert), Some(key)) = (&self.cert_pem, &self.key_pem) {
            tls = tls.identity(Identity::from_pem(cert, key));
        }
        if let Some(name) = &self.server_name {
            tls = tls.domain_name(name.clone());
        }
        tls
    }
}

fn read_pem(path: &Path) -> StorageResult<Vec<u8>> {
    std::fs::read(path)
        .map_err(|e| StorageError::Internal(format!("cannot read {}: {e}", path.display())))
}

/// The etcd storage backend. Cheap to share behind an `Arc`; one gRPC
/// connection per endpoint is multiplexed by all requests and watches.
pub struct EtcdStorage {
    /// Owns the endpoint set of the shared channel (kept for its lifetime).
    _client: Client,
    kv: KvClient,
    watch: WatchClient,
    keys: Keys,
    request_timeout: Duration,
    ready_timeout: Duration,
}

impl EtcdStorage {
    /// Creates a client for `options.endpoints`. Connections are opened
    /// lazily: this succeeds while etcd is down, and requests then fail with
    /// [`StorageError::Unavailable`] until it is reachable.
    pub async fn connect(options: EtcdOptions) -> StorageResult<Self> {
        let connect = connect_options(&options)?;
        let client = Client::connect(&options.endpoints, Some(connect))
            .await
            .map_err(|e| StorageError::Internal(format!("etcd client setup failed: {e}")))?;
        tracing::info!(
            endpoints = ?options.endpoints,
            key_prefix = %options.key_prefix,
            tls = options.tls.is_some(),
            "etcd storage client created"
        );
        Ok(EtcdStorage {
            kv: client
                .kv_client()
                .max_decoding_message_size(MAX_MESSAGE_BYTES),
            watch: client
                .watch_client()
                .max_decoding_message_size(MAX_MESSAGE_BYTES),
            keys: Keys::new(&options.key_prefix),
            request_timeout: options.request_timeout,
            ready_timeout: options.ready_timeout,
            _client: client,
        })
    }

    /// Runs one etcd request under the request timeout.
    async fn call<T>(
        &self,
        what: &'static str,
        request: impl Future<Output = Result<T, etcd_client::Error>>,
    ) -> StorageResult<T> {
        errors::with_timeout(what, self.request_timeout, request).await
    }

    /// A cheap linearizable read: proves etcd has a leader and answers.
    async fn probe(&self) -> StorageResult<()> {
        let mut kv = self.kv.clone();
        let read = kv.get(
            compaction::COMPACT_REV_KEY,
            Some(etcd_client::GetOptions::new().with_count_only()),
        );
        errors::with_timeout("readiness probe", self.ready_timeout, read).await?;
        Ok(())
    }
}

fn connect_options(options: &EtcdOptions) -> StorageResult<ConnectOptions> {
    if options.endpoints.is_empty() {
        return Err(StorageError::Internal(
            "no etcd endpoints configured".into(),
        ));
    }
    // No per-request timeout at the channel level: it would also cut long
    // watch streams. `EtcdStorage::call` bounds unary requests instead.
    // require_leader (as kube-apiserver's watches use): a member cut off
    // from its cluster's leader refuses requests and ends watches rather
    // than serving stale data.
    let mut connect = ConnectOptions::new()
        .with_require_leader(true)
        .with_connect_timeout(options.connect_timeout)
        .with_keep_alive(options.keep_alive_interval, options.keep_alive_timeout)
        // Ping only while streams (watches) are open, like etcd's Go client:
        // etcd answers pings on an idle connection with GOAWAY.
        .with_keep_alive_while_idle(false);
    match (&options.tls, options.any_https()) {
        (Some(tls), true) if tls.ca_pem.is_some() => {
            connect = connect.with_tls(tls.to_tls_options())
        }
        (_, true) => {
            return Err(StorageError::Internal(
                "https etcd endpoints need a CA certificate (--etcd-cafile)".into(),
            ))
        }
        (Some(_), false) => {
            tracing::warn!("etcd TLS files given but no endpoint is https://; TLS not used")
        }
        (None, false) => {}
    }
    Ok(connect)
}

/// Attempts per request when a member cannot be reached (another answers).
const ATTEMPTS: usize = 3;

/// Runs `op` again when it failed with `Unavailable` and trying again is
/// safe: reads always, writes only when the request never left this process
/// (a failed connect), so a write is never applied twice.
async fn retrying<T, F, Fut>(read: bool, mut op: F) -> StorageResult<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = StorageResult<T>>,
{
    let mut attempt = 1;
    loop {
        match op().await {
            Err(StorageError::Unavailable(why))
                if attempt < ATTEMPTS && (read || why.contains("connect")) =>
            {
                tracing::debug!(attempt, %why, "etcd request failed; trying again");
                tokio::time::sleep(Duration::from_millis(50 * attempt as u64)).await;
                attempt += 1;
            }
            other => return other,
        }
    }
}

impl Storage for EtcdStorage {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, StorageResult<Option<KeyValue>>> {
        Box::pin(retrying(true, move || self.get_kv(key)))
    }

    fn range<'a>(&'a self, req: RangeRequest<'a>) -> BoxFuture<'a, StorageResult<RangeResult>> {
        Box::pin(retrying(true, move || self.range_kvs(req)))
    }

    fn count<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, StorageResult<i64>> {
        Box::pin(retrying(true, move || self.count_keys(prefix)))
    }

    fn create<'a>(&'a self, key: &'a str, value: Bytes) -> BoxFuture<'a, StorageResult<KeyValue>> {
        Box::pin(retrying(false, move || self.create_kv(key, value.clone())))
    }

    fn update<'a>(
        &'a self,
        key: &'a str,
        value: Bytes,
        expected_mod_revision: Revision,
    ) -> BoxFuture<'a, StorageResult<KeyValue>> {
        Box::pin(retrying(false, move || {
            self.update_kv(key, value.clone(), expected_mod_revision)
        }))
    }

    fn delete<'a>(
        &'a self,
        key: &'a str,
        expected_mod_revision: Option<Revision>,
    ) -> BoxFuture<'a, StorageResult<KeyValue>> {
        Box::pin(retrying(false, move || {
            self.delete_kv(key, expected_mod_revision)
        }))
    }

    fn current_revision(&self) -> BoxFuture<'_, StorageResult<Revision>> {
        Box::pin(retrying(true, move || self.latest_revision()))
    }

    fn watch<'a>(
        &'a self,
        prefix: &'a str,
        after_revision: Revision,
    ) -> BoxFuture<'a, StorageResult<WatchStream>> {
        Box::pin(retrying(true, move || {
            watch::open(self, prefix, after_revision)
        }))
    }

    fn watch_progress<'a>(
        &'a self,
        prefix: &'a str,
        after_revision: Revision,
    ) -> BoxFuture<'a, StorageResult<ProgressWatch>> {
        Box::pin(retrying(true, move || {
            watch::open_progress(self, prefix, after_revision)
        }))
    }

    fn compact(&self, revision: Revision) -> BoxFuture<'_, StorageResult<()>> {
        Box::pin(self.compact_to(revision))
    }

    fn compacted_revision(&self) -> BoxFuture<'_, StorageResult<Revision>> {
        Box::pin(self.compaction_point())
    }

    fn is_ready(&self) -> BoxFuture<'_, StorageResult<()>> {
        Box::pin(self.probe())
    }

    fn size_bytes(&self) -> BoxFuture<'_, Option<u64>> {
        Box::pin(async move {
            let mut maintenance = self._client.maintenance_client();
            let status = tokio::time::timeout(self.request_timeout, maintenance.status()).await;
            let size = status.ok()?.ok()?.db_size();
            u64::try_from(size).ok()
        })
    }
}
