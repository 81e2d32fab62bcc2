//! What a request asks to do, in authorization terms (kube-apiserver's
//! authorizer.Attributes): the user, a verb, and either a resource (group,
//! resource, subresource, namespace, name) or a non-resource path.

use crate::apimachinery::request_info::ResourceRequest;
use crate::apimachinery::user::UserInfo;
use serde_json::{json, Value};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceAttributes {
    pub namespace: String,
    pub group: String,
    pub version: String,
    pub resource: String,
    pub subresource: String,
    pub name: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attributes {
    pub user: UserInfo,
    pub verb: String,
    /// None for a non-resource request (then `path` says what).
    pub resource: Option<ResourceAttributes>,
    pub path: String,
}

impl Attributes {
    /// The attributes of an HTTP request: resource requests use their
    /// RequestInfo verb, others the lower-cased HTTP method.
    pub fn of_request(
        user: UserInfo,
        method: &http::Method,
        path: &str,
        request: Option<&ResourceRequest>,
    ) -> Self {
        match request {
            Some(r) => Attributes {
                user,
                verb: r.verb.as_str().to_string(),
                resource: Some(ResourceAttributes {
                    namespace: r.namespace.clone().unwrap_or_default(),
                    group: r.group.clone(),
                    version: r.version.clone(),
                    resource: r.resource.clone(),
                    subresource: r.subresource.clone().unwrap_or_default(),
                    name: r.name.clone().unwrap_or_default(),
                }),
                path: path.to_string(),
            },
            None => Attributes {
                user,
                verb: method.as_str().to_ascii_lowercase(),
                resource: None,
                path: path.to_string(),
            },
        }
    }

    /// A resource check (impersonation, escalation) for `user`.
    pub fn resource(user: UserInfo, verb: &str, resource: ResourceAttributes) -> Self {
        Attributes {
            user,
            verb: verb.to_string(),
            resource: Some(resource),
            path: String::new(),
        }
    }

    /// The attributes a SubjectAccessReview's spec asks about.
    pub fn from_review_spec(spec: &Value, user: UserInfo) -> Result<Self, String> {
        let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        if let Some(r) = spec.get("resourceAttributes").filter(|v| v.is_object()) {
            return Ok(Attributes::resource(
                user,
                &text(r, "verb"),
                ResourceAttributes {
                    namespace: text(r, "namespace"),
                    group: text(r, "group"),
                    version: text(r, "version"),
                    resource: text(r, "resource"),
                    subresource: text(r, "subresource"),
                    name: text(r, "name"),
                },
            ));
        }
        if let Some(n) = spec.get("nonResourceAttributes").filter(|v| v.is_object()) {
            return Ok(Attributes {
                user,
                verb: text(n, "verb"),
                resource: None,
                path: text(n, "path"),
            });
        }
        Err("exactly one of nonResourceAttributes or resourceAttributes must be specified".into())
    }

    /// The SubjectAccessReview sent to authorizers.
    pub fn to_review(&self) -> Value {
        let mut spec = json!({
            "user": self.user.username,
            "groups": self.user.groups,
            "uid": self.user.uid,
            "extra": self.user.extra,
        });
        match &self.resource {
            Some(r) => {
                spec["resourceAttributes"] = json!({
                    "namespace": r.namespace, "verb": self.verb, "group": r.group,
                    "version": r.version, "resource": r.resource,
                    "subresource": r.subresource, "name": r.name,
                })
            }
            None => spec["nonResourceAttributes"] = json!({"path": self.path, "verb": self.verb}),
        }
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec})
    }

    /// kube-apiserver's words for a refused request, without the resource prefix.
    pub fn refusal(&self) -> String {
        let user = &self.user.username;
        let Some(r) = &self.resource else {
            return format!("User {user:?} cannot {} path {:?}", self.verb, self.path);
        };
        let mut resource = r.resource.clone();
        if !r.subresource.is_empty() {
            resource = format!("{resource}/{}", r.subresource);
        }
        let scope = match r.namespace.as_str() {
            "" => "at the cluster scope".to_string(),
            ns => format!("in the namespace {ns:?}"),
        };
        format!(
            "User {user:?} cannot {} resource {resource:?} in API group {:?} {scope}",
            self.verb, r.group
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apimachinery::request_info::Verb;

    fn bob() -> UserInfo {
        UserInfo {
            username: "bob".into(),
            ..Default::default()
        }
    }

    #[test]
    fn refusals_read_like_kube_apiserver() {
        let ri = ResourceRequest {
            verb: Verb::List,
            group: String::new(),
            version: "v1".into(),
            namespace: Some("dev".into()),
            resource: "pods".into(),
            name: None,
            subresource: None,
        };
        let a = Attributes::of_request(
            bob(),
            &http::Method::GET,
            "/api/v1/namespaces/dev/pods",
            Some(&ri),
        );
        assert_eq!(
            a.refusal(),
            r#"User "bob" cannot list resource "pods" in API group "" in the namespace "dev""#
        );
        let mut cluster = a.clone();
        if let Some(r) = cluster.resource.as_mut() {
            r.namespace.clear();
            r.subresource = "status".into();
        }
        assert!(cluster
            .refusal()
            .ends_with(r#"resource "pods/status" in API group "" at the cluster scope"#));
        let path = Attributes::of_request(bob(), &http::Method::GET, "/metrics", None);
        assert_eq!(path.refusal(), r#"User "bob" cannot get path "/metrics""#);
    }

    #[test]
    fn review_specs_round_trip() {
        let spec = json!({"resourceAttributes": {"verb": "create", "group": "apps", "resource": "deployments", "namespace": "x"}});
        let a = Attributes::from_review_spec(&spec, bob()).unwrap();
        assert_eq!(a.verb, "create");
        let review = a.to_review();
        assert_eq!(
            review["spec"]["resourceAttributes"]["resource"],
            "deployments"
        );
        assert_eq!(review["spec"]["user"], "bob");
        assert!(Attributes::from_review_spec(&json!({}), bob()).is_err());
        let n = Attributes::from_review_spec(
            &json!({"nonResourceAttributes": {"path": "/healthz", "verb": "get"}}),
            bob(),
        )
        .unwrap();
        assert_eq!(
            n.to_review()["spec"]["nonResourceAttributes"]["path"],
            "/healthz"
        );
    }
}
