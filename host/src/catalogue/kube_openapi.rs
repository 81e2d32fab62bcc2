//! kube-apiserver 1.32's OpenAPI paths as data (`kube-paths.json`, written
//! by `tools/openapi-from-golden.py` from its served v2 document): the path
//! items of every built-in group-version and of `/api/`, `/apis/`,
//! `/version/`, ..., in Swagger 2.0 form with kube's shared `parameters`,
//! and the query parameters kube's builder gives each action of a custom
//! resource. Parsed once, on first use. [`to_v3`] turns a v2 path item into
//! the v3 documents' form, as kube builds both from the same routes.

use std::sync::OnceLock;

use serde_json::{json, Map, Value};

use super::schemas::REF_PREFIX;

const KUBE_PATHS: &str = include_str!("kube-paths.json");
const PARAMETERS_PREFIX: &str = "#/parameters/";
const DEFINITIONS_PREFIX: &str = "#/definitions/";

/// The parsed data.
#[derive(Debug, Default)]
pub(super) struct KubePaths {
    /// Action (`list`, `get`, `post`, `put`, `patch`, `delete`) or `pretty`
    /// / `namespace` → its parameters, inline.
    options: Map<String, Value>,
    /// The v2 document's shared parameters by name.
    pub parameters: Map<String, Value>,
    /// The v2 definitions no v3 document has (`/api/`, `/apis/`, `/version/`'s).
    pub definitions: Map<String, Value>,
    /// Every v2 path item, by path.
    pub paths: Map<String, Value>,
}

/// The data, parsed on first call.
pub(super) fn kube_paths() -> &'static KubePaths {
    static PARSED: OnceLock<KubePaths> = OnceLock::new();
    PARSED.get_or_init(|| match serde_json::from_str::<Value>(KUBE_PATHS) {
        Ok(Value::Object(mut data)) => {
            let mut take = |key: &str| match data.remove(key) {
                Some(Value::Object(map)) => map,
                _ => Map::new(),
            };
            KubePaths {
                options: take("options"),
                parameters: take("parameters"),
                definitions: take("definitions"),
                paths: take("paths"),
            }
        }
        _ => {
            tracing::error!("the built-in OpenAPI paths do not parse");
            KubePaths::default()
        }
    })
}

impl KubePaths {
    /// The path items of one group-version (`api/v1`, `apis/apps/v1`): its
    /// root (`/apis/apps/v1/`) and every path below it.
    pub fn group_version(&self, gv_path: &str) -> impl Iterator<Item = (&String, &Value)> {
        let prefix = format!("/{gv_path}/");
        self.paths
            .iter()
            .filter(move |(p, _)| p.starts_with(&prefix))
    }

    /// The path item of a group (`/apis/apps/`), if kube serves the group.
    pub fn group(&self, group: &str) -> Option<&Value> {
        self.paths.get(&format!("/apis/{group}/"))
    }

    /// The paths outside every group: `/api/`, `/apis/`, `/version/`,
    /// `/.well-known/openid-configuration/`, `/openid/v1/jwks/`.
    pub fn top_level(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.paths.iter().filter(|(p, _)| {
            matches!(p.as_str(), "/api/" | "/apis/")
                || !(p.starts_with("/api/") || p.starts_with("/apis/"))
        })
    }

    /// The parameters kube gives an action (or `pretty`, `namespace`).
    pub fn options(&self, name: &str) -> Vec<Value> {
        match self.options.get(name) {
            Some(Value::Array(params)) => params.clone(),
            _ => Vec::new(),
        }
    }

    /// A parameter, its `$ref` to a shared one followed.
    pub fn deref<'a>(&'a self, param: &'a Value) -> &'a Value {
        param
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix(PARAMETERS_PREFIX))
            .and_then(|name| self.parameters.get(name))
            .unwrap_or(param)
    }

    /// The `$ref` to the shared parameter equal to `param`, if kube shares
    /// it (its v2 document shares every parameter but `name`, `dryRun`,
    /// `fieldValidation` and bodies of a kind's own schema).
    pub fn shared(&self, param: &Value) -> Option<Value> {
        let (name, _) = self.parameters.iter().find(|(_, p)| p == &param)?;
        Some(json!({ "$ref": format!("{PARAMETERS_PREFIX}{name}") }))
    }
}

/// A v2 schema (`{"$ref": "#/definitions/..."}`) as v3 refers to it.
fn schema_v3(schema: &Value) -> Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let name = r.strip_prefix(DEFINITIONS_PREFIX).unwrap_or(r);
            json!({ "$ref": format!("{REF_PREFIX}{name}") })
        }
        None => schema.clone(),
    }
}

