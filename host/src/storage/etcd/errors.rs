//! Mapping of etcd client errors and timeouts to [`StorageError`].
//!
//! etcd reports "required revision has been compacted" and "is a future
//! revision" without the revisions involved; [`from_etcd`] maps them to
//! [`StorageError::Compacted`] / [`StorageError::FutureRevision`] with zeros,
//! and the caller, who knows the requested revision, fills them in.

use std::future::Future;
use std::time::Duration;

use etcd_client::ResponseHeader;
use tonic::Code;

use crate::storage::{Revision, StorageError, StorageResult};

/// etcd's `ErrCompacted` / `ErrGRPCCompacted` message.
const COMPACTED: &str = "required revision has been compacted";
/// etcd's `ErrFutureRev` / `ErrGRPCFutureRev` message.
const FUTURE_REVISION: &str = "required revision is a future revision";

/// etcd's `ErrRequestTooLarge` (over its `--max-request-bytes`).
const REQUEST_TOO_LARGE: &str = "request is too large";
/// gRPC's refusal of a message over the receiver's limit.
const GRPC_TOO_LARGE: &str = "larger than max";

/// Awaits `request` for at most `timeout`; a late answer is `Unavailable`.
pub(super) async fn with_timeout<T>(
    what: &'static str,
    timeout: Duration,
    request: impl Future<Output = Result<T, etcd_client::Error>>,
) -> StorageResult<T> {
    match tokio::time::timeout(timeout, request).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(err)) => {
            let err = from_etcd(err);
            tracing::debug!(request = what, %err, "etcd request failed");
            Err(err)
        }
        Err(_) => {
            tracing::debug!(request = what, ?timeout, "etcd request timed out");
            Err(StorageError::Unavailable(format!(
                "etcd {what} request timed out after {timeout:?}"
            )))
        }
    }
}

/// Classifies an etcd client error.
pub(super) fn from_etcd(err: etcd_client::Error) -> StorageError {
    use etcd_client::Error as E;
    match err {
        E::GRpcStatus(status) => from_status(&status),
        E::TransportError(e) => StorageError::Unavailable(format!("etcd: {e}")),
        E::IoError(e) => StorageError::Unavailable(format!("etcd: {e}")),
        E::WatchError(e) => StorageError::Unavailable(format!("etcd watch: {e}")),
        other => StorageError::Internal(format!("etcd: {other}")),
    }
}

fn from_status(status: &tonic::Status) -> StorageError {
    let message = status.message();
    if message.contains(COMPACTED) {
        return StorageError::Compacted {
            requested: 0,
            compacted: 0,
        };
    }
    if message.contains(FUTURE_REVISION) {
        return StorageError::FutureRevision {
            requested: 0,
            current: 0,
        };
    }
    let too_large = message.contains(REQUEST_TOO_LARGE) || message.contains(GRPC_TOO_LARGE);
    if too_large || status.code() == Code::OutOfRange {
        return StorageError::TooLarge(format!("etcd: {message}"));
    }
    let text = format!("etcd: {message} ({:?})", status.code());
    match status.code() {
        // Transport failures surface as Unknown from tonic; the others are
        // etcd's own "try again" answers (no leader, timeout, overload).
        Code::Unavailable
        | Code::DeadlineExceeded
        | Code::Cancelled
        | Code::Aborted
        | Code::ResourceExhausted
        | Code::Unknown => StorageError::Unavailable(text),
        _ => StorageError::Internal(text),
    }
}

/// The revision of a response header; every etcd response has one.
pub(super) fn header_revision(header: Option<&ResponseHeader>) -> StorageResult<Revision> {
    header
        .map(ResponseHeader::revision)
        .ok_or_else(|| StorageError::Internal("etcd response without a header".into()))
}

/// An etcd answer that does not have the shape its request implies.
pub(super) fn malformed(what: &str) -> StorageError {
    StorageError::Internal(format!("unexpected etcd response: {what}"))
}
