//! Built-in kinds served at more than one version: the version each is
//! stored in and the function converting an object between its versions
//! (kube's conversion through the internal version, done directly). Reads
//! show the stored object in the version a request names; writes store it
//! in the storage version (`custom::versions` calls these, as it calls a CRD's
//! converter). Every other built-in is served at one version, as stored.

mod hpa;
mod internal;

pub use internal::{add_versioned_annotations, internal_metadata};

use serde_json::{json, Value};

use super::ResourceInfo;
use crate::apimachinery::status::{ApiError, ApiResult};

/// One kind served at several versions.
pub struct Conversion {
    group: &'static str,
    plural: &'static str,
    /// The version its objects are stored in.
    storage_version: &'static str,
    /// The object, in any served version, in the named version.
    convert: fn(Value, &str) -> Result<Value, String>,
}

/// The table: one row per kind.
const CONVERSIONS: &[Conversion] = &[
    Conversion {
        group: "autoscaling",
        plural: "horizontalpodautoscalers",
        storage_version: "v2",
        convert: hpa::convert,
    },
    Conversion {
        group: "admissionregistration.k8s.io",
        plural: "mutatingadmissionpolicies",
        storage_version: "v1beta1",
        convert: same_fields,
    },
    Conversion {
        group: "admissionregistration.k8s.io",
        plural: "mutatingadmissionpolicybindings",
        storage_version: "v1beta1",
        convert: same_fields,
    },
];

/// Versions whose types have the same fields (only apiVersion changes).
fn same_fields(obj: Value, _version: &str) -> Result<Value, String> {
    Ok(obj)
}

/// The conversion of a built-in served at several versions.
pub fn of(res: &ResourceInfo) -> Option<&'static Conversion> {
    if res.custom.is_some() {
        return None;
    }
    CONVERSIONS
        .iter()
        .find(|c| c.group == res.group && c.plural == res.plural)
}

/// A built-in's written object as kube's decoder leaves it: a kind served
/// at several versions goes through its storage version and back (kube
/// decodes every version into its internal one), so what only the
/// conversion fills in is there (autoscaling/v1's implicit 80% CPU
/// target). Other objects are returned unchanged.
pub fn as_decoded(res: &ResourceInfo, obj: Value) -> ApiResult<Value> {
    let Some(conversion) = of(res) else {
        return Ok(obj);
    };
    let written = res.api_version();
    if obj.get("apiVersion").and_then(Value::as_str) != Some(written.as_str()) {
        return Ok(obj);
    }
    let stored = conversion.to_api_version(obj, &conversion.storage_api_version())?;
    conversion.to_api_version(stored, &written)
}

impl Conversion {
    /// `group/version` of the storage version.
    pub fn storage_api_version(&self) -> String {
        super::group_version(self.group, self.storage_version)
    }

    /// `obj` as `api_version` (`group/version`) shows it; unchanged when it already is.
    pub fn to_api_version(&self, obj: Value, api_version: &str) -> ApiResult<Value> {
        if obj.get("apiVersion").and_then(Value::as_str) == Some(api_version) {
            return Ok(obj);
        }
        let version = api_version.rsplit('/').next().unwrap_or(api_version);
        let mut converted = (self.convert)(obj, version)
            .map_err(|e| ApiError::internal(format!("converting to {api_version}: {e}")))?;
        if let Some(fields) = converted.as_object_mut() {
            fields.insert("apiVersion".into(), json!(api_version));
        }
        Ok(converted)
    }
}

#[cfg(test)]
mod tests {
    use super::super::Catalogue;
    use super::*;

    #[test]
    fn only_the_hpa_converts_and_it_is_stored_in_v2() {
        let cat = Catalogue::builtin();
        let v1 = cat
            .lookup("autoscaling", "v1", "horizontalpodautoscalers")
            .unwrap();
        let conversion = of(v1).unwrap();
        assert_eq!(conversion.storage_api_version(), "autoscaling/v2");
        assert!(of(cat.lookup("apps", "v1", "deployments").unwrap()).is_none());
    }

    #[test]
    fn a_v1_hpa_without_a_target_is_decoded_with_kubes_implicit_80_percent() {
        let cat = Catalogue::builtin();
        let v1 = cat
            .lookup("autoscaling", "v1", "horizontalpodautoscalers")
            .unwrap();
        let hpa = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
                         "metadata": {"name": "h"}, "spec": {"maxReplicas": 3,
                         "scaleTargetRef": {"kind": "Deployment", "name": "d"}}});
        let decoded = as_decoded(v1, hpa).unwrap();
        assert_eq!(decoded["apiVersion"], "autoscaling/v1");
        assert_eq!(decoded["spec"]["targetCPUUtilizationPercentage"], 80);
        assert_eq!(decoded["spec"]["maxReplicas"], 3);
        let deployments = cat.lookup("apps", "v1", "deployments").unwrap();
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment"});
        assert_eq!(
            as_decoded(deployments, deployment.clone()).unwrap(),
            deployment
        );
    }
}
