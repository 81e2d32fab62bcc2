//! Each built-in kind's rules behind one trait, [`KindRules`]: its
//! conversion, defaults, validation, initial status, PrepareForCreate/Update,
//! generation rule and printer, in one `impl` per kind, found through one
//! [`CATALOGUE`] row per (group, plural).
//!
//! An API group's folder (`kinds/<group>/`; a file for the groups with
//! little of their own) holds its kinds' `impl`s (`mod.rs`) and their code:
//! kube's validation (`validation.rs`, or a file per kind or family),
//! defaults (`defaults.rs`), preparations (`prepare.rs`) and printers
//! (`table.rs`). What every kind shares stays in the crate's phase modules:
//! `prepare` (status reset, generation), `validation` (metadata,
//! deduplicated causes), `table` (the Table answer and what the printers
//! share), `metadata`, `selector`.
//!
//! The phases ask the kind's rules for what is the kind's own; a kind
//! without a row gets the trait's defaults (no defaults, no causes beyond
//! metadata, no printer).
//!
//! A new kind: an `impl KindRules` in its group's folder (or a new folder
//! for a new group) and one row in [`CATALOGUE`].

pub(crate) mod admissionregistration;
pub(crate) mod apiextensions;
pub(crate) mod apiregistration;
pub(crate) mod apps;
pub(crate) mod autoscaling;
pub(crate) mod batch;
pub(crate) mod certificates;
pub(crate) mod coordination;
pub(crate) mod core;
pub(crate) mod discovery;
pub(crate) mod events;
pub(crate) mod flowcontrol;
pub(crate) mod networking;
pub(crate) mod node;
pub(crate) mod policy;
pub(crate) mod rbac;
pub(crate) mod scheduling;
pub(crate) mod storage;

use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::table::Column;

/// A kind's rules; every method's default is "nothing of its own".
pub(crate) trait KindRules: Sync {
    /// What kube's conversion to the internal version does to a written
    /// object, before anything else (a Secret's `stringData`).
    fn convert(&self, _object: &mut Value) {}

    /// kube's `SetDefaults_*` for the version `resource` names.
    fn defaults(&self, _resource: &StrategyResource, _object: &mut Value) {}

    /// kube's `Validate*` (`old` is None) and `Validate*Update` (`old` is
    /// the stored object); `metadata` is checked for every kind apart.
    fn validate(&self, _object: &Value, _old: Option<&Value>) -> Vec<Cause> {
        Vec::new()
    }

    /// The status a new object starts with when status is a subresource
    /// (None: no status).
    fn initial_status(&self, _resource: &StrategyResource, _object: &Value) -> Option<Value> {
        None
    }

    /// Whether a create keeps the client's status (a Node's, sent by its
    /// kubelet) instead of the initial one.
    fn keeps_created_status(&self) -> bool {
        false
    }

    /// The kind's own PrepareForCreate (after the status reset and
    /// generation).
    fn prepare_for_create(&self, _object: &mut Value) {}

    /// The kind's own PrepareForUpdate over the stored `old` (before the
    /// generation bump).
    fn prepare_for_update(&self, _object: &mut Value, _old: &Value) {}

    /// What the kind's `metadata.generation` follows; None: no generation.
    fn generation(&self) -> Option<Generation> {
        None
    }

    /// kube's printer for the kind's Table rows; None: kube's default
    /// table (NAME, CREATED AT), printed by the host.
    fn printer(&self) -> Option<Printer> {
        None
    }
}

/// What an update must change for `metadata.generation` to move.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Generation {
    /// Everything but metadata and status (`spec`, or a webhook
    /// configuration's `webhooks`).
    DesiredState,
    /// The desired state or the annotations (Deployments: their annotations
    /// are copied to their ReplicaSets).
    DesiredStateAndAnnotations,
    /// The desired state or the labels (EndpointSlices).
    DesiredStateAndLabels,
    /// `template` (PodTemplates).
    Template,
    /// Nothing: 1 on create, never bumped (PriorityClasses).
    Nothing,
    /// The desired state, but none on create (CSIDrivers: 0, then bumped).
    DesiredStateAfterCreate,
}

