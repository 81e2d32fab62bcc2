//! The audit policy (`--audit-policy-file`, audit.k8s.io/v1 Policy): which
//! requests are recorded at which level, in which stages. The first rule
//! that matches decides (kube's `policy.Checker`); no rule: not recorded.

use serde::Deserialize;

use crate::apimachinery::request_info::ResourceRequest;

/// How much of a request an event records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
pub enum Level {
    None,
    Metadata,
    Request,
    RequestResponse,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::None => "None",
            Level::Metadata => "Metadata",
            Level::Request => "Request",
            Level::RequestResponse => "RequestResponse",
        }
    }
}

/// A request's stages an event may be written at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum Stage {
    RequestReceived,
    ResponseStarted,
    ResponseComplete,
    Panic,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::RequestReceived => "RequestReceived",
            Stage::ResponseStarted => "ResponseStarted",
            Stage::ResponseComplete => "ResponseComplete",
            Stage::Panic => "Panic",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Policy {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    #[allow(dead_code)]
    metadata: Option<serde_json::Value>,
    #[serde(default)]
    rules: Vec<Rule>,
    #[serde(default)]
    omit_stages: Vec<Stage>,
    #[serde(default)]
    omit_managed_fields: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Rule {
    level: Level,
    #[serde(default)]
    users: Vec<String>,
    #[serde(default)]
    user_groups: Vec<String>,
    #[serde(default)]
    verbs: Vec<String>,
    #[serde(default)]
    resources: Vec<GroupResources>,
    #[serde(default)]
    namespaces: Vec<String>,
    #[serde(default, rename = "nonResourceURLs")]
    non_resource_urls: Vec<String>,
    #[serde(default)]
    omit_stages: Vec<Stage>,
    omit_managed_fields: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct GroupResources {
    #[serde(default)]
    group: String,
    #[serde(default)]
    resources: Vec<String>,
    #[serde(default)]
    resource_names: Vec<String>,
}

/// What the policy says of one request.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    pub level: Level,
    pub omit_stages: Vec<Stage>,
    pub omit_managed_fields: bool,
}

impl Decision {
    pub fn records(&self, stage: Stage) -> bool {
        self.level > Level::None && !self.omit_stages.contains(&stage)
    }
}

/// The request as the rules see it.
pub struct Subject<'a> {
    pub user: &'a str,
    pub groups: &'a [String],
    /// The verb (`get`, `list`, ... for a resource; the lowercased method
    /// for another path).
    pub verb: &'a str,
    pub path: &'a str,
    pub resource: Option<&'a ResourceRequest>,
}

impl Policy {
    /// Reads a policy file's text (YAML or JSON): audit.k8s.io/v1 only.
    pub fn parse(text: &str) -> Result<Policy, String> {
        let policy: Policy =
            crate::apimachinery::yaml::config_from_str(text).map_err(|e| e.to_string())?;
        if policy.kind != "Policy" || policy.api_version != "audit.k8s.io/v1" {
            return Err(format!(
                "an audit.k8s.io/v1 Policy is expected, not {} {}",
                policy.api_version, policy.kind
            ));
        }
        Ok(policy)
    }

    /// The first matching rule's level and stages (with the policy's
    /// omitted stages); none: [`Level::None`].
    pub fn decide(&self, s: &Subject<'_>) -> Decision {
        let Some(rule) = self.rules.iter().find(|r| r.matches(s)) else {
            return Decision {
                level: Level::None,
                omit_stages: Vec::new(),
                omit_managed_fields: false,
            };
        };
        let mut omit_stages = self.omit_stages.clone();
        omit_stages.extend(rule.omit_stages.iter().copied());
        Decision {
            level: rule.level,
            omit_stages,
            omit_managed_fields: rule.omit_managed_fields.unwrap_or(self.omit_managed_fields),
        }
    }
}

impl Rule {
    fn matches(&self, s: &Subject<'_>) -> bool {
        let listed =
            |list: &[String], value: &str| list.is_empty() || list.iter().any(|x| x == value);
        if !listed(&self.users, s.user) || !listed(&self.verbs, s.verb) {
            return false;
        }
        if !self.user_groups.is_empty() && !s.groups.iter().any(|g| self.user_groups.contains(g)) {
            return false;
        }
        match s.resource {
            Some(r) => self.matches_resource(r),
            None => self.matches_path(s.path),
        }
    }

    /// A resource request: no nonResourceURLs; its namespace listed ("" for
    /// cluster scope) and its resource among `resources`, when given.
    fn matches_resource(&self, r: &ResourceRequest) -> bool {
        if !self.non_resource_urls.is_empty() {
            return false;
        }
        let namespace = r.namespace.as_deref().unwrap_or_default();
        if !self.namespaces.is_empty() && !self.namespaces.iter().any(|n| n == namespace) {
            return false;
        }
        self.resources.is_empty() || self.resources.iter().any(|g| g.matches(r))
    }

