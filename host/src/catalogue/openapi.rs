//! OpenAPI v3 as kube-apiserver serves it: the `/openapi/v3` index of
//! group-version documents, and one OpenAPI 3.0 document per group-version
//! (`/openapi/v3/api/v1`, `/openapi/v3/apis/apps/v1`, ...) with its paths and
//! every component schema they reference. `OpenApiCache` builds them on
//! first request (kept as compact JSON only: a start that nobody asks for
//! OpenAPI builds nothing), and the OpenAPI v2 document (`openapi_v2/`) too.

use super::Schemas;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};

use serde_json::{json, Map, Value};

use super::kube_openapi::{kube_paths, to_v3};
use super::openapi_paths::custom_resource_paths;
use super::openapi_v2::V2Prepared;
use super::schemas::ref_name;
use super::{group_version, gv_path, Catalogue};

/// Splits "api/v1" or "apis/apps/v1" into (group, version).
fn parse_gv_path(path: &str) -> Option<(&str, &str)> {
    let path = path.trim_matches('/');
    if let Some(version) = path.strip_prefix("api/") {
        return (!version.contains('/')).then_some(("", version));
    }
    let rest = path.strip_prefix("apis/")?;
    let (group, version) = rest.split_once('/')?;
    (!group.is_empty() && !version.is_empty() && !version.contains('/')).then_some((group, version))
}

/// Names of every schema referenced anywhere inside `value`.
fn collect_refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(obj) => {
            if let Some(name) = ref_name(value).filter(|_| obj.contains_key("$ref")) {
                out.push(name.to_string());
            }
            obj.values().for_each(|v| collect_refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

/// The referenced schemas and everything they reference, sorted by name.
fn closure(schemas: &Schemas, roots: Vec<String>) -> Map<String, Value> {
    let mut found: BTreeMap<String, Value> = BTreeMap::new();
    let mut pending = roots;
    while let Some(name) = pending.pop() {
        if found.contains_key(&name) {
            continue;
        }
        if let Some(schema) = schemas.get(&name) {
            collect_refs(schema, &mut pending);
            found.insert(name, schema.clone());
        }
    }
    found.into_iter().collect()
}

fn security_schemes() -> Value {
    json!({
        "BearerToken": {
            "type": "apiKey",
            "description": "Bearer Token authentication",
            "name": "authorization",
            "in": "header"
        }
    })
}

/// `info` of a built-in group-version's document: its `version` is what
/// kube-apiserver computes from its own version (its emulation version,
/// major.minor, with the binary's pre-release if any, cut at the first '-'),
/// here from the gitVersion `/version` reports.
pub(super) fn info() -> Value {
    let version = crate::apimachinery::version::version();
    let git = version["gitVersion"].as_str().unwrap_or_default();
    json!({ "title": "Kubernetes", "version": info_version(git) })
}

fn info_version(git_version: &str) -> String {
    let semver = git_version.trim_start_matches('v');
    let core = semver.split('+').next().unwrap_or_default();
    let (numbers, pre_release) = match core.split_once('-') {
        Some((numbers, pre)) => (numbers, Some(pre)),
        None => (core, None),
    };
    let mut parts = numbers.split('.');
    let major = parts.next().unwrap_or("0");
    let minor = parts.next().unwrap_or("0");
    // A pre-release makes the version major.minor.0-pre, which is then cut.
    match pre_release {
        Some(_) => format!("{major}.{minor}.0"),
        None => format!("{major}.{minor}"),
    }
}

/// The paths of one group-version in v3 form: kube's own for a built-in
/// group-version, kube's CRD builder's for custom resources.
fn v3_paths(cat: &Catalogue, group: &str, version: &str) -> Map<String, Value> {
    let kube = kube_paths();
    let resources = cat.resources_in(group, version);
    let mut paths: BTreeMap<String, Value> = BTreeMap::new();
    let recorded: Vec<_> = kube.group_version(&gv_path(group, version)).collect();
    // A gated built-in (`gates.rs`) has no recorded paths: the CRD
    // builder's stand in for them.
    let unrecorded = recorded.is_empty();
    if resources.iter().all(|r| r.custom.is_none()) {
        for (path, item) in recorded {
            paths.insert(path.clone(), to_v3(item, kube));
        }
    }
    for r in resources
        .iter()
        .filter(|r| r.custom.is_some() || unrecorded)
    {
        for (path, item) in custom_resource_paths(r, kube) {
            paths.insert(path, to_v3(&item, kube));
        }
    }
    paths.into_iter().collect()
}

/// The OpenAPI 3.0 document of one group-version ("api/v1" or
/// "apis/apps/v1"); `None` if nothing is served there. Its schemas are
/// those its paths reference, and theirs. Custom resources' documents are
/// kube's CRD documents: their own title and version, no security schemes.
pub fn v3_document(cat: &Catalogue, gv: &str) -> Option<Value> {
    let (group, version) = parse_gv_path(gv)?;
    let resources = cat.resources_in(group, version);
    if resources.is_empty() {
        return None;
    }
    let paths = v3_paths(cat, group, version);
    let mut roots = Vec::new();
    collect_refs(&Value::Object(paths.clone()), &mut roots);
    let schemas = closure(cat.schemas(), roots);
    if resources.iter().any(|r| r.custom.is_some()) {
        return Some(json!({
            "openapi": "3.0.0",
            "info": { "title": "Kubernetes CRD Swagger", "version": "v0.1.0" },
            "paths": paths,
            "components": { "schemas": schemas }
        }));
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": info(),
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": security_schemes()
        }
    }))
}

