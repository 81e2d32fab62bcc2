//! The printers of storage.k8s.io's StorageClasses and CSI kinds (CSIDriver, CSINode,
//! VolumeAttachment), as kube's printCSIDriver, printCSINode, ...
//! write them. CSIStorageCapacity has none here: kube has a printer for it, but its REST prints
//! with the default table convertor (Name, Created At).

use crate::table::access::{age, flag, list, map, name, non_empty, text};
use crate::table::columns;
use crate::table::columns::{int, text as column, AGE, NAME};
use crate::table::Column;
use chrono::{DateTime, Utc};
use serde_json::Value;

/// A boolean column.
pub(crate) const fn boolean(name: &'static str, description: &'static str) -> Column {
    Column {
        name,
        type_: "boolean",
        format: "",
        description,
        priority: 0,
    }
}

pub(crate) fn csi_driver_columns() -> Vec<Column> {
    vec![
        NAME,
        boolean("AttachRequired", "attachRequired indicates this CSI volume driver requires an attach operation (because it implements the CSI ControllerPublishVolume() method), and that the Kubernetes attach detach controller should call the attach volume interface which checks the volumeattachment status and waits until the volume is attached before proceeding to mounting. The CSI external-attacher coordinates with CSI volume driver and updates the volumeattachment status when the attach operation is complete. If the CSIDriverRegistry feature gate is enabled and the value is specified to false, the attach operation will be skipped. Otherwise the attach operation will be called.\n\nThis field is immutable."),
        boolean("PodInfoOnMount", "podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations, if set to true. If set to false, pod information will not be passed on mount. Default is false.\n\nThe CSI driver specifies podInfoOnMount as part of driver deployment. If true, Kubelet will pass pod information as VolumeContext in the CSI NodePublishVolume() calls. The CSI driver is responsible for parsing and validating the information passed in as VolumeContext.\n\nThe following VolumeContext will be passed if podInfoOnMount is set to true. This list might grow, but the prefix will be used. \"csi.storage.k8s.io/pod.name\": pod.Name \"csi.storage.k8s.io/pod.namespace\": pod.Namespace \"csi.storage.k8s.io/pod.uid\": string(pod.UID) \"csi.storage.k8s.io/ephemeral\": \"true\" if the volume is an ephemeral inline volume\n                                defined by a CSIVolumeSource, otherwise \"false\"\n\n\"csi.storage.k8s.io/ephemeral\" is a new feature in Kubernetes 1.16. It is only required for drivers which support both the \"Persistent\" and \"Ephemeral\" VolumeLifecycleMode. Other drivers can leave pod info disabled and/or ignore this field. As Kubernetes 1.15 doesn't support this field, drivers can only support one mode when deployed on such a cluster and the deployment determines which mode that is, for example via a command line parameter of the driver.\n\nThis field was immutable in Kubernetes < 1.29 and now is mutable."),
        boolean("StorageCapacity", "storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity information, if set to true.\n\nThe check can be enabled immediately when deploying a driver. In that case, provisioning new volumes with late binding will pause until the driver deployment has published some suitable CSIStorageCapacity object.\n\nAlternatively, the driver can be deployed with the field unset or false and it can be flipped later when storage capacity information has been published.\n\nThis field was immutable in Kubernetes <= 1.22 and now is mutable."),
        column("TokenRequests", "tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication. Kubelet will pass the tokens in VolumeContext in the CSI NodePublishVolume calls. The CSI driver should parse and validate the following VolumeContext: \"csi.storage.k8s.io/serviceAccount.tokens\": {\n  \"<audience>\": {\n    \"token\": <token>,\n    \"expirationTimestamp\": <expiration timestamp in RFC3339>,\n  },\n  ...\n}\n\nNote: Audience in each TokenRequest should be different and at most one token is empty string. To receive a new token after expiry, RequiresRepublish can be used to trigger NodePublishVolume periodically."),
        boolean("RequiresRepublish", "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume. This field defaults to false.\n\nNote: After a successful initial NodePublishVolume call, subsequent calls to NodePublishVolume should only update the contents of the volume. New mount points will not be seen by a running container."),
        column("Modes", "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports. The default if the list is empty is \"Persistent\", which is the usage defined by the CSI specification and implemented in Kubernetes via the usual PV/PVC mechanism.\n\nThe other mode is \"Ephemeral\". In this mode, volumes are defined inline inside the pod spec with CSIVolumeSource and their lifecycle is tied to the lifecycle of that pod. A driver has to be aware of this because it is only going to get a NodePublishVolume call for such a volume.\n\nFor more information about implementing this mode, see https://kubernetes-csi.github.io/docs/ephemeral-local-volumes.html A driver can support one or more of these modes and more modes may be added in the future.\n\nThis field is beta. This field is immutable."),
        AGE,
    ]
}

/// A boolean at `pointer`, `unset` when absent.
fn flag_or(obj: &Value, pointer: &str, unset: bool) -> Value {
    Value::from(
        obj.pointer(pointer)
            .and_then(Value::as_bool)
            .unwrap_or(unset),
    )
}

