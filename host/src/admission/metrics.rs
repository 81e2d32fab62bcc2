//! kube-apiserver's admission metrics: per entry
//! `apiserver_admission_controller_admission_duration_seconds` (the
//! configured plugins, built-in or not, and the PolicyBundles' policies)
//! and `apiserver_admission_webhook_admission_duration_seconds` (the API's
//! webhooks), by name, operation, rejected and type (admit or validate);
//! and `apiserver_admission_step_admission_duration_seconds` for each whole
//! phase. Series are bounded: past [`MAX_SERIES`] new entries' names are
//! counted as `<other>`.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use crate::telemetry::metrics::{Exposition, Histogram, MetricSource};

/// kube's admission latency buckets.
const BUCKETS: &[f64] = &[0.005, 0.025, 0.1, 0.5, 1.0, 2.5];
const MAX_SERIES: usize = 2_000;

/// What one call is counted under: name, operation, rejected, type.
type Key = (String, &'static str, bool, &'static str);

#[derive(Default)]
pub struct AdmissionMetrics(Mutex<Figures>);

#[derive(Default)]
struct Figures {
    controllers: BTreeMap<Key, Histogram>,
    webhooks: BTreeMap<Key, Histogram>,
    steps: BTreeMap<(&'static str, bool, &'static str), Histogram>,
}

/// Which family an entry's calls go to.
#[derive(Clone, Copy)]
pub enum Family {
    Controller,
    Webhook,
}

/// `admit` for the mutating phase, `validate` for the validating one.
pub fn step_type(mutating: bool) -> &'static str {
    if mutating {
        "admit"
    } else {
        "validate"
    }
}

impl AdmissionMetrics {
    fn lock(&self) -> MutexGuard<'_, Figures> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One call of entry `name`.
    pub fn entry(
        &self,
        family: Family,
        name: &str,
        key: (&'static str, bool, &'static str),
        took: Duration,
    ) {
        let mut all = self.lock();
        let map = match family {
            Family::Controller => &mut all.controllers,
            Family::Webhook => &mut all.webhooks,
        };
        let mut k: Key = (name.to_string(), key.0, key.1, key.2);
        if map.len() >= MAX_SERIES && !map.contains_key(&k) {
            k.0 = "<other>".into();
        }
        map.entry(k)
            .or_insert_with(|| Histogram::new(BUCKETS))
            .observe(took.as_secs_f64());
    }

    /// One whole phase of one request.
    pub fn step(
        &self,
        operation: &'static str,
        rejected: bool,
        step: &'static str,
        took: Duration,
    ) {
        self.lock()
            .steps
            .entry((operation, rejected, step))
            .or_insert_with(|| Histogram::new(BUCKETS))
            .observe(took.as_secs_f64());
    }
}

impl MetricSource for AdmissionMetrics {
    fn render(&self, out: &mut Exposition) {
        let all = self.lock();
        let families = [
            (
                "apiserver_admission_controller_admission_duration_seconds",
                "[STABLE] Admission controller latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
                &all.controllers,
            ),
            (
                "apiserver_admission_webhook_admission_duration_seconds",
                "[STABLE] Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
                &all.webhooks,
            ),
        ];
        for (name, help, map) in families {
            out.family(name, "histogram", help);
            for ((entry, operation, rejected, kind), h) in map {
                let rejected = if *rejected { "true" } else { "false" };
                let labels = [
                    ("name", entry.as_str()),
                    ("operation", *operation),
                    ("rejected", rejected),
                    ("type", *kind),
                ];
                h.render(out, name, &labels);
            }
        }
        let step = "apiserver_admission_step_admission_duration_seconds";
        out.family(step, "histogram", "[STABLE] Admission sub-step latency histogram in seconds, broken out for each operation and API resource and step type (validate or admit).");
        for ((operation, rejected, kind), h) in &all.steps {
            let rejected = if *rejected { "true" } else { "false" };
            let labels = [
                ("operation", *operation),
                ("rejected", rejected),
                ("type", *kind),
            ];
            h.render(out, step, &labels);
        }
    }
}
