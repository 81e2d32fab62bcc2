//! Server-side field validation (`fieldValidation=Strict|Warn|Ignore`):
//! finds the fields of a JSON request body that the resource's schema does
//! not know and the fields given twice, reported in document order with
//! kube-apiserver's wording, and prunes unknown fields from a decoded object.
//! kube-apiserver defaults to Warn when the parameter is absent; kubectl
//! sends Strict by default.

use super::Schemas;
use kube_rules::gofmt::quote;
use serde_json::{Map, Value};
use std::collections::HashSet;

use super::schemas::resolve;
use super::{Catalogue, ResourceInfo};

/// Upper bound on reported problems (kube stops at 100 too).
const MAX_PROBLEMS: usize = 100;

/// Unknown and duplicate field paths found in a request body, e.g.
/// `spec.replicass` or `spec.template.spec.containers[0].imagee`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldProblems {
    pub unknown: Vec<String>,
    pub duplicate: Vec<String>,
    /// Every message, in the order the fields appear in the body.
    messages: Vec<String>,
}

impl FieldProblems {
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// Problems found elsewhere (a custom resource's pruning): unknown
    /// fields, then duplicates.
    pub fn from_paths(unknown: Vec<String>, duplicate: Vec<String>) -> FieldProblems {
        let mut problems = FieldProblems::default();
        unknown.into_iter().for_each(|p| problems.record(false, p));
        duplicate.into_iter().for_each(|p| problems.record(true, p));
        problems
    }

    fn record(&mut self, duplicate: bool, path: String) {
        let message = if duplicate {
            format!("duplicate field {}", quote(&path))
        } else {
            format!("unknown field {}", quote(&path))
        };
        if self.messages.len() >= MAX_PROBLEMS || self.messages.contains(&message) {
            return;
        }
        self.messages.push(message);
        if duplicate {
            self.duplicate.push(path);
        } else {
            self.unknown.push(path);
        }
    }
}

/// Checks a JSON body against the resource's schema. Bodies that are not
/// valid JSON yield whatever was found before the syntax error (the caller
/// rejects them when decoding).
pub fn check(cat: &Catalogue, res: &ResourceInfo, body: &[u8]) -> FieldProblems {
    let mut problems = FieldProblems::default();
    let root = cat.schemas().get(&res.schema_name);
    let mut walker = Walker {
        scan: Scanner {
            bytes: body,
            pos: 0,
        },
        schemas: cat.schemas(),
        problems: &mut problems,
    };
    let _ = walker.value(root, "");
    problems
}

/// `strict decoding error: unknown field "spec.x", duplicate field "spec.y"`.
pub fn strict_error_message(p: &FieldProblems) -> String {
    format!("strict decoding error: {}", p.messages.join(", "))
}

/// The full message of kube's 400 BadRequest for fieldValidation=Strict:
/// `Deployment in version "v1" cannot be handled as a Deployment: strict ...`.
pub fn bad_request_message(res: &ResourceInfo, p: &FieldProblems) -> String {
    format!(
        "{} in version {} cannot be handled as a {}: {}",
        res.kind,
        quote(&res.version),
        res.kind,
        strict_error_message(p)
    )
}

/// One warning per problem, for fieldValidation=Warn.
pub fn warnings(p: &FieldProblems) -> Vec<String> {
    p.messages.clone()
}

/// Removes every field the schema does not know (what kube's decoder drops
/// under Ignore and Warn), so nothing unknown is stored.
pub fn prune_unknown(cat: &Catalogue, res: &ResourceInfo, obj: &mut Value) {
    if let Some(root) = cat.schemas().get(&res.schema_name) {
        prune(cat.schemas(), root, obj);
    }
}

