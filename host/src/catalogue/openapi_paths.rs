//! The operations of a group-version, described once and rendered both as
//! the `paths` of its OpenAPI v3 document (`v3.rs`) and as the paths of the
//! OpenAPI v2 document (`openapi_v2/paths.rs`): one operation per verb a
//! resource supports, with kube's operation ids, `x-kubernetes-action`,
//! `x-kubernetes-group-version-kind` and query parameters (kubectl reads the
//! PATCH operation's parameters to decide whether it may send
//! `fieldValidation`).

mod v3;

pub(super) use v3::gv_paths;

use serde_json::{json, Value};

use super::schemas::{DELETE_OPTIONS, PATCH, STATUS, WATCH_EVENT};
use super::{Catalogue, ResourceInfo};

/// Where a parameter is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum In {
    /// A path segment (always required, always a string).
    Path,
    Query,
}

/// One parameter of an operation or of a path.
#[derive(Clone, Debug)]
pub(super) struct Param {
    pub name: String,
    pub location: In,
    /// "string", "boolean" or "integer".
    pub kind: &'static str,
    pub description: String,
}

/// The request body of an operation.
#[derive(Clone, Debug)]
pub(super) struct Body {
    /// Component schema name.
    pub schema: String,
    /// Content types the body may have.
    pub types: &'static [&'static str],
    pub required: bool,
}

/// One response of an operation.
#[derive(Clone, Debug)]
pub(super) struct Response {
    pub code: &'static str,
    pub description: &'static str,
    /// Component schema name; `None` for 401.
    pub schema: Option<String>,
}

/// One operation (an HTTP method of a path).
#[derive(Clone, Debug)]
pub(super) struct Operation {
    /// "get", "put", "post", "delete", "patch".
    pub method: &'static str,
    pub action: &'static str,
    pub id: String,
    pub description: String,
    pub params: Vec<Param>,
    pub body: Option<Body>,
    pub responses: Vec<Response>,
    /// Content types of the responses.
    pub produces: &'static [&'static str],
    pub tag: String,
    pub gvk: Value,
}

/// One path: its operations and the parameters they share.
#[derive(Clone, Debug)]
pub(super) struct PathItem {
    pub operations: Vec<Operation>,
    pub parameters: Vec<Param>,
}

/// What a single operation is about.
struct Target<'a> {
    /// "Core", "Apps", "RbacAuthorization" + version, e.g. "AppsV1".
    gv_camel: String,
    tag: String,
    /// Kind the operation's body and response are about.
    gvk: Value,
    schema: String,
    /// Kind of the resource, used in descriptions and operation ids.
    kind: &'a str,
    namespaced: bool,
    /// "" for the resource itself, "Status" or "Scale" for subresources.
    sub: String,
    /// A custom resource (no strategic merge patch).
    custom: bool,
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn group_camel(group: &str) -> String {
    if group.is_empty() {
        return "Core".into();
    }
    let base = group.strip_suffix(".k8s.io").unwrap_or(group);
    base.split('.').map(capitalize).collect()
}

fn target<'a>(r: &'a ResourceInfo, sub: Option<&str>) -> Target<'a> {
    let camel = group_camel(&r.group);
    let mut tag = camel.clone();
    if let Some(first) = tag.get_mut(0..1) {
        first.make_ascii_lowercase();
    }
    let sub_info = sub.and_then(|s| r.subresource(s));
    let (gvk, schema) = match sub_info {
        Some(s) if s.name == "scale" => (
            json!({"group": s.group, "kind": s.kind, "version": s.version}),
            super::schemas::SCALE.to_string(),
        ),
        _ => (
            json!({"group": r.group, "kind": r.kind, "version": r.version}),
            r.schema_name.clone(),
        ),
    };
    Target {
        gv_camel: format!("{camel}{}", capitalize(&r.version)),
        tag: format!("{tag}_{}", r.version),
        gvk,
        schema,
        kind: &r.kind,
        namespaced: r.namespaced,
        sub: sub.map(capitalize).unwrap_or_default(),
        custom: r.custom.is_some(),
    }
}

