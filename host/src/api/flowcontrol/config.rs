//! The API's FlowSchemas and PriorityLevelConfigurations
//! (flowcontrol.apiserver.k8s.io/v1) read into what classifying a request
//! needs, as kube's APF filter reads them: schemas by matchingPrecedence
//! (then name), each with its rules, its priority level and how it tells
//! flows apart; levels exempt or limited (nominal shares, queuing or
//! reject).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::apimachinery::request_info::ResourceRequest;
use crate::apimachinery::user::UserInfo;

/// A priority level.
#[derive(Clone, Debug, PartialEq)]
pub struct Level {
    pub name: String,
    pub uid: String,
    /// None: exempt.
    pub limited: Option<Limited>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Limited {
    pub shares: u32,
    /// None: requests beyond the limit are rejected at once.
    pub queuing: Option<Queuing>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Queuing {
    pub queues: usize,
    pub hand_size: usize,
    pub queue_length_limit: usize,
}

#[derive(Clone, Debug)]
pub struct Schema {
    pub name: String,
    pub uid: String,
    precedence: i64,
    pub level: String,
    distinguisher: Option<String>,
    rules: Vec<Value>,
}

/// What a request is, for classification.
pub struct Request<'a> {
    pub user: &'a UserInfo,
    pub method: &'a http::Method,
    pub path: &'a str,
    pub resource: Option<&'a ResourceRequest>,
}

/// The configuration as last read.
#[derive(Debug, Default)]
pub struct Config {
    pub schemas: Vec<Schema>,
    pub levels: BTreeMap<String, Level>,
}

fn text<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    let items = v.get(key).and_then(Value::as_array).into_iter().flatten();
    items.filter_map(Value::as_str).map(String::from).collect()
}

fn number(v: &Value, pointer: &str, default: u64) -> u64 {
    v.pointer(pointer)
        .and_then(Value::as_u64)
        .unwrap_or(default)
}

impl Config {
    pub fn read(schemas: &[Value], levels: &[Value]) -> Config {
        let levels = levels
            .iter()
            .map(level_of)
            .map(|l| (l.name.clone(), l))
            .collect();
        let schemas = schemas.iter().map(schema_of).collect();
        Config { schemas, levels }
    }
}

/// The first schema (by matchingPrecedence, then name) matching `req`
/// whose level exists, its level, and the flow's key (kube's
/// distinguisher: the user's name or the namespace).
pub fn classify<'c>(
    schemas: &'c [Schema],
    levels: &'c BTreeMap<String, Level>,
    req: &Request<'_>,
) -> Option<(&'c Schema, &'c Level, String)> {
    let schema = schemas
        .iter()
        .filter(|s| levels.contains_key(&s.level))
        .filter(|s| s.rules.iter().any(|r| rule_matches(r, req)))
        .min_by(|a, b| (a.precedence, &a.name).cmp(&(b.precedence, &b.name)))?;
    let level = levels.get(&schema.level)?;
    let flow = match schema.distinguisher.as_deref() {
        Some("ByUser") => req.user.username.clone(),
        Some("ByNamespace") => req
            .resource
            .and_then(|r| r.namespace.clone())
            .unwrap_or_default(),
        _ => String::new(),
    };
    Some((schema, level, flow))
}

/// A PriorityLevelConfiguration read.
pub fn level_of(v: &Value) -> Level {
    let name = text(v, "/metadata/name").to_string();
    let uid = text(v, "/metadata/uid").to_string();
    if text(v, "/spec/type") == "Exempt" {
        return Level {
            name,
            uid,
            limited: None,
        };
    }
    let l = v.pointer("/spec/limited").unwrap_or(&Value::Null);
    let queuing = (text(l, "/limitResponse/type") == "Queue").then(|| Queuing {
        queues: number(l, "/limitResponse/queuing/queues", 64).max(1) as usize,
        hand_size: number(l, "/limitResponse/queuing/handSize", 8).max(1) as usize,
        queue_length_limit: number(l, "/limitResponse/queuing/queueLengthLimit", 50) as usize,
    });
    Level {
        name,
        uid,
        limited: Some(Limited {
            shares: number(l, "/nominalConcurrencyShares", 30) as u32,
            queuing,
        }),
    }
}

/// A FlowSchema read.
pub fn schema_of(v: &Value) -> Schema {
    let distinguisher = text(v, "/spec/distinguisherMethod/type");
    Schema {
        name: text(v, "/metadata/name").to_string(),
        uid: text(v, "/metadata/uid").to_string(),
        precedence: v
            .pointer("/spec/matchingPrecedence")
            .and_then(Value::as_i64)
            .unwrap_or(1000),
        level: text(v, "/spec/priorityLevelConfiguration/name").to_string(),
        distinguisher: (!distinguisher.is_empty()).then(|| distinguisher.to_string()),
        rules: v
            .pointer("/spec/rules")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
    }
}

