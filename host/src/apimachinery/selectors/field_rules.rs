//! Which field labels each built-in resource accepts in a `fieldSelector`,
//! transcribed from kube-apiserver's field label conversion funcs
//! (pkg/apis/*/v*/conversion.go), including the legacy aliases and the
//! kind-specific rejection messages. Kinds without a registered func fall
//! back to `runtime.DefaultMetaV1FieldSelectorConversion`.

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

/// One kind's conversion func: accepted labels and aliases.
#[derive(Debug)]
pub(crate) struct KindRules {
    accepted: &'static [&'static str],
    aliases: &'static [(&'static str, &'static str)],
    reject: Reject,
}

const META_NS: [&str; 2] = ["metadata.name", "metadata.namespace"];

const POD: KindRules = KindRules {
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
};

const CORE_EVENT: KindRules = KindRules {
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
};

const EVENTS_V1_EVENT: KindRules = KindRules {
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
};

const fn simple(accepted: &'static [&'static str]) -> KindRules {
    KindRules {
        accepted,
        aliases: &[],
        reject: Reject::NotSupported,
    }
}

const NODE: KindRules = simple(&["metadata.name", "spec.unschedulable"]);
const RC: KindRules = simple(&["metadata.name", "metadata.namespace", "status.replicas"]);
const NAMESPACE: KindRules = simple(&["status.phase", "metadata.name"]);
const SECRET: KindRules = simple(&["type", "metadata.namespace", "metadata.name"]);
const SERVICE: KindRules = simple(&[
    "metadata.namespace",
    "metadata.name",
    "spec.clusterIP",
    "spec.type",
]);
const CSR: KindRules = simple(&["metadata.name", "spec.signerName"]);
const JOB: KindRules = KindRules {
    accepted: &["metadata.name", "metadata.namespace", "status.successful"],
    aliases: &[],
    reject: Reject::Job,
};
const DEFAULT: KindRules = KindRules {
    accepted: &META_NS,
    aliases: &[],
    reject: Reject::DefaultMeta,
};

/// The API group with the legacy "core" spelling folded to "".
pub(crate) fn normalize_group(group: &str) -> &str {
    if group == "core" {
        ""
    } else {
        group
    }
}

/// The conversion rules of a built-in resource (plural name).
pub(crate) fn rules_for(group: &str, resource: &str) -> &'static KindRules {
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

impl KindRules {
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
        let r = rules_for("", "pods");
        assert_eq!(r.convert("status.phase"), Ok("status.phase"));
        assert_eq!(r.convert("spec.host"), Ok("spec.nodeName"));
        assert_eq!(
            r.convert("spec.foo"),
            Err("field label not supported: spec.foo".to_string())
        );
    }

    #[test]
    fn per_kind_rejections() {
        assert!(rules_for("", "nodes")
            .convert("metadata.namespace")
            .is_err());
        assert_eq!(
            rules_for("batch", "jobs").convert("spec.x"),
            Err("field label \"spec.x\" not supported for Job".to_string())
        );
        assert_eq!(
            rules_for("", "configmaps").convert("data.x"),
            Err(
                "\"data.x\" is not a known field selector: only \"metadata.name\", \
                 \"metadata.namespace\""
                    .to_string()
            )
        );
        assert!(rules_for("apps", "replicasets")
            .convert("status.replicas")
            .is_err());
    }

    #[test]
    fn events_v1_maps_regarding_to_core_names() {
        let r = rules_for("events.k8s.io", "events");
        assert_eq!(r.convert("regarding.name"), Ok("involvedObject.name"));
        assert!(r.convert("involvedObject.name").is_err());
        assert_eq!(rules_for("core", "events").convert("source"), Ok("source"));
    }
}
