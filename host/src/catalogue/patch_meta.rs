//! Our table of the Kubernetes list/map/patch extensions of the built-in
//! types (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`,
//! `x-kubernetes-map-type`, `x-kubernetes-patch-strategy`,
//! `x-kubernetes-patch-merge-key`). k8s-openapi drops these from its
//! schemas; the list and map types below were taken from its generated merge
//! strategies and the patch strategies from the Go struct tags of k8s.io/api.

use serde_json::{Map, Value};

/// One property's extensions. Empty strings mean "absent".
#[derive(Clone, Copy, Debug)]
pub struct PatchMeta {
    pub schema: &'static str,
    pub property: &'static str,
    /// "atomic", "set" or "map".
    pub list_type: &'static str,
    pub list_map_keys: &'static [&'static str],
    /// "atomic" (granular maps are the default and are not listed).
    pub map_type: &'static str,
    /// "merge", "retainKeys" or "merge,retainKeys".
    pub patch_strategy: &'static str,
    pub merge_key: &'static str,
}

type Row = (
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static str,
    &'static str,
    &'static str,
);

/// (schema, property, list type, list-map keys, map type, patch strategy,
/// patch merge key).
#[rustfmt::skip]
const ROWS: &[Row] = &[
    ("io.k8s.api.admissionregistration.v1.MatchResources", "excludeResourceRules", "atomic", &[], "", "", ""),
    ("io.k8s.api.admissionregistration.v1.MatchResources", "resourceRules", "atomic", &[], "", "", ""),
    ("io.k8s.api.admissionregistration.v1.MutatingWebhook", "admissionReviewVersions", "atomic", &[], "", "", ""),
    ("io.k8s.api.admissionregistration.v1.MutatingWebhook", "matchConditions", "map", &["name"], "", "merge", "name"),
    ("io.k8s.api.admissionregistration.v1.MutatingWebhook", "rules", "atomic", &[], "", "", ""),
    ("io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration", "webhooks", "map", &["name"], "", "merge", "name"),
    ("io.k8s.api.admissionregistration.v1.NamedRuleWithOperations", "apiGroups", "atomic", &[], "", "", ""),
    ("io.k8s.api.admissionregistration.v1.NamedRuleWithOperations", "apiVersions", "atomic", &[], "", "", ""),
    ("io.k8s.api.admissionregistration.v1.NamedRuleWithOperations", "operations", "atomic", &[], "", "", ""),
    ("io.k8s.api.admissionregistration.v1.NamedRuleWithOperations", "resourceNames", "atomic", &[], "", "", ""),
    ("io.k8s.api.admissionregistration.v1.NamedRuleWithOperations", "resources", "atomic", &[], "", "", ""),
    ("io.k8s.api.admissionregistration.v1.RuleWithOperations", "apiGroups", "atomic", &[], "", "", ""),
    ("io.k8s.api.admissionregistration.v1.RuleWithOperations", "apiVersions", "atomic", &[], "", "", ""),
    ("io.k8s.api.admissionregistration.v1.RuleWithOperations", "operations", "atomic", &[], "", "", ""),
    ("io.k8s.api.admissionregistration.v1.RuleWithOperations", "resources", "atomic", &[], "", "", ""),
    ("io.k8s.api.admissionregistration.v1.TypeChecking", "expressionWarnings", "atomic", &[], "", "", ""),
    ("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec", "validationActions", "set", &[], "", "", ""),
    ("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicySpec", "auditAnnotations", "atomic", &[], "", "", ""),
    ("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicySpec", "matchConditions", "map", &["name"], "", "", ""),
    ("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicySpec", "validations", "atomic", &[], "", "", ""),
    ("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicySpec", "variables", "map", &["name"], "", "", ""),
    ("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyStatus", "conditions", "map", &["type"], "", "", ""),
    ("io.k8s.api.admissionregistration.v1.ValidatingWebhook", "admissionReviewVersions", "atomic", &[], "", "", ""),
    ("io.k8s.api.admissionregistration.v1.ValidatingWebhook", "matchConditions", "map", &["name"], "", "merge", "name"),
    ("io.k8s.api.admissionregistration.v1.ValidatingWebhook", "rules", "atomic", &[], "", "", ""),
    ("io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration", "webhooks", "map", &["name"], "", "merge", "name"),
    ("io.k8s.api.apps.v1.DaemonSetStatus", "conditions", "map", &["type"], "", "merge", "type"),
    ("io.k8s.api.apps.v1.DeploymentSpec", "strategy", "", &[], "", "retainKeys", ""),
    ("io.k8s.api.apps.v1.DeploymentStatus", "conditions", "map", &["type"], "", "merge", "type"),
    ("io.k8s.api.apps.v1.ReplicaSetStatus", "conditions", "map", &["type"], "", "merge", "type"),
    ("io.k8s.api.apps.v1.StatefulSetSpec", "volumeClaimTemplates", "atomic", &[], "", "", ""),
    ("io.k8s.api.apps.v1.StatefulSetStatus", "conditions", "map", &["type"], "", "merge", "type"),
    ("io.k8s.api.batch.v1.CronJobStatus", "active", "atomic", &[], "", "", ""),
    ("io.k8s.api.batch.v1.JobStatus", "conditions", "atomic", &[], "", "merge", "type"),
    ("io.k8s.api.batch.v1.PodFailurePolicy", "rules", "atomic", &[], "", "", ""),
    ("io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement", "values", "set", &[], "", "", ""),
    ("io.k8s.api.batch.v1.PodFailurePolicyRule", "onPodConditions", "atomic", &[], "", "", ""),
    ("io.k8s.api.batch.v1.SuccessPolicy", "rules", "atomic", &[], "", "", ""),
    ("io.k8s.api.batch.v1.UncountedTerminatedPods", "failed", "set", &[], "", "", ""),
    ("io.k8s.api.batch.v1.UncountedTerminatedPods", "succeeded", "set", &[], "", "", ""),
    ("io.k8s.api.core.v1.Capabilities", "add", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.Capabilities", "drop", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.CephFSPersistentVolumeSource", "monitors", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.CephFSVolumeSource", "monitors", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.ComponentStatus", "conditions", "map", &["type"], "", "merge", "type"),
    ("io.k8s.api.core.v1.ConfigMapProjection", "items", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.ConfigMapVolumeSource", "items", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.Container", "args", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.Container", "command", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.Container", "env", "map", &["name"], "", "merge", "name"),
    ("io.k8s.api.core.v1.Container", "envFrom", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.Container", "ports", "map", &["containerPort", "protocol"], "", "merge", "containerPort"),
    ("io.k8s.api.core.v1.Container", "resizePolicy", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.Container", "volumeDevices", "map", &["devicePath"], "", "merge", "devicePath"),
    ("io.k8s.api.core.v1.Container", "volumeMounts", "map", &["mountPath"], "", "merge", "mountPath"),
    ("io.k8s.api.core.v1.ContainerImage", "names", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.ContainerStatus", "allocatedResourcesStatus", "map", &["name"], "", "", ""),
    ("io.k8s.api.core.v1.ContainerStatus", "volumeMounts", "map", &["mountPath"], "", "", ""),
    ("io.k8s.api.core.v1.DownwardAPIProjection", "items", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.DownwardAPIVolumeSource", "items", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.EndpointSubset", "addresses", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.EndpointSubset", "notReadyAddresses", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.EndpointSubset", "ports", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.Endpoints", "subsets", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.EphemeralContainer", "args", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.EphemeralContainer", "command", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.EphemeralContainer", "env", "map", &["name"], "", "merge", "name"),
    ("io.k8s.api.core.v1.EphemeralContainer", "envFrom", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.EphemeralContainer", "ports", "map", &["containerPort", "protocol"], "", "merge", "containerPort"),
    ("io.k8s.api.core.v1.EphemeralContainer", "resizePolicy", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.EphemeralContainer", "volumeDevices", "map", &["devicePath"], "", "merge", "devicePath"),
    ("io.k8s.api.core.v1.EphemeralContainer", "volumeMounts", "map", &["mountPath"], "", "merge", "mountPath"),
    ("io.k8s.api.core.v1.ExecAction", "command", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.FCVolumeSource", "targetWWNs", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.FCVolumeSource", "wwids", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.HTTPGetAction", "httpHeaders", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.HostAlias", "hostnames", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.ISCSIPersistentVolumeSource", "portals", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.ISCSIVolumeSource", "portals", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.LimitRangeSpec", "limits", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.LinuxContainerUser", "supplementalGroups", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.LoadBalancerIngress", "ports", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.LoadBalancerStatus", "ingress", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.NamespaceSpec", "finalizers", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.NamespaceStatus", "conditions", "map", &["type"], "", "merge", "type"),
    ("io.k8s.api.core.v1.NodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.NodeSelector", "nodeSelectorTerms", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.NodeSelectorRequirement", "values", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.NodeSelectorTerm", "matchExpressions", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.NodeSelectorTerm", "matchFields", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.NodeSpec", "podCIDRs", "set", &[], "", "merge", ""),
    ("io.k8s.api.core.v1.NodeSpec", "taints", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.NodeStatus", "addresses", "map", &["type"], "", "merge", "type"),
    ("io.k8s.api.core.v1.NodeStatus", "conditions", "map", &["type"], "", "merge", "type"),
    ("io.k8s.api.core.v1.NodeStatus", "images", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.NodeStatus", "runtimeHandlers", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.NodeStatus", "volumesAttached", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.NodeStatus", "volumesInUse", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.PersistentVolumeClaimSpec", "accessModes", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.PersistentVolumeClaimStatus", "accessModes", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.PersistentVolumeClaimStatus", "conditions", "map", &["type"], "", "merge", "type"),
    ("io.k8s.api.core.v1.PersistentVolumeSpec", "accessModes", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.PersistentVolumeSpec", "mountOptions", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.PodAffinity", "preferredDuringSchedulingIgnoredDuringExecution", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.PodAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.PodAffinityTerm", "matchLabelKeys", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.PodAffinityTerm", "mismatchLabelKeys", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.PodAffinityTerm", "namespaces", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.PodAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.PodAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.PodDNSConfig", "nameservers", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.PodDNSConfig", "options", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.PodDNSConfig", "searches", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.PodSecurityContext", "supplementalGroups", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.PodSecurityContext", "sysctls", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.PodSpec", "containers", "map", &["name"], "", "merge", "name"),
    ("io.k8s.api.core.v1.PodSpec", "ephemeralContainers", "map", &["name"], "", "merge", "name"),
    ("io.k8s.api.core.v1.PodSpec", "hostAliases", "map", &["ip"], "", "merge", "ip"),
    ("io.k8s.api.core.v1.PodSpec", "imagePullSecrets", "map", &["name"], "", "merge", "name"),
    ("io.k8s.api.core.v1.PodSpec", "initContainers", "map", &["name"], "", "merge", "name"),
    ("io.k8s.api.core.v1.PodSpec", "nodeSelector", "", &[], "atomic", "", ""),
    ("io.k8s.api.core.v1.PodSpec", "readinessGates", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.PodSpec", "resourceClaims", "map", &["name"], "", "merge,retainKeys", "name"),
    ("io.k8s.api.core.v1.PodSpec", "schedulingGates", "map", &["name"], "", "merge", "name"),
    ("io.k8s.api.core.v1.PodSpec", "tolerations", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.PodSpec", "topologySpreadConstraints", "map", &["topologyKey", "whenUnsatisfiable"], "", "merge", "topologyKey"),
    ("io.k8s.api.core.v1.PodSpec", "volumes", "map", &["name"], "", "merge,retainKeys", "name"),
    ("io.k8s.api.core.v1.PodStatus", "conditions", "map", &["type"], "", "merge", "type"),
    ("io.k8s.api.core.v1.PodStatus", "containerStatuses", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.PodStatus", "ephemeralContainerStatuses", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.PodStatus", "hostIPs", "atomic", &[], "", "merge", "ip"),
    ("io.k8s.api.core.v1.PodStatus", "initContainerStatuses", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.PodStatus", "podIPs", "map", &["ip"], "", "merge", "ip"),
    ("io.k8s.api.core.v1.PodStatus", "resourceClaimStatuses", "map", &["name"], "", "merge,retainKeys", "name"),
    ("io.k8s.api.core.v1.ProjectedVolumeSource", "sources", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.RBDPersistentVolumeSource", "monitors", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.RBDVolumeSource", "monitors", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.ReplicationControllerSpec", "selector", "", &[], "atomic", "", ""),
    ("io.k8s.api.core.v1.ReplicationControllerStatus", "conditions", "map", &["type"], "", "merge", "type"),
    ("io.k8s.api.core.v1.ResourceQuotaSpec", "scopes", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.ResourceRequirements", "claims", "map", &["name"], "", "", ""),
    ("io.k8s.api.core.v1.ResourceStatus", "resources", "map", &["resourceID"], "", "", ""),
    ("io.k8s.api.core.v1.ScopeSelector", "matchExpressions", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.ScopedResourceSelectorRequirement", "values", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.SecretProjection", "items", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.SecretVolumeSource", "items", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.ServiceAccount", "imagePullSecrets", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.ServiceAccount", "secrets", "map", &["name"], "", "merge", "name"),
    ("io.k8s.api.core.v1.ServiceSpec", "clusterIPs", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.ServiceSpec", "externalIPs", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.ServiceSpec", "ipFamilies", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.ServiceSpec", "loadBalancerSourceRanges", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.ServiceSpec", "ports", "map", &["port", "protocol"], "", "merge", "port"),
    ("io.k8s.api.core.v1.ServiceSpec", "selector", "", &[], "atomic", "", ""),
    ("io.k8s.api.core.v1.ServiceStatus", "conditions", "map", &["type"], "", "merge", "type"),
    ("io.k8s.api.core.v1.TopologySelectorLabelRequirement", "values", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.TopologySelectorTerm", "matchLabelExpressions", "atomic", &[], "", "", ""),
    ("io.k8s.api.core.v1.TopologySpreadConstraint", "matchLabelKeys", "atomic", &[], "", "", ""),
    ("io.k8s.api.discovery.v1.Endpoint", "addresses", "set", &[], "", "", ""),
    ("io.k8s.api.discovery.v1.EndpointHints", "forNodes", "atomic", &[], "", "", ""),
    ("io.k8s.api.discovery.v1.EndpointHints", "forZones", "atomic", &[], "", "", ""),
    ("io.k8s.api.discovery.v1.EndpointSlice", "endpoints", "atomic", &[], "", "", ""),
    ("io.k8s.api.discovery.v1.EndpointSlice", "ports", "atomic", &[], "", "", ""),
    ("io.k8s.api.networking.v1.HTTPIngressRuleValue", "paths", "atomic", &[], "", "", ""),
    ("io.k8s.api.networking.v1.IPBlock", "except", "atomic", &[], "", "", ""),
    ("io.k8s.api.networking.v1.IngressLoadBalancerIngress", "ports", "atomic", &[], "", "", ""),
    ("io.k8s.api.networking.v1.IngressLoadBalancerStatus", "ingress", "atomic", &[], "", "", ""),
    ("io.k8s.api.networking.v1.IngressSpec", "rules", "atomic", &[], "", "", ""),
    ("io.k8s.api.networking.v1.IngressSpec", "tls", "atomic", &[], "", "", ""),
    ("io.k8s.api.networking.v1.IngressTLS", "hosts", "atomic", &[], "", "", ""),
    ("io.k8s.api.networking.v1.NetworkPolicyEgressRule", "ports", "atomic", &[], "", "", ""),
    ("io.k8s.api.networking.v1.NetworkPolicyEgressRule", "to", "atomic", &[], "", "", ""),
    ("io.k8s.api.networking.v1.NetworkPolicyIngressRule", "from", "atomic", &[], "", "", ""),
    ("io.k8s.api.networking.v1.NetworkPolicyIngressRule", "ports", "atomic", &[], "", "", ""),
    ("io.k8s.api.networking.v1.NetworkPolicySpec", "egress", "atomic", &[], "", "", ""),
    ("io.k8s.api.networking.v1.NetworkPolicySpec", "ingress", "atomic", &[], "", "", ""),
    ("io.k8s.api.networking.v1.NetworkPolicySpec", "policyTypes", "atomic", &[], "", "", ""),
    ("io.k8s.api.networking.v1.ServiceCIDRSpec", "cidrs", "atomic", &[], "", "", ""),
    ("io.k8s.api.networking.v1.ServiceCIDRStatus", "conditions", "map", &["type"], "", "", ""),
    ("io.k8s.api.policy.v1.PodDisruptionBudgetStatus", "conditions", "map", &["type"], "", "merge", "type"),
    ("io.k8s.api.rbac.v1.AggregationRule", "clusterRoleSelectors", "atomic", &[], "", "", ""),
    ("io.k8s.api.rbac.v1.ClusterRole", "rules", "atomic", &[], "", "", ""),
    ("io.k8s.api.rbac.v1.ClusterRoleBinding", "subjects", "atomic", &[], "", "", ""),
    ("io.k8s.api.rbac.v1.PolicyRule", "apiGroups", "atomic", &[], "", "", ""),
    ("io.k8s.api.rbac.v1.PolicyRule", "nonResourceURLs", "atomic", &[], "", "", ""),
    ("io.k8s.api.rbac.v1.PolicyRule", "resourceNames", "atomic", &[], "", "", ""),
    ("io.k8s.api.rbac.v1.PolicyRule", "resources", "atomic", &[], "", "", ""),
    ("io.k8s.api.rbac.v1.PolicyRule", "verbs", "atomic", &[], "", "", ""),
    ("io.k8s.api.rbac.v1.Role", "rules", "atomic", &[], "", "", ""),
    ("io.k8s.api.rbac.v1.RoleBinding", "subjects", "atomic", &[], "", "", ""),
    ("io.k8s.api.autoscaling.v2.HPAScalingRules", "policies", "atomic", &[], "", "", ""),
    ("io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerSpec", "metrics", "atomic", &[], "", "", ""),
    ("io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus", "conditions", "map", &["type"], "", "merge", "type"),
    ("io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus", "currentMetrics", "atomic", &[], "", "", ""),
    ("io.k8s.api.flowcontrol.v1.FlowSchemaSpec", "rules", "atomic", &[], "", "", ""),
    ("io.k8s.api.flowcontrol.v1.FlowSchemaStatus", "conditions", "map", &["type"], "", "merge", "type"),
    ("io.k8s.api.flowcontrol.v1.NonResourcePolicyRule", "nonResourceURLs", "set", &[], "", "", ""),
    ("io.k8s.api.flowcontrol.v1.NonResourcePolicyRule", "verbs", "set", &[], "", "", ""),
    ("io.k8s.api.flowcontrol.v1.PolicyRulesWithSubjects", "nonResourceRules", "atomic", &[], "", "", ""),
    ("io.k8s.api.flowcontrol.v1.PolicyRulesWithSubjects", "resourceRules", "atomic", &[], "", "", ""),
    ("io.k8s.api.flowcontrol.v1.PolicyRulesWithSubjects", "subjects", "atomic", &[], "", "", ""),
    ("io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationStatus", "conditions", "map", &["type"], "", "merge", "type"),
    ("io.k8s.api.flowcontrol.v1.ResourcePolicyRule", "apiGroups", "set", &[], "", "", ""),
    ("io.k8s.api.flowcontrol.v1.ResourcePolicyRule", "namespaces", "set", &[], "", "", ""),
    ("io.k8s.api.flowcontrol.v1.ResourcePolicyRule", "resources", "set", &[], "", "", ""),
    ("io.k8s.api.flowcontrol.v1.ResourcePolicyRule", "verbs", "set", &[], "", "", ""),
    ("io.k8s.api.node.v1.Scheduling", "nodeSelector", "", &[], "atomic", "", ""),
    ("io.k8s.api.node.v1.Scheduling", "tolerations", "atomic", &[], "", "", ""),
    ("io.k8s.api.storage.v1.CSIDriverSpec", "tokenRequests", "atomic", &[], "", "", ""),
    ("io.k8s.api.storage.v1.CSIDriverSpec", "volumeLifecycleModes", "set", &[], "", "", ""),
    ("io.k8s.api.storage.v1.CSINodeDriver", "topologyKeys", "atomic", &[], "", "", ""),
    ("io.k8s.api.storage.v1.CSINodeSpec", "drivers", "map", &["name"], "", "merge", "name"),
    ("io.k8s.api.storage.v1.StorageClass", "allowedTopologies", "atomic", &[], "", "", ""),
    ("io.k8s.api.storage.v1.StorageClass", "mountOptions", "atomic", &[], "", "", ""),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup", "serverAddressByClientCIDRs", "atomic", &[], "", "", ""),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup", "versions", "atomic", &[], "", "", ""),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList", "groups", "atomic", &[], "", "", ""),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.APIResource", "categories", "atomic", &[], "", "", ""),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.APIResource", "shortNames", "atomic", &[], "", "", ""),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.APIResource", "verbs", "atomic", &[], "", "", ""),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList", "resources", "atomic", &[], "", "", ""),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions", "serverAddressByClientCIDRs", "atomic", &[], "", "", ""),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions", "versions", "atomic", &[], "", "", ""),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions", "dryRun", "atomic", &[], "", "", ""),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.FieldSelectorRequirement", "values", "atomic", &[], "", "", ""),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector", "matchExpressions", "atomic", &[], "", "", ""),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement", "values", "atomic", &[], "", "", ""),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "finalizers", "set", &[], "", "merge", ""),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "managedFields", "atomic", &[], "", "", ""),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "ownerReferences", "map", &["uid"], "", "merge", "uid"),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.StatusDetails", "causes", "atomic", &[], "", "", ""),
];
/// Types kube marks `+structType=atomic` (`x-kubernetes-map-type: atomic` on
/// the type itself).
const ATOMIC_STRUCTS: &[&str] = &[
    "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector",
    "io.k8s.api.core.v1.ConfigMapKeySelector",
    "io.k8s.api.core.v1.LocalObjectReference",
    "io.k8s.api.core.v1.NodeSelector",
    "io.k8s.api.core.v1.NodeSelectorTerm",
    "io.k8s.api.core.v1.ObjectFieldSelector",
    "io.k8s.api.core.v1.ObjectReference",
    "io.k8s.api.core.v1.ResourceFieldSelector",
    "io.k8s.api.core.v1.SecretKeySelector",
    "io.k8s.api.core.v1.SecretReference",
    "io.k8s.api.core.v1.TopologySelectorTerm",
    "io.k8s.api.core.v1.TypedLocalObjectReference",
];

/// The whole table.
pub fn table() -> impl Iterator<Item = PatchMeta> {
    ROWS.iter().map(|r| PatchMeta {
        schema: r.0,
        property: r.1,
        list_type: r.2,
        list_map_keys: r.3,
        map_type: r.4,
        patch_strategy: r.5,
        merge_key: r.6,
    })
}

/// The extensions of one entry, in the order kube prints them.
fn extensions(m: &PatchMeta) -> Vec<(&'static str, Value)> {
    let mut out = Vec::new();
    if !m.list_map_keys.is_empty() {
        let keys = m.list_map_keys.iter().map(|k| Value::from(*k)).collect();
        out.push(("x-kubernetes-list-map-keys", Value::Array(keys)));
    }
    if !m.list_type.is_empty() {
        out.push(("x-kubernetes-list-type", Value::from(m.list_type)));
    }
    if !m.map_type.is_empty() {
        out.push(("x-kubernetes-map-type", Value::from(m.map_type)));
    }
    if !m.merge_key.is_empty() {
        out.push(("x-kubernetes-patch-merge-key", Value::from(m.merge_key)));
    }
    if !m.patch_strategy.is_empty() {
        out.push(("x-kubernetes-patch-strategy", Value::from(m.patch_strategy)));
    }
    out
}

/// Adds the table's extensions to the properties of `schemas` they name.
/// Entries whose schema or property is not present are skipped.
pub fn apply(schemas: &mut Map<String, Value>) {
    for m in table() {
        let prop = schemas
            .get_mut(m.schema)
            .and_then(|s| s.get_mut("properties"))
            .and_then(|p| p.get_mut(m.property))
            .and_then(Value::as_object_mut);
        if let Some(prop) = prop {
            for (k, v) in extensions(&m) {
                prop.insert(k.to_string(), v);
            }
        }
    }
    for name in ATOMIC_STRUCTS {
        if let Some(Value::Object(s)) = schemas.get_mut(*name) {
            s.insert("x-kubernetes-map-type".into(), Value::from("atomic"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(schema: &str, property: &str) -> PatchMeta {
        table()
            .find(|m| m.schema.ends_with(schema) && m.property == property)
            .unwrap()
    }

    #[test]
    fn pod_spec_lists_merge_by_name() {
        for p in [
            "containers",
            "initContainers",
            "ephemeralContainers",
            "imagePullSecrets",
        ] {
            let m = find(".core.v1.PodSpec", p);
            assert_eq!((m.patch_strategy, m.merge_key), ("merge", "name"), "{p}");
            assert_eq!(
                (m.list_type, m.list_map_keys),
                ("map", &["name"][..]),
                "{p}"
            );
        }
        let v = find(".core.v1.PodSpec", "volumes");
        assert_eq!(v.patch_strategy, "merge,retainKeys");
        let t = find(".core.v1.PodSpec", "topologySpreadConstraints");
        assert_eq!(t.merge_key, "topologyKey");
        assert_eq!(t.list_map_keys, ["topologyKey", "whenUnsatisfiable"]);
    }

    #[test]
    fn ports_and_conditions() {
        let s = find(".core.v1.ServiceSpec", "ports");
        assert_eq!(s.merge_key, "port");
        assert_eq!(s.list_map_keys, ["port", "protocol"]);
        let c = find(".core.v1.Container", "ports");
        assert_eq!(c.merge_key, "containerPort");
        assert_eq!(c.list_map_keys, ["containerPort", "protocol"]);
        for s in [
            ".apps.v1.DeploymentStatus",
            ".core.v1.PodStatus",
            ".core.v1.NodeStatus",
        ] {
            assert_eq!(find(s, "conditions").merge_key, "type", "{s}");
        }
        let job = find(".batch.v1.JobStatus", "conditions");
        assert_eq!((job.list_type, job.merge_key), ("atomic", "type"));
        assert_eq!(
            find(".apps.v1.DeploymentSpec", "strategy").patch_strategy,
            "retainKeys"
        );
    }

    #[test]
    fn object_meta() {
        let f = find("meta.v1.ObjectMeta", "finalizers");
        assert_eq!((f.list_type, f.patch_strategy), ("set", "merge"));
        let o = find("meta.v1.ObjectMeta", "ownerReferences");
        assert_eq!((o.merge_key, o.list_map_keys), ("uid", &["uid"][..]));
    }
}