/// A stable hash of bytes: 32 uppercase hex digits, 128-bit FNV-1a (of a
/// document's compact JSON, in `serverRelativeURL` so clients can cache).
pub fn bytes_hash(bytes: &[u8]) -> String {
    let mut h: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    for &b in bytes {
        h ^= u128::from(b);
        h = h.wrapping_mul(0x0000_0000_0100_0000_0000_0000_0000_013b);
    }
    format!("{h:032X}")
}

fn index_entry(path: &str, hash: &str) -> Value {
    json!({ "serverRelativeURL": format!("/openapi/v3/{path}?hash={hash}") })
}

/// One prepared document: its compact JSON and hash.
#[derive(Clone, Debug)]
struct Prepared {
    bytes: Vec<u8>,
    hash: String,
}

/// The OpenAPI v2 document of a catalogue, built when first asked for.
#[derive(Debug)]
struct LazyV2 {
    catalogue: Arc<Catalogue>,
    built: OnceLock<V2Prepared>,
}

/// The v3 index and documents of a catalogue, built when first asked for,
/// reusing those of the previous catalogue's cache (when it had built them)
/// for every group-version not in `changed`.
#[derive(Debug)]
struct LazyV3 {
    catalogue: Arc<Catalogue>,
    /// Dropped once this one is built.
    previous: std::sync::Mutex<Option<Previous>>,
    built: OnceLock<V3Built>,
}

/// A built cache whose documents a newer one reuses, and the group-versions
/// that changed in between.
type Previous = (Arc<LazyV3>, BTreeSet<String>);

#[derive(Debug)]
struct V3Built {
    index: Value,
    docs: BTreeMap<String, Arc<Prepared>>,
}

/// Every OpenAPI v3 document of a catalogue and its v2 document, each
/// built on first use (rebuild the cache when the catalogue changes, e.g.
/// after a CRD is added).
#[derive(Clone, Debug)]
pub struct OpenApiCache {
    v3: Arc<LazyV3>,
    v2: Arc<LazyV2>,
}

fn prepare(cat: &Catalogue, path: &str) -> Option<Prepared> {
    let doc = v3_document(cat, path)?;
    let bytes = serde_json::to_vec(&doc).unwrap_or_default();
    let hash = bytes_hash(&bytes);
    Some(Prepared { bytes, hash })
}

