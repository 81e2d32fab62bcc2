//! The paths of a custom resource (and of Capstan's own groups, declared as
//! CRDs are) in Swagger 2.0 form, as kube's apiextensions-apiserver builds
//! them (`pkg/controller/openapi/builder`): list (and list for all
//! namespaces), create, deletecollection, read, replace, delete, patch (JSON
//! patch, merge patch and apply: no strategic merge patch), the same for
//! `status` and `scale`; no watch paths. Parameters every operation of a
//! path has are the path's own, both lists sorted by name as kube-openapi
//! sorts them. The v3 documents convert these with `kube_openapi::to_v3`;
//! the v2 document shares their parameters as kube's does.

use serde_json::{json, Map, Value};

use super::kube_openapi::KubePaths;
use super::schemas::{DELETE_OPTIONS, PATCH, SCALE, STATUS};
use super::ResourceInfo;

const DEFINITIONS_PREFIX: &str = "#/definitions/";

/// One route of kube's builder.
struct Route {
    path: String,
    method: &'static str,
    /// `x-kubernetes-action`.
    action: &'static str,
    /// The verb starting the operation id and the description.
    verb: &'static str,
    /// The schema of the response (and of the body of post and put).
    sample: String,
    /// An operation id of its own (the list for all namespaces).
    id: Option<String>,
}

fn schema_ref(name: &str) -> Value {
    json!({ "$ref": format!("{DEFINITIONS_PREFIX}{name}") })
}

/// `Title`-cased as Go's `strings.Title` does one word.
fn title(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// kube's `ToValidOperationID`: letters, `_` and (not first) digits kept,
/// anything else dropped and the next letter capitalized.
fn valid_operation_id(s: &str, capitalize_first: bool) -> String {
    let mut out = String::new();
    let mut capitalize = capitalize_first;
    for (i, c) in s.chars().enumerate() {
        if c.is_alphabetic() || c == '_' || (i != 0 && c.is_ascii_digit()) {
            match capitalize {
                true => out.extend(c.to_uppercase()),
                false => out.push(c),
            }
            capitalize = false;
        } else {
            capitalize = true;
        }
    }
    out
}

const VERBS: &[&str] = &[
    "get", "log", "read", "replace", "patch", "delete", "watch", "connect", "proxy", "list",
    "create",
];

/// kube's `GetOperationIDAndTags` for `/apis/<group>/<version>/...` paths:
/// the group (without `.k8s.io`) and version after the verb.
fn operation_id_and_tag(op: &str, group: &str, version: &str) -> (String, String) {
    let verb = VERBS
        .iter()
        .filter(|v| op.starts_with(**v))
        .min_by_key(|v| v.len())
        .copied()
        .unwrap_or("");
    let trimmed = group.strip_suffix(".k8s.io").unwrap_or(group);
    let prefix = format!(
        "{verb}{}{}",
        valid_operation_id(trimmed, !verb.is_empty()),
        valid_operation_id(version, true)
    );
    let tag = format!(
        "{}_{}",
        valid_operation_id(trimmed, false),
        valid_operation_id(version, false)
    );
    (
        format!("{prefix}{}", valid_operation_id(&op[verb.len()..], true)),
        tag,
    )
}

/// kube's `GetArticleForNoun` with single spaces.
fn article(noun: &str) -> &'static str {
    if noun.ends_with('s') && !noun.ends_with("ss") {
        return " ";
    }
    match noun.chars().next().map(|c| c.to_ascii_lowercase()) {
        Some('a' | 'e' | 'i' | 'o' | 'u') => " an ",
        _ => " a ",
    }
}

/// kube's `descriptionFor`.
fn description(kind: &str, sub: &str, verb: &str) -> String {
    let article = match verb {
        "list" => " objects of kind ",
        "read" | "replace" | "patch" => " the specified ",
        "create" | "delete" => article(kind),
        _ => "",
    };
    let sub = match sub {
        "" => String::new(),
        s => format!(" {s} of"),
    };
    match verb {
        "patch" => format!("partially update{sub}{article}{kind}"),
        "deletecollection" if !sub.is_empty() => format!("delete collection of{sub} a {kind}"),
        "deletecollection" => format!("delete collection of {kind}"),
        _ => format!("{verb}{sub}{article}{kind}"),
    }
}

fn route(
    path: String,
    method: &'static str,
    action: &'static str,
    verb: &'static str,
    sample: &str,
) -> Route {
    Route {
        path,
        method,
        action,
        verb,
        sample: sample.to_string(),
        id: None,
    }
}