/// How a schema treats a JSON object or array.
enum Shape<'a> {
    /// Known properties; everything else is unknown.
    Struct(&'a Map<String, Value>),
    /// Any key; values follow the schema.
    Map(&'a Value),
    Array(&'a Value),
    /// Anything goes (RawExtension, preserve-unknown-fields, scalars, ...).
    Opaque,
}

fn shape<'a>(schemas: &'a Schemas, schema: Option<&'a Value>) -> Shape<'a> {
    let Some(s) = schema.and_then(|s| resolve(schemas, s)) else {
        return Shape::Opaque;
    };
    if s.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
        return Shape::Opaque;
    }
    if let Some(props) = s.get("properties").and_then(Value::as_object) {
        return Shape::Struct(props);
    }
    if let Some(add) = s.get("additionalProperties").filter(|a| a.is_object()) {
        return Shape::Map(add);
    }
    match s.get("items") {
        Some(items) => Shape::Array(items),
        None => Shape::Opaque,
    }
}

fn child_path(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn prune(schemas: &Schemas, schema: &Value, value: &mut Value) {
    match (shape(schemas, Some(schema)), value) {
        (Shape::Struct(props), Value::Object(obj)) => {
            obj.retain(|k, _| props.contains_key(k));
            for (k, v) in obj.iter_mut() {
                if let Some(sub) = props.get(k) {
                    prune(schemas, sub, v);
                }
            }
        }
        (Shape::Map(sub), Value::Object(obj)) => {
            obj.values_mut().for_each(|v| prune(schemas, sub, v));
        }
        (Shape::Array(sub), Value::Array(items)) => {
            items.iter_mut().for_each(|v| prune(schemas, sub, v));
        }
        _ => {}
    }
}

/// A minimal cursor over raw JSON, enough to see keys in order (serde_json
/// keeps only the last of duplicated keys).
struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Scanner<'_> {
    fn skip_ws(&mut self) {
        while matches!(self.bytes.get(self.pos), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.bytes.get(self.pos).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Reads a string token and returns its decoded value.
    fn string(&mut self) -> Option<String> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let start = self.pos;
        self.pos += 1;
        loop {
            match *self.bytes.get(self.pos)? {
                b'\\' => self.pos += 2,
                b'"' => break,
                _ => self.pos += 1,
            }
        }
        self.pos += 1;
        serde_json::from_slice(self.bytes.get(start..self.pos)?).ok()
    }

    /// Skips any value without looking inside it.
    fn skip(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(|_| ()),
            b'{' | b'[' => self.skip_nested(),
            _ => {
                let start = self.pos;
                while !matches!(
                    self.bytes.get(self.pos),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.pos += 1;
                }
                (self.pos > start).then_some(())
            }
        }
    }

    fn skip_nested(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.peek()? {
                b'"' => {
                    self.string()?;
                    continue;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' => depth -= 1,
                _ => {}
            }
            self.pos += 1;
            if depth == 0 {
                return Some(());
            }
        }
    }
}

/// Walks the raw body alongside the schema, recording problems.
struct Walker<'a, 'p> {
    scan: Scanner<'a>,
    schemas: &'a Schemas,
    problems: &'p mut FieldProblems,
}

impl<'a> Walker<'a, '_> {
    fn value(&mut self, schema: Option<&'a Value>, path: &str) -> Option<()> {
        match (self.scan.peek()?, shape(self.schemas, schema)) {
            (b'{', Shape::Struct(props)) => self.object(path, |k| props.get(k)),
            (b'{', Shape::Map(sub)) => self.object(path, |_| Some(sub)),
            (b'[', Shape::Array(sub)) => self.array(sub, path),
            _ => self.scan.skip(),
        }
    }

    /// Walks an object; `lookup` gives a key's schema, `None` meaning the
    /// key is unknown.
    fn object(&mut self, path: &str, lookup: impl Fn(&str) -> Option<&'a Value>) -> Option<()> {
        self.scan.eat(b'{');
        let mut seen: HashSet<String> = HashSet::new();
        if self.scan.eat(b'}') {
            return Some(());
        }
        loop {
            let key = self.scan.string()?;
            if !self.scan.eat(b':') {
                return None;
            }
            let path = child_path(path, &key);
            match lookup(&key) {
                Some(sub) => {
                    if !seen.insert(key) {
                        self.problems.record(true, path.clone());
                    }
                    self.value(Some(sub), &path)?;
                }
                None => {
                    self.problems.record(false, path);
                    self.scan.skip()?;
                }
            }
            if self.scan.eat(b'}') {
                return Some(());
            }
            if !self.scan.eat(b',') {
                return None;
            }
        }
    }

    fn array(&mut self, items: &'a Value, path: &str) -> Option<()> {
        self.scan.eat(b'[');
        if self.scan.eat(b']') {
            return Some(());
        }
        let mut i = 0usize;
        loop {
            self.value(Some(items), &format!("{path}[{i}]"))?;
            i += 1;
            if self.scan.eat(b']') {
                return Some(());
            }
            if !self.scan.eat(b',') {
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(cat: &Catalogue) -> ResourceInfo {
        cat.lookup("apps", "v1", "deployments").unwrap().clone()
    }

    const BODY: &str = r#"{
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"foo": "bar"}},
        "spec": {
            "replicass": 1,
            "replicas": 2,
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{
                    "name": "c", "image": "nginx",
                    "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
                    "ports": [{"containerPort": 80, "protocl": "TCP"}]
                }]}
            }
        }
    }"#;

    #[test]
    fn flags_unknown_and_duplicate_fields_in_order() {
        let cat = Catalogue::builtin();
        let p = check(&cat, &deployment(&cat), BODY.as_bytes());
        assert_eq!(
            p.unknown,
            [
                "spec.replicass",
                "spec.template.spec.containers[0].ports[0].protocl"
            ]
        );
        assert_eq!(p.duplicate, ["spec.replicas"]);
        assert_eq!(
            strict_error_message(&p),
            "strict decoding error: unknown field \"spec.replicass\", duplicate field \
             \"spec.replicas\", unknown field \"spec.template.spec.containers[0].ports[0].protocl\""
        );
        assert_eq!(warnings(&p)[0], "unknown field \"spec.replicass\"");
        assert!(bad_request_message(&deployment(&cat), &p)
            .starts_with("Deployment in version \"v1\" cannot be handled as a Deployment: strict"));
    }

    #[test]
    fn conformance_body_message() {
        let cat = Catalogue::builtin();
        let body = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
            "spec":{"unknownField":"foo","replicas":2,"replicas":3}}"#;
        let p = check(&cat, &deployment(&cat), body.as_bytes());
        assert_eq!(
            strict_error_message(&p),
            "strict decoding error: unknown field \"spec.unknownField\", duplicate field \"spec.replicas\""
        );
    }

    #[test]
    fn valid_body_has_no_problems() {
        let cat = Catalogue::builtin();
        let body = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",
            "annotations":{"a":"b"},"ownerReferences":[{"apiVersion":"v1","kind":"X","name":"x","uid":"u"}]},
            "spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":"http"}],
            "resources":{"requests":{"cpu":"100m"}}}],
            "volumes":[{"name":"v","emptyDir":{}}]}}"#;
        let pod = cat.lookup("", "v1", "pods").unwrap();
        assert!(check(&cat, pod, body.as_bytes()).is_empty());
    }

    #[test]
    fn unknown_metadata_and_duplicate_map_keys() {
        let cat = Catalogue::builtin();
        let body = r#"{"metadata":{"name":"x","unknownMeta":"y","labels":{"a":"1","a":"2"}},"bogus":{"z":1,"z":2}}"#;
        let p = check(&cat, &deployment(&cat), body.as_bytes());
        assert_eq!(p.unknown, ["metadata.unknownMeta", "bogus"]);
        assert_eq!(p.duplicate, ["metadata.labels.a"]);
    }

    #[test]
    fn opaque_values_are_not_inspected() {
        let cat = Catalogue::builtin();
        let body = r#"{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"r"},
            "revision":1,"data":{"anything":{"goes":[1,2]},"anything":1}}"#;
        let cr = cat.lookup("apps", "v1", "controllerrevisions").unwrap();
        assert!(check(&cat, cr, body.as_bytes()).is_empty());
    }

    #[test]
    fn prune_drops_only_unknown_fields() {
        let cat = Catalogue::builtin();
        let mut obj: Value = serde_json::from_str(BODY).unwrap();
        prune_unknown(&cat, &deployment(&cat), &mut obj);
        assert!(obj["spec"].get("replicass").is_none());
        assert_eq!(obj["spec"]["replicas"], 3);
        assert_eq!(obj["metadata"]["labels"], json!({"foo": "bar"}));
        let c = &obj["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(c["resources"]["limits"]["cpu"], "1");
        assert_eq!(c["ports"][0], json!({"containerPort": 80}));
    }

    #[test]
    fn a_duplicate_among_two_hundred_thousand_labels_is_found() {
        let cat = Catalogue::builtin();
        let mut body = String::from(r#"{"metadata":{"name":"x","labels":{"#);
        for i in 0..200_000 {
            body.push_str(&format!(r#""k{i}":"v","#));
        }
        body.push_str(r#""k7":"again"}}}"#);
        let p = check(&cat, &deployment(&cat), body.as_bytes());
        assert_eq!(p.duplicate, ["metadata.labels.k7"]);
        assert!(p.unknown.is_empty());
    }

    #[test]
    fn broken_json_does_not_panic() {
        let cat = Catalogue::builtin();
        for body in ["", "{", "{\"spec\":", "[1,2", "{\"a\":\"\\", "nul"] {
            let _ = check(&cat, &deployment(&cat), body.as_bytes());
        }
    }
}
