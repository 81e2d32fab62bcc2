//! The built-in resource table: the resources a Kubernetes 1.33
//! kube-apiserver serves that Capstan serves too, with the names, short
//! names, categories, scope, verbs and subresources kube lists in discovery.

use super::{ResourceInfo, Subresource};
use crate::apimachinery::names::NameRule;
use crate::apimachinery::selectors::field_labels_for;

/// Verbs of an ordinary resource.
const ALL: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// Verbs of namespaces, which have no `deletecollection`.
const NO_DELETECOLLECTION: &[&str] = &[
    "create", "delete", "get", "list", "patch", "update", "watch",
];

/// Verbs of the review resources, which are only ever created (never stored).
const CREATE_ONLY: &[&str] = &["create"];

/// Verbs of componentstatuses, which are read only.
const GET_LIST: &[&str] = &["get", "list"];

/// Verbs of the status and scale subresources.
const SUBRESOURCE_VERBS: &[&str] = &["get", "patch", "update"];

/// One row of the table.
struct Row {
    group: &'static str,
    kind: &'static str,
    plural: &'static str,
    short_names: &'static [&'static str],
    /// `true` for the resources kube puts in the `all` category.
    in_all: bool,
    namespaced: bool,
    verbs: &'static [&'static str],
    /// Subresource names: "status" and/or "scale".
    subresources: &'static [&'static str],
    /// kube's storage sets `ReturnDeletedObject: true`.
    returns_deleted: bool,
    /// The versions served, preferred first (see `conversion.rs` for how
    /// a kind served at more than one is stored and converted).
    versions: &'static [&'static str],
}

const fn row(
    group: &'static str,
    kind: &'static str,
    plural: &'static str,
    short_names: &'static [&'static str],
    namespaced: bool,
    subresources: &'static [&'static str],
) -> Row {
    Row {
        group,
        kind,
        plural,
        short_names,
        in_all: false,
        namespaced,
        verbs: ALL,
        subresources,
        returns_deleted: false,
        versions: V1,
    }
}

const V1: &[&str] = &["v1"];

/// Served at `versions`, preferred first.
const fn versions(mut r: Row, versions: &'static [&'static str]) -> Row {
    r.versions = versions;
    r
}

const fn in_all(mut r: Row) -> Row {
    r.in_all = true;
    r
}

const fn no_deletecollection(mut r: Row) -> Row {
    r.verbs = NO_DELETECOLLECTION;
    r
}

/// DELETE returns the object (pkg/registry/.../storage: `ReturnDeletedObject: true`).
const fn returns_deleted(mut r: Row) -> Row {
    r.returns_deleted = true;
    r
}

const fn read_only(mut r: Row) -> Row {
    r.verbs = GET_LIST;
    r
}

const fn create_only(mut r: Row) -> Row {
    r.verbs = CREATE_ONLY;
    r
}

const NS: bool = true;
const CLUSTER: bool = false;
const STATUS: &[&str] = &["status"];
/// Namespaces' subresources: `finalize` (spec.finalizers) and `status`.
const FINALIZE_STATUS: &[&str] = &["finalize", "status"];
const SCALE_STATUS: &[&str] = &["scale", "status"];
const NONE: &[&str] = &[];
const TOKEN: &[&str] = &["token"];
const PROXY_STATUS: &[&str] = &["proxy", "status"];
const CSR_SUBRESOURCES: &[&str] = &["approval", "status"];
/// The pod subresources kube serves without a kubelet's help or with its
/// answers (`resize`: the InPlacePodVerticalScaling gate is on by default in 1.32).
const POD_SUBRESOURCES: &[&str] = &[
    "attach",
    "binding",
    "ephemeralcontainers",
    "eviction",
    "exec",
    "log",
    "portforward",
    "proxy",
    "resize",
    "status",
];

/// Verbs of the proxy subresources.
const PROXY_VERBS: &[&str] = &["create", "delete", "get", "patch", "update"];

/// Verbs of pods/log.
const GET_ONLY: &[&str] = &["get"];

/// Verbs of namespaces/finalize (kube's FinalizeREST only updates).
const UPDATE_ONLY: &[&str] = &["update"];

/// Verbs of the streaming subresources (exec, attach, portforward).
const CONNECT_VERBS: &[&str] = &["create", "get"];

