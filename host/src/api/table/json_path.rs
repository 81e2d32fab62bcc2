//! The JSONPath subset CRDs use in `additionalPrinterColumns` and
//! `selectableFields` (kube's k8s.io/client-go/util/jsonpath): `.field`,
//! `['field']`, `[n]` (negative from the end), `[*]`, `..field` (recursive
//! descent) and filters `[?(@.a.b == "x")]` with `==`/`!=` or bare
//! existence `[?(@.a)]`. Evaluation returns every match in document order.

use serde_json::Value;

#[derive(Clone, Debug, PartialEq)]
enum Step {
    Field(String),
    Index(i64),
    All,
    Descend(String),
    Filter(Vec<String>, Option<(bool, Value)>),
}

/// A parsed path, evaluated many times.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonPath(Vec<Step>);

impl JsonPath {
    /// Parses `.spec.replicas` (braces `{...}` allowed around it).
    pub fn parse(text: &str) -> Result<JsonPath, String> {
        let t = text.trim();
        let t = t
            .strip_prefix('{')
            .and_then(|x| x.strip_suffix('}'))
            .unwrap_or(t);
        let t = t.strip_prefix('$').unwrap_or(t);
        let mut steps = Vec::new();
        let mut rest = t;
        while !rest.is_empty() {
            rest = parse_step(rest, &mut steps)?;
        }
        Ok(JsonPath(steps))
    }

    /// Every value the path selects in `root`.
    pub fn find<'a>(&self, root: &'a Value) -> Vec<&'a Value> {
        let mut current = vec![root];
        for step in &self.0 {
            let mut next = Vec::new();
            for v in current {
                apply(step, v, &mut next);
            }
            current = next;
        }
        current
    }
}

fn parse_step<'a>(rest: &'a str, steps: &mut Vec<Step>) -> Result<&'a str, String> {
    if let Some(r) = rest.strip_prefix("..") {
        let (name, r) = take_name(r);
        if name.is_empty() {
            return Err("recursive descent needs a field name".into());
        }
        steps.push(Step::Descend(name.to_string()));
        return Ok(r);
    }
    if let Some(r) = rest.strip_prefix('.') {
        let (name, r) = take_name(r);
        if name == "*" {
            steps.push(Step::All);
        } else if !name.is_empty() {
            steps.push(Step::Field(name.to_string()));
        }
        return Ok(r);
    }
    if let Some(r) = rest.strip_prefix('[') {
        let end = closing_bracket(r).ok_or("unterminated [")?;
        steps.push(bracket(r[..end].trim())?);
        return Ok(&r[end + 1..]);
    }
    let (name, r) = take_name(rest);
    if name.is_empty() {
        return Err(format!("unrecognized character in path: {rest:?}"));
    }
    steps.push(Step::Field(name.to_string()));
    Ok(r)
}

fn take_name(s: &str) -> (&str, &str) {
    let end = s.find(['.', '[']).unwrap_or(s.len());
    (&s[..end], &s[end..])
}

/// The index of the `]` closing a bracket whose contents start `s`
/// (quotes and nested brackets respected).
fn closing_bracket(s: &str) -> Option<usize> {
    let (mut depth, mut quote) = (0usize, None::<char>);
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '[') => depth += 1,
            (None, ']') if depth == 0 => return Some(i),
            (None, ']') => depth -= 1,
            _ => {}
        }
    }
    None
}

fn unquote(s: &str) -> Option<&str> {
    s.strip_prefix('\'')
        .and_then(|x| x.strip_suffix('\''))
        .or_else(|| s.strip_prefix('"').and_then(|x| x.strip_suffix('"')))
}

fn bracket(inner: &str) -> Result<Step, String> {
    if inner == "*" {
        return Ok(Step::All);
    }
    if let Some(name) = unquote(inner) {
        return Ok(Step::Field(name.to_string()));
    }
    if let Some(filter) = inner.strip_prefix("?(").and_then(|f| f.strip_suffix(')')) {
        return parse_filter(filter.trim());
    }
    inner
        .parse::<i64>()
        .map(Step::Index)
        .map_err(|_| format!("unsupported subscript [{inner}]"))
}

