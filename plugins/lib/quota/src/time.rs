//! RFC 3339 timestamps (`metav1.Time`) to Unix seconds, and the clock: the
//! shared `kube-time` library.

pub(crate) use kube_time::parse_rfc3339;

/// The current time in Unix seconds (WASI's wall clock in a plugin); None
/// when the clock is unavailable or before 1970.
pub(crate) fn now_unix() -> Option<i64> {
    Some(kube_time::now_unix()).filter(|t| *t > 0)
}
