//! The paths of the v2 document: kube's own (`kube_openapi`) for `/api/`,
//! `/apis/`, `/version/`, ..., each built-in group and group-version the
//! catalogue serves, and kube's CRD builder's for custom resources, their
//! parameters shared as kube-openapi's `deduplicateParameters` shares them
//! (`#/parameters/<name>-<hash>`: every one but `name`, `dryRun`,
//! `fieldValidation` and the bodies of a kind's own schema).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::super::kube_openapi::{kube_paths, KubePaths};
use super::super::openapi_paths::custom_resource_paths;
use crate::catalogue::{gv_path, Catalogue};

/// A generated path item with kube's shared parameters as `$ref`s.
fn shared(item: Value, kube: &KubePaths) -> Value {
    let share = |params: &mut Value| {
        for p in params.as_array_mut().into_iter().flatten() {
            if let Some(r) = kube.shared(p) {
                *p = r;
            }
        }
    };
    let mut item = item;
    for (key, value) in item.as_object_mut().into_iter().flatten() {
        match key.as_str() {
            "parameters" => share(value),
            _ => {
                if let Some(params) = value.get_mut("parameters") {
                    share(params)
                }
            }
        }
    }
    item
}

/// The paths of everything the catalogue serves, sorted.
pub(super) fn all_paths(cat: &Catalogue) -> Map<String, Value> {
    let kube = kube_paths();
    let mut paths: BTreeMap<String, Value> = BTreeMap::new();
    let kube_items = |items: &mut BTreeMap<String, Value>, found: Vec<(&String, &Value)>| {
        items.extend(found.into_iter().map(|(p, i)| (p.clone(), i.clone())));
    };
    kube_items(&mut paths, kube.top_level().collect());
    for (group, versions) in cat.groups() {
        let mut builtin_group = false;
        for version in versions {
            let resources = cat.resources_in(&group, &version);
            if resources.iter().all(|r| r.custom.is_none()) {
                builtin_group = true;
                kube_items(
                    &mut paths,
                    kube.group_version(&gv_path(&group, &version)).collect(),
                );
            }
            for r in resources.iter().filter(|r| r.custom.is_some()) {
                for (path, item) in custom_resource_paths(r, kube) {
                    paths.insert(path, shared(item, kube));
                }
            }
        }
        if builtin_group {
            if let Some(item) = kube.group(&group) {
                paths.insert(format!("/apis/{group}/"), item.clone());
            }
        }
    }
    paths.into_iter().collect()
}
