//! Column definitions of kube-apiserver's printers
//! (pkg/printers/internalversion/printers.go, 1.33), one function per
//! printer, in kube's order, types and priorities. Priority 1 columns are
//! the ones `kubectl get -o wide` adds. Each kind's rules name theirs
//! (`crate::kinds`).

use super::Column;

const NAME_DESC: &str = "Name must be unique within a namespace; used to identify the object.";
const AGE_DESC: &str = "Time since the object was created (metadata.creationTimestamp).";
const CONTAINERS_DESC: &str = "Names of each container in the template.";
const IMAGES_DESC: &str = "Images referenced by each container in the template.";
const SELECTOR_DESC: &str = "Label selector for the pods this object manages.";

const fn col(name: &'static str, type_: &'static str, desc: &'static str, p: i32) -> Column {
    Column {
        name,
        type_,
        format: "",
        description: desc,
        priority: p,
    }
}

pub(crate) const fn text(name: &'static str, desc: &'static str) -> Column {
    col(name, "string", desc, 0)
}

pub(crate) const fn int(name: &'static str, desc: &'static str) -> Column {
    col(name, "integer", desc, 0)
}

const fn wide(name: &'static str, desc: &'static str) -> Column {
    col(name, "string", desc, 1)
}

pub(crate) const NAME: Column = Column {
    name: "Name",
    type_: "string",
    format: "name",
    description: NAME_DESC,
    priority: 0,
};
pub(crate) const AGE: Column = text("Age", AGE_DESC);
const CONTAINERS: Column = wide("Containers", CONTAINERS_DESC);
const IMAGES: Column = wide("Images", IMAGES_DESC);
const SELECTOR: Column = wide("Selector", SELECTOR_DESC);

pub(crate) fn pod() -> Vec<Column> {
    vec![
        NAME,
        text(
            "Ready",
            "The aggregate readiness state of this pod for accepting traffic.",
        ),
        text(
            "Status",
            "The aggregate status of the containers in this pod.",
        ),
        text(
            "Restarts",
            "The number of times the containers in this pod have been restarted and when \
             the last container in this pod has restarted.",
        ),
        AGE,
        wide("IP", "IP address allocated to the pod."),
        wide("Node", "The node the pod is scheduled to."),
        wide(
            "Nominated Node",
            "The node the scheduler nominated for preemption.",
        ),
        wide(
            "Readiness Gates",
            "Readiness gates that are satisfied / declared.",
        ),
    ]
}

pub(crate) fn node() -> Vec<Column> {
    vec![
        NAME,
        text("Status", "The status of the node"),
        text("Roles", "The roles of the node"),
        AGE,
        text("Version", "Kubelet version reported by the node."),
        wide("Internal-IP", "The node's first InternalIP address."),
        wide("External-IP", "The node's first ExternalIP address."),
        wide("OS-Image", "OS image reported by the node."),
        wide("Kernel-Version", "Kernel version reported by the node."),
        wide(
            "Container-Runtime",
            "Container runtime version reported by the node.",
        ),
    ]
}

pub(crate) fn event() -> Vec<Column> {
    let mut name = NAME;
    name.priority = 1;
    vec![
        text("Last Seen", "Time since the event was last observed."),
        text("Type", "Type of this event (Normal, Warning)."),
        text(
            "Reason",
            "Short, machine understandable reason for the event.",
        ),
        text("Object", "The object this event is about."),
        wide("Subobject", "Field path of the involved object."),
        wide("Source", "Component (and host) reporting the event."),
        text("Message", "Human-readable description of the event."),
        wide("First Seen", "Time since the event was first observed."),
        wide("Count", "Number of times this event has occurred."),
        name,
    ]
}

pub(crate) fn service() -> Vec<Column> {
    vec![
        NAME,
        text("Type", "How the service is exposed."),
        text("Cluster-IP", "The cluster IP of the service."),
        text("External-IP", "External addresses of the service."),
        text("Port(s)", "Ports exposed by the service."),
        AGE,
        wide("Selector", "Label selector of the pods behind the service."),
    ]
}

pub(crate) fn persistent_volume() -> Vec<Column> {
    vec![
        NAME,
        text("Capacity", "Storage capacity of the volume."),
        text("Access Modes", "Ways the volume can be mounted."),
        text(
            "Reclaim Policy",
            "What happens to the volume when released.",
        ),
        text("Status", "Phase of the volume."),
        text("Claim", "The claim bound to this volume."),
        text("StorageClass", "StorageClass of the pv"),
        text("VolumeAttributesClass", "VolumeAttributesClass of the pv"),
        text("Reason", "Reason for a failed phase."),
        AGE,
        wide("VolumeMode", "Filesystem or Block."),
    ]
}

