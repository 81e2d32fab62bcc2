//! storage.k8s.io's CSI kinds: CSIDriver's
//! defaults (SetDefaults_CSIDriver with 1.32's gates: `seLinuxMount: false`
//! as SELinuxMountReadWriteOncePod is on) and the main rules of
//! `ValidateCSIDriver`, `ValidateVolumeAttachment`
//! and `ValidateCSIStorageCapacity`.

use capstan_plugin_sdk::Cause;
use serde_json::{json, Value};

use super::validation as storage;
use crate::common::{self, list, text};
use crate::json::set_default;
use crate::selector;
use kube_rules::gofmt;

const FS_GROUP_POLICIES: [&str; 3] = ["File", "None", "ReadWriteOnceWithFSType"];
const LIFECYCLE_MODES: [&str; 2] = ["Persistent", "Ephemeral"];

pub fn csi_driver_defaults(object: &mut Value) {
    if !object.get("spec").is_some_and(Value::is_object) {
        return;
    }
    set_default(object, "/spec/attachRequired", json!(true));
    set_default(object, "/spec/podInfoOnMount", json!(false));
    if list(&object["spec"], "volumeLifecycleModes").is_empty() {
        object["spec"]["volumeLifecycleModes"] = json!(["Persistent"]);
    }
    set_default(object, "/spec/storageCapacity", json!(false));
    set_default(
        object,
        "/spec/fsGroupPolicy",
        json!("ReadWriteOnceWithFSType"),
    );
    set_default(object, "/spec/requiresRepublish", json!(false));
    set_default(object, "/spec/seLinuxMount", json!(false));
}

pub fn validate_csi_driver(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut causes = Vec::new();
    if let Some(policy) = spec.get("fsGroupPolicy").and_then(Value::as_str) {
        if !FS_GROUP_POLICIES.contains(&policy) {
            causes.push(common::not_supported(
                "spec.fsGroupPolicy",
                policy,
                &FS_GROUP_POLICIES,
            ));
        }
    }
    for mode in list(spec, "volumeLifecycleModes") {
        let mode = mode.as_str().unwrap_or_default();
        if !LIFECYCLE_MODES.contains(&mode) {
            causes.push(common::not_supported(
                "spec.volumeLifecycleModes",
                mode,
                &LIFECYCLE_MODES,
            ));
        }
    }
    let Some(old) = old else {
        return causes;
    };
    let attach = |o: &Value| o.pointer("/spec/attachRequired").cloned();
    if attach(object) != attach(old) {
        // kube names the field "attachedRequired" here.
        let rendered = gofmt::scalar(object.pointer("/spec/attachRequired"));
        causes.push(common::immutable("spec.attachedRequired", &rendered));
    }
    let modes = |o: &Value| o.pointer("/spec/volumeLifecycleModes").cloned();
    if modes(object) != modes(old) {
        let rendered = gofmt::string_slice(object.pointer("/spec/volumeLifecycleModes"));
        causes.push(common::immutable("spec.volumeLifecycleModes", &rendered));
    }
    causes
}

/// `ValidateVolumeAttachment`, then on create `ValidateVolumeAttachmentV1`
/// and on update a spec that never changes.
pub fn validate_volume_attachment(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut causes = Vec::new();
    let attacher = text(spec, "attacher");
    if attacher.is_empty() {
        causes.push(common::required("spec.attacher", ""));
    }
    let source = spec.get("source").unwrap_or(&Value::Null);
    let inline = source.get("inlineVolumeSpec").is_some_and(|s| !s.is_null());
    let pv = source.get("persistentVolumeName").and_then(Value::as_str);
    let exactly_one = "must specify exactly one of inlineVolumeSpec and persistentVolumeName";
    match (inline, pv) {
        (false, None) => causes.push(common::required("spec.source", exactly_one)),
        (true, Some(_)) => causes.push(common::forbidden("spec.source", exactly_one)),
        (false, Some("")) => causes.push(common::required(
            "spec.source.persistentVolumeName",
            "must specify non empty persistentVolumeName",
        )),
        _ => {}
    }
    let node = text(spec, "nodeName");
    common::invalid_each(
        &mut causes,
        "spec.nodeName",
        node,
        kube_rules::dns1123_subdomain(node),
    );
    match old {
        None => {
            causes.extend(storage::csi_driver_name(attacher, "spec.attacher"));
            if let Some(pv) = pv {
                let field = "spec.source.persistentVolumeName";
                common::invalid_each(&mut causes, field, pv, kube_rules::dns1123_subdomain(pv));
            }
        }
        Some(old) if !common::same(Some(spec), old.get("spec")) => {
            causes.push(common::immutable("spec", &render_attachment_spec(spec)));
        }
        Some(_) => {}
    }
    causes
}