fn param(name: &str) -> Param {
    let (kind, text) = match name {
        "pretty" => ("string", "If 'true', the output is pretty printed."),
        "dryRun" => ("string", "When present, modifications are not persisted. Valid value: All."),
        "fieldManager" => ("string", "Name of the actor making the change, recorded in managedFields."),
        "fieldValidation" => ("string", "How to treat unknown or duplicate fields in the body: Ignore, Warn (default) or Strict."),
        "force" => ("boolean", "Force an apply request, taking over fields owned by other managers."),
        "allowWatchBookmarks" => ("boolean", "Request BOOKMARK watch events."),
        "continue" => ("string", "Continue token from a previous paginated list."),
        "fieldSelector" => ("string", "Select objects by their fields."),
        "labelSelector" => ("string", "Select objects by their labels."),
        "limit" => ("integer", "Maximum number of items to return in one page."),
        "resourceVersion" => ("string", "Resource version constraint of the request."),
        "resourceVersionMatch" => ("string", "How resourceVersion is applied to a list: Exact or NotOlderThan."),
        "sendInitialEvents" => ("boolean", "Begin a watch with synthetic events for the current state."),
        "timeoutSeconds" => ("integer", "Timeout of the list or watch call."),
        "watch" => ("boolean", "Watch for changes instead of listing."),
        "gracePeriodSeconds" => ("integer", "Seconds before the object is deleted."),
        "ignoreStoreReadErrorWithClusterBreakingPotential" => ("boolean", "Delete corrupt objects that cannot be read from storage."),
        "orphanDependents" => ("boolean", "Deprecated: use propagationPolicy."),
        "propagationPolicy" => ("string", "Garbage collection policy: Orphan, Background or Foreground."),
        _ => ("string", ""),
    };
    Param {
        name: name.to_string(),
        location: In::Query,
        kind,
        description: text.to_string(),
    }
}

fn params(names: &[&str]) -> Vec<Param> {
    names.iter().map(|n| param(n)).collect()
}

const LIST_PARAMS: &[&str] = &[
    "allowWatchBookmarks",
    "continue",
    "fieldSelector",
    "labelSelector",
    "limit",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
    "watch",
];
const WRITE_PARAMS: &[&str] = &["dryRun", "fieldManager", "fieldValidation"];
const PATCH_PARAMS: &[&str] = &["dryRun", "fieldManager", "fieldValidation", "force"];
const DELETE_PARAMS: &[&str] = &[
    "dryRun",
    "gracePeriodSeconds",
    "ignoreStoreReadErrorWithClusterBreakingPotential",
    "orphanDependents",
    "propagationPolicy",
];

const BODY_TYPES: &[&str] = &["application/json", "application/yaml"];
const WATCH_TYPES: &[&str] = &["application/json", "application/json;stream=watch"];
const ANY_TYPE: &[&str] = &["*/*"];
const PATCH_TYPES: &[&str] = &[
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
];
/// Custom resources have no strategic merge patch (kubectl's client-side
/// apply reads this to choose a JSON merge patch for them).
const CUSTOM_PATCH_TYPES: &[&str] = &[
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
];

fn responses(codes: &[&'static str], schema: &str) -> Vec<Response> {
    let mut out: Vec<Response> = codes
        .iter()
        .map(|code| Response {
            code,
            description: match *code {
                "201" => "Created",
                "202" => "Accepted",
                _ => "OK",
            },
            schema: Some(schema.to_string()),
        })
        .collect();
    out.push(Response {
        code: "401",
        description: "Unauthorized",
        schema: None,
    });
    out
}

/// The parts of an operation that differ between verbs.
struct Op {
    method: &'static str,
    action: &'static str,
    id: String,
    description: String,
    params: Vec<Param>,
    body: Option<Body>,
    responses: Vec<Response>,
    produces: &'static [&'static str],
}

fn operation(t: &Target, op: Op) -> Operation {
    Operation {
        method: op.method,
        action: op.action,
        id: op.id,
        description: op.description,
        params: op.params,
        body: op.body,
        responses: op.responses,
        produces: op.produces,
        tag: t.tag.clone(),
        gvk: t.gvk.clone(),
    }
}

