//! The printers of the kinds served since the first printers were written
//! (autoscaling, the CSI storage kinds, RuntimeClass, admission policies
//! validating and mutating,
//! flowcontrol), dispatched here so the shared tables name them once.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::admission_policies::{self, Counts};
use super::{autoscaling, csi, flowcontrol, Column};

/// Which of these printers renders a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Extra {
    HorizontalPodAutoscaler,
    CsiDriver,
    CsiNode,
    VolumeAttachment,
    RuntimeClass,
    ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
    MutatingAdmissionPolicy,
    MutatingAdmissionPolicyBinding,
    FlowSchema,
    PriorityLevelConfiguration,
}

/// Every printer here, for tests.
#[cfg(test)]
pub(crate) const ALL: [Extra; 11] = [
    Extra::HorizontalPodAutoscaler,
    Extra::CsiDriver,
    Extra::CsiNode,
    Extra::VolumeAttachment,
    Extra::RuntimeClass,
    Extra::ValidatingAdmissionPolicy,
    Extra::ValidatingAdmissionPolicyBinding,
    Extra::MutatingAdmissionPolicy,
    Extra::MutatingAdmissionPolicyBinding,
    Extra::FlowSchema,
    Extra::PriorityLevelConfiguration,
];

/// The printer for a group and plural, if it is one of these.
pub(crate) fn printer(group: &str, resource: &str) -> Option<Extra> {
    Some(match (group, resource) {
        ("autoscaling", "horizontalpodautoscalers") => Extra::HorizontalPodAutoscaler,
        ("storage.k8s.io", "csidrivers") => Extra::CsiDriver,
        ("storage.k8s.io", "csinodes") => Extra::CsiNode,
        ("storage.k8s.io", "volumeattachments") => Extra::VolumeAttachment,
        ("node.k8s.io", "runtimeclasses") => Extra::RuntimeClass,
        ("admissionregistration.k8s.io", "validatingadmissionpolicies") => {
            Extra::ValidatingAdmissionPolicy
        }
        ("admissionregistration.k8s.io", "validatingadmissionpolicybindings") => {
            Extra::ValidatingAdmissionPolicyBinding
        }
        ("admissionregistration.k8s.io", "mutatingadmissionpolicies") => {
            Extra::MutatingAdmissionPolicy
        }
        ("admissionregistration.k8s.io", "mutatingadmissionpolicybindings") => {
            Extra::MutatingAdmissionPolicyBinding
        }
        ("flowcontrol.apiserver.k8s.io", "flowschemas") => Extra::FlowSchema,
        ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations") => {
            Extra::PriorityLevelConfiguration
        }
        _ => return None,
    })
}

/// The printer's column definitions.
pub(crate) fn columns(p: Extra) -> Vec<Column> {
    match p {
        Extra::HorizontalPodAutoscaler => autoscaling::hpa_columns(),
        Extra::CsiDriver => csi::csi_driver_columns(),
        Extra::CsiNode => csi::csi_node_columns(),
        Extra::VolumeAttachment => csi::volume_attachment_columns(),
        Extra::RuntimeClass => csi::runtime_class_columns(),
        Extra::ValidatingAdmissionPolicy => admission_policies::policy_columns(Counts::Validations),
        Extra::MutatingAdmissionPolicy => admission_policies::policy_columns(Counts::Mutations),
        Extra::ValidatingAdmissionPolicyBinding | Extra::MutatingAdmissionPolicyBinding => {
            admission_policies::binding_columns()
        }
        Extra::FlowSchema => flowcontrol::flow_schema_columns(),
        Extra::PriorityLevelConfiguration => flowcontrol::priority_level_columns(),
    }
}

/// The cells of an object's row.
pub(crate) fn cells(p: Extra, obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    match p {
        Extra::HorizontalPodAutoscaler => autoscaling::hpa_row(obj, now),
        Extra::CsiDriver => csi::csi_driver_row(obj, now),
        Extra::CsiNode => csi::csi_node_row(obj, now),
        Extra::VolumeAttachment => csi::volume_attachment_row(obj, now),
        Extra::RuntimeClass => csi::runtime_class_row(obj, now),
        Extra::ValidatingAdmissionPolicy => {
            admission_policies::policy_row(obj, Counts::Validations, now)
        }
        Extra::MutatingAdmissionPolicy => {
            admission_policies::policy_row(obj, Counts::Mutations, now)
        }
        Extra::ValidatingAdmissionPolicyBinding | Extra::MutatingAdmissionPolicyBinding => {
            admission_policies::binding_row(obj, now)
        }
        Extra::FlowSchema => flowcontrol::flow_schema_row(obj, now),
        Extra::PriorityLevelConfiguration => flowcontrol::priority_level_row(obj, now),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_row_has_one_cell_per_column() {
        let now = Utc::now();
        for p in ALL {
            let n = cells(p, &json!({"metadata": {"name": "x"}}), now).len();
            assert_eq!(n, columns(p).len(), "{p:?}");
        }
    }
}