/// kube's routes for one custom resource, in its order.
fn routes(r: &ResourceInfo) -> Vec<Route> {
    let list = format!("{}List", r.schema_name);
    let kind = r.schema_name.as_str();
    let mut root = format!("/apis/{}/{}/{}", r.group, r.version, r.plural);
    let mut out = Vec::new();
    if r.namespaced {
        let mut all = route(root.clone(), "get", "list", "list", &list);
        all.id = Some(format!("list{}ForAllNamespaces", r.kind));
        out.push(all);
        root = format!(
            "/apis/{}/{}/namespaces/{{namespace}}/{}",
            r.group, r.version, r.plural
        );
    }
    out.push(route(root.clone(), "get", "list", "list", &list));
    out.push(route(root.clone(), "post", "post", "create", kind));
    out.push(route(
        root.clone(),
        "delete",
        "deletecollection",
        "deletecollection",
        STATUS,
    ));
    let named = format!("{root}/{{name}}");
    out.push(route(named.clone(), "get", "get", "read", kind));
    out.push(route(named.clone(), "put", "put", "replace", kind));
    out.push(route(named.clone(), "delete", "delete", "delete", STATUS));
    out.push(route(named.clone(), "patch", "patch", "patch", kind));
    for (sub, sample) in [("status", kind), ("scale", SCALE)] {
        if r.has_subresource(sub) {
            let path = format!("{named}/{sub}");
            out.push(route(path.clone(), "get", "get", "read", sample));
            out.push(route(path.clone(), "put", "put", "replace", sample));
            out.push(route(path, "patch", "patch", "patch", sample));
        }
    }
    out
}

/// The parameters of one route, inline: `pretty`, the path's, the action's
/// options and its body.
fn parameters(route: &Route, r: &ResourceInfo, kube: &KubePaths) -> Vec<Value> {
    let mut out = kube.options("pretty");
    if route.path.contains("{namespace}") {
        out.extend(kube.options("namespace"));
    }
    if route.path.contains("{name}") {
        out.push(json!({
            "uniqueItems": true, "type": "string", "description": format!("name of the {}", r.kind),
            "name": "name", "in": "path", "required": true
        }));
    }
    let options = match route.action {
        "deletecollection" => "list",
        action => action,
    };
    out.extend(kube.options(options));
    let body = |schema: &str, required: bool| {
        let mut p = json!({ "name": "body", "in": "body", "schema": schema_ref(schema) });
        if required {
            p["required"] = Value::Bool(true);
        }
        p
    };
    match route.action {
        "post" | "put" => out.push(body(&route.sample, true)),
        "patch" => out.push(body(PATCH, true)),
        "delete" => out.push(body(DELETE_OPTIONS, false)),
        _ => {}
    }
    out
}

fn responses(route: &Route) -> Value {
    let mut out = Map::new();
    let mut add = |code: &str, description: &str| {
        let response = json!({ "description": description, "schema": schema_ref(&route.sample) });
        out.insert(code.to_string(), response);
    };
    add("200", "OK");
    match route.action {
        "post" => {
            add("201", "Created");
            add("202", "Accepted");
        }
        "delete" => add("202", "Accepted"),
        "put" => add("201", "Created"),
        _ => {}
    }
    out.insert("401".into(), json!({ "description": "Unauthorized" }));
    Value::Object(out)
}

fn operation(route: &Route, r: &ResourceInfo, params: Vec<Value>) -> Value {
    let sub = route
        .path
        .rsplit_once("{name}/")
        .map(|(_, s)| s)
        .unwrap_or("");
    let namespaced = if r.namespaced { "Namespaced" } else { "" };
    let op = route
        .id
        .clone()
        .unwrap_or_else(|| format!("{}{namespaced}{}{}", route.verb, r.kind, title(sub)));
    let (id, tag) = operation_id_and_tag(&op, &r.group, &r.version);
    let consumes: &[&str] = match route.method {
        "patch" => &[
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/apply-patch+yaml",
        ],
        _ => &["application/json", "application/yaml"],
    };
    let mut out = json!({
        "description": description(&r.kind, sub, route.verb),
        "consumes": consumes,
        "produces": ["application/json", "application/yaml"],
        "schemes": ["https"],
        "tags": [tag],
        "operationId": id,
        "responses": responses(route),
        "x-kubernetes-action": route.action,
        "x-kubernetes-group-version-kind": {"group": r.group, "kind": r.kind, "version": r.version},
    });
    if !params.is_empty() {
        out["parameters"] = Value::Array(params);
    }
    out
}

fn sort_by_name_in(params: &mut [Value]) {
    let key = |p: &Value| {
        (
            p["name"].as_str().unwrap_or("").to_string(),
            p["in"].as_str().unwrap_or("").to_string(),
        )
    };
    params.sort_by_key(key);
}

/// The name and location of a parameter (kube-openapi's `mapKeyFromParam`).
fn param_key(p: &Value) -> (&Value, &Value) {
    (&p["name"], &p["in"])
}

