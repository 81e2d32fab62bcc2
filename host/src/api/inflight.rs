//! `--max-requests-inflight` / `--max-mutating-requests-inflight`: at most
//! that many read-only (get, list) and mutating requests are served at once;
//! one more is refused with 429 TooManyRequests and `Retry-After: 1`
//! instead of queuing, as kube-apiserver's max-in-flight filter does.
//! Long-running requests (watch; exec, attach, portforward, log, proxy) and
//! the probes (`GET /healthz`, `/livez`, `/readyz`, which kube's "probes"
//! FlowSchema exempts) are not counted; system:masters is never refused.
//! `--request-timeout` (kube's default 1m) bounds how long any other request
//! may take: then kube's 504, and its slot is free again.

use crate::apimachinery::request_info::{ResourceRequest, Verb};
use crate::apimachinery::status::ApiError;
use crate::apimachinery::user::{UserInfo, MASTERS};
use http::Method;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// kube-apiserver's Retry-After for shed requests, in seconds.
const RETRY_AFTER_SECONDS: u32 = 1;

/// Subresources whose requests stay open (kube's BasicLongRunningRequestCheck).
const LONG_RUNNING_SUBRESOURCES: [&str; 5] = ["attach", "exec", "proxy", "log", "portforward"];

/// The probes kube's "probes" FlowSchema exempts from flow control.
const PROBES: [&str; 3] = ["/healthz", "/livez", "/readyz"];

/// The two pools of in-flight slots (a limit of 0 means unlimited) and the
/// time a request that is not long-running may take (`None`: no bound).
#[derive(Clone, Debug, Default)]
pub struct InFlight {
    read_only: Option<Arc<Semaphore>>,
    mutating: Option<Arc<Semaphore>>,
    request_timeout: Option<Duration>,
}

/// What a request is, for the limiter.
pub struct RequestKind<'a> {
    pub method: &'a Method,
    pub path: &'a str,
    pub resource: Option<&'a ResourceRequest>,
}

impl InFlight {
    pub fn new(read_only: usize, mutating: usize) -> Self {
        let pool = |n: usize| (n > 0).then(|| Arc::new(Semaphore::new(n)));
        InFlight {
            read_only: pool(read_only),
            mutating: pool(mutating),
            request_timeout: None,
        }
    }

    /// Bounds every request that is not long-running by `timeout`.
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = Some(timeout).filter(|t| !t.is_zero());
        self
    }

    /// How long the request may take; `None` for long-running ones
    /// (watches, exec, attach, portforward, log, proxy).
    pub fn deadline(&self, kind: &RequestKind<'_>) -> Option<Duration> {
        self.request_timeout.filter(|_| !kind.is_long_running())
    }

    /// A slot for the request (held until its response is sent), `None`
    /// when it is not counted, or 429 when its pool is full.
    pub fn admit(
        &self,
        kind: &RequestKind<'_>,
        user: &UserInfo,
    ) -> Result<Option<OwnedSemaphorePermit>, ApiError> {
        if kind.is_exempt() {
            return Ok(None);
        }
        let pool = if kind.is_mutating() {
            &self.mutating
        } else {
            &self.read_only
        };
        let Some(pool) = pool else { return Ok(None) };
        match pool.clone().try_acquire_owned() {
            Ok(permit) => Ok(Some(permit)),
            Err(_) if user.in_group(MASTERS) => Ok(None),
            Err(_) => Err(ApiError::too_many_requests(
                "Too many requests, please try again later.",
                RETRY_AFTER_SECONDS,
                Vec::new(),
            )),
        }
    }
}

