//! The `batch` group's kinds.

pub(crate) mod cron;
pub(crate) mod go_duration;
pub(crate) mod job_policies;
pub(crate) mod validation;

pub(crate) mod defaults;
pub(crate) mod prepare;
pub(crate) mod table;
use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::{json, Value};

use super::{Generation, KindRules, Printer};

pub(super) struct Jobs;

impl KindRules for Jobs {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        defaults::job(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        crate::kinds::batch::validation::job(object, old)
    }
    fn initial_status(&self, _: &StrategyResource, _: &Value) -> Option<Value> {
        Some(json!({}))
    }
    fn prepare_for_create(&self, object: &mut Value) {
        prepare::job_selector(object);
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredState)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(table::job_columns, table::job_row))
    }
}

pub(super) struct CronJobs;

impl KindRules for CronJobs {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        defaults::cron_job(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        crate::kinds::batch::validation::cron_job(object, old)
    }
    fn initial_status(&self, _: &StrategyResource, _: &Value) -> Option<Value> {
        Some(json!({}))
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredState)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(table::cron_job_columns, table::cron_job_row))
    }
}