pub(crate) fn persistent_volume_claim() -> Vec<Column> {
    vec![
        NAME,
        text("Status", "Phase of the claim."),
        text("Volume", "The volume bound to this claim."),
        text("Capacity", "Capacity of the bound volume."),
        text("Access Modes", "Access modes of the bound volume."),
        text("StorageClass", "StorageClass of the pvc"),
        text("VolumeAttributesClass", "VolumeAttributesClass of the pvc"),
        AGE,
        wide("VolumeMode", "Filesystem or Block."),
    ]
}

pub(crate) fn daemon_set() -> Vec<Column> {
    vec![
        NAME,
        int("Desired", "Nodes that should run the daemon pod."),
        int("Current", "Nodes running at least one daemon pod."),
        int("Ready", "Nodes with a ready daemon pod."),
        int("Up-to-date", "Nodes running the updated daemon pod."),
        int("Available", "Nodes with an available daemon pod."),
        text("Node Selector", "Node selector of the pod template."),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
    ]
}

pub(crate) fn job() -> Vec<Column> {
    vec![
        NAME,
        text("Status", "Status of the job."),
        text(
            "Completions",
            "Succeeded pods out of the completions wanted.",
        ),
        text("Duration", "Time required to complete the job."),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
    ]
}

pub(crate) fn cron_job() -> Vec<Column> {
    vec![
        NAME,
        text("Schedule", "The cron schedule."),
        text("Timezone", "Time zone of the schedule."),
        col("Suspend", "boolean", "Whether new runs are suspended.", 0),
        int("Active", "Number of running jobs."),
        text("Last Schedule", "Time since the job was last scheduled."),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
    ]
}

pub(crate) fn priority_class() -> Vec<Column> {
    vec![
        NAME,
        int("Value", "Priority value."),
        col(
            "Global-Default",
            "boolean",
            "Whether this is the default class.",
            0,
        ),
        AGE,
        text(
            "PreemptionPolicy",
            "Policy for preempting lower-priority pods.",
        ),
    ]
}

pub(crate) fn pod_disruption_budget() -> Vec<Column> {
    vec![
        NAME,
        text(
            "Min Available",
            "The minimum number of pods that must be available.",
        ),
        text(
            "Max Unavailable",
            "The maximum number of pods that may be unavailable.",
        ),
        int(
            "Allowed Disruptions",
            "Calculated number of pods that may be disrupted at this time.",
        ),
        AGE,
    ]
}

pub(crate) fn role_binding() -> Vec<Column> {
    vec![
        NAME,
        text("Role", "The role being granted."),
        AGE,
        wide("Users", "Users in the binding"),
        wide("Groups", "Groups in the binding"),
        wide("ServiceAccounts", "ServiceAccounts in the binding"),
    ]
}

pub(crate) fn certificate_signing_request() -> Vec<Column> {
    vec![
        NAME,
        AGE,
        text("SignerName", "Signer requested for the certificate."),
        text("Requestor", "User that created the request."),
        text("RequestedDuration", "Requested certificate lifetime."),
        text("Condition", "Approval state of the request."),
    ]
}

pub(crate) fn storage_class() -> Vec<Column> {
    vec![
        NAME,
        text("Provisioner", "Volume plugin that provisions volumes."),
        text("ReclaimPolicy", "Reclaim policy of provisioned volumes."),
        text(
            "VolumeBindingMode",
            "When volumes are bound and provisioned.",
        ),
        text("AllowVolumeExpansion", "Whether volumes may be expanded."),
        AGE,
    ]
}

/// PodTemplates.
pub(crate) fn pod_template() -> Vec<Column> {
    vec![
        NAME,
        text("Containers", CONTAINERS_DESC),
        text("Images", IMAGES_DESC),
        text("Pod Labels", "The labels for the pod template."),
    ]
}

/// ComponentStatuses.
pub(crate) fn component_status() -> Vec<Column> {
    vec![
        NAME,
        text("Status", "Status of the component conditions"),
        text("Message", "Message of the component conditions"),
        text("Error", "Error of the component conditions"),
    ]
}

/// APIServices.
pub(crate) fn api_service() -> Vec<Column> {
    vec![
        NAME,
        text(
            "Service",
            "The reference to the service that hosts this API endpoint.",
        ),
        text("Available", "Whether this service is available."),
        AGE,
    ]
}

/// ReplicationControllers and ReplicaSets.
pub(crate) fn replicas() -> Vec<Column> {
    vec![
        NAME,
        int("Desired", "Number of desired pods."),
        int("Current", "Number of pods currently running."),
        int("Ready", "Number of ready pods."),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
    ]
}

/// Deployments.
pub(crate) fn deployment() -> Vec<Column> {
    vec![
        NAME,
        text("Ready", "Number of the pod with ready state"),
        text("Up-to-date", "Pods updated to the latest template."),
        text("Available", "Pods available to serve."),
        AGE,
        CONTAINERS,
        IMAGES,
        SELECTOR,
    ]
}