impl RequestKind<'_> {
    fn is_exempt(&self) -> bool {
        match self.resource {
            Some(_) => self.is_long_running(),
            None => *self.method == Method::GET && PROBES.contains(&self.path),
        }
    }

    /// A watch, or a subresource whose requests stay open (exec, attach,
    /// portforward, log, proxy).
    pub fn is_long_running(&self) -> bool {
        self.resource.is_some_and(|r| {
            r.verb == Verb::Watch
                || r.subresource
                    .as_deref()
                    .is_some_and(|s| LONG_RUNNING_SUBRESOURCES.contains(&s))
        })
    }

    /// Anything but get, list and watch (kube's nonMutatingRequestVerbs);
    /// a non-resource request's verb is its method.
    fn is_mutating(&self) -> bool {
        match self.resource {
            Some(r) => !matches!(r.verb, Verb::Get | Verb::List | Verb::Watch),
            None => *self.method != Method::GET,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apimachinery::request_info;

    fn kind<'a>(
        method: &'a Method,
        path: &'a str,
        resource: &'a Option<ResourceRequest>,
    ) -> RequestKind<'a> {
        RequestKind {
            method,
            path,
            resource: resource.as_ref(),
        }
    }

    fn user(groups: &[&str]) -> UserInfo {
        UserInfo {
            username: "u".into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn a_full_pool_refuses_with_429_until_a_slot_is_released() {
        let limiter = InFlight::new(1, 1);
        let (get, path) = (Method::GET, "/api/v1/namespaces/a/configmaps");
        let list = request_info::parse(&get, path, None);
        let bob = user(&["qa"]);
        let held = limiter.admit(&kind(&get, path, &list), &bob);
        assert!(matches!(held, Ok(Some(_))));
        let refused = limiter.admit(&kind(&get, path, &list), &bob);
        let e = refused.err().map(|e| e.to_status());
        assert_eq!(e.as_ref().map(|s| s["code"].clone()), Some(429.into()));
        assert_eq!(
            e.map(|s| s["details"]["retryAfterSeconds"].clone()),
            Some(1.into())
        );
        // The mutating pool is separate.
        let post = Method::POST;
        let create = request_info::parse(&post, path, None);
        assert!(matches!(
            limiter.admit(&kind(&post, path, &create), &bob),
            Ok(Some(_))
        ));
        drop(held);
        assert!(matches!(
            limiter.admit(&kind(&get, path, &list), &bob),
            Ok(Some(_))
        ));
    }

    #[test]
    fn long_running_requests_have_no_deadline() {
        let limiter = InFlight::new(1, 1).with_request_timeout(Duration::from_secs(60));
        let get = Method::GET;
        let path = "/api/v1/pods";
        let list = request_info::parse(&get, path, None);
        assert_eq!(
            limiter.deadline(&kind(&get, path, &list)),
            Some(Duration::from_secs(60))
        );
        let watch = request_info::parse(&get, path, Some("watch=true"));
        assert_eq!(limiter.deadline(&kind(&get, path, &watch)), None);
        let exec = "/api/v1/namespaces/a/pods/p/exec";
        let exec_req = request_info::parse(&get, exec, None);
        assert_eq!(limiter.deadline(&kind(&get, exec, &exec_req)), None);
        let unbounded = InFlight::new(1, 1).with_request_timeout(Duration::ZERO);
        assert_eq!(unbounded.deadline(&kind(&get, path, &list)), None);
    }

    #[test]
    fn watches_probes_and_masters_are_never_refused() {
        let limiter = InFlight::new(1, 1);
        let get = Method::GET;
        let path = "/api/v1/pods";
        let list = request_info::parse(&get, path, None);
        let bob = user(&[]);
        let _held = limiter.admit(&kind(&get, path, &list), &bob);
        let watch = request_info::parse(&get, path, Some("watch=true"));
        assert!(matches!(
            limiter.admit(&kind(&get, path, &watch), &bob),
            Ok(None)
        ));
        let logs = request_info::parse(&get, "/api/v1/namespaces/a/pods/p/log", None);
        assert!(matches!(
            limiter.admit(&kind(&get, path, &logs), &bob),
            Ok(None)
        ));
        for probe in PROBES {
            assert!(matches!(
                limiter.admit(&kind(&get, probe, &None), &bob),
                Ok(None)
            ));
        }
        assert!(limiter.admit(&kind(&get, "/version", &None), &bob).is_err());
        assert!(matches!(
            limiter.admit(&kind(&get, path, &list), &user(&[MASTERS])),
            Ok(None)
        ));
    }

    #[test]
    fn zero_means_unlimited() {
        let limiter = InFlight::new(0, 0);
        let post = Method::POST;
        let create = request_info::parse(&post, "/api/v1/namespaces", None);
        let a = limiter.admit(&kind(&post, "/api/v1/namespaces", &create), &user(&[]));
        let b = limiter.admit(&kind(&post, "/api/v1/namespaces", &create), &user(&[]));
        assert!(matches!((a, b), (Ok(None), Ok(None))));
    }
}
