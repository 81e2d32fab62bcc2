//! Which field labels each built-in resource accepts in a `fieldSelector`,
//! transcribed from kube-apiserver's field label conversion funcs
//! (pkg/apis/*/v*/conversion.go), including the legacy aliases and the
//! kind-specific rejection messages, and where each label's value is read
//! (`field_values.rs`). Kinds without a registered func fall back to
//! `runtime.DefaultMetaV1FieldSelectorConversion`. Each catalogue entry
//! carries its kind's table (`ResourceInfo::field_labels`).

use super::field_values::{self, Values};

/// How a kind words the error for an unsupported label.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Reject {
    /// `field label not supported: <label>`
    NotSupported,
    /// `field label "<label>" not supported for Job`
    Job,
    /// `"<label>" is not a known field selector: only "metadata.name", "metadata.namespace"`
    DefaultMeta,
}

/// One kind's field labels: its conversion func (accepted labels and
/// aliases, the rejection's wording) and where the values are read.
pub struct FieldLabels {
    accepted: &'static [&'static str],
    aliases: &'static [(&'static str, &'static str)],
    reject: Reject,
    pub(super) values: Values,
}

impl std::fmt::Debug for FieldLabels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FieldLabels")
            .field("accepted", &self.accepted)
            .finish()
    }
}

const META_NS: [&str; 2] = ["metadata.name", "metadata.namespace"];

const POD: FieldLabels = FieldLabels {
    accepted: &[
        "metadata.name",
        "metadata.namespace",
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.podIPs",
        "status.nominatedNodeName",
    ],
    aliases: &[("spec.host", "spec.nodeName")],
    reject: Reject::NotSupported,
    values: field_values::pod,
};

const CORE_EVENT: FieldLabels = FieldLabels {
    accepted: &[
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
        "metadata.namespace",
        "metadata.name",
    ],
    aliases: &[],
    reject: Reject::NotSupported,
    values: field_values::event,
};

const EVENTS_V1_EVENT: FieldLabels = FieldLabels {
    accepted: &[
        "reason",
        "source",
        "type",
        "metadata.namespace",
        "metadata.name",
    ],
    aliases: &[
        ("regarding.kind", "involvedObject.kind"),
        ("regarding.namespace", "involvedObject.namespace"),
        ("regarding.name", "involvedObject.name"),
        ("regarding.uid", "involvedObject.uid"),
        ("regarding.apiVersion", "involvedObject.apiVersion"),
        (
            "regarding.resourceVersion",
            "involvedObject.resourceVersion",
        ),
        ("regarding.fieldPath", "involvedObject.fieldPath"),
        ("reportingController", "reportingComponent"),
    ],
    reject: Reject::NotSupported,
    values: field_values::event,
};

const fn simple(accepted: &'static [&'static str], values: Values) -> FieldLabels {
    FieldLabels {
        accepted,
        aliases: &[],
        reject: Reject::NotSupported,
        values,
    }
}

const NODE: FieldLabels = simple(&["metadata.name", "spec.unschedulable"], field_values::node);
const RC: FieldLabels = simple(
    &["metadata.name", "metadata.namespace", "status.replicas"],
    field_values::replication_controller,
);
const NAMESPACE: FieldLabels = simple(&["status.phase", "metadata.name"], field_values::none);
const SECRET: FieldLabels = simple(
    &["type", "metadata.namespace", "metadata.name"],
    field_values::none,
);
const SERVICE: FieldLabels = simple(
    &[
        "metadata.namespace",
        "metadata.name",
        "spec.clusterIP",
        "spec.type",
    ],
    field_values::none,
);
const CSR: FieldLabels = simple(&["metadata.name", "spec.signerName"], field_values::none);
const JOB: FieldLabels = FieldLabels {
    accepted: &["metadata.name", "metadata.namespace", "status.successful"],
    aliases: &[],
    reject: Reject::Job,
    values: field_values::job,
};
/// Kinds without a conversion func of their own (and custom resources,
/// whose CRD's `selectableFields` are checked instead).
pub const DEFAULT: FieldLabels = FieldLabels {
    accepted: &META_NS,
    aliases: &[],
    reject: Reject::DefaultMeta,
    values: field_values::none,
};

/// The API group with the legacy "core" spelling folded to "".
pub(crate) fn normalize_group(group: &str) -> &str {
    if group == "core" {
        ""
    } else {
        group
    }
}

/// The field labels of a built-in resource (plural name): what the
/// catalogue puts in its entry.
pub fn field_labels_for(group: &str, resource: &str) -> &'static FieldLabels {
    match (normalize_group(group), resource) {
        ("", "pods") => &POD,
        ("", "nodes") => &NODE,
        ("", "replicationcontrollers") => &RC,
        ("", "events") => &CORE_EVENT,
        ("", "namespaces") => &NAMESPACE,
        ("", "secrets") => &SECRET,
        ("", "services") => &SERVICE,
        ("events.k8s.io", "events") => &EVENTS_V1_EVENT,
        ("batch", "jobs") => &JOB,
        ("certificates.k8s.io", "certificatesigningrequests") => &CSR,
        _ => &DEFAULT,
    }
}

impl FieldLabels {
    /// The canonical label a client label converts to, or kube's error.
    pub(crate) fn convert(&self, label: &str) -> Result<&str, String> {
        if let Some(found) = self.accepted.iter().find(|a| **a == label) {
            return Ok(found);
        }
        if let Some((_, to)) = self.aliases.iter().find(|(from, _)| *from == label) {
            return Ok(to);
        }
        Err(self.reject_message(label))
    }

    /// The canonical label, or the label itself when not convertible.
    pub(crate) fn canonical<'a>(&self, label: &'a str) -> &'a str {
        match self.aliases.iter().find(|(from, _)| *from == label) {
            Some((_, to)) => to,
            None => label,
        }
    }

    fn reject_message(&self, label: &str) -> String {
        match self.reject {
            Reject::NotSupported => format!("field label not supported: {label}"),
            Reject::Job => format!("field label \"{label}\" not supported for Job"),
            Reject::DefaultMeta => format!(
                "\"{label}\" is not a known field selector: only \"metadata.name\", \
                 \"metadata.namespace\""
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pods_accept_documented_fields_and_alias() {
        let r = field_labels_for("", "pods");
        assert_eq!(r.convert("status.phase"), Ok("status.phase"));
        assert_eq!(r.convert("spec.host"), Ok("spec.nodeName"));
        assert_eq!(
            r.convert("spec.foo"),
            Err("field label not supported: spec.foo".to_string())
        );
    }

    #[test]
    fn per_kind_rejections() {
        assert!(field_labels_for("", "nodes")
            .convert("metadata.namespace")
            .is_err());
        assert_eq!(
            field_labels_for("batch", "jobs").convert("spec.x"),
            Err("field label \"spec.x\" not supported for Job".to_string())
        );
        assert_eq!(
            field_labels_for("", "configmaps").convert("data.x"),
            Err(
                "\"data.x\" is not a known field selector: only \"metadata.name\", \
                 \"metadata.namespace\""
                    .to_string()
            )
        );
        assert!(field_labels_for("apps", "replicasets")
            .convert("status.replicas")
            .is_err());
    }

    #[test]
    fn events_v1_maps_regarding_to_core_names() {
        let r = field_labels_for("events.k8s.io", "events");
        assert_eq!(r.convert("regarding.name"), Ok("involvedObject.name"));
        assert!(r.convert("involvedObject.name").is_err());
        assert_eq!(
            field_labels_for("core", "events").convert("source"),
            Ok("source")
        );
    }
}
