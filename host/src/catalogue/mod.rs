//! The resource catalogue: one entry per served resource (the built-ins,
//! and each served version of every Established CRD: `live.rs` swaps them in
//! and out at run time), the OpenAPI component schemas that describe them,
//! and lookups by plural or kind. Discovery documents, OpenAPI documents and
//! server-side field validation are all derived from it (see the submodules).

mod builtin;
pub mod conversion;
pub mod custom;
pub mod discovery;
pub mod field_validation;
pub mod gates;
mod go_decode;
pub mod go_encoding;
mod kube_openapi;
pub mod live;
pub mod openapi;
mod openapi_paths;
pub mod openapi_v2;
pub mod policy_bundle;
pub mod policy_report;
pub(crate) mod schemas;
pub mod type_check;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

/// A subresource of a resource, such as `status` or `scale`.
#[derive(Clone, Debug)]
pub struct Subresource {
    /// "status" or "scale".
    pub name: String,
    /// Group of the kind this subresource accepts and returns.
    pub group: String,
    /// Version of the kind this subresource accepts and returns.
    pub version: String,
    /// Kind: the parent kind for status, autoscaling/v1 Scale for scale.
    pub kind: String,
    pub verbs: Vec<String>,
}

/// Everything the server knows about one resource of one group-version.
#[derive(Clone, Debug)]
pub struct ResourceInfo {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub list_kind: String,
    pub plural: String,
    pub singular: String,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub namespaced: bool,
    pub verbs: Vec<String>,
    pub subresources: Vec<Subresource>,
    /// Component schema name, e.g. `io.k8s.api.apps.v1.Deployment`.
    pub schema_name: String,
    /// DELETE answers with the deleted object rather than a Status, as
    /// kube's storage for this resource does (`ReturnDeletedObject: true`).
    pub returns_deleted_object: bool,
    /// What a CustomResourceDefinition says about this resource (schema,
    /// printer columns, subresource paths, versions); `None` for built-ins.
    pub custom: Option<std::sync::Arc<crate::catalogue::custom::CustomResource>>,
    /// The rule its objects' names follow (kube's per-resource name check).
    pub name_rule: crate::apimachinery::names::NameRule,
    /// The labels a `fieldSelector` may use on it and where their values are
    /// read (a custom resource's `selectableFields` are in `custom`).
    pub field_labels: &'static crate::apimachinery::selectors::FieldLabels,
}

impl ResourceInfo {
    /// The group of kube's internal type, which its errors name
    /// (`Event "e" is invalid` for events.k8s.io Events, core Events inside).
    pub fn internal_group(&self) -> &str {
        match (self.group.as_str(), self.plural.as_str()) {
            ("events.k8s.io", "events") => "",
            (group, _) => group,
        }
    }

    /// `v1` for the core group, `apps/v1` otherwise.
    pub fn api_version(&self) -> String {
        group_version(&self.group, &self.version)
    }

    pub fn has_subresource(&self, name: &str) -> bool {
        self.subresources.iter().any(|s| s.name == name)
    }

    /// `api/v1` for the core group, `apis/apps/v1` otherwise.
    pub fn gv_path(&self) -> String {
        gv_path(&self.group, &self.version)
    }

    /// The subresource of that name, if the resource has it.
    pub fn subresource(&self, name: &str) -> Option<&Subresource> {
        self.subresources.iter().find(|s| s.name == name)
    }

    pub fn has_verb(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }

    /// Are its objects ever stored? Not a review's nor a TokenRequest's:
    /// kube answers those from the decoded request.
    pub fn is_stored(&self) -> bool {
        self.has_verb("get")
    }

    /// Are its objects served as stored? Not a custom resource's (stored in
    /// its CRD's storage version) nor a built-in's served at several versions.
    pub fn served_as_stored(&self) -> bool {
        self.custom.is_none() && conversion::of(self).is_none()
    }
}

/// `v1` or `apps/v1`.
pub fn group_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// `api/v1` or `apis/apps/v1`.
pub fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// The set of served resources and their schemas. Built-in entries come from
/// [`Catalogue::builtin`]; CRDs add and remove entries at run time.
#[derive(Clone, Debug, Default)]
pub struct Catalogue {
    resources: Vec<ResourceInfo>,
    schemas: Schemas,
}

/// OpenAPI component schemas by name: the built-ins' (shared by every
/// catalogue, never copied when CRDs change what is served) and the others
/// (custom resources'), which take precedence.
#[derive(Clone, Debug, Default)]
pub struct Schemas {
    builtin: Arc<schemas::BuiltinSchemas>,
    custom: Map<String, Value>,
}

