//! The authorization chain: a SubjectAccessReview goes to each authorizer in
//! configuration order; the first that allows or denies decides, and no
//! opinion from all of them is a refusal. Members of system:masters are
//! allowed before the chain is asked, as kube-apiserver does.

use super::attributes::Attributes;
use super::transport::Entry;
use crate::apimachinery::status::{qualified_resource, ApiError};
use crate::apimachinery::user::{UserInfo, MASTERS};
use serde_json::{json, Value};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Allow(String),
    Deny(String),
    NoOpinion(String),
}

impl Decision {
    pub fn allowed(&self) -> bool {
        matches!(self, Decision::Allow(_))
    }

    /// kube's `authorization_attempts_total` result.
    pub fn result(&self) -> &'static str {
        match self {
            Decision::Allow(_) => "allowed",
            Decision::Deny(_) => "denied",
            Decision::NoOpinion(_) => "no-opinion",
        }
    }

    pub fn reason(&self) -> &str {
        match self {
            Decision::Allow(r) | Decision::Deny(r) | Decision::NoOpinion(r) => r,
        }
    }
}

pub struct Authorizer {
    entries: Vec<Entry>,
}

impl Authorizer {
    pub fn new(entries: Vec<Entry>) -> Self {
        Authorizer { entries }
    }

    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.name.as_str()).collect()
    }

    pub async fn authorize(&self, attrs: &Attributes) -> Decision {
        if attrs.user.in_group(MASTERS) {
            return Decision::Allow(String::new());
        }
        let review = attrs.to_review();
        let mut reasons = Vec::new();
        for entry in &self.entries {
            match entry.call(&review).await {
                Ok(answer) => match decision(&answer) {
                    d @ (Decision::Allow(_) | Decision::Deny(_)) => return d,
                    Decision::NoOpinion(r) if !r.is_empty() => reasons.push(r),
                    Decision::NoOpinion(_) => {}
                },
                Err(why) => {
                    tracing::warn!(authorizer = %entry.name, error = %why, "authorizer failed")
                }
            }
        }
        Decision::NoOpinion(reasons.join("\n"))
    }

    /// Ok when allowed; otherwise kube-apiserver's 403 for the request.
    pub async fn check(&self, attrs: &Attributes) -> Result<(), ApiError> {
        match self.authorize(attrs).await {
            Decision::Allow(_) => Ok(()),
            refused => Err(forbidden(attrs, refused.reason())),
        }
    }

    /// What `user` may do in `namespace` (a SelfSubjectRulesReview status):
    /// the union of every authorizer's rules; incomplete when one cannot say.
    pub async fn rules(&self, user: &UserInfo, namespace: &str) -> Value {
        let review = json!({
            "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectRulesReview",
            "spec": {"namespace": namespace, "user": user.username, "groups": user.groups,
                     "uid": user.uid, "extra": user.extra},
        });
        let (mut resource, mut non_resource) = (Vec::new(), Vec::new());
        let (mut incomplete, mut errors) = (false, Vec::new());
        for entry in &self.entries {
            match entry.call(&review).await {
                Ok(answer) => {
                    let status = &answer["status"];
                    extend(&mut resource, &status["resourceRules"]);
                    extend(&mut non_resource, &status["nonResourceRules"]);
                    incomplete |= status["incomplete"].as_bool().unwrap_or(false);
                    if let Some(e) = status["evaluationError"].as_str().filter(|e| !e.is_empty()) {
                        errors.push(e.to_string());
                    }
                }
                Err(why) => {
                    incomplete = true;
                    errors.push(format!("{}: {why}", entry.name));
                }
            }
        }
        let mut status = json!({"resourceRules": resource, "nonResourceRules": non_resource, "incomplete": incomplete});
        if !errors.is_empty() {
            status["evaluationError"] = json!(errors.join(", "));
        }
        status
    }
}

fn extend(into: &mut Vec<Value>, rules: &Value) {
    if let Some(items) = rules.as_array() {
        into.extend(items.iter().cloned());
    }
}

/// The decision in an authorizer's answer.
fn decision(answer: &Value) -> Decision {
    let status = &answer["status"];
    let reason = status["reason"].as_str().unwrap_or_default().to_string();
    if status["allowed"].as_bool() == Some(true) {
        Decision::Allow(reason)
    } else if status["denied"].as_bool() == Some(true) {
        Decision::Deny(reason)
    } else {
        Decision::NoOpinion(reason)
    }
}

/// kube-apiserver's 403 for a refused request (responsewriters.Forbidden).
pub fn forbidden(attrs: &Attributes, reason: &str) -> ApiError {
    let mut why = attrs.refusal();
    if !reason.is_empty() {
        why = format!("{why}: {reason}");
    }
    let Some(r) = &attrs.resource else {
        return ApiError::forbidden(format!("forbidden: {why}"));
    };
    let resource = qualified_resource(&r.group, &r.resource);
    let message = match r.name.as_str() {
        "" => format!("{resource} is forbidden: {why}"),
        name => format!("{resource} {name:?} is forbidden: {why}"),
    };
    let mut details = json!({"kind": r.resource});
    if !r.name.is_empty() {
        details["name"] = json!(r.name);
    }
    if !r.group.is_empty() {
        details["group"] = json!(r.group);
    }
    let mut err = ApiError::forbidden(message);
    err.details = Some(Box::new(details));
    err
}

#[cfg(test)]
mod tests {
    use super::super::attributes::ResourceAttributes;
    use super::*;

    fn attrs(user: &str, groups: &[&str], name: &str) -> Attributes {
        let user = UserInfo {
            username: user.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..Default::default()
        };
        Attributes::resource(
            user,
            "get",
            ResourceAttributes {
                namespace: "dev".into(),
                group: "apps".into(),
                version: "v1".into(),
                resource: "deployments".into(),
                name: name.into(),
                ..Default::default()
            },
        )
    }

    #[tokio::test]
    async fn masters_pass_and_an_empty_chain_refuses() {
        let chain = Authorizer::new(vec![]);
        assert!(chain
            .authorize(&attrs("root", &[MASTERS], ""))
            .await
            .allowed());
        let err = chain.check(&attrs("bob", &[], "web")).await.unwrap_err();
        assert_eq!(err.code, 403);
        assert_eq!(
            err.message,
            r#"deployments.apps "web" is forbidden: User "bob" cannot get resource "deployments" in API group "apps" in the namespace "dev""#
        );
        assert_eq!(err.details.unwrap()["name"], "web");
    }

    #[test]
    fn answers_map_to_decisions() {
        assert!(decision(&json!({"status": {"allowed": true}})).allowed());
        assert_eq!(
            decision(&json!({"status": {"allowed": false, "denied": true, "reason": "no"}})),
            Decision::Deny("no".into())
        );
        assert_eq!(decision(&json!({})), Decision::NoOpinion(String::new()));
    }

    #[test]
    fn reasons_are_appended_and_non_resource_refusals_have_no_resource() {
        let err = forbidden(&attrs("bob", &[], ""), "denied by policy");
        assert!(err
            .message
            .starts_with("deployments.apps is forbidden: User"));
        assert!(err.message.ends_with(": denied by policy"));
        let path = Attributes::of_request(UserInfo::anonymous(), &http::Method::GET, "/logs", None);
        assert_eq!(
            forbidden(&path, "").message,
            r#"forbidden: User "system:anonymous" cannot get path "/logs""#
        );
    }
}
