//! What the recorder asks the real kube-apiserver: the discovery documents
//! and OpenAPI of every group-version it serves, each built-in kind's
//! objects (`tests/golden/cases/objects.json`, dry-run created) and the
//! requests of `tests/golden/cases/requests.json` (bootstrap objects,
//! error answers).

use super::answers::golden_dir;
use super::endpoint::Endpoint;
use super::request::Request;
use super::setup::Setup;
use serde::Deserialize;
use serde_json::Value;

/// One request to record, named `<set>/<name>`.
pub struct Case {
    pub set: String,
    pub name: String,
    pub request: Request,
    /// The objects it needs first (none for most).
    pub setup: Setup,
}

/// Aggregated discovery, as kubectl ≥ 1.30 asks for it.
const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Every case, the discovery ones found by asking `kube` for its groups.
pub fn all(kube: &Endpoint) -> Vec<Case> {
    let mut cases = discovery(kube);
    cases.extend(objects());
    cases.extend(lists_as_tables());
    cases.extend(requests());
    cases
}

/// Each collection of `cases/objects.json` listed as a Table.
fn lists_as_tables() -> Vec<Case> {
    let list: Vec<ObjectCase> = read_json("objects.json");
    let mut seen = std::collections::BTreeSet::new();
    let mut cases = Vec::new();
    let listed = list
        .into_iter()
        .filter(|o| !is_review(&o.collection) && o.setup.is_empty());
    for o in listed {
        if !seen.insert(o.collection.clone()) {
            continue;
        }
        let mut request = Request::get(&o.collection);
        request.accept = Some(TABLE.into());
        let name = o.collection.trim_start_matches('/').replace('/', "-");
        cases.push(case("tables", &format!("list-{name}"), request));
    }
    cases
}

fn is_review(path: &str) -> bool {
    path.contains("authorization.k8s.io") || path.contains("authentication.k8s.io")
}

fn case(set: &str, name: &str, request: Request) -> Case {
    Case {
        set: set.into(),
        name: name.into(),
        request,
        setup: Setup::default(),
    }
}

fn discovery(kube: &Endpoint) -> Vec<Case> {
    let mut cases = vec![
        case("discovery", "api", Request::get("/api")),
        case("discovery", "apis", Request::get("/apis")),
        case("openapi", "v2", Request::get("/openapi/v2")),
    ];
    for path in ["/api", "/apis"] {
        let mut r = Request::get(path);
        r.accept = Some(AGGREGATED.into());
        cases.push(case(
            "discovery",
            &format!("aggregated{}", path.replace('/', "-")),
            r,
        ));
    }
    for gv in group_versions(kube) {
        let name = gv.trim_start_matches('/').replace('/', "-");
        cases.push(case("discovery", &name, Request::get(&gv)));
        cases.push(case(
            "openapi",
            &format!("v3-{name}"),
            Request::get(&format!("/openapi/v3{gv}")),
        ));
    }
    cases
}

/// `/api/v1` and `/apis/<group>/<version>` of every version kube serves.
fn group_versions(kube: &Endpoint) -> Vec<String> {
    let apis = kube.send(&Request::get("/apis")).body;
    let mut out = vec!["/api/v1".to_string()];
    let groups = apis
        .get("groups")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for group in groups {
        let versions = group
            .get("versions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for v in versions
            .iter()
            .filter_map(|v| v.get("groupVersion").and_then(Value::as_str))
        {
            out.push(format!("/apis/{v}"));
        }
    }
    out
}

#[derive(Deserialize)]
struct ObjectCase {
    collection: String,
    #[serde(default = "minimal")]
    variant: String,
    object: Value,
    #[serde(flatten)]
    setup: Setup,
}

fn minimal() -> String {
    "minimal".into()
}

/// Kubectl's Table view (kube's printers).
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

/// Each object of `cases/objects.json`, dry-run created; and again as a
/// Table (the row kube's printer makes of it), and each kind's list as a
/// Table (its column definitions).
fn objects() -> Vec<Case> {
    let list: Vec<ObjectCase> = read_json("objects.json");
    let mut cases: Vec<Case> = list.into_iter().map(object_case).collect();
    let tables: Vec<Case> = cases.iter().filter_map(table_case).collect();
    cases.extend(tables);
    cases
}

/// The Table forms of an object case: its create, and its kind's list once.
fn table_case(object: &Case) -> Option<Case> {
    if is_review(&object.request.path) || !object.setup.is_empty() {
        // Never stored (kube has no printer: 406, see errors/), or a
        // subresource of an object the setup made.
        return None;
    }
    let mut request = object.request.clone();
    request.accept = Some(TABLE.into());
    Some(case("tables", &object.name, request))
}

fn object_case(o: ObjectCase) -> Case {
    let api_version = o
        .object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("v1");
    let kind = o
        .object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("Unknown");
    let (group, version) = api_version
        .rsplit_once('/')
        .unwrap_or(("core", api_version));
    let name = format!("{group}.{version}.{}.{}", kind.to_lowercase(), o.variant);
    let request = Request {
        method: "POST".into(),
        path: format!("{}?dryRun=All", o.collection),
        body: Some(o.object),
        ..Default::default()
    };
    Case {
        setup: o.setup,
        ..case("objects", &name, request)
    }
}

#[derive(Deserialize)]
struct RequestCase {
    set: String,
    name: String,
    request: Request,
    #[serde(flatten)]
    setup: Setup,
}

/// The explicit requests of `cases/requests.json`.
fn requests() -> Vec<Case> {
    let list: Vec<RequestCase> = read_json("requests.json");
    list.into_iter()
        .map(|r| Case {
            setup: r.setup,
            ..case(&r.set, &r.name, r.request)
        })
        .collect()
}

fn read_json<T: serde::de::DeserializeOwned>(file: &str) -> T {
    let path = golden_dir().join("cases").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
