//! RequestInfo: what a request addresses (verb, group, version, namespace,
//! resource, name, subresource), parsed from method, path and query as
//! kube-apiserver's RequestInfoFactory does.

use http::Method;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    Get,
    List,
    Watch,
    Create,
    Update,
    Patch,
    Delete,
    DeleteCollection,
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deletecollection",
        }
    }
}

/// A request for an API resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceRequest {
    pub verb: Verb,
    pub group: String,
    pub version: String,
    pub namespace: Option<String>,
    pub resource: String,
    pub name: Option<String>,
    pub subresource: Option<String>,
}

/// Subresources of a namespace that are addressed as `/namespaces/<name>/<sub>`.
const NAMESPACE_SUBRESOURCES: [&str; 2] = ["status", "finalize"];

fn is_watch_query(query: Option<&str>) -> bool {
    let Some(q) = query else { return false };
    url::form_urlencoded::parse(q.as_bytes())
        .any(|(k, v)| k == "watch" && (v == "true" || v == "1"))
}

/// Parses a resource path; `None` for non-resource paths (discovery, health, ...).
pub fn parse(method: &Method, path: &str, query: Option<&str>) -> Option<ResourceRequest> {
    let parts: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|p| !p.is_empty())
        .collect();
    let (group, version, rest) = match parts.as_slice() {
        ["api", version, rest @ ..] => (String::new(), version.to_string(), rest),
        ["apis", group, version, rest @ ..] => (group.to_string(), version.to_string(), rest),
        _ => return None,
    };
    if rest.is_empty() {
        return None;
    }
    let mut rest: Vec<&str> = rest.to_vec();
    let mut watch = is_watch_query(query);
    if rest[0] == "watch" {
        watch = true;
        rest.remove(0);
        if rest.is_empty() {
            return None;
        }
    }
    let mut namespace = None;
    if rest[0] == "namespaces" && rest.len() > 1 {
        namespace = Some(rest[1].to_string());
        if rest.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&rest[2]) {
            rest.drain(0..2);
        }
    }
    let resource = rest[0].to_string();
    let mut name = rest.get(1).map(|s| s.to_string());
    let subresource = rest.get(2).map(|s| s.to_string());
    // Only proxies address a path below their subresource.
    if rest.len() > 3 && subresource.as_deref() != Some("proxy") {
        return None;
    }
    if resource == "namespaces" && namespace.is_some() && rest[0] == "namespaces" {
        // `/api/v1/namespaces/foo` addresses the namespace object itself.
        name = namespace.take();
    }
    let verb = verb_for(method, name.is_some(), watch)?;
    Some(ResourceRequest {
        verb,
        group,
        version,
        namespace,
        resource,
        name,
        subresource,
    })
}

impl ResourceRequest {
    /// The request as kube's RequestInfo gives it to the authorizers: a list
    /// or watch whose field selector pins `metadata.name` names that object,
    /// so a role limited to `resourceNames` may list and watch it.
    pub fn for_authorization(&self, query: Option<&str>) -> std::borrow::Cow<'_, ResourceRequest> {
        use std::borrow::Cow;
        if self.name.is_some() || !matches!(self.verb, Verb::List | Verb::Watch) {
            return Cow::Borrowed(self);
        }
        let selector = url::form_urlencoded::parse(query.unwrap_or_default().as_bytes())
            .find(|(k, _)| k == "fieldSelector")
            .map(|(_, v)| v.into_owned());
        let parsed = selector
            .and_then(|s| crate::apimachinery::selectors::field::parse_field_selector(&s).ok());
        let name = parsed.as_ref().and_then(|f| f.exact_name());
        match name.filter(|n| crate::apimachinery::names::is_valid_path_segment(n)) {
            Some(name) => Cow::Owned(ResourceRequest {
                name: Some(name.to_string()),
                ..self.clone()
            }),
            None => Cow::Borrowed(self),
        }
    }
}

