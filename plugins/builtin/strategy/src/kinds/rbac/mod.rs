//! The `rbac.authorization.k8s.io` group's kinds.

pub(crate) mod validation;

use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::Value;

use super::{KindRules, Printer};
use crate::table::{columns, config as rows};

pub(super) struct Roles;

impl KindRules for Roles {
    fn validate(&self, object: &Value, _: Option<&Value>) -> Vec<Cause> {
        validation::role(object, true)
    }
}

pub(super) struct ClusterRoles;

impl KindRules for ClusterRoles {
    fn validate(&self, object: &Value, _: Option<&Value>) -> Vec<Cause> {
        validation::role(object, false)
    }
}

pub(super) struct RoleBindings;

impl KindRules for RoleBindings {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        crate::defaults::cluster::binding(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        validation::binding(object, old, false)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(columns::role_binding, rows::role_binding_row))
    }
}

pub(super) struct ClusterRoleBindings;

impl KindRules for ClusterRoleBindings {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        crate::defaults::cluster::binding(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        validation::binding(object, old, true)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(columns::role_binding, rows::role_binding_row))
    }
}