impl Schemas {
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.custom.get(name).or_else(|| self.builtin.get(name))
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.custom.contains_key(name) || self.builtin.contains_key(name)
    }

    /// Every schema once (a custom one where it shadows a built-in).
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
        let builtin = self.builtin.iter();
        let unshadowed = builtin.filter(|(name, _)| !self.custom.contains_key(*name));
        self.custom.iter().chain(unshadowed)
    }

    /// Makes every schema a built-in: shared by the catalogues cloned from this one.
    fn freeze(&mut self) {
        let mut all = schemas::BuiltinSchemas::default();
        for (name, schema) in std::mem::take(&mut self.custom) {
            all.push(name, schemas::LazySchema::parsed(schema));
        }
        for (name, schema) in self.builtin.entries() {
            all.push(name.clone(), schema.clone());
        }
        self.builtin = Arc::new(all);
    }
}

impl From<Map<String, Value>> for Schemas {
    fn from(custom: Map<String, Value>) -> Schemas {
        Schemas {
            builtin: Arc::default(),
            custom,
        }
    }
}

static BUILTIN: OnceLock<Catalogue> = OnceLock::new();

impl Catalogue {
    /// An empty catalogue.
    pub fn new() -> Catalogue {
        Catalogue::default()
    }

    /// The built-in resources and schemas. The first call generates them
    /// (a few hundred milliseconds); later calls clone the cached value.
    pub fn builtin() -> Catalogue {
        Self::builtin_ref().clone()
    }

    /// The built-in component schemas, parsed once.
    pub fn builtin_schemas() -> &'static Schemas {
        &Self::builtin_ref().schemas
    }

    /// The built-in catalogue itself, built once.
    pub fn builtin_ref() -> &'static Catalogue {
        BUILTIN.get_or_init(|| {
            let resources = builtin::resources();
            let schemas = Schemas {
                builtin: Arc::new(schemas::builtin_schemas()),
                custom: Map::new(),
            };
            let mut cat = Catalogue { resources, schemas };
            cat.insert_custom(crate::catalogue::policy_bundle::entries());
            cat.insert_custom(crate::catalogue::policy_report::entries());
            cat.schemas.freeze();
            cat
        })
    }

    /// Serves `entries` (resources declared as a CRD would declare them),
    /// each replacing an entry of the same group, version and plural: in
    /// time linear in the entries, so a catalogue of many CRDs is built in
    /// one pass.
    pub fn insert_custom(&mut self, entries: Vec<live::CustomEntry>) {
        let mut at: HashMap<(String, String, String), usize> = self
            .resources
            .iter()
            .enumerate()
            .map(|(i, r)| ((r.group.clone(), r.version.clone(), r.plural.clone()), i))
            .collect();
        for entry in entries {
            let list = schemas::list_schema(&entry.schema, &entry.info);
            self.insert_schema(&entry.info.schema_name, entry.schema);
            self.insert_schema(&format!("{}List", entry.info.schema_name), list);
            let i = &entry.info;
            let key = (i.group.clone(), i.version.clone(), i.plural.clone());
            match at.get(&key) {
                Some(&existing) => self.resources[existing] = entry.info,
                None => {
                    at.insert(key, self.resources.len());
                    self.resources.push(entry.info);
                }
            }
        }
    }

    pub fn resources(&self) -> &[ResourceInfo] {
        &self.resources
    }

    pub fn lookup(&self, group: &str, version: &str, plural: &str) -> Option<&ResourceInfo> {
        self.resources
            .iter()
            .find(|r| r.group == group && r.version == version && r.plural == plural)
    }

    pub fn by_kind(&self, group: &str, version: &str, kind: &str) -> Option<&ResourceInfo> {
        self.resources
            .iter()
            .find(|r| r.group == group && r.version == version && r.kind == kind)
    }

    /// `components.schemas`: every known schema, with Kubernetes extensions.
    pub fn schemas(&self) -> &Schemas {
        &self.schemas
    }

    /// Groups in registration order ("" is the core group), each with its
    /// versions sorted by Kubernetes version priority (preferred first).
    pub fn groups(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for r in &self.resources {
            match out.iter_mut().find(|(g, _)| *g == r.group) {
                Some((_, versions)) if !versions.contains(&r.version) => {
                    versions.push(r.version.clone())
                }
                Some(_) => {}
                None => out.push((r.group.clone(), vec![r.version.clone()])),
            }
        }
        for (_, versions) in &mut out {
            versions.sort_by(|a, b| compare_versions(a, b));
        }
        out
    }

    /// Adds a resource, replacing any entry with the same group, version and
    /// plural. Its schema (named by `schema_name`) is added separately.
    pub fn insert(&mut self, info: ResourceInfo) {
        match self
            .resources
            .iter_mut()
            .find(|r| r.group == info.group && r.version == info.version && r.plural == info.plural)
        {
            Some(existing) => *existing = info,
            None => self.resources.push(info),
        }
    }

    /// Removes a resource; returns it if it was there.
    pub fn remove(&mut self, group: &str, version: &str, plural: &str) -> Option<ResourceInfo> {
        let pos = self
            .resources
            .iter()
            .position(|r| r.group == group && r.version == version && r.plural == plural)?;
        Some(self.resources.remove(pos))
    }

    /// Serves the kinds `gates` turn on (`gates.rs`), with their schemas.
    pub fn enable_gated(&mut self, gates: &gates::ApiGates) {
        let resources = builtin::gated_resources(|g, v| gates.serves(g, v));
        if resources.is_empty() {
            return;
        }
        for (name, schema) in schemas::gated_schemas() {
            self.insert_schema(&name, schema);
        }
        for info in resources {
            self.insert(info);
        }
    }

    /// Adds or replaces one component schema.
    pub fn insert_schema(&mut self, name: &str, schema: Value) {
        self.schemas.custom.insert(name.to_string(), schema);
    }

    /// Resources served under one group-version, in registration order.
    /// Whether any resource of `group` is served (the core group always is).
    pub fn serves_group(&self, group: &str) -> bool {
        group.is_empty() || self.resources.iter().any(|r| r.group == group)
    }

    pub fn resources_in(&self, group: &str, version: &str) -> Vec<&ResourceInfo> {
        self.resources
            .iter()
            .filter(|r| r.group == group && r.version == version)
            .collect()
    }
}

