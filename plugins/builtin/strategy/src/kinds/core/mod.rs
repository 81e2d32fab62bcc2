//! The core group's kinds (`/api/v1`).

pub(crate) mod config;
pub(crate) mod defaults;
pub(crate) mod pod_resize;
pub(crate) mod pod_spec;
pub(crate) mod pod_update;
pub(crate) mod pods;
pub(crate) mod prepare;
pub(crate) mod qos;
pub(crate) mod services;
pub(crate) mod table;
pub(crate) mod validation;

use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::{json, Value};

use super::{Generation, KindRules, Printer};
use crate::kinds::apps::workloads;

pub(super) struct Pods;

impl KindRules for Pods {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        defaults::pod::pod(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        pods::validate(object, old)
    }
    fn initial_status(&self, _: &StrategyResource, object: &Value) -> Option<Value> {
        Some(json!({"phase": "Pending", "qosClass": qos::class(object)}))
    }
    fn prepare_for_create(&self, object: &mut Value) {
        prepare::pods::prepare_create(object);
    }
    fn prepare_for_update(&self, object: &mut Value, old: &Value) {
        prepare::disabled_fields::pod_update(object, old);
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer {
            columns: table::pod_columns,
            row: table::pod_row,
            conditions: Some(table::pod_row_conditions),
        })
    }
}

pub(super) struct PodTemplates;

impl KindRules for PodTemplates {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        defaults::pod_template(object);
    }
    fn validate(&self, object: &Value, _: Option<&Value>) -> Vec<Cause> {
        validation::pod_template(object)
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::Template)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::pod_template_columns,
            table::pod_template_row,
        ))
    }
}

pub(super) struct ReplicationControllers;

impl KindRules for ReplicationControllers {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        defaults::replication_controller(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        workloads::validate("replicationcontrollers", object, old)
    }
    fn initial_status(&self, _: &StrategyResource, _: &Value) -> Option<Value> {
        Some(json!({"replicas": 0}))
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredState)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            crate::kinds::apps::table::replicas_columns,
            table::replication_controller_row,
        ))
    }
}

pub(super) struct Services;

impl KindRules for Services {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        defaults::service(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        services::validate(object, old)
    }
    fn initial_status(&self, _: &StrategyResource, _: &Value) -> Option<Value> {
        Some(json!({"loadBalancer": {}}))
    }
    fn prepare_for_update(&self, object: &mut Value, old: &Value) {
        prepare::services::drop_type_dependent_fields(object, old);
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(table::service_columns, table::service_row))
    }
}

pub(super) struct Endpoints;

impl KindRules for Endpoints {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        defaults::endpoints(object);
    }
    fn validate(&self, object: &Value, _: Option<&Value>) -> Vec<Cause> {
        validation::endpoints(object)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(table::endpoints_columns, table::endpoints_row))
    }
}

pub(super) struct Nodes;

impl KindRules for Nodes {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        defaults::node(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        validation::node(object, old)
    }
    fn keeps_created_status(&self) -> bool {
        true
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(table::node_columns, table::node_row))
    }
}

pub(super) struct Events;

impl KindRules for Events {
    fn validate(&self, object: &Value, _: Option<&Value>) -> Vec<Cause> {
        validation::core_event(object)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(table::event_columns, table::event_row))
    }
}

pub(super) struct Namespaces;

impl KindRules for Namespaces {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        defaults::namespace(object);
    }
    fn initial_status(&self, _: &StrategyResource, _: &Value) -> Option<Value> {
        Some(json!({"phase": "Active"}))
    }
    fn prepare_for_create(&self, object: &mut Value) {
        prepare::namespace_finalizer(object);
    }
    fn prepare_for_update(&self, object: &mut Value, old: &Value) {
        prepare::keep_namespace_finalizers(object, old);
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(table::namespace_columns, table::namespace_row))
    }
}

pub(super) struct Secrets;

impl KindRules for Secrets {
    fn convert(&self, object: &mut Value) {
        config::merge_string_data(object);
    }
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        defaults::secret(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        config::secret(object, old)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(table::secret_columns, table::secret_row))
    }
}

pub(super) struct ConfigMaps;

impl KindRules for ConfigMaps {
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        config::configmap(object, old)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::config_map_columns,
            table::config_map_row,
        ))
    }
}

pub(super) struct ServiceAccounts;

impl KindRules for ServiceAccounts {
    fn prepare_for_create(&self, object: &mut Value) {
        prepare::secret_references(object);
    }
    fn prepare_for_update(&self, object: &mut Value, _: &Value) {
        prepare::secret_references(object);
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::service_account_columns,
            table::service_account_row,
        ))
    }
}

pub(super) struct PersistentVolumes;

impl KindRules for PersistentVolumes {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        defaults::persistent_volume(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        validation::persistent_volume(object, old)
    }
    fn initial_status(&self, _: &StrategyResource, object: &Value) -> Option<Value> {
        Some(volume_pending(object))
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::persistent_volume_columns,
            table::persistent_volume_row,
        ))
    }
}

/// A new volume is Pending since its creation (`lastPhaseTransitionTime`
/// is the create's time, the object's creationTimestamp).
fn volume_pending(object: &Value) -> Value {
    let mut status = json!({"phase": "Pending"});
    if let Some(now) = super::created(object) {
        status["lastPhaseTransitionTime"] = now;
    }
    status
}

pub(super) struct PersistentVolumeClaims;

impl KindRules for PersistentVolumeClaims {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        defaults::persistent_volume_claim(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        validation::persistent_volume_claim(object, old)
    }
    fn initial_status(&self, _: &StrategyResource, _: &Value) -> Option<Value> {
        Some(json!({"phase": "Pending"}))
    }
    fn prepare_for_create(&self, object: &mut Value) {
        prepare::claim_data_sources(object);
    }
    fn prepare_for_update(&self, object: &mut Value, old: &Value) {
        prepare::claim_data_sources_on_update(object, old);
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::persistent_volume_claim_columns,
            table::persistent_volume_claim_row,
        ))
    }
}

pub(super) struct ResourceQuotas;

impl KindRules for ResourceQuotas {
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        validation::resource_quota(object, old)
    }
    fn initial_status(&self, _: &StrategyResource, _: &Value) -> Option<Value> {
        Some(json!({}))
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::resource_quota_columns,
            table::resource_quota_row,
        ))
    }
}

pub(super) struct LimitRanges;

impl KindRules for LimitRanges {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        defaults::limit_range(object);
    }
    fn validate(&self, object: &Value, _: Option<&Value>) -> Vec<Cause> {
        validation::limit_range(object)
    }
}

pub(super) struct ComponentStatuses;

impl KindRules for ComponentStatuses {
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::component_status_columns,
            table::component_status_row,
        ))
    }
}