/// kube's `matchesPolicyRule`: a subject, and a resource or non-resource rule.
fn rule_matches(rule: &Value, req: &Request<'_>) -> bool {
    let subjects = rule.get("subjects").and_then(Value::as_array);
    if !subjects
        .into_iter()
        .flatten()
        .any(|s| subject_matches(s, req.user))
    {
        return false;
    }
    let rules = |key: &str| {
        rule.get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
    };
    match req.resource {
        Some(r) => rules("resourceRules").any(|rr| resource_matches(rr, r)),
        None => {
            let verb = req.method.as_str().to_ascii_lowercase();
            rules("nonResourceRules").any(|nr| non_resource_matches(nr, &verb, req.path))
        }
    }
}

fn subject_matches(s: &Value, user: &UserInfo) -> bool {
    match text(s, "/kind") {
        "User" => {
            let name = text(s, "/user/name");
            name == "*" || name == user.username
        }
        "Group" => {
            let name = text(s, "/group/name");
            name == "*" || user.groups.iter().any(|g| g == name)
        }
        "ServiceAccount" => {
            let (ns, name) = (
                text(s, "/serviceAccount/namespace"),
                text(s, "/serviceAccount/name"),
            );
            let prefix = format!("system:serviceaccount:{ns}:");
            match user.username.strip_prefix(&prefix) {
                Some(sa) => name == "*" || name == sa,
                None => false,
            }
        }
        _ => false,
    }
}

fn listed(list: &[String], value: &str) -> bool {
    list.iter().any(|x| x == "*" || x == value)
}

fn resource_matches(rr: &Value, r: &ResourceRequest) -> bool {
    let resource = match &r.subresource {
        Some(sub) => format!("{}/{sub}", r.resource),
        None => r.resource.clone(),
    };
    if !listed(&strings(rr, "verbs"), r.verb.as_str())
        || !listed(&strings(rr, "apiGroups"), &r.group)
        || !listed(&strings(rr, "resources"), &resource)
    {
        return false;
    }
    match &r.namespace {
        None => rr.get("clusterScope").and_then(Value::as_bool) == Some(true),
        Some(ns) => listed(&strings(rr, "namespaces"), ns),
    }
}

fn non_resource_matches(nr: &Value, verb: &str, path: &str) -> bool {
    listed(&strings(nr, "verbs"), verb)
        && strings(nr, "nonResourceURLs").iter().any(|u| {
            u == "*" || u == path || u.strip_suffix('*').is_some_and(|p| path.starts_with(p))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bootstrap() -> Config {
        let objects = crate::controllers::flowcontrol::objects().unwrap();
        let kind = |k: &str| -> Vec<Value> {
            objects.iter().filter(|o| o["kind"] == k).cloned().collect()
        };
        Config::read(&kind("FlowSchema"), &kind("PriorityLevelConfiguration"))
    }

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            username: name.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..UserInfo::default()
        }
    }

    fn classified(c: &Config, u: &UserInfo, method: &str, path: &str) -> (String, String, String) {
        let method: http::Method = method.parse().unwrap();
        let resource = crate::apimachinery::request_info::parse(&method, path, None);
        let req = Request {
            user: u,
            method: &method,
            path,
            resource: resource.as_ref(),
        };
        let (s, l, flow) = classify(&c.schemas, &c.levels, &req).unwrap();
        (s.name.clone(), l.name.clone(), flow)
    }

    #[test]
    fn kubes_bootstrap_schemas_classify_as_kube_does() {
        let c = bootstrap();
        let admin = user("admin", &["system:masters", "system:authenticated"]);
        assert_eq!(classified(&c, &admin, "GET", "/api/v1/pods").1, "exempt");
        let alice = user("alice", &["system:authenticated"]);
        assert_eq!(
            classified(&c, &alice, "GET", "/api/v1/namespaces/a/pods"),
            (
                "global-default".into(),
                "global-default".into(),
                "alice".into()
            )
        );
        assert_eq!(
            classified(&c, &alice, "GET", "/healthz").1,
            "exempt",
            "probes"
        );
        let kcm = user("system:kube-controller-manager", &["system:authenticated"]);
        assert_eq!(
            classified(&c, &kcm, "GET", "/api/v1/namespaces/b/pods"),
            (
                "kube-controller-manager".into(),
                "workload-high".into(),
                "b".into()
            )
        );
        let sa = user(
            "system:serviceaccount:default:app",
            &["system:serviceaccounts", "system:authenticated"],
        );
        assert_eq!(
            classified(&c, &sa, "GET", "/api/v1/namespaces/default/pods").1,
            "workload-low"
        );
        assert_eq!(
            c.levels["catch-all"].limited.as_ref().unwrap().queuing,
            None
        );
    }
}