fn op_id(verb: &str, t: &Target, collection: bool, suffix: &str) -> String {
    let ns = if t.namespaced { "Namespaced" } else { "" };
    let coll = if collection { "Collection" } else { "" };
    format!("{verb}{}{coll}{ns}{}{}{suffix}", t.gv_camel, t.kind, t.sub)
}

fn body(schema: &str) -> Option<Body> {
    Some(Body {
        schema: schema.to_string(),
        types: ANY_TYPE,
        required: true,
    })
}

fn patch_body(custom: bool) -> Option<Body> {
    Some(Body {
        schema: PATCH.to_string(),
        types: if custom {
            CUSTOM_PATCH_TYPES
        } else {
            PATCH_TYPES
        },
        required: true,
    })
}

fn delete_body() -> Option<Body> {
    Some(Body {
        schema: DELETE_OPTIONS.to_string(),
        types: ANY_TYPE,
        required: false,
    })
}

fn path_params(namespaced: bool, named: bool, kind: &str) -> Vec<Param> {
    let path = |name: &str, text: String| Param {
        name: name.to_string(),
        location: In::Path,
        kind: "string",
        description: text,
    };
    let mut out = Vec::new();
    if named {
        out.push(path("name", format!("name of the {kind}")));
    }
    if namespaced {
        out.push(path(
            "namespace",
            "object name and auth scope, such as for teams and projects".into(),
        ));
    }
    out.push(param("pretty"));
    out
}

fn collection_ops(r: &ResourceInfo, t: &Target) -> Vec<Operation> {
    let list_schema = format!("{}List", r.schema_name);
    let mut ops = Vec::new();
    if r.has_verb("list") {
        let op = Op {
            method: "get",
            action: "list",
            id: op_id("list", t, false, ""),
            description: format!("list or watch objects of kind {}", t.kind),
            params: params(LIST_PARAMS),
            body: None,
            responses: responses(&["200"], &list_schema),
            produces: WATCH_TYPES,
        };
        ops.push(operation(t, op));
    }
    if r.has_verb("create") {
        let op = Op {
            method: "post",
            action: "post",
            id: op_id("create", t, false, ""),
            description: format!("create a {}", t.kind),
            params: params(WRITE_PARAMS),
            body: body(&t.schema),
            responses: responses(&["200", "201", "202"], &t.schema),
            produces: BODY_TYPES,
        };
        ops.push(operation(t, op));
    }
    if r.has_verb("deletecollection") {
        let mut names = DELETE_PARAMS.to_vec();
        names.extend(
            LIST_PARAMS
                .iter()
                .filter(|p| !["allowWatchBookmarks", "watch"].contains(p)),
        );
        names.sort_unstable();
        let op = Op {
            method: "delete",
            action: "deletecollection",
            id: op_id("delete", t, true, ""),
            description: format!("delete collection of {}", t.kind),
            params: params(&names),
            body: delete_body(),
            responses: responses(&["200"], STATUS),
            produces: BODY_TYPES,
        };
        ops.push(operation(t, op));
    }
    ops
}

/// read/replace/patch(/delete) of an object or of one of its subresources.
fn item_ops(verbs: &[String], t: &Target) -> Vec<Operation> {
    let has = |v: &str| verbs.iter().any(|x| x == v);
    let what = if t.sub.is_empty() {
        String::new()
    } else {
        format!("{} of ", t.sub.to_ascii_lowercase())
    };
    let mut ops = Vec::new();
    if has("get") {
        let op = Op {
            method: "get",
            action: "get",
            id: op_id("read", t, false, ""),
            description: format!("read {what}the specified {}", t.kind),
            params: Vec::new(),
            body: None,
            responses: responses(&["200"], &t.schema),
            produces: BODY_TYPES,
        };
        ops.push(operation(t, op));
    }
    if has("update") {
        let op = Op {
            method: "put",
            action: "put",
            id: op_id("replace", t, false, ""),
            description: format!("replace {what}the specified {}", t.kind),
            params: params(WRITE_PARAMS),
            body: body(&t.schema),
            responses: responses(&["200", "201"], &t.schema),
            produces: BODY_TYPES,
        };
        ops.push(operation(t, op));
    }
    if has("patch") {
        let op = Op {
            method: "patch",
            action: "patch",
            id: op_id("patch", t, false, ""),
            description: format!("partially update {what}the specified {}", t.kind),
            params: params(PATCH_PARAMS),
            body: patch_body(t.custom),
            responses: responses(&["200", "201"], &t.schema),
            produces: BODY_TYPES,
        };
        ops.push(operation(t, op));
    }
    if has("delete") && t.sub.is_empty() {
        let op = Op {
            method: "delete",
            action: "delete",
            id: op_id("delete", t, false, ""),
            description: format!("delete a {}", t.kind),
            params: params(DELETE_PARAMS),
            body: delete_body(),
            responses: responses(&["200", "202"], STATUS),
            produces: BODY_TYPES,
        };
        ops.push(operation(t, op));
    }
    ops
}