pub(crate) fn csi_driver_row(driver: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let modes: Vec<&str> = list(driver, "/spec/volumeLifecycleModes")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let token_requests = match driver.pointer("/spec/tokenRequests") {
        Some(Value::Array(all)) => all
            .iter()
            .map(|t| text(t, "/audience"))
            .collect::<Vec<_>>()
            .join(","),
        _ => "<unset>".to_string(),
    };
    vec![
        name(driver),
        flag_or(driver, "/spec/attachRequired", true),
        flag_or(driver, "/spec/podInfoOnMount", false),
        flag_or(driver, "/spec/storageCapacity", false),
        Value::from(token_requests),
        flag_or(driver, "/spec/requiresRepublish", false),
        Value::from(if modes.is_empty() {
            "<none>".to_string()
        } else {
            modes.join(",")
        }),
        age(driver, now),
    ]
}

pub(crate) fn csi_node_columns() -> Vec<Column> {
    let drivers = "Drivers indicates the number of CSI drivers registered on the node";
    vec![NAME, int("Drivers", drivers), AGE]
}

pub(crate) fn csi_node_row(node: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let drivers = list(node, "/spec/drivers").len() as i64;
    vec![name(node), Value::from(drivers), age(node, now)]
}

pub(crate) fn volume_attachment_columns() -> Vec<Column> {
    let mut attacher = column("Attacher", "attacher indicates the name of the volume driver that MUST handle this request. This is the name returned by GetPluginName().");
    attacher.format = "name";
    vec![
        NAME,
        attacher,
        column("PV", "persistentVolumeName represents the name of the persistent volume to attach."),
        column("Node", "nodeName represents the node that the volume should be attached to."),
        boolean("Attached", "attached indicates the volume is successfully attached. This field must only be set by the entity completing the attach operation, i.e. the external-attacher."),
        AGE,
    ]
}

pub(crate) fn volume_attachment_row(va: &Value, now: DateTime<Utc>) -> Vec<Value> {
    vec![
        name(va),
        Value::from(text(va, "/spec/attacher")),
        Value::from(non_empty(va, "/spec/source/persistentVolumeName").unwrap_or("")),
        Value::from(text(va, "/spec/nodeName")),
        flag_or(va, "/status/attached", false),
        age(va, now),
    ]
}

pub(crate) fn storage_class_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text("Provisioner", "Volume plugin that provisions volumes."),
        columns::text("ReclaimPolicy", "Reclaim policy of provisioned volumes."),
        columns::text(
            "VolumeBindingMode",
            "When volumes are bound and provisioned.",
        ),
        columns::text("AllowVolumeExpansion", "Whether volumes may be expanded."),
        columns::AGE,
    ]
}

fn is_default_class(sc: &Value) -> bool {
    let annotations = map(sc, "/metadata/annotations");
    let is_true =
        |key: &str| annotations.and_then(|a| a.get(key)).and_then(Value::as_str) == Some("true");
    is_true("storageclass.kubernetes.io/is-default-class")
        || is_true("storageclass.beta.kubernetes.io/is-default-class")
}

pub(crate) fn storage_class_row(sc: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let mut shown_name = text(sc, "/metadata/name").to_string();
    if is_default_class(sc) {
        shown_name.push_str(" (default)");
    }
    vec![
        Value::from(shown_name),
        Value::from(text(sc, "/provisioner")),
        Value::from(non_empty(sc, "/reclaimPolicy").unwrap_or("Delete")),
        Value::from(non_empty(sc, "/volumeBindingMode").unwrap_or("Immediate")),
        Value::from(flag(sc, "/allowVolumeExpansion")),
        age(sc, now),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn csi_driver_unset_fields_print_kubes_defaults() {
        let driver = json!({"metadata": {"name": "d"}, "spec": {}});
        let row = csi_driver_row(&driver, Utc::now());
        assert_eq!(
            &row[1..7],
            &[
                json!(true),
                json!(false),
                json!(false),
                json!("<unset>"),
                json!(false),
                json!("<none>")
            ]
        );
        let driver = json!({"metadata": {"name": "d"}, "spec": {
            "attachRequired": false, "tokenRequests": [{"audience": "a"}, {"audience": "b"}],
            "volumeLifecycleModes": ["Persistent", "Ephemeral"]}});
        let row = csi_driver_row(&driver, Utc::now());
        assert_eq!(
            (&row[1], &row[4], &row[6]),
            (&json!(false), &json!("a,b"), &json!("Persistent,Ephemeral"))
        );
    }
}

#[cfg(test)]
mod storage_class_tests {
    use super::*;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        crate::table::at("2024-01-03T00:00:00Z")
    }

    #[test]
    fn default_storage_class() {
        let sc = json!({"metadata": {"name": "standard", "annotations":
                         {"storageclass.kubernetes.io/is-default-class": "true"}},
                        "provisioner": "rancher.io/local-path",
                        "volumeBindingMode": "WaitForFirstConsumer"});
        assert_eq!(
            storage_class_row(&sc, now())[..5],
            [
                json!("standard (default)"),
                json!("rancher.io/local-path"),
                json!("Delete"),
                json!("WaitForFirstConsumer"),
                json!(false)
            ]
        );
    }
}