impl LazyV3 {
    fn get(&self) -> &V3Built {
        self.built.get_or_init(|| self.build())
    }

    fn build(&self) -> V3Built {
        let cat = &self.catalogue;
        let previous = self
            .previous
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let mut docs = BTreeMap::new();
        for (group, versions) in cat.groups() {
            for version in versions {
                let path = gv_path(&group, &version);
                let reused = previous.as_ref().and_then(|(previous, changed)| {
                    let built = previous.built.get()?;
                    match changed.contains(&group_version(&group, &version)) {
                        true => None,
                        false => built.docs.get(&path).cloned(),
                    }
                });
                if let Some(prepared) = reused.or_else(|| prepare(cat, &path).map(Arc::new)) {
                    docs.insert(path, prepared);
                }
            }
        }
        let paths: Map<String, Value> = docs
            .iter()
            .map(|(path, p)| (path.clone(), index_entry(path, &p.hash)))
            .collect();
        V3Built {
            index: json!({ "paths": paths }),
            docs,
        }
    }
}

impl OpenApiCache {
    pub fn new(cat: &Arc<Catalogue>) -> OpenApiCache {
        OpenApiCache::lazy(cat, None)
    }

    /// The documents of `cat`, reusing this cache's (if built) for every
    /// group-version not in `changed` (`group/version`, or `version` for
    /// the core group).
    pub fn rebuilt(&self, cat: &Arc<Catalogue>, changed: &BTreeSet<String>) -> OpenApiCache {
        // Only a built cache has documents to reuse; chains of unbuilt ones
        // are not kept alive.
        let previous = self
            .v3
            .built
            .get()
            .map(|_| (self.v3.clone(), changed.clone()));
        OpenApiCache::lazy(cat, previous)
    }

    fn lazy(cat: &Arc<Catalogue>, previous: Option<Previous>) -> Self {
        let v3 = Arc::new(LazyV3 {
            catalogue: Arc::clone(cat),
            previous: std::sync::Mutex::new(previous),
            built: OnceLock::new(),
        });
        let v2 = Arc::new(LazyV2 {
            catalogue: Arc::clone(cat),
            built: OnceLock::new(),
        });
        OpenApiCache { v3, v2 }
    }

    /// The OpenAPI v2 document (JSON and protobuf), built by the first call:
    /// CPU-heavy then, so call it through `cpu::heavy` unless
    /// [`OpenApiCache::v2_built`] has it.
    pub fn v2(&self) -> &V2Prepared {
        self.v2
            .built
            .get_or_init(|| V2Prepared::build(&self.v2.catalogue))
    }

    /// The OpenAPI v2 document if it has been built.
    pub fn v2_built(&self) -> Option<&V2Prepared> {
        self.v2.built.get()
    }

    /// Whether the v3 documents have been built (else the next call of
    /// [`OpenApiCache::index`] or [`OpenApiCache::document_json`] builds
    /// them: CPU-heavy, so through `cpu::heavy`).
    pub fn v3_built(&self) -> bool {
        self.v3.built.get().is_some()
    }

    /// Body of `GET /openapi/v3`.
    pub fn index(&self) -> &Value {
        &self.v3.get().index
    }

    /// The document for "api/v1" / "apis/apps/v1" (leading '/' tolerated),
    /// parsed from its JSON.
    pub fn document(&self, gv: &str) -> Option<Value> {
        serde_json::from_slice(self.document_json(gv)?).ok()
    }

    /// The document already serialized as compact JSON.
    pub fn document_json(&self, gv: &str) -> Option<&[u8]> {
        self.v3
            .get()
            .docs
            .get(gv.trim_matches('/'))
            .map(|p| p.bytes.as_slice())
    }