    /// Another path: only rules that name paths (or name nothing of
    /// resources) match, by path or `prefix*`.
    fn matches_path(&self, path: &str) -> bool {
        if !self.resources.is_empty() || !self.namespaces.is_empty() {
            return false;
        }
        self.non_resource_urls.is_empty()
            || self
                .non_resource_urls
                .iter()
                .any(|u| match u.strip_suffix('*') {
                    Some(prefix) => path.starts_with(prefix),
                    None => u == path,
                })
    }
}

impl GroupResources {
    /// kube's `ruleMatchesResource`: `pods`, `pods/log`, `*/status`,
    /// `pods/*`, `*`; resource names only when the request names one.
    fn matches(&self, r: &ResourceRequest) -> bool {
        if self.group != r.group && self.group != "*" {
            return false;
        }
        if !self.resource_names.is_empty() {
            match &r.name {
                Some(n) if self.resource_names.contains(n) => {}
                _ => return false,
            }
        }
        if self.resources.is_empty() {
            return true;
        }
        let full = match &r.subresource {
            Some(sub) => format!("{}/{sub}", r.resource),
            None => r.resource.clone(),
        };
        self.resources.iter().any(|pattern| {
            pattern == "*"
                || *pattern == full
                || (pattern == &format!("{}/*", r.resource) && r.subresource.is_some())
                || r.subresource
                    .as_ref()
                    .is_some_and(|sub| *pattern == format!("*/{sub}"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apimachinery::request_info::parse;

    const POLICY: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  users: [system:kube-proxy]
- level: None
  nonResourceURLs: ["/healthz*", /version]
- level: Metadata
  resources: [{group: "", resources: [secrets]}]
- level: RequestResponse
  resources: [{group: "", resources: [configmaps, "pods/log"], resourceNames: [c1]}]
- level: Request
  verbs: [create]
  namespaces: [prod]
  omitStages: [ResponseStarted]
- level: Metadata
"#;

    fn decide(user: &str, method: &str, path: &str) -> Decision {
        let policy = Policy::parse(POLICY).unwrap();
        let method: http::Method = method.parse().unwrap();
        let resource = parse(&method, path, None);
        let verb = resource
            .as_ref()
            .map(|r| r.verb.as_str().to_string())
            .unwrap_or_else(|| method.as_str().to_lowercase());
        policy.decide(&Subject {
            user,
            groups: &[],
            verb: &verb,
            path,
            resource: resource.as_ref(),
        })
    }

    #[test]
    fn the_first_matching_rule_decides() {
        let level = |user: &str, method: &str, path: &str| decide(user, method, path).level;
        assert_eq!(
            level("alice", "GET", "/api/v1/namespaces/a/secrets/s"),
            Level::Metadata
        );
        assert_eq!(
            level("system:kube-proxy", "GET", "/api/v1/namespaces/a/secrets/s"),
            Level::None
        );
        assert_eq!(
            level("alice", "GET", "/api/v1/namespaces/a/configmaps/c1"),
            Level::RequestResponse
        );
        assert_eq!(
            level("alice", "GET", "/api/v1/namespaces/a/configmaps/c2"),
            Level::Metadata
        );
        assert_eq!(
            level("alice", "GET", "/api/v1/namespaces/a/configmaps"),
            Level::Metadata
        );
        assert_eq!(
            level("alice", "POST", "/api/v1/namespaces/prod/pods"),
            Level::Request
        );
        assert_eq!(
            level("alice", "POST", "/api/v1/namespaces/dev/pods"),
            Level::Metadata
        );
        assert_eq!(level("alice", "GET", "/healthz/etcd"), Level::None);
        assert_eq!(level("alice", "GET", "/version"), Level::None);
        assert_eq!(level("alice", "GET", "/metrics"), Level::Metadata);
        let create = decide("alice", "POST", "/api/v1/namespaces/prod/pods");
        assert_eq!(
            create.omit_stages,
            [Stage::RequestReceived, Stage::ResponseStarted]
        );
        assert!(!create.records(Stage::RequestReceived) && create.records(Stage::ResponseComplete));
    }

    #[test]
    fn other_documents_and_fields_are_refused() {
        assert!(Policy::parse("apiVersion: v1\nkind: ConfigMap\n").is_err());
        let bad =
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Metadata, verb: [get]}]\n";
        assert!(Policy::parse(bad)
            .unwrap_err()
            .contains("unknown field `verb`"));
        let level = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Everything}]\n";
        assert!(Policy::parse(level).is_err());
    }
}
