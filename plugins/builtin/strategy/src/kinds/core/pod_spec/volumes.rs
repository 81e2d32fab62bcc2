//! `ValidateVolumes`: names (DNS labels, unique), exactly one source, and
//! the required fields of the common sources.

use std::collections::HashSet;

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common::{self, text};

/// Volume sources in the order kube checks them.
const SOURCES: [&str; 29] = [
    "emptyDir",
    "hostPath",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "flocker",
    "persistentVolumeClaim",
    "rbd",
    "cinder",
    "cephfs",
    "quobyte",
    "downwardAPI",
    "fc",
    "flexVolume",
    "configMap",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "storageos",
    "projected",
    "scaleIO",
    "csi",
    "ephemeral",
];

/// The pod's volumes: the causes, and the names of the valid ones.
pub fn volumes(spec: &Value, at: &str, causes: &mut Vec<Cause>) -> HashSet<String> {
    let mut names = HashSet::new();
    for (i, volume) in common::list(spec, "volumes").iter().enumerate() {
        let path = format!("{at}.volumes[{i}]");
        let mut found = source(volume, &path);
        let name = text(volume, "name");
        let name_field = format!("{path}.name");
        if name.is_empty() {
            found.push(common::required(&name_field, ""));
        } else {
            common::invalid_each(
                &mut found,
                &name_field,
                name,
                kube_rules::dns1123_label(name),
            );
        }
        if names.contains(name) {
            found.push(common::duplicate(
                &name_field,
                &kube_rules::gofmt::quote(name),
            ));
        }
        if found.is_empty() {
            names.insert(name.to_string());
        }
        causes.extend(found);
    }
    names
}

fn source(volume: &Value, path: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut count = 0;
    let set = SOURCES
        .iter()
        .chain(["image"].iter())
        .filter(|s| volume.get(**s).is_some_and(|v| !v.is_null()));
    for kind in set {
        let at = format!("{path}.{kind}");
        if count > 0 {
            causes.push(common::forbidden(
                &at,
                "may not specify more than 1 volume type",
            ));
            continue;
        }
        count += 1;
        required_fields(kind, &volume[*kind], &at, &mut causes);
    }
    if count == 0 {
        causes.push(common::required(path, "must specify a volume type"));
    }
    causes
}

/// The fields each common source must name.
fn required_fields(kind: &str, source: &Value, at: &str, causes: &mut Vec<Cause>) {
    let needs: &[&str] = match kind {
        "hostPath" => &["path"],
        "secret" => &["secretName"],
        "configMap" => &["name"],
        "persistentVolumeClaim" => &["claimName"],
        "nfs" => &["server", "path"],
        "gitRepo" => &["repository"],
        "csi" => &["driver"],
        _ => &[],
    };
    for key in needs {
        if text(source, key).is_empty() {
            causes.push(common::required(&format!("{at}.{key}"), ""));
            if kind == "hostPath" {
                return;
            }
        }
    }
    if kind == "nfs" && !text(source, "path").starts_with('/') {
        let path = text(source, "path");
        causes.push(common::invalid_str(
            &format!("{at}.path"),
            path,
            "must be an absolute path",
        ));
    }
    for mode_key in ["defaultMode"] {
        if let Some(mode) = source.get(mode_key).and_then(Value::as_i64) {
            if !(0..=0o777).contains(&mode) {
                let detail = "must be a number between 0 and 0777 (octal), both inclusive";
                causes.push(common::invalid(
                    &format!("{at}.{mode_key}"),
                    &mode.to_string(),
                    detail,
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn one_source_per_volume_and_unique_names() {
        let spec = json!({"volumes": [{"name": "v", "emptyDir": {}, "configMap": {"name": "x"}},
            {"name": "w", "hostPath": {}}, {"name": "u"}]});
        let mut causes = Vec::new();
        let names = volumes(&spec, "spec", &mut causes);
        let shown: Vec<String> = causes
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        assert_eq!(
            shown,
            [
                "spec.volumes[0].configMap: Forbidden: may not specify more than 1 volume type",
                "spec.volumes[1].hostPath.path: Required value",
                "spec.volumes[2]: Required value: must specify a volume type",
            ]
        );
        assert!(names.is_empty());
    }
}
