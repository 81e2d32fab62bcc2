//! PersistentVolumeClaims (kube's `persistent_volume_claims.go`): each
//! counts under `persistentvolumeclaims` / `count/persistentvolumeclaims`
//! and charges its requested storage (whole bytes, or the allocated size
//! when larger) to `requests.storage`; with a storage class, both are also
//! charged to `<class>.storageclass.storage.k8s.io/<resource>`.

use serde_json::Value;

use crate::json;
use crate::quantity::Quantity;
use crate::resources::{self, ResourceList};

const CLAIMS: &str = "persistentvolumeclaims";
const STORAGE: &str = "requests.storage";
const COUNT: &str = "count/persistentvolumeclaims";
const STORAGE_CLASS_SUFFIX: &str = ".storageclass.storage.k8s.io/";
const BETA_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";

/// Whether a quota key is a claim resource, plain or by storage class.
pub(super) fn tracks(name: &str) -> bool {
    if [COUNT, CLAIMS, STORAGE].contains(&name) {
        return true;
    }
    [CLAIMS, STORAGE]
        .iter()
        .any(|r| name.ends_with(&format!("{STORAGE_CLASS_SUFFIX}{r}")))
}

/// The usage of one claim.
pub(super) fn usage(claim: &Value) -> ResourceList {
    let one = Quantity::from_units(1);
    let class = storage_class(claim);
    let mut usage = ResourceList::new();
    usage.insert(CLAIMS.to_string(), one);
    usage.insert(COUNT.to_string(), one);
    if !class.is_empty() {
        usage.insert(by_class(class, CLAIMS), one);
    }
    if let Some(storage) = storage_usage(claim) {
        usage.insert(STORAGE.to_string(), storage);
        if !class.is_empty() {
            usage.insert(by_class(class, STORAGE), storage);
        }
    }
    usage
}

fn by_class(class: &str, resource: &str) -> String {
    format!("{class}{STORAGE_CLASS_SUFFIX}{resource}")
}

/// The beta annotation, else `spec.storageClassName` (`GetPersistentVolumeClaimClass`).
fn storage_class(claim: &Value) -> &str {
    json::get_str(claim, &["metadata", "annotations", BETA_CLASS_ANNOTATION])
        .unwrap_or_else(|| json::str_or_empty(claim, &["spec", "storageClassName"]))
}

/// The requested storage in whole bytes, or the allocated storage when larger.
fn storage_usage(claim: &Value) -> Option<Quantity> {
    let requested = resources::from_json(json::get(claim, &["spec", "resources", "requests"]))
        .get("storage")?
        .round_up_to_units();
    let allocated = resources::from_json(json::get(claim, &["status", "allocatedResources"]))
        .get("storage")
        .map(Quantity::round_up_to_units);
    Some(match allocated {
        Some(a) if a > requested => a,
        _ => requested,
    })
}
