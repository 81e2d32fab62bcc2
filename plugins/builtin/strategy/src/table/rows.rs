//! Dispatch from a printer to its row function.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::columns::Printer;
use super::{cluster, config, network, pods, storage, workloads};

fn workload_row(p: Printer, obj: &Value, now: DateTime<Utc>) -> Option<Vec<Value>> {
    Some(match p {
        Printer::Pod => pods::pod_row(obj, now),
        Printer::PodTemplate => workloads::pod_template_row(obj),
        Printer::Deployment => workloads::deployment_row(obj, now),
        Printer::ReplicaSet => workloads::replica_set_row(obj, now),
        Printer::ReplicationController => workloads::replication_controller_row(obj, now),
        Printer::StatefulSet => workloads::stateful_set_row(obj, now),
        Printer::DaemonSet => workloads::daemon_set_row(obj, now),
        Printer::Job => workloads::job_row(obj, now),
        Printer::CronJob => workloads::cron_job_row(obj, now),
        Printer::ControllerRevision => workloads::controller_revision_row(obj, now),
        _ => return None,
    })
}

fn network_row(p: Printer, obj: &Value, now: DateTime<Utc>) -> Option<Vec<Value>> {
    Some(match p {
        Printer::Service => network::service_row(obj, now),
        Printer::Endpoints => network::endpoints_row(obj, now),
        Printer::EndpointSlice => network::endpoint_slice_row(obj, now),
        Printer::Ingress => network::ingress_row(obj, now),
        Printer::IngressClass => network::ingress_class_row(obj, now),
        Printer::NetworkPolicy => network::network_policy_row(obj, now),
        Printer::Node => cluster::node_row(obj, now),
        Printer::Namespace => cluster::namespace_row(obj, now),
        Printer::Event => cluster::event_row(obj, now),
        Printer::ComponentStatus => cluster::component_status_row(obj),
        Printer::ApiService => cluster::api_service_row(obj, now),
        _ => return None,
    })
}

fn config_row(p: Printer, obj: &Value, now: DateTime<Utc>) -> Option<Vec<Value>> {
    Some(match p {
        Printer::ConfigMap => config::config_map_row(obj, now),
        Printer::Secret => config::secret_row(obj, now),
        Printer::ServiceAccount => config::service_account_row(obj, now),
        Printer::Lease => config::lease_row(obj, now),
        Printer::ResourceQuota => config::resource_quota_row(obj, now),
        Printer::PriorityClass => config::priority_class_row(obj, now),
        Printer::PodDisruptionBudget => config::pod_disruption_budget_row(obj, now),
        Printer::RoleBinding => config::role_binding_row(obj, now),
        Printer::CertificateSigningRequest => config::certificate_signing_request_row(obj, now),
        Printer::WebhookConfiguration => config::webhook_configuration_row(obj, now),
        Printer::PersistentVolume => storage::persistent_volume_row(obj, now),
        Printer::PersistentVolumeClaim => storage::persistent_volume_claim_row(obj, now),
        Printer::StorageClass => storage::storage_class_row(obj, now),
        _ => return None,
    })
}

/// All cells of a row for the given printer (wide cells included).
pub(crate) fn cells(p: Printer, obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    if let Printer::Extra(p) = p {
        return super::extra::cells(p, obj, now);
    }
    workload_row(p, obj, now)
        .or_else(|| network_row(p, obj, now))
        .or_else(|| config_row(p, obj, now))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::columns::columns;
    use serde_json::json;

    const ALL: [Printer; 34] = [
        Printer::Pod,
        Printer::PodTemplate,
        Printer::ReplicationController,
        Printer::Service,
        Printer::Endpoints,
        Printer::Node,
        Printer::Event,
        Printer::Namespace,
        Printer::Secret,
        Printer::ServiceAccount,
        Printer::PersistentVolume,
        Printer::PersistentVolumeClaim,
        Printer::ConfigMap,
        Printer::ResourceQuota,
        Printer::Deployment,
        Printer::ReplicaSet,
        Printer::StatefulSet,
        Printer::DaemonSet,
        Printer::ControllerRevision,
        Printer::Job,
        Printer::CronJob,
        Printer::Ingress,
        Printer::IngressClass,
        Printer::NetworkPolicy,
        Printer::PodDisruptionBudget,
        Printer::StorageClass,
        Printer::PriorityClass,
        Printer::RoleBinding,
        Printer::Lease,
        Printer::EndpointSlice,
        Printer::CertificateSigningRequest,
        Printer::WebhookConfiguration,
        Printer::ComponentStatus,
        Printer::ApiService,
    ];

    #[test]
    fn every_row_has_one_cell_per_column() {
        let now = Utc::now();
        for p in ALL {
            let n = cells(p, &json!({"metadata": {"name": "x"}}), now).len();
            assert_eq!(n, columns(p).len(), "{p:?}");
        }
    }
}