/// One non-body parameter: its type moves into `schema`.
fn parameter_v3(p: &Value) -> Value {
    let mut out = Map::new();
    for key in ["name", "in", "description"] {
        if let Some(v) = p.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    if p.get("required") == Some(&Value::Bool(true)) {
        out.insert("required".into(), Value::Bool(true));
    }
    let mut schema = Map::new();
    for key in ["type", "uniqueItems"] {
        if let Some(v) = p.get(key) {
            schema.insert(key.into(), v.clone());
        }
    }
    out.insert("schema".into(), Value::Object(schema));
    Value::Object(out)
}

/// `{type: {"schema": ...}}` for each content type of `types`.
fn content(types: Option<&Value>, schema: &Value) -> Value {
    let types = types.and_then(Value::as_array).into_iter().flatten();
    let map: Map<String, Value> = types
        .filter_map(Value::as_str)
        .map(|t| (t.to_string(), json!({ "schema": schema_v3(schema) })))
        .collect();
    Value::Object(map)
}

fn responses_v3(op: &Value) -> Value {
    let mut out = Map::new();
    for (code, r) in op["responses"].as_object().into_iter().flatten() {
        let mut response = Map::new();
        response.insert("description".into(), r["description"].clone());
        if let Some(schema) = r.get("schema") {
            response.insert("content".into(), content(op.get("produces"), schema));
        }
        out.insert(code.clone(), Value::Object(response));
    }
    Value::Object(out)
}

const COPIED: &[&str] = &[
    "tags",
    "description",
    "operationId",
    "x-kubernetes-action",
    "x-kubernetes-group-version-kind",
];

fn operation_v3(op: &Value, kube: &KubePaths) -> Value {
    let mut out = Map::new();
    for key in COPIED {
        if let Some(v) = op.get(*key) {
            out.insert(key.to_string(), v.clone());
        }
    }
    let params = op["parameters"].as_array().into_iter().flatten();
    let params: Vec<&Value> = params.map(|p| kube.deref(p)).collect();
    let query: Vec<Value> = params
        .iter()
        .filter(|p| p["in"] != "body")
        .map(|p| parameter_v3(p))
        .collect();
    if !query.is_empty() {
        out.insert("parameters".into(), Value::Array(query));
    }
    if let Some(body) = params.iter().find(|p| p["in"] == "body") {
        let mut request = Map::new();
        request.insert(
            "content".into(),
            content(op.get("consumes"), &body["schema"]),
        );
        if body.get("required") == Some(&Value::Bool(true)) {
            request.insert("required".into(), Value::Bool(true));
        }
        out.insert("requestBody".into(), Value::Object(request));
    }
    out.insert("responses".into(), responses_v3(op));
    Value::Object(out)
}

/// A v2 path item as kube's v3 documents have it: parameters' types in a
/// `schema`, the body a `requestBody` with one content per consumed type,
/// each response one content per produced type.
pub(super) fn to_v3(item: &Value, kube: &KubePaths) -> Value {
    let mut out = Map::new();
    for (key, value) in item.as_object().into_iter().flatten() {
        let converted = match key.as_str() {
            "parameters" => {
                let params = value.as_array().into_iter().flatten();
                Value::Array(params.map(|p| parameter_v3(kube.deref(p))).collect())
            }
            _ => operation_v3(value, kube),
        };
        out.insert(key.clone(), converted);
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_has_kube_paths_and_shared_parameters() {
        let kube = kube_paths();
        assert!(kube
            .paths
            .contains_key("/apis/apps/v1/namespaces/{namespace}/deployments"));
        assert!(kube.group("apps").is_some());
        let top: Vec<&String> = kube.top_level().map(|(p, _)| p).collect();
        assert!(top.contains(&&"/version/".to_string()), "{top:?}");
        assert!(!top.iter().any(|p| p.starts_with("/apis/apps")));
        let names: Vec<String> = kube
            .options("patch")
            .iter()
            .map(|p| p["name"].to_string())
            .collect();
        assert_eq!(
            names,
            [
                "\"dryRun\"",
                "\"fieldManager\"",
                "\"fieldValidation\"",
                "\"force\""
            ]
        );
        let pretty = &kube.options("pretty")[0];
        let shared = kube.shared(pretty).unwrap();
        assert!(shared["$ref"]
            .as_str()
            .unwrap()
            .starts_with("#/parameters/pretty-"));
        assert_eq!(kube.deref(&shared), pretty);
    }

    #[test]
    fn v3_form_moves_types_and_bodies() {
        let kube = kube_paths();
        let item = &kube.paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"];
        let v3 = to_v3(item, kube);
        let patch = &v3["patch"];
        let body = &patch["requestBody"];
        assert_eq!(body["required"], true);
        assert_eq!(
            body["content"]["application/apply-patch+yaml"]["schema"]["$ref"],
            "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
        );
        let force = patch["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "force");
        assert_eq!(
            force.unwrap()["schema"],
            json!({"type": "boolean", "uniqueItems": true})
        );
        assert_eq!(v3["parameters"][0]["name"], "name");
        assert!(
            v3["get"]["responses"]["200"]["content"]["application/vnd.kubernetes.protobuf"]
                .is_object()
        );
    }
}
