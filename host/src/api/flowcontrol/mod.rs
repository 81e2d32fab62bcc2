//! API Priority and Fairness (`--enable-priority-and-fairness`, on by
//! default): every request is classified by the API's FlowSchemas (the
//! first by matchingPrecedence whose rules match its user and what it
//! asks) into a PriorityLevelConfiguration and a flow (its user or
//! namespace, by the schema's distinguisher); exempt levels run at once,
//! limited ones share `--max-requests-inflight` +
//! `--max-mutating-requests-inflight` seats by their nominal shares
//! (`queues.rs`: fair queuing by flow, kube's 429 beyond). Every answer
//! names the schema and level (`X-Kubernetes-PF-FlowSchema-UID`,
//! `X-Kubernetes-PF-PriorityLevel-UID`). Watches and other long-running
//! requests are classified but hold no seat. The configuration is
//! followed with a watch, as kube's informers follow it.

pub mod config;
pub mod queues;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use self::config::{Level, Request, Schema};
use self::queues::{Dispatcher, Seat};
use crate::admission::watched::Watched;
use crate::apimachinery::status::ApiError;
use crate::telemetry::metrics::{Exposition, MetricSource};

const GROUP: &str = "flowcontrol.apiserver.k8s.io";
/// kube's longest wait in a queue.
const MAX_WAIT: Duration = Duration::from_secs(15);

/// The server's priority and fairness.
pub struct FlowControl {
    schemas: Watched<Vec<Schema>>,
    levels: Watched<BTreeMap<String, Level>>,
    /// Seats shared by the limited levels.
    server_limit: usize,
    wait: Duration,
    dispatcher: Arc<Dispatcher>,
    counts: Mutex<Counts>,
}

#[derive(Default)]
struct Counts {
    dispatched: BTreeMap<(String, String), u64>,
    rejected: BTreeMap<(String, String, &'static str), u64>,
    limits: BTreeMap<String, usize>,
}

/// What classifying and admitting a request gave.
pub struct Admitted {
    /// Held until the response is sent (None: exempt or long-running).
    pub seat: Option<Seat>,
    /// The UIDs of the FlowSchema and the PriorityLevelConfiguration.
    pub uids: (String, String),
}

impl FlowControl {
    /// Following the API's objects (None when they are not served).
    pub fn new(
        registry: &crate::registry::Registry,
        catalogue: &crate::catalogue::Catalogue,
        server_limit: usize,
        request_timeout: Option<Duration>,
    ) -> Option<FlowControl> {
        let schemas = catalogue.lookup(GROUP, "v1", "flowschemas")?;
        let levels = catalogue.lookup(GROUP, "v1", "prioritylevelconfigurations")?;
        let wait = request_timeout.map_or(MAX_WAIT, |t| (t / 4).min(MAX_WAIT));
        Some(FlowControl {
            schemas: Watched::follow(registry, schemas),
            levels: Watched::follow(registry, levels),
            server_limit: server_limit.max(1),
            wait,
            dispatcher: Arc::default(),
            counts: Mutex::default(),
        })
    }

    /// Classifies `req` and takes a seat of its level (`seat`: false for a
    /// long-running request); None when the configuration is not read yet
    /// (the in-flight limits apply meanwhile).
    pub async fn admit(&self, req: &Request<'_>, seat: bool) -> Option<Result<Admitted, ApiError>> {
        let schemas = self.schemas.current()?;
        let levels = self.levels.current()?;
        let schemas = schemas.built(|items| items.iter().map(config::schema_of).collect());
        let levels = levels.built(read_levels);
        let (schema, level, flow) = config::classify(schemas, levels, req)?;
        let uids = (schema.uid.clone(), level.uid.clone());
        let labels = (schema.name.clone(), level.name.clone());
        let limit = self.limit(levels, level);
        if !seat {
            return Some(Ok(Admitted { seat: None, uids }));
        }
        let admitted = self.dispatcher.admit(level, &flow, limit, self.wait).await;
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        counts.limits.insert(level.name.clone(), limit);
        Some(match admitted {
            Ok(seat) => {
                *counts.dispatched.entry(labels).or_default() += 1;
                Ok(Admitted { seat, uids })
            }
            Err(reason) => {
                *counts
                    .rejected
                    .entry((labels.0, labels.1, reason))
                    .or_default() += 1;
                Err(ApiError::too_many_requests(
                    "Too many requests, please try again later.",
                    1,
                    Vec::new(),
                ))
            }
        })
    }

    /// kube's nominal concurrency limit of `level`.
    fn limit(&self, levels: &BTreeMap<String, Level>, level: &Level) -> usize {
        let shares = |l: &Level| l.limited.as_ref().map_or(0, |l| u64::from(l.shares));
        let total: u64 = levels.values().map(shares).sum();
        let own = shares(level) * self.server_limit as u64;
        own.div_ceil(total.max(1)).max(1) as usize
    }
}

fn read_levels(items: &[Value]) -> BTreeMap<String, Level> {
    items
        .iter()
        .map(config::level_of)
        .map(|l| (l.name.clone(), l))
        .collect()
}

impl MetricSource for FlowControl {
    fn render(&self, out: &mut Exposition) {
        let counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let dispatched = "apiserver_flowcontrol_dispatched_requests_total";
        out.family(
            dispatched,
            "counter",
            "[BETA] Number of requests executed by API Priority and Fairness subsystem",
        );
        for ((schema, level), n) in &counts.dispatched {
            let labels = [
                ("flow_schema", schema.as_str()),
                ("priority_level", level.as_str()),
            ];
            out.sample(dispatched, &labels, *n as f64);
        }
        let rejected = "apiserver_flowcontrol_rejected_requests_total";
        out.family(
            rejected,
            "counter",
            "[BETA] Number of requests rejected by API Priority and Fairness subsystem",
        );
        for ((schema, level, reason), n) in &counts.rejected {
            let labels = [
                ("flow_schema", schema.as_str()),
                ("priority_level", level.as_str()),
                ("reason", *reason),
            ];
            out.sample(rejected, &labels, *n as f64);
        }
        let occupancy = self.dispatcher.occupancy();
        let executing = "apiserver_flowcontrol_current_executing_requests";
        out.family(executing, "gauge", "[BETA] Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem");
        for (level, (n, _)) in &occupancy {
            out.sample(executing, &[("priority_level", level.as_str())], *n as f64);
        }
        let inqueue = "apiserver_flowcontrol_current_inqueue_requests";
        out.family(inqueue, "gauge", "[BETA] Number of requests currently pending in queues of the API Priority and Fairness subsystem");
        for (level, (_, n)) in &occupancy {
            out.sample(inqueue, &[("priority_level", level.as_str())], *n as f64);
        }
        let nominal = "apiserver_flowcontrol_nominal_limit_seats";
        out.family(
            nominal,
            "gauge",
            "[BETA] Nominal number of execution seats configured for each priority level",
        );
        for (level, n) in &counts.limits {
            out.sample(nominal, &[("priority_level", level.as_str())], *n as f64);
        }
    }
}