fn watch_op(t: &Target, list: bool, all_namespaces: bool) -> Operation {
    let ns = if t.namespaced && !all_namespaces {
        "Namespaced"
    } else {
        ""
    };
    let suffix = match (list, all_namespaces) {
        (true, true) => "ListForAllNamespaces",
        (true, false) => "List",
        _ => "",
    };
    let description = if list {
        format!("watch individual changes to a list of {}. deprecated: use the 'watch' parameter with a list operation instead.", t.kind)
    } else {
        format!("watch changes to an object of kind {}. deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter.", t.kind)
    };
    let op = Op {
        method: "get",
        action: if list { "watchlist" } else { "watch" },
        id: format!("watch{}{ns}{}{suffix}", t.gv_camel, t.kind),
        description,
        params: Vec::new(),
        body: None,
        responses: responses(&["200"], WATCH_EVENT),
        produces: WATCH_TYPES,
    };
    operation(t, op)
}

fn with_list_params(mut base: Vec<Param>) -> Vec<Param> {
    base.extend(params(LIST_PARAMS));
    base
}

fn item(operations: Vec<Operation>, parameters: Vec<Param>) -> PathItem {
    PathItem {
        operations,
        parameters,
    }
}

type Paths = Vec<(String, PathItem)>;

fn add_watch_paths(paths: &mut Paths, prefix: &str, r: &ResourceInfo, t: &Target) {
    let scope = if r.namespaced {
        "/namespaces/{namespace}"
    } else {
        ""
    };
    let base = format!("{prefix}/watch{scope}/{}", r.plural);
    let list_params = with_list_params(path_params(r.namespaced, false, t.kind));
    paths.push((
        base.clone(),
        item(vec![watch_op(t, true, false)], list_params),
    ));
    let item_params = with_list_params(path_params(r.namespaced, true, t.kind));
    let one = item(vec![watch_op(t, false, false)], item_params);
    paths.push((format!("{base}/{{name}}"), one));
    if r.namespaced {
        let all = with_list_params(path_params(false, false, t.kind));
        let every = item(vec![watch_op(t, true, true)], all);
        paths.push((format!("{prefix}/watch/{}", r.plural), every));
    }
}

fn add_all_namespaces_list(paths: &mut Paths, prefix: &str, r: &ResourceInfo, t: &Target) {
    let op = Op {
        method: "get",
        action: "list",
        id: format!("list{}{}ForAllNamespaces", t.gv_camel, t.kind),
        description: format!("list or watch objects of kind {}", t.kind),
        params: Vec::new(),
        body: None,
        responses: responses(&["200"], &format!("{}List", r.schema_name)),
        produces: WATCH_TYPES,
    };
    let parameters = with_list_params(path_params(false, false, t.kind));
    let list = item(vec![operation(t, op)], parameters);
    paths.push((format!("{prefix}/{}", r.plural), list));
}

