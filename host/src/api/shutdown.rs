//! Graceful shutdown as kube-apiserver does it: on SIGTERM `/readyz` fails
//! at once (load balancers stop sending), watches end cleanly (clients
//! re-list and watch elsewhere), connections are told to close after their
//! current request; after `--shutdown-delay-duration` the listener closes
//! and the requests in flight finish (at most [`DRAIN`]) before the process
//! exits. A write is answered only once it is stored, so none that was
//! acknowledged is lost.

use std::time::Duration;

use tokio::sync::watch;

/// How long requests in flight may take to finish.
pub const DRAIN: Duration = Duration::from_secs(60);

/// How far the shutdown has come.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    Serving,
    /// Unready, watches ended; requests still served.
    Begun,
    /// No new connections; open ones close after their requests.
    Closing,
}

/// Whether the server is shutting down, for whoever must react.
#[derive(Clone, Debug)]
pub struct Shutdown {
    tx: std::sync::Arc<watch::Sender<Phase>>,
}

impl Default for Shutdown {
    fn default() -> Self {
        Shutdown {
            tx: std::sync::Arc::new(watch::channel(Phase::Serving).0),
        }
    }
}

impl Shutdown {
    /// Starts the shutdown (once; later calls change nothing).
    pub fn begin(&self) {
        self.advance(Phase::Begun);
    }

    /// The delay is over: connections close after their requests.
    pub fn close(&self) {
        self.advance(Phase::Closing);
    }

    fn advance(&self, to: Phase) {
        self.tx.send_if_modified(|p| {
            let later = to > *p;
            if later {
                *p = to;
            }
            later
        });
    }

    pub fn is_shutting_down(&self) -> bool {
        *self.tx.borrow() >= Phase::Begun
    }

    /// Resolves once the shutdown has begun.
    pub async fn wait(&self) {
        self.reached(Phase::Begun).await;
    }

    /// Resolves once connections are to close.
    pub async fn closing(&self) {
        self.reached(Phase::Closing).await;
    }

    async fn reached(&self, phase: Phase) {
        let mut rx = self.tx.subscribe();
        let _ = rx.wait_for(|p| *p >= phase).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn waiters_wake_when_it_begins() {
        let s = Shutdown::default();
        let waiter = tokio::spawn({
            let s = s.clone();
            async move { s.wait().await }
        });
        assert!(!s.is_shutting_down());
        s.begin();
        tokio::time::timeout(Duration::from_secs(1), waiter)
            .await
            .unwrap()
            .unwrap();
        assert!(s.is_shutting_down());
        s.wait().await;
        let closing = tokio::spawn({
            let s = s.clone();
            async move { s.closing().await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!closing.is_finished(), "closing waits for close()");
        s.close();
        s.begin();
        tokio::time::timeout(Duration::from_secs(1), closing)
            .await
            .unwrap()
            .unwrap();
    }
}
