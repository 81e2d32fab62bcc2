//! Accepting TCP connections without spinning: when accept fails for want
//! of resources (EMFILE, ENFILE, ENOBUFS, ENOMEM) the loop sleeps, 5 ms
//! doubling to 1 s as Go's http.Server does, and logs at most once per
//! interval with the number of failures it did not log.

use std::io::ErrorKind;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};

const FIRST_DELAY: Duration = Duration::from_millis(5);
const MAX_DELAY: Duration = Duration::from_secs(1);
/// At most one log line per this interval while accept keeps failing.
const LOG_INTERVAL: Duration = Duration::from_secs(10);

/// The back-off state of an accept loop.
#[derive(Debug, Default)]
pub struct Backoff {
    delay: Option<Duration>,
    last_log: Option<Instant>,
    unlogged: u64,
}

/// What to do after a failed accept.
#[derive(Debug, PartialEq, Eq)]
pub struct Failure {
    /// How long to sleep before accepting again.
    pub sleep: Duration,
    /// `Some(n)`: log now, mentioning `n` earlier failures that were not logged.
    pub log: Option<u64>,
}

impl Backoff {
    /// Records a failure at `now`.
    pub fn failed(&mut self, now: Instant) -> Failure {
        let sleep = self.delay.map_or(FIRST_DELAY, |d| (d * 2).min(MAX_DELAY));
        self.delay = Some(sleep);
        let due = self
            .last_log
            .is_none_or(|at| now.duration_since(at) >= LOG_INTERVAL);
        if !due {
            self.unlogged += 1;
            return Failure { sleep, log: None };
        }
        self.last_log = Some(now);
        let log = Some(std::mem::take(&mut self.unlogged));
        Failure { sleep, log }
    }

    /// Records a success: the next failure starts from the shortest delay.
    pub fn succeeded(&mut self) {
        self.delay = None;
    }
}

/// Errors about one connection (it was reset before we took it): accept
/// again at once.
fn is_per_connection(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset | ErrorKind::Interrupted
    )
}

/// The next connection, sleeping through failures.
pub async fn next(listener: &TcpListener, backoff: &mut Backoff) -> (TcpStream, SocketAddr) {
    loop {
        match listener.accept().await {
            Ok(accepted) => {
                backoff.succeeded();
                return accepted;
            }
            Err(e) if is_per_connection(e.kind()) => {
                tracing::debug!(error = %e, "accept failed");
            }
            Err(e) => {
                let failure = backoff.failed(Instant::now());
                if let Some(unlogged) = failure.log {
                    tracing::warn!(error = %e, retry_in_ms = failure.sleep.as_millis() as u64, unlogged, "accept failed");
                }
                tokio::time::sleep(failure.sleep).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_back_off_and_log_once_per_interval() {
        let mut b = Backoff::default();
        let t0 = Instant::now();
        let first = b.failed(t0);
        assert_eq!(
            first,
            Failure {
                sleep: FIRST_DELAY,
                log: Some(0)
            }
        );
        let sleeps: Vec<Duration> = (1..12)
            .map(|i| b.failed(t0 + Duration::from_millis(i)))
            .map(|f| {
                assert_eq!(f.log, None, "logged again within the interval");
                f.sleep
            })
            .collect();
        assert_eq!(sleeps[0], FIRST_DELAY * 2);
        assert_eq!(sleeps.last(), Some(&MAX_DELAY));
        let later = b.failed(t0 + LOG_INTERVAL);
        assert_eq!(later.log, Some(11));
        assert_eq!(b.failed(t0 + LOG_INTERVAL).log, None);
    }

    #[test]
    fn a_success_resets_the_delay_but_not_the_log_interval() {
        let mut b = Backoff::default();
        let t0 = Instant::now();
        b.failed(t0);
        b.failed(t0);
        b.succeeded();
        let again = b.failed(t0 + Duration::from_secs(1));
        assert_eq!(
            again,
            Failure {
                sleep: FIRST_DELAY,
                log: None
            }
        );
    }
}