    /// The hash the index advertises for that document.
    pub fn hash(&self, gv: &str) -> Option<&str> {
        self.v3
            .get()
            .docs
            .get(gv.trim_matches('/'))
            .map(|p| p.hash.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_version_as_kube_computes_it() {
        assert_eq!(info_version("v1.32.0-beta.0"), "1.32.0");
        assert_eq!(info_version("v1.33.0+capstan.0.1.0"), "1.33");
        assert_eq!(info_version("v1.33.2"), "1.33");
    }

    #[test]
    fn gv_paths_parse() {
        assert_eq!(parse_gv_path("api/v1"), Some(("", "v1")));
        assert_eq!(parse_gv_path("/apis/apps/v1"), Some(("apps", "v1")));
        assert_eq!(parse_gv_path("apis/apps"), None);
        assert_eq!(parse_gv_path("api/v1/pods"), None);
    }

    #[test]
    fn index_lists_every_group_version_with_hash() {
        let cat = Catalogue::builtin();
        let cache = OpenApiCache::new(&Arc::new(cat));
        let index = cache.index();
        let core = index["paths"]["api/v1"]["serverRelativeURL"]
            .as_str()
            .unwrap();
        let hash = cache.hash("api/v1").unwrap();
        assert_eq!(core, format!("/openapi/v3/api/v1?hash={hash}"));
        assert!(index["paths"]["apis/apps/v1"].is_object());
        assert!(index["paths"]["apis/rbac.authorization.k8s.io/v1"].is_object());
        assert_eq!(hash.len(), 32);
        assert_ne!(cache.hash("apis/apps/v1"), Some(hash));
        assert!(cache.document_json("/apis/apps/v1").is_some());
        assert!(cache.document("apis/nope/v1").is_none());
    }

    /// What `kubectl explain deployment.spec.replicas` does: find the GVK on
    /// the collection path's operations, find the schema carrying that GVK,
    /// then follow properties through `$ref`/`allOf`.
    #[test]
    fn explain_deployment_spec_replicas() {
        let cat = Catalogue::builtin();
        let doc = v3_document(&cat, "apis/apps/v1").unwrap();
        let path = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments"];
        let gvk = &path["get"]["x-kubernetes-group-version-kind"];
        assert_eq!(
            *gvk,
            json!({"group": "apps", "kind": "Deployment", "version": "v1"})
        );
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        let (_, deployment) = schemas
            .iter()
            .find(|(_, s)| {
                s["x-kubernetes-group-version-kind"]
                    .as_array()
                    .is_some_and(|l| l.contains(gvk))
            })
            .unwrap();
        let spec_ref = deployment["properties"]["spec"]["allOf"][0]["$ref"]
            .as_str()
            .unwrap();
        let spec = &schemas[spec_ref.trim_start_matches("#/components/schemas/")];
        let replicas = &spec["properties"]["replicas"];
        assert!(replicas["description"]
            .as_str()
            .unwrap()
            .starts_with("Number of desired pods"));
    }

    #[test]
    fn document_is_self_contained() {
        let cat = Catalogue::builtin();
        for gv in ["api/v1", "apis/apps/v1", "apis/batch/v1"] {
            let doc = v3_document(&cat, gv).unwrap();
            let schemas = doc["components"]["schemas"].as_object().unwrap();
            let mut refs = Vec::new();
            collect_refs(&doc, &mut refs);
            for r in refs {
                assert!(schemas.contains_key(&r), "{gv}: missing {r}");
            }
            assert_eq!(doc["openapi"], "3.0.0");
        }
        let apps = v3_document(&cat, "apis/apps/v1").unwrap();
        let schemas = apps["components"]["schemas"].as_object().unwrap();
        assert!(schemas.contains_key("io.k8s.api.autoscaling.v1.Scale"));
        assert!(schemas.contains_key("io.k8s.api.core.v1.PodSpec"));
        assert!(!schemas.contains_key("io.k8s.api.batch.v1.Job"));
    }
}