/// kube's printer of a kind: its column definitions and one object's
/// cells (wide ones included), and a row's conditions where kube gives
/// them (pods).
#[derive(Clone, Copy)]
pub(crate) struct Printer {
    pub columns: fn() -> Vec<Column>,
    pub row: fn(&Value, DateTime<Utc>) -> Vec<Value>,
    pub conditions: Option<fn(&Value) -> Option<Value>>,
}

impl Printer {
    /// A printer of columns and rows (no row conditions).
    pub const fn new(
        columns: fn() -> Vec<Column>,
        row: fn(&Value, DateTime<Utc>) -> Vec<Value>,
    ) -> Printer {
        Printer {
            columns,
            row,
            conditions: None,
        }
    }
}

/// The kinds with rules of their own: (group, plural, rules).
#[rustfmt::skip]
pub(crate) const CATALOGUE: &[(&str, &str, &dyn KindRules)] = &[
    ("", "pods", &core::Pods),
    ("", "podtemplates", &core::PodTemplates),
    ("", "replicationcontrollers", &core::ReplicationControllers),
    ("", "services", &core::Services),
    ("", "endpoints", &core::Endpoints),
    ("", "nodes", &core::Nodes),
    ("", "events", &core::Events),
    ("", "namespaces", &core::Namespaces),
    ("", "secrets", &core::Secrets),
    ("", "configmaps", &core::ConfigMaps),
    ("", "serviceaccounts", &core::ServiceAccounts),
    ("", "persistentvolumes", &core::PersistentVolumes),
    ("", "persistentvolumeclaims", &core::PersistentVolumeClaims),
    ("", "resourcequotas", &core::ResourceQuotas),
    ("", "limitranges", &core::LimitRanges),
    ("", "componentstatuses", &core::ComponentStatuses),
    ("apps", "deployments", &apps::Deployments),
    ("apps", "replicasets", &apps::ReplicaSets),
    ("apps", "statefulsets", &apps::StatefulSets),
    ("apps", "daemonsets", &apps::DaemonSets),
    ("apps", "controllerrevisions", &apps::ControllerRevisions),
    ("batch", "jobs", &batch::Jobs),
    ("batch", "cronjobs", &batch::CronJobs),
    ("autoscaling", "horizontalpodautoscalers", &autoscaling::HorizontalPodAutoscalers),
    ("networking.k8s.io", "ingresses", &networking::Ingresses),
    ("networking.k8s.io", "ingressclasses", &networking::IngressClasses),
    ("networking.k8s.io", "networkpolicies", &networking::NetworkPolicies),
    ("discovery.k8s.io", "endpointslices", &discovery::EndpointSlices),
    ("policy", "poddisruptionbudgets", &policy::PodDisruptionBudgets),
    ("rbac.authorization.k8s.io", "roles", &rbac::Roles),
    ("rbac.authorization.k8s.io", "clusterroles", &rbac::ClusterRoles),
    ("rbac.authorization.k8s.io", "rolebindings", &rbac::RoleBindings),
    ("rbac.authorization.k8s.io", "clusterrolebindings", &rbac::ClusterRoleBindings),
    ("storage.k8s.io", "storageclasses", &storage::StorageClasses),
    ("storage.k8s.io", "csidrivers", &storage::CsiDrivers),
    ("storage.k8s.io", "csinodes", &storage::CsiNodes),
    ("storage.k8s.io", "volumeattachments", &storage::VolumeAttachments),
    ("storage.k8s.io", "csistoragecapacities", &storage::CsiStorageCapacities),
    ("node.k8s.io", "runtimeclasses", &node::RuntimeClasses),
    ("scheduling.k8s.io", "priorityclasses", &scheduling::PriorityClasses),
    ("coordination.k8s.io", "leases", &coordination::Leases),
    ("events.k8s.io", "events", &events::Events),
    ("certificates.k8s.io", "certificatesigningrequests", &certificates::CertificateSigningRequests),
    ("apiextensions.k8s.io", "customresourcedefinitions", &apiextensions::CustomResourceDefinitions),
    ("apiregistration.k8s.io", "apiservices", &apiregistration::ApiServices),
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations", &admissionregistration::MutatingWebhookConfigurations),
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations", &admissionregistration::ValidatingWebhookConfigurations),
    ("admissionregistration.k8s.io", "validatingadmissionpolicies", &admissionregistration::ValidatingAdmissionPolicies),
    ("admissionregistration.k8s.io", "validatingadmissionpolicybindings", &admissionregistration::ValidatingAdmissionPolicyBindings),
    ("admissionregistration.k8s.io", "mutatingadmissionpolicies", &admissionregistration::MutatingAdmissionPolicies),
    ("admissionregistration.k8s.io", "mutatingadmissionpolicybindings", &admissionregistration::MutatingAdmissionPolicyBindings),
    ("flowcontrol.apiserver.k8s.io", "flowschemas", &flowcontrol::FlowSchemas),
    ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations", &flowcontrol::PriorityLevelConfigurations),
];