/// `storage.VolumeAttachmentSpec` as `%#v` (a set pointer's address is a
/// placeholder).
fn render_attachment_spec(spec: &Value) -> String {
    let source = spec.get("source").unwrap_or(&Value::Null);
    let pointer = |key: &str, type_name: &str| match source.get(key).filter(|v| !v.is_null()) {
        Some(_) => format!("(*{type_name})(0xc000000000)"),
        None => format!("(*{type_name})(nil)"),
    };
    format!(
        "storage.VolumeAttachmentSpec{{Attacher:{}, Source:storage.VolumeAttachmentSource{{\
         PersistentVolumeName:{}, InlineVolumeSpec:{}}}, NodeName:{}}}",
        gofmt::quote(text(spec, "attacher")),
        pointer("persistentVolumeName", "string"),
        pointer("inlineVolumeSpec", "core.PersistentVolumeSpec"),
        gofmt::quote(text(spec, "nodeName")),
    )
}

/// `ValidateCSIStorageCapacity`, and on update its immutable fields.
pub fn validate_csi_storage_capacity(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let class = text(object, "storageClassName");
    let topology = object.get("nodeTopology").filter(|t| !t.is_null());
    let mut causes = Vec::new();
    if let Some(topology) = topology {
        causes.extend(selector::validate(topology, "nodeTopology", old.is_some()).0);
    }
    common::invalid_each(
        &mut causes,
        "storageClassName",
        class,
        kube_rules::dns1123_subdomain(class),
    );
    if let Some(capacity) = object.get("capacity").and_then(Value::as_str) {
        if capacity.starts_with('-') && !capacity.trim_start_matches(['-', '0', '.']).is_empty() {
            causes.push(common::invalid_str("capacity", capacity, common::NEGATIVE));
        }
    }
    let Some(old) = old else {
        return causes;
    };
    if !common::same(topology, old.get("nodeTopology")) {
        let shown = topology.map_or_else(|| gofmt::scalar(None), gofmt::label_selector);
        causes.push(common::immutable("nodeTopology", &shown));
    }
    if text(old, "storageClassName") != class {
        causes.push(common::immutable("storageClassName", &gofmt::quote(class)));
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csi_driver_defaults_are_kubes() {
        let mut driver = json!({"metadata": {"name": "d"}, "spec": {"attachRequired": false}});
        csi_driver_defaults(&mut driver);
        assert_eq!(
            driver["spec"],
            json!({"attachRequired": false, "podInfoOnMount": false,
            "volumeLifecycleModes": ["Persistent"], "storageCapacity": false,
            "fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": false,
            "seLinuxMount": false})
        );
    }

    #[test]
    fn a_csi_driver_spec_change_counts_from_no_generation() {
        let resource = capstan_plugin_sdk::strategy::StrategyResource {
            group: "storage.k8s.io".into(),
            resource: "csidrivers".into(),
            ..Default::default()
        };
        let mut created = json!({"metadata": {"name": "d"}, "spec": {}});
        crate::prepare::for_create(&resource, &mut created);
        assert!(created["metadata"].get("generation").is_none());
        let mut updated = created.clone();
        updated["spec"]["podInfoOnMount"] = json!(true);
        crate::prepare::for_update(&resource, &mut updated, &created);
        assert_eq!(updated["metadata"]["generation"], 1);
    }

    #[test]
    fn attach_required_is_immutable() {
        let mut old = json!({"spec": {}});
        csi_driver_defaults(&mut old);
        let mut new = old.clone();
        new["spec"]["attachRequired"] = json!(false);
        let causes = validate_csi_driver(&new, Some(&old));
        assert_eq!(causes[0].field, "spec.attachedRequired");
        assert_eq!(
            causes[0].message,
            "Invalid value: false: field is immutable"
        );
    }

    #[test]
    fn volume_attachment_needs_one_source() {
        let va = json!({"spec": {"attacher": "csi.example.com", "nodeName": "n1", "source": {}}});
        let causes = validate_volume_attachment(&va, None);
        assert_eq!(
            causes[0].message,
            "Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName"
        );
    }
}
