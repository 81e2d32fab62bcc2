//! Each limited priority level's seats and queues, as kube's APF
//! dispatcher shares them: a level may run `ceil(server limit × its shares
//! / all limited levels' shares)` requests at once; beyond that a request
//! waits in one of its level's queues (shuffle sharding: the flow's hash
//! deals a hand of queues and the shortest takes it; a full queue rejects),
//! and freed seats go to the queues in turn, so one flow's flood waits in
//! its own queues while other flows are served. A level without queuing
//! rejects at once; a request that waited too long is rejected too.

use std::collections::{BTreeMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::oneshot;

use super::config::{Level, Queuing};

#[derive(Default)]
struct LevelState {
    limit: usize,
    executing: usize,
    queues: Vec<VecDeque<oneshot::Sender<()>>>,
    /// The queue the next freed seat looks at first.
    next: usize,
}

impl LevelState {
    fn waiting(&self) -> usize {
        self.queues.iter().map(VecDeque::len).sum()
    }

    /// Gives free seats to waiters, queue by queue in turn.
    fn dispatch(&mut self) {
        let n = self.queues.len();
        let mut idle = 0;
        while self.executing < self.limit && n > 0 && idle < n {
            let q = self.next % n;
            self.next = (self.next + 1) % n;
            match self.queues[q].pop_front() {
                Some(waiter) => {
                    if waiter.send(()).is_ok() {
                        self.executing += 1;
                    }
                    idle = 0;
                }
                None => idle += 1,
            }
        }
    }
}

/// Why a request was not admitted (kube's `reason` label).
pub type Rejection = &'static str;

#[derive(Default)]
pub struct Dispatcher {
    levels: Mutex<BTreeMap<String, LevelState>>,
}

/// A seat of a limited level, given back when dropped.
pub struct Seat {
    dispatcher: Arc<Dispatcher>,
    level: String,
}

impl Drop for Seat {
    fn drop(&mut self) {
        let mut levels = self.dispatcher.lock();
        if let Some(state) = levels.get_mut(&self.level) {
            state.executing = state.executing.saturating_sub(1);
            state.dispatch();
        }
    }
}

/// The hand of queues a flow is dealt: `hand` distinct queues of `queues`,
/// from the flow's hash (kube's shuffle sharding).
fn hand(flow: &str, level: &str, q: &Queuing) -> Vec<usize> {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (level, flow).hash(&mut hasher);
    let mut seed = hasher.finish();
    let mut picked: Vec<usize> = Vec::with_capacity(q.hand_size);
    let mut deck: Vec<usize> = (0..q.queues).collect();
    for _ in 0..q.hand_size.min(q.queues) {
        let i = (seed % deck.len() as u64) as usize;
        seed /= deck.len() as u64;
        seed ^= seed.rotate_left(17).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        picked.push(deck.swap_remove(i));
    }
    picked
}

impl Dispatcher {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, LevelState>> {
        self.levels.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A seat of `level` for `flow` (None: exempt), waiting at most `wait`
    /// in a queue; `limit` is the level's concurrency limit now.
    pub async fn admit(
        self: &Arc<Self>,
        level: &Level,
        flow: &str,
        limit: usize,
        wait: Duration,
    ) -> Result<Option<Seat>, Rejection> {
        let Some(limited) = &level.limited else {
            return Ok(None);
        };
        let seat = || Seat {
            dispatcher: self.clone(),
            level: level.name.clone(),
        };
        let mut rx = {
            let mut levels = self.lock();
            let state = levels.entry(level.name.clone()).or_default();
            state.limit = limit.max(1);
            if state.executing < state.limit && state.waiting() == 0 {
                state.executing += 1;
                return Ok(Some(seat()));
            }
            let Some(q) = &limited.queuing else {
                return Err("concurrency-limit");
            };
            if state.queues.len() != q.queues {
                state.queues.resize_with(q.queues, VecDeque::new);
            }
            let shortest = hand(flow, &level.name, q)
                .into_iter()
                .min_by_key(|i| state.queues[*i].len())
                .unwrap_or(0);
            let queue = &mut state.queues[shortest];
            queue.retain(|w| !w.is_closed());
            if queue.len() >= q.queue_length_limit {
                return Err("queue-full");
            }
            let (tx, rx) = oneshot::channel();
            queue.push_back(tx);
            state.dispatch();
            rx
        };
        if tokio::time::timeout(wait, &mut rx).await.is_ok() {
            return Ok(Some(seat()));
        }
        rx.close();
        match rx.try_recv() {
            // Dispatched as the wait ended: the seat is ours.
            Ok(()) => Ok(Some(seat())),
            Err(_) => Err("time-out"),
        }
    }

    /// (executing, waiting) of each level, for the metrics.
    pub fn occupancy(&self) -> BTreeMap<String, (usize, usize)> {
        let levels = self.lock();
        levels
            .iter()
            .map(|(name, s)| (name.clone(), (s.executing, s.waiting())))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::flowcontrol::config::Limited;

    fn level(queuing: Option<Queuing>) -> Level {
        Level {
            name: "l".into(),
            uid: String::new(),
            limited: Some(Limited { shares: 1, queuing }),
        }
    }

    const WAIT: Duration = Duration::from_millis(200);

    #[tokio::test]
    async fn beyond_the_limit_a_level_without_queues_rejects() {
        let d = Arc::new(Dispatcher::default());
        let l = level(None);
        let first = d.admit(&l, "a", 1, WAIT).await.unwrap();
        assert!(first.is_some());
        assert_eq!(
            d.admit(&l, "a", 1, WAIT).await.err(),
            Some("concurrency-limit")
        );
        drop(first);
        assert!(d.admit(&l, "a", 1, WAIT).await.unwrap().is_some());
    }

    #[tokio::test]
    async fn waiters_get_freed_seats_and_full_queues_reject() {
        let d = Arc::new(Dispatcher::default());
        let q = Queuing {
            queues: 1,
            hand_size: 1,
            queue_length_limit: 1,
        };
        let l = level(Some(q));
        let held = d.admit(&l, "flood", 1, WAIT).await.unwrap();
        let waiter = tokio::spawn({
            let (d, l) = (d.clone(), l.clone());
            async move {
                d.admit(&l, "flood", 1, Duration::from_secs(5))
                    .await
                    .map(|s| s.is_some())
            }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(
            d.admit(&l, "flood", 1, WAIT).await.err(),
            Some("queue-full")
        );
        drop(held);
        assert_eq!(waiter.await.unwrap(), Ok(true));
        assert_eq!(d.occupancy()["l"], (0, 0), "the waiter's seat is back");
    }

    #[tokio::test]
    async fn a_wait_too_long_is_rejected() {
        let d = Arc::new(Dispatcher::default());
        let q = Queuing {
            queues: 4,
            hand_size: 2,
            queue_length_limit: 10,
        };
        let l = level(Some(q));
        let _held = d.admit(&l, "a", 1, WAIT).await.unwrap();
        assert_eq!(
            d.admit(&l, "b", 1, Duration::from_millis(20)).await.err(),
            Some("time-out")
        );
    }

    #[test]
    fn hands_are_distinct_queues_and_stable() {
        let q = Queuing {
            queues: 64,
            hand_size: 6,
            queue_length_limit: 50,
        };
        let h = hand("alice", "l", &q);
        let mut sorted = h.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 6);
        assert_eq!(h, hand("alice", "l", &q));
        assert_ne!(h, hand("bob", "l", &q));
    }
}