fn verb_for(method: &Method, has_name: bool, watch: bool) -> Option<Verb> {
    Some(match *method {
        Method::GET | Method::HEAD if watch => Verb::Watch,
        Method::GET | Method::HEAD if has_name => Verb::Get,
        Method::GET | Method::HEAD => Verb::List,
        Method::POST => Verb::Create,
        Method::PUT => Verb::Update,
        Method::PATCH => Verb::Patch,
        Method::DELETE if has_name => Verb::Delete,
        Method::DELETE => Verb::DeleteCollection,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(path: &str, q: Option<&str>) -> ResourceRequest {
        parse(&Method::GET, path, q).unwrap()
    }

    #[test]
    fn a_list_or_watch_pinning_a_name_is_authorized_as_that_name() {
        let q = Some("fieldSelector=metadata.name%3Dextension-apiserver-authentication&watch=true");
        let r = get("/api/v1/namespaces/kube-system/configmaps", q);
        assert_eq!(r.verb, Verb::Watch);
        let named = r.for_authorization(q);
        assert_eq!(
            named.name.as_deref(),
            Some("extension-apiserver-authentication")
        );
        let other = Some("fieldSelector=metadata.name!%3Dx");
        assert_eq!(r.for_authorization(other).name, None);
        let bad = Some("fieldSelector=metadata.name%3D..");
        assert_eq!(r.for_authorization(bad).name, None);
        let get_one = get(
            "/api/v1/namespaces/a/configmaps/b",
            Some("fieldSelector=metadata.name%3Dc"),
        );
        assert_eq!(get_one.for_authorization(q).name.as_deref(), Some("b"));
    }

    #[test]
    fn namespaced_item_and_subresource() {
        let r = get("/apis/apps/v1/namespaces/ns1/deployments/web/scale", None);
        assert_eq!(
            (
                r.group.as_str(),
                r.namespace.as_deref(),
                r.resource.as_str()
            ),
            ("apps", Some("ns1"), "deployments")
        );
        assert_eq!(
            (r.name.as_deref(), r.subresource.as_deref(), r.verb),
            (Some("web"), Some("scale"), Verb::Get)
        );
    }

    #[test]
    fn namespace_object_and_its_status() {
        let r = get("/api/v1/namespaces/foo", None);
        assert_eq!(
            (r.resource.as_str(), r.name.as_deref(), r.namespace),
            ("namespaces", Some("foo"), None)
        );
        let r = get("/api/v1/namespaces/foo/status", None);
        assert_eq!(
            (r.name.as_deref(), r.subresource.as_deref()),
            (Some("foo"), Some("status"))
        );
    }

    #[test]
    fn proxy_paths_keep_their_subpath_out_of_the_coordinates() {
        let r = get(
            "/api/v1/namespaces/a/services/web:80/proxy/healthz/ready",
            None,
        );
        assert_eq!(
            (
                r.resource.as_str(),
                r.name.as_deref(),
                r.subresource.as_deref(),
                r.verb
            ),
            ("services", Some("web:80"), Some("proxy"), Verb::Get)
        );
        assert!(parse(
            &Method::GET,
            "/api/v1/namespaces/a/pods/p/status/extra",
            None
        )
        .is_none());
    }

    #[test]
    fn list_and_watch_forms() {
        assert_eq!(get("/api/v1/pods", None).verb, Verb::List);
        assert_eq!(
            get("/api/v1/namespaces/a/pods", Some("watch=true")).verb,
            Verb::Watch
        );
        let w = get("/api/v1/watch/namespaces/a/pods", None);
        assert_eq!((w.verb, w.namespace.as_deref()), (Verb::Watch, Some("a")));
        assert!(parse(&Method::GET, "/apis/apps", None).is_none());
        assert_eq!(
            parse(&Method::DELETE, "/api/v1/namespaces/a/pods", None)
                .unwrap()
                .verb,
            Verb::DeleteCollection
        );
    }
}