fn add_resource(paths: &mut Paths, prefix: &str, r: &ResourceInfo) {
    let t = target(r, None);
    let scope = if r.namespaced {
        "/namespaces/{namespace}"
    } else {
        ""
    };
    let collection = format!("{prefix}{scope}/{}", r.plural);
    let ops = collection_ops(r, &t);
    if !ops.is_empty() {
        let parameters = path_params(r.namespaced, false, &r.kind);
        paths.push((collection.clone(), item(ops, parameters)));
    }
    let named = format!("{collection}/{{name}}");
    let ops = item_ops(&r.verbs, &t);
    let parameters = path_params(r.namespaced, true, &r.kind);
    paths.push((named.clone(), item(ops, parameters)));
    // Connect subresources (exec, attach, portforward, proxy) take options,
    // not objects: they get no object operations here.
    for s in r
        .subresources
        .iter()
        .filter(|s| !s.kind.ends_with("Options"))
    {
        let st = target(r, Some(&s.name));
        let ops = item_ops(&s.verbs, &st);
        let parameters = path_params(r.namespaced, true, &r.kind);
        paths.push((format!("{named}/{}", s.name), item(ops, parameters)));
    }
    if r.namespaced && r.has_verb("list") {
        add_all_namespaces_list(paths, prefix, r, &t);
    }
    if r.has_verb("watch") {
        add_watch_paths(paths, prefix, r, &t);
    }
}

/// Every path of one group-version with its operations, sorted by path
/// like kube's documents (a later resource's path replaces an earlier one).
pub(super) fn gv_operations(cat: &Catalogue, group: &str, version: &str) -> Paths {
    let prefix = format!("/{}", super::gv_path(group, version));
    let mut paths = Vec::new();
    for r in cat.resources_in(group, version) {
        add_resource(&mut paths, &prefix, r);
    }
    let mut sorted: std::collections::BTreeMap<String, PathItem> = Default::default();
    sorted.extend(paths);
    sorted.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_ids_follow_kube() {
        let cat = Catalogue::builtin();
        let paths = gv_paths(&cat, "apps", "v1");
        let coll = &paths["/apis/apps/v1/namespaces/{namespace}/deployments"];
        assert_eq!(coll["get"]["operationId"], "listAppsV1NamespacedDeployment");
        assert_eq!(
            coll["delete"]["operationId"],
            "deleteAppsV1CollectionNamespacedDeployment"
        );
        let scale = &paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"];
        assert_eq!(
            scale["patch"]["operationId"],
            "patchAppsV1NamespacedDeploymentScale"
        );
        assert_eq!(
            scale["patch"]["x-kubernetes-group-version-kind"]["kind"],
            "Scale"
        );
        let all = &paths["/apis/apps/v1/deployments"];
        assert_eq!(
            all["get"]["operationId"],
            "listAppsV1DeploymentForAllNamespaces"
        );
        let w = &paths["/apis/apps/v1/watch/namespaces/{namespace}/deployments/{name}"];
        assert_eq!(w["get"]["x-kubernetes-action"], "watch");
        let rbac = gv_paths(&cat, "rbac.authorization.k8s.io", "v1");
        let roles = &rbac["/apis/rbac.authorization.k8s.io/v1/clusterroles"];
        assert_eq!(
            roles["get"]["operationId"],
            "listRbacAuthorizationV1ClusterRole"
        );
        assert_eq!(roles["get"]["tags"], json!(["rbacAuthorization_v1"]));
    }

    #[test]
    fn every_patch_operation_accepts_field_validation() {
        let cat = Catalogue::builtin();
        for (g, versions) in cat.groups() {
            for v in versions {
                for (path, item) in gv_paths(&cat, &g, &v) {
                    let Some(patch) = item.get("patch") else {
                        continue;
                    };
                    let names: Vec<&str> = patch["parameters"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter(|p| p["in"] == "query")
                        .map(|p| p["name"].as_str().unwrap())
                        .collect();
                    assert!(names.contains(&"fieldValidation"), "{path}");
                }
            }
        }
    }

    #[test]
    fn namespaces_have_no_deletecollection_operation_and_services_do() {
        let cat = Catalogue::builtin();
        let paths = gv_paths(&cat, "", "v1");
        assert!(paths["/api/v1/namespaces"].get("delete").is_none());
        let svc = &paths["/api/v1/namespaces/{namespace}/services"];
        assert_eq!(
            svc["delete"]["operationId"],
            "deleteCoreV1CollectionNamespacedService"
        );
        assert!(svc.get("post").is_some());
        let nodes = &paths["/api/v1/nodes"];
        assert_eq!(nodes["get"]["operationId"], "listCoreV1Node");
        assert!(paths.get("/api/v1/nodes/{name}/status").is_some());
    }
}