/// The table, grouped in the order kube lists groups in `/apis`.
#[rustfmt::skip]
const ROWS: &[Row] = &[
    returns_deleted(no_deletecollection(row("", "Namespace", "namespaces", &["ns"], CLUSTER, FINALIZE_STATUS))),
    row("", "ConfigMap", "configmaps", &["cm"], NS, NONE),
    row("", "Secret", "secrets", &[], NS, NONE),
    returns_deleted(row("", "ServiceAccount", "serviceaccounts", &["sa"], NS, TOKEN)),
    returns_deleted(in_all(row("", "Service", "services", &["svc"], NS, PROXY_STATUS))),
    row("", "Endpoints", "endpoints", &["ep"], NS, NONE),
    returns_deleted(in_all(row("", "Pod", "pods", &["po"], NS, POD_SUBRESOURCES))),
    row("", "Event", "events", &["ev"], NS, NONE),
    row("", "LimitRange", "limitranges", &["limits"], NS, NONE),
    returns_deleted(row("", "ResourceQuota", "resourcequotas", &["quota"], NS, STATUS)),
    row("", "Node", "nodes", &["no"], CLUSTER, PROXY_STATUS),
    returns_deleted(row("", "PersistentVolume", "persistentvolumes", &["pv"], CLUSTER, STATUS)),
    returns_deleted(row("", "PersistentVolumeClaim", "persistentvolumeclaims", &["pvc"], NS, STATUS)),
    returns_deleted(row("", "PodTemplate", "podtemplates", &[], NS, NONE)),
    create_only(row("", "Binding", "bindings", &[], NS, NONE)),
    read_only(row("", "ComponentStatus", "componentstatuses", &["cs"], CLUSTER, NONE)),
    in_all(row("", "ReplicationController", "replicationcontrollers", &["rc"], NS, SCALE_STATUS)),
    row("apiregistration.k8s.io", "APIService", "apiservices", &[], CLUSTER, STATUS),
    in_all(row("apps", "Deployment", "deployments", &["deploy"], NS, SCALE_STATUS)),
    in_all(row("apps", "ReplicaSet", "replicasets", &["rs"], NS, SCALE_STATUS)),
    in_all(row("apps", "StatefulSet", "statefulsets", &["sts"], NS, SCALE_STATUS)),
    in_all(row("apps", "DaemonSet", "daemonsets", &["ds"], NS, STATUS)),
    row("apps", "ControllerRevision", "controllerrevisions", &[], NS, NONE),
    row("events.k8s.io", "Event", "events", &["ev"], NS, NONE),
    create_only(row("authentication.k8s.io", "SelfSubjectReview", "selfsubjectreviews", &[], CLUSTER, NONE)),
    create_only(row("authentication.k8s.io", "TokenReview", "tokenreviews", &[], CLUSTER, NONE)),
    create_only(row("authorization.k8s.io", "LocalSubjectAccessReview", "localsubjectaccessreviews", &[], NS, NONE)),
    create_only(row("authorization.k8s.io", "SelfSubjectAccessReview", "selfsubjectaccessreviews", &[], CLUSTER, NONE)),
    create_only(row("authorization.k8s.io", "SelfSubjectRulesReview", "selfsubjectrulesreviews", &[], CLUSTER, NONE)),
    create_only(row("authorization.k8s.io", "SubjectAccessReview", "subjectaccessreviews", &[], CLUSTER, NONE)),
    versions(in_all(row("autoscaling", "HorizontalPodAutoscaler", "horizontalpodautoscalers", &["hpa"], NS, STATUS)), &["v2", "v1"]),
    in_all(row("batch", "Job", "jobs", &[], NS, STATUS)),
    in_all(row("batch", "CronJob", "cronjobs", &["cj"], NS, STATUS)),
    row("certificates.k8s.io", "CertificateSigningRequest", "certificatesigningrequests", &["csr"], CLUSTER, CSR_SUBRESOURCES),
    row("networking.k8s.io", "Ingress", "ingresses", &["ing"], NS, STATUS),
    row("networking.k8s.io", "IngressClass", "ingressclasses", &[], CLUSTER, NONE),
    row("networking.k8s.io", "NetworkPolicy", "networkpolicies", &["netpol"], NS, NONE),
    row("policy", "PodDisruptionBudget", "poddisruptionbudgets", &["pdb"], NS, STATUS),
    row("rbac.authorization.k8s.io", "Role", "roles", &[], NS, NONE),
    row("rbac.authorization.k8s.io", "RoleBinding", "rolebindings", &[], NS, NONE),
    row("rbac.authorization.k8s.io", "ClusterRole", "clusterroles", &[], CLUSTER, NONE),
    row("rbac.authorization.k8s.io", "ClusterRoleBinding", "clusterrolebindings", &[], CLUSTER, NONE),
    returns_deleted(row("storage.k8s.io", "StorageClass", "storageclasses", &["sc"], CLUSTER, NONE)),
    returns_deleted(row("storage.k8s.io", "CSIDriver", "csidrivers", &[], CLUSTER, NONE)),
    returns_deleted(row("storage.k8s.io", "CSINode", "csinodes", &[], CLUSTER, NONE)),
    row("storage.k8s.io", "CSIStorageCapacity", "csistoragecapacities", &[], NS, NONE),
    returns_deleted(row("storage.k8s.io", "VolumeAttachment", "volumeattachments", &[], CLUSTER, STATUS)),
    row("admissionregistration.k8s.io", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations", &[], CLUSTER, NONE),
    row("admissionregistration.k8s.io", "ValidatingWebhookConfiguration", "validatingwebhookconfigurations", &[], CLUSTER, NONE),
    row("admissionregistration.k8s.io", "ValidatingAdmissionPolicy", "validatingadmissionpolicies", &[], CLUSTER, STATUS),
    row("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings", &[], CLUSTER, NONE),
    row("apiextensions.k8s.io", "CustomResourceDefinition", "customresourcedefinitions", &["crd", "crds"], CLUSTER, STATUS),
    row("scheduling.k8s.io", "PriorityClass", "priorityclasses", &["pc"], CLUSTER, NONE),
    row("coordination.k8s.io", "Lease", "leases", &[], NS, NONE),
    row("node.k8s.io", "RuntimeClass", "runtimeclasses", &[], CLUSTER, NONE),
    row("discovery.k8s.io", "EndpointSlice", "endpointslices", &[], NS, NONE),
    row("flowcontrol.apiserver.k8s.io", "FlowSchema", "flowschemas", &[], CLUSTER, STATUS),
    row("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration", "prioritylevelconfigurations", &[], CLUSTER, STATUS),
];

/// Kinds served only when `--feature-gates` and `--runtime-config` ask
/// (`gates.rs`), at the versions they turn on.
const GATED_ROWS: &[Row] = &[
    versions(
        row(
            "admissionregistration.k8s.io",
            "MutatingAdmissionPolicy",
            "mutatingadmissionpolicies",
            &[],
            CLUSTER,
            NONE,
        ),
        &["v1beta1", "v1alpha1"],
    ),
    versions(
        row(
            "admissionregistration.k8s.io",
            "MutatingAdmissionPolicyBinding",
            "mutatingadmissionpolicybindings",
            &[],
            CLUSTER,
            NONE,
        ),
        &["v1beta1", "v1alpha1"],
    ),
];

/// The Go package part of a group's schema names (`io.k8s.api.<pkg>.v1`).
fn schema_package(group: &str) -> &str {
    match group {
        "" => "core",
        "rbac.authorization.k8s.io" => "rbac",
        "flowcontrol.apiserver.k8s.io" => "flowcontrol",
        other => other.strip_suffix(".k8s.io").unwrap_or(other),
    }
}

/// The component schema of a row's kind at `version`.
fn schema_name(r: &Row, version: &str) -> String {
    match r.group {
        "apiregistration.k8s.io" => format!(
            "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.{}",
            r.kind
        ),
        "apiextensions.k8s.io" => format!(
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.{}",
            r.kind
        ),
        group => format!("io.k8s.api.{}.{version}.{}", schema_package(group), r.kind),
    }
}

/// Categories kube gives a built-in resource.
fn categories(r: &Row) -> Vec<String> {
    if r.in_all {
        vec!["all".to_string()]
    } else if matches!(
        r.group,
        "admissionregistration.k8s.io" | "apiextensions.k8s.io" | "apiregistration.k8s.io"
    ) {
        vec!["api-extensions".to_string()]
    } else {
        Vec::new()
    }
}

fn subresource(r: &Row, version: &str, name: &str) -> Subresource {
    let (group, version, kind, verbs) = match name {
        "scale" => ("autoscaling", "v1", "Scale", SUBRESOURCE_VERBS),
        "token" => ("authentication.k8s.io", "v1", "TokenRequest", CREATE_ONLY),
        "attach" => ("", "v1", "PodAttachOptions", CONNECT_VERBS),
        "exec" => ("", "v1", "PodExecOptions", CONNECT_VERBS),
        "portforward" => ("", "v1", "PodPortForwardOptions", CONNECT_VERBS),
        "binding" => ("", "v1", "Binding", CREATE_ONLY),
        "eviction" => ("policy", "v1", "Eviction", CREATE_ONLY),
        "log" => ("", "v1", "Pod", GET_ONLY),
        "finalize" => ("", "v1", "Namespace", UPDATE_ONLY),
        "proxy" if r.kind == "Node" => ("", "v1", "NodeProxyOptions", PROXY_VERBS),
        "proxy" if r.kind == "Pod" => ("", "v1", "PodProxyOptions", PROXY_VERBS),
        "proxy" => ("", "v1", "ServiceProxyOptions", PROXY_VERBS),
        _ => (r.group, version, r.kind, SUBRESOURCE_VERBS),
    };
    Subresource {
        name: name.to_string(),
        group: group.to_string(),
        version: version.to_string(),
        kind: kind.to_string(),
        verbs: strings(verbs),
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn to_info(r: &Row, version: &str) -> ResourceInfo {
    ResourceInfo {
        group: r.group.to_string(),
        version: version.to_string(),
        kind: r.kind.to_string(),
        list_kind: format!("{}List", r.kind),
        plural: r.plural.to_string(),
        singular: r.kind.to_ascii_lowercase(),
        short_names: strings(r.short_names),
        categories: categories(r),
        namespaced: r.namespaced,
        verbs: strings(r.verbs),
        subresources: r
            .subresources
            .iter()
            .map(|s| subresource(r, version, s))
            .collect(),
        schema_name: schema_name(r, version),
        returns_deleted_object: r.returns_deleted,
        custom: None,
        name_rule: name_rule(r),
        field_labels: field_labels_for(r.group, r.plural),
    }
}

/// The rule kube-apiserver applies to the names of a built-in resource.
fn name_rule(r: &Row) -> NameRule {
    match (r.group, r.plural) {
        ("", "namespaces") => NameRule::Label,
        ("", "services") => NameRule::Dns1035,
        // APIServices are named `<version>.<group>`: `v1.` for the core group.
        ("rbac.authorization.k8s.io" | "apiregistration.k8s.io", _) => NameRule::PathSegment,
        _ => NameRule::Subdomain,
    }
}

/// The built-in resources, in discovery order (a kind served at several
/// versions once per version, preferred first).
pub(super) fn resources() -> Vec<ResourceInfo> {
    ROWS.iter()
        .flat_map(|r| r.versions.iter().map(move |v| to_info(r, v)))
        .collect()
}

/// The gated resources `serves(group, version)` turns on.
pub(super) fn gated_resources(serves: impl Fn(&str, &str) -> bool) -> Vec<ResourceInfo> {
    GATED_ROWS
        .iter()
        .flat_map(|r| r.versions.iter().map(move |v| (r, *v)))
        .filter(|(r, v)| serves(r.group, v))
        .map(|(r, v)| to_info(r, v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find<'a>(all: &'a [ResourceInfo], group: &str, plural: &str) -> &'a ResourceInfo {
        all.iter()
            .find(|r| r.group == group && r.plural == plural)
            .unwrap()
    }

    #[test]
    fn names_and_schema_names() {
        let all = resources();
        let np = find(&all, "networking.k8s.io", "networkpolicies");
        assert_eq!(np.singular, "networkpolicy");
        assert_eq!(np.schema_name, "io.k8s.api.networking.v1.NetworkPolicy");
        let crb = find(&all, "rbac.authorization.k8s.io", "clusterrolebindings");
        assert_eq!(crb.schema_name, "io.k8s.api.rbac.v1.ClusterRoleBinding");
        assert!(!crb.namespaced);
        let ev = find(&all, "events.k8s.io", "events");
        assert_eq!(ev.schema_name, "io.k8s.api.events.v1.Event");
        assert_eq!(find(&all, "", "pods").schema_name, "io.k8s.api.core.v1.Pod");
    }

    #[test]
    fn scale_is_autoscaling_scale_and_status_is_parent_kind() {
        let all = resources();
        let deploy = find(&all, "apps", "deployments");
        let scale = deploy.subresource("scale").unwrap();
        assert_eq!(
            (scale.group.as_str(), scale.kind.as_str()),
            ("autoscaling", "Scale")
        );
        let status = deploy.subresource("status").unwrap();
        assert_eq!(
            (status.group.as_str(), status.kind.as_str()),
            ("apps", "Deployment")
        );
        assert!(!find(&all, "", "configmaps").has_subresource("status"));
    }

    #[test]
    fn deletes_return_the_object_where_kube_storage_does() {
        let all = resources();
        let returning: Vec<&str> = all
            .iter()
            .filter(|r| r.returns_deleted_object)
            .map(|r| r.plural.as_str())
            .collect();
        assert_eq!(
            returning,
            [
                "namespaces",
                "serviceaccounts",
                "services",
                "pods",
                "resourcequotas",
                "persistentvolumes",
                "persistentvolumeclaims",
                "podtemplates",
                "storageclasses",
                "csidrivers",
                "csinodes",
                "volumeattachments"
            ]
        );
    }

    #[test]
    fn verbs_and_categories_as_kube_lists_them() {
        let all = resources();
        assert!(!find(&all, "", "namespaces").has_verb("deletecollection"));
        // kube 1.32 serves it (tests/golden/answers/discovery/api-v1.json).
        assert!(find(&all, "", "services").has_verb("deletecollection"));
        assert!(find(&all, "", "nodes").has_verb("deletecollection"));
        assert_eq!(find(&all, "batch", "cronjobs").categories, ["all"]);
        assert!(find(&all, "", "configmaps").categories.is_empty());
        let in_all = all.iter().filter(|r| r.categories == ["all"]).count();
        assert_eq!(in_all, 11, "the HPA's two versions");
    }
}