fn parse_filter(f: &str) -> Result<Step, String> {
    let (left, op) = match (f.find("=="), f.find("!=")) {
        (Some(i), _) => (&f[..i], Some((true, &f[i + 2..]))),
        (None, Some(i)) => (&f[..i], Some((false, &f[i + 2..]))),
        _ => (f, None),
    };
    let path = left
        .trim()
        .strip_prefix('@')
        .ok_or("a filter starts with @")?;
    let fields = path
        .split('.')
        .filter(|p| !p.is_empty())
        .map(String::from)
        .collect();
    let compare = match op {
        None => None,
        Some((eq, right)) => Some((eq, literal(right.trim())?)),
    };
    Ok(Step::Filter(fields, compare))
}

fn literal(s: &str) -> Result<Value, String> {
    if let Some(text) = unquote(s) {
        return Ok(Value::String(text.to_string()));
    }
    serde_json::from_str(s).map_err(|_| format!("unsupported filter value {s}"))
}

fn apply<'a>(step: &Step, v: &'a Value, out: &mut Vec<&'a Value>) {
    match step {
        Step::Field(name) => out.extend(v.get(name.as_str())),
        Step::Index(i) => {
            if let Some(items) = v.as_array() {
                let len = items.len() as i64;
                let at = if *i < 0 { len + i } else { *i };
                out.extend(usize::try_from(at).ok().and_then(|at| items.get(at)));
            }
        }
        Step::All => match v {
            Value::Array(items) => out.extend(items.iter()),
            Value::Object(map) => out.extend(map.values()),
            _ => {}
        },
        Step::Descend(name) => descend(name, v, out),
        Step::Filter(fields, compare) => {
            if let Some(items) = v.as_array() {
                out.extend(items.iter().filter(|item| passes(item, fields, compare)));
            }
        }
    }
}

fn descend<'a>(name: &str, v: &'a Value, out: &mut Vec<&'a Value>) {
    // An explicit stack: a deep object cannot exhaust the thread's stack.
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                out.extend(map.get(name));
                stack.extend(map.values().rev());
            }
            Value::Array(items) => stack.extend(items.iter().rev()),
            _ => {}
        }
    }
}

fn passes(item: &Value, fields: &[String], compare: &Option<(bool, Value)>) -> bool {
    let found = fields.iter().try_fold(item, |v, f| v.get(f.as_str()));
    match (found, compare) {
        (None, _) => false,
        (Some(_), None) => true,
        (Some(v), Some((eq, want))) => (v == want) == *eq,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn find(path: &str, v: &Value) -> Vec<Value> {
        JsonPath::parse(path)
            .unwrap()
            .find(v)
            .into_iter()
            .cloned()
            .collect()
    }

    #[test]
    fn fields_indexes_and_wildcards() {
        let v = json!({"spec": {"replicas": 3, "ports": [{"port": 80}, {"port": 443}], "a.b": 1}});
        assert_eq!(find(".spec.replicas", &v), [json!(3)]);
        assert_eq!(find("{.spec.ports[1].port}", &v), [json!(443)]);
        assert_eq!(find(".spec.ports[-1].port", &v), [json!(443)]);
        assert_eq!(find(".spec.ports[*].port", &v), [json!(80), json!(443)]);
        assert_eq!(find(".spec['a.b']", &v), [json!(1)]);
        assert!(find(".spec.missing", &v).is_empty());
        assert_eq!(find("..port", &v), [json!(80), json!(443)]);
    }

    #[test]
    fn filters_select_list_items() {
        let v = json!({"status": {"conditions": [
            {"type": "Ready", "status": "True"}, {"type": "Issuing", "status": "False"}]}});
        let ready = r#".status.conditions[?(@.type=="Ready")].status"#;
        assert_eq!(find(ready, &v), [json!("True")]);
        let not_ready = ".status.conditions[?(@.type!='Ready')].type";
        assert_eq!(find(not_ready, &v), [json!("Issuing")]);
        assert_eq!(find(".status.conditions[?(@.status)].type", &v).len(), 2);
    }

    #[test]
    fn bad_paths_are_refused() {
        assert!(JsonPath::parse(".spec[").is_err());
        assert!(JsonPath::parse(".spec[abc]").is_err());
    }
}