/// Kubernetes version priority: GA before beta before alpha, higher numbers
/// first, then anything else alphabetically (as kube sorts CRD versions).
pub fn compare_versions(a: &str, b: &str) -> std::cmp::Ordering {
    version_rank(a).cmp(&version_rank(b)).then_with(|| a.cmp(b))
}

fn version_rank(v: &str) -> (u8, std::cmp::Reverse<u64>, std::cmp::Reverse<u64>) {
    use std::cmp::Reverse;
    let Some(rest) = v.strip_prefix('v') else {
        return (3, Reverse(0), Reverse(0));
    };
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let Ok(major) = digits.parse::<u64>() else {
        return (3, Reverse(0), Reverse(0));
    };
    let tail = &rest[digits.len()..];
    let (stage, minor) = if tail.is_empty() {
        (0, Some(0))
    } else if let Some(n) = tail.strip_prefix("beta") {
        (1, n.parse::<u64>().ok())
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (2, n.parse::<u64>().ok())
    } else {
        (3, None)
    };
    match minor {
        Some(minor) => (stage, Reverse(major), Reverse(minor)),
        None => (3, Reverse(0), Reverse(0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_by_plural_and_kind() {
        let cat = Catalogue::builtin();
        let d = cat.lookup("apps", "v1", "deployments").unwrap();
        assert_eq!(d.kind, "Deployment");
        assert_eq!(d.api_version(), "apps/v1");
        assert_eq!(d.gv_path(), "apis/apps/v1");
        assert!(d.has_subresource("scale"));
        let p = cat.by_kind("", "v1", "Pod").unwrap();
        assert_eq!(p.plural, "pods");
        assert_eq!(p.api_version(), "v1");
        assert_eq!(p.gv_path(), "api/v1");
        assert!(cat.lookup("apps", "v1", "pods").is_none());
    }

    #[test]
    fn groups_start_with_core_and_include_apps() {
        let cat = Catalogue::builtin();
        let groups = cat.groups();
        assert_eq!(groups[0], (String::new(), vec!["v1".to_string()]));
        assert!(groups.iter().any(|(g, v)| g == "apps" && v == &["v1"]));
    }

    #[test]
    fn insert_and_remove_at_runtime() {
        let mut cat = Catalogue::builtin();
        let mut crd = cat.lookup("apps", "v1", "deployments").unwrap().clone();
        crd.group = "example.com".into();
        crd.version = "v1beta1".into();
        crd.plural = "widgets".into();
        cat.insert(crd.clone());
        crd.version = "v1".into();
        cat.insert(crd);
        let groups = cat.groups();
        let (_, versions) = groups.iter().find(|(g, _)| g == "example.com").unwrap();
        assert_eq!(versions, &["v1", "v1beta1"]);
        assert!(cat.remove("example.com", "v1", "widgets").is_some());
        assert!(cat.lookup("example.com", "v1", "widgets").is_none());
    }

    #[test]
    fn version_priority_matches_kube() {
        let mut v = vec!["v1alpha1", "foo", "v2", "v1beta2", "v1", "v1beta1", "v10"];
        v.sort_by(|a, b| compare_versions(a, b));
        assert_eq!(
            v,
            ["v10", "v2", "v1", "v1beta2", "v1beta1", "v1alpha1", "foo"]
        );
    }
}