/// The rules of a kind without a row: the trait's defaults.
struct NoRules;

impl KindRules for NoRules {}

/// The rules of `group`/`plural` (a kind without a row has none of its own).
pub(crate) fn rules_for(group: &str, plural: &str) -> &'static dyn KindRules {
    CATALOGUE
        .iter()
        .find(|(g, p, _)| *g == group && *p == plural)
        .map_or(&NoRules, |(_, _, rules)| *rules)
}

/// The create's time: `metadata.creationTimestamp`, which the host sets
/// first (the initial statuses that record it).
fn created(object: &Value) -> Option<Value> {
    object
        .pointer("/metadata/creationTimestamp")
        .filter(|t| t.is_string())
        .cloned()
}

/// The rules of the call's resource.
pub(crate) fn rules(resource: &StrategyResource) -> &'static dyn KindRules {
    rules_for(&resource.group, &resource.resource)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_row_is_unique() {
        for (i, (group, plural, _)) in CATALOGUE.iter().enumerate() {
            let first = CATALOGUE
                .iter()
                .position(|(g, p, _)| g == group && p == plural);
            assert_eq!(first, Some(i), "{group}/{plural} listed twice");
        }
    }

    #[test]
    fn every_printers_row_has_one_cell_per_column() {
        let now = Utc::now();
        let object = json!({"metadata": {"name": "x"}});
        for (group, plural, rules) in CATALOGUE {
            if let Some(printer) = rules.printer() {
                let cells = (printer.row)(&object, now).len();
                assert_eq!(cells, (printer.columns)().len(), "{group}/{plural}");
            }
        }
    }

    #[test]
    fn kinds_kube_prints_with_its_default_table_have_no_printer() {
        // Their REST storage sets rest.NewDefaultTableConvertor.
        for (group, plural) in [
            ("", "limitranges"),
            ("rbac.authorization.k8s.io", "roles"),
            ("rbac.authorization.k8s.io", "clusterroles"),
            ("storage.k8s.io", "csistoragecapacities"),
            ("apiextensions.k8s.io", "customresourcedefinitions"),
        ] {
            assert!(
                rules_for(group, plural).printer().is_none(),
                "{group}/{plural}"
            );
        }
        for (group, plural) in [
            ("apps", "deployments"),
            ("events.k8s.io", "events"),
            ("rbac.authorization.k8s.io", "clusterrolebindings"),
        ] {
            assert!(
                rules_for(group, plural).printer().is_some(),
                "{group}/{plural}"
            );
        }
    }

    #[test]
    fn kinds_without_a_row_have_no_rules() {
        let rules = rules_for("example.com", "widgets");
        assert!(rules.validate(&json!({}), None).is_empty());
        assert!(rules.printer().is_none());
        assert!(rules.generation().is_none());
    }
}
