//! The `batch` group's kinds.

use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::{json, Value};

use super::{Generation, KindRules, Printer};
use crate::defaults::batch as set;
use crate::prepare::controllers;
use crate::table::{columns, workloads as rows};

pub(super) struct Jobs;

impl KindRules for Jobs {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        set::job(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        crate::batch::job(object, old)
    }
    fn initial_status(&self, _: &StrategyResource, _: &Value) -> Option<Value> {
        Some(json!({}))
    }
    fn prepare_for_create(&self, object: &mut Value) {
        controllers::job_selector(object);
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredState)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(columns::job, rows::job_row))
    }
}

pub(super) struct CronJobs;

impl KindRules for CronJobs {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        set::cron_job(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        crate::batch::cron_job(object, old)
    }
    fn initial_status(&self, _: &StrategyResource, _: &Value) -> Option<Value> {
        Some(json!({}))
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredState)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(columns::cron_job, rows::cron_job_row))
    }
}