/// One path of routes: the parameters all of them have (but bodies) become
/// the path's.
fn path_item(routes: &[&Route], r: &ResourceInfo, kube: &KubePaths) -> Value {
    let all: Vec<Vec<Value>> = routes
        .iter()
        .map(|route| parameters(route, r, kube))
        .collect();
    let mut common: Vec<Value> = Vec::new();
    for p in all.first().into_iter().flatten() {
        let everywhere = all
            .iter()
            .all(|ps| ps.iter().any(|q| param_key(q) == param_key(p)));
        if everywhere && p["in"] != "body" {
            common.push(p.clone());
        }
    }
    let mut item = Map::new();
    for (route, params) in routes.iter().zip(all) {
        let mut own: Vec<Value> = params
            .into_iter()
            .filter(|p| !common.iter().any(|c| param_key(c) == param_key(p)))
            .collect();
        sort_by_name_in(&mut own);
        item.insert(route.method.to_string(), operation(route, r, own));
    }
    sort_by_name_in(&mut common);
    if !common.is_empty() {
        item.insert("parameters".into(), Value::Array(common));
    }
    Value::Object(item)
}

/// Every path of a custom resource with its v2 path item.
pub(super) fn custom_resource_paths(r: &ResourceInfo, kube: &KubePaths) -> Vec<(String, Value)> {
    let routes = routes(r);
    let mut paths: Vec<&str> = Vec::new();
    for route in &routes {
        if !paths.contains(&route.path.as_str()) {
            paths.push(&route.path);
        }
    }
    paths
        .into_iter()
        .map(|path| {
            let same: Vec<&Route> = routes.iter().filter(|r| r.path == path).collect();
            (path.to_string(), path_item(&same, r, kube))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::kube_openapi::kube_paths;
    use super::*;

    fn widget() -> ResourceInfo {
        let mut r = super::super::Catalogue::builtin()
            .lookup("apps", "v1", "deployments")
            .unwrap()
            .clone();
        r.group = "openapi-branch.example.com".into();
        r.kind = "Widget".into();
        r.plural = "widgets".into();
        r.schema_name = "com.example.openapi-branch.v1.Widget".into();
        r
    }

    #[test]
    fn operation_ids_and_tags_as_kube_names_them() {
        let (id, tag) = operation_id_and_tag(
            "deletecollectionNamespacedWidget",
            "openapi-branch.example.com",
            "v1",
        );
        assert_eq!(
            id,
            "deleteOpenapiBranchExampleComV1CollectionNamespacedWidget"
        );
        assert_eq!(tag, "openapiBranchExampleCom_v1");
        let (id, tag) = operation_id_and_tag("listClusterRole", "rbac.authorization.k8s.io", "v1");
        assert_eq!(
            (id.as_str(), tag.as_str()),
            ("listRbacAuthorizationV1ClusterRole", "rbacAuthorization_v1")
        );
        assert_eq!(description("Widget", "", "create"), "create a Widget");
        assert_eq!(description("Ingress", "", "delete"), "delete an Ingress");
        assert_eq!(
            description("Widget", "scale", "patch"),
            "partially update scale of the specified Widget"
        );
    }

    /// As kube-apiserver 1.32 served a namespaced CRD with status and scale.
    #[test]
    fn custom_resource_paths_as_kube_builds_them() {
        let kube = kube_paths();
        let paths: Map<String, Value> =
            custom_resource_paths(&widget(), kube).into_iter().collect();
        let all = &paths["/apis/openapi-branch.example.com/v1/widgets"];
        assert_eq!(
            all["get"]["operationId"],
            "listOpenapiBranchExampleComV1WidgetForAllNamespaces"
        );
        assert!(all["get"].get("parameters").is_none());
        assert_eq!(all["parameters"].as_array().unwrap().len(), 11);
        let named =
            &paths["/apis/openapi-branch.example.com/v1/namespaces/{namespace}/widgets/{name}"];
        let names: Vec<&str> = named["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["name", "namespace", "pretty"]);
        assert_eq!(named["get"]["parameters"][0]["name"], "resourceVersion");
        assert_eq!(
            named["patch"]["parameters"][0]["schema"]["$ref"],
            "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
        );
        assert_eq!(named["patch"]["consumes"].as_array().unwrap().len(), 3);
        let collection =
            &paths["/apis/openapi-branch.example.com/v1/namespaces/{namespace}/widgets"];
        assert_eq!(
            collection["delete"]["parameters"].as_array().unwrap().len(),
            10,
            "ListOptions"
        );
        let scale = &paths
            ["/apis/openapi-branch.example.com/v1/namespaces/{namespace}/widgets/{name}/scale"];
        assert_eq!(
            scale["put"]["description"],
            "replace scale of the specified Widget"
        );
        assert_eq!(
            scale["put"]["x-kubernetes-group-version-kind"]["kind"],
            "Widget"
        );
        assert_eq!(
            scale["put"]["responses"]["201"]["schema"]["$ref"],
            "#/definitions/io.k8s.api.autoscaling.v1.Scale"
        );
    }
}