/// StatefulSets.
pub(crate) fn stateful_set() -> Vec<Column> {
    vec![
        NAME,
        text("Ready", "Number of the pod with ready state"),
        AGE,
        CONTAINERS,
        IMAGES,
    ]
}

/// ControllerRevisions.
pub(crate) fn controller_revision() -> Vec<Column> {
    vec![
        NAME,
        text("Controller", "Controller of the object"),
        text("Revision", "Revision number of this state."),
        AGE,
    ]
}

/// Namespaces.
pub(crate) fn namespace() -> Vec<Column> {
    vec![NAME, text("Status", "The status of the namespace"), AGE]
}

/// Secrets.
pub(crate) fn secret() -> Vec<Column> {
    vec![
        NAME,
        text("Type", "Type of the secret."),
        text("Data", "Number of data entries."),
        AGE,
    ]
}

/// ServiceAccounts.
pub(crate) fn service_account() -> Vec<Column> {
    vec![NAME, text("Secrets", "Number of secrets."), AGE]
}

/// ConfigMaps.
pub(crate) fn config_map() -> Vec<Column> {
    vec![NAME, text("Data", "Number of data entries."), AGE]
}

/// ResourceQuotas.
pub(crate) fn resource_quota() -> Vec<Column> {
    vec![
        NAME,
        AGE,
        text(
            "Request",
            "Request represents a minimum amount of cpu/memory that a container may consume.",
        ),
        text(
            "Limit",
            "Limits control the maximum amount of cpu/memory that a container may use \
                 independent of contention on the node.",
        ),
    ]
}

/// Leases.
pub(crate) fn lease() -> Vec<Column> {
    vec![NAME, text("Holder", "Identity of the lease holder."), AGE]
}

/// Mutating and validating webhook configurations.
pub(crate) fn webhook_configuration() -> Vec<Column> {
    vec![
        NAME,
        int(
            "Webhooks",
            "Webhooks indicates the number of webhooks registered in this configuration",
        ),
        AGE,
    ]
}

/// Endpoints.
pub(crate) fn endpoints() -> Vec<Column> {
    vec![NAME, text("Endpoints", "Ready endpoint addresses."), AGE]
}

/// EndpointSlices.
pub(crate) fn endpoint_slice() -> Vec<Column> {
    vec![
        NAME,
        text("AddressType", "Type of the addresses in the slice."),
        text("Ports", "Ports exposed by the endpoints."),
        text("Endpoints", "Endpoint addresses."),
        AGE,
    ]
}

/// Ingresses.
pub(crate) fn ingress() -> Vec<Column> {
    vec![
        NAME,
        text(
            "Class",
            "The name of the IngressClass resource that should be used for additional \
                 configuration",
        ),
        text(
            "Hosts",
            "Hosts that incoming requests are matched against before the ingress rule",
        ),
        text(
            "Address",
            "Address is a list containing ingress points for the load-balancer",
        ),
        text("Ports", "Ports of TLS configurations that open"),
        AGE,
    ]
}

/// IngressClasses.
pub(crate) fn ingress_class() -> Vec<Column> {
    vec![
        NAME,
        text(
            "Controller",
            "Controller that is responsible for handling this class",
        ),
        text(
            "Parameters",
            "A reference to a resource with additional parameters",
        ),
        AGE,
    ]
}

/// NetworkPolicies.
pub(crate) fn network_policy() -> Vec<Column> {
    vec![
        NAME,
        text("Pod-Selector", "Pods the policy applies to."),
        AGE,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(columns: Vec<Column>) -> Vec<&'static str> {
        columns.iter().map(|c| c.name).collect()
    }

    #[test]
    fn pod_columns_and_wide_priority() {
        let cols = pod();
        assert_eq!(
            names(pod())[..5],
            ["Name", "Ready", "Status", "Restarts", "Age"]
        );
        assert!(cols[..5].iter().all(|c| c.priority == 0));
        assert!(cols[5..].iter().all(|c| c.priority == 1));
        assert_eq!(cols[0].format, "name");
    }

    #[test]
    fn ordered_like_kube() {
        assert_eq!(
            names(job())[..5],
            ["Name", "Status", "Completions", "Duration", "Age"]
        );
        assert_eq!(names(resource_quota()), ["Name", "Age", "Request", "Limit"]);
        assert_eq!(
            names(event())[..4],
            ["Last Seen", "Type", "Reason", "Object"]
        );
        assert_eq!(
            names(cron_job())[..7],
            [
                "Name",
                "Schedule",
                "Timezone",
                "Suspend",
                "Active",
                "Last Schedule",
                "Age"
            ]
        );
    }
}
