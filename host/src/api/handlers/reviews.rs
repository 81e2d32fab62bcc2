//! The review APIs: authentication.k8s.io TokenReview and SelfSubjectReview
//! (`kubectl auth whoami`), authorization.k8s.io SubjectAccessReview,
//! SelfSubjectAccessReview (`kubectl auth can-i`), LocalSubjectAccessReview
//! and SelfSubjectRulesReview (`kubectl auth can-i --list`). Each is a
//! create that is answered and never stored.

use super::negotiate::respond;
use super::{body, Call};
use crate::apimachinery::status::{ApiError, ApiResult, Cause};
use crate::apimachinery::user::UserInfo;
use crate::auth::authorize::Decision;
use crate::auth::Attributes;
use axum::body::Body;
use axum::response::Response;
use http::StatusCode;
use serde_json::{json, Value};

/// Whether `call` addresses a review resource.
pub fn is_review(call: &Call<'_>) -> bool {
    matches!(
        call.res.group.as_str(),
        "authentication.k8s.io" | "authorization.k8s.io"
    ) && call.req.subresource.is_none()
}

pub async fn create(call: &Call<'_>, raw: Body) -> ApiResult<Response> {
    let output = call.output()?;
    let bytes = body::read(raw).await?;
    let ct = call.header(http::header::CONTENT_TYPE);
    let mut review = body::decode(&bytes, ct, call.cat.schemas())?;
    body::check_object(call.res, &mut review, call.namespace())?;
    if let Some(map) = review.as_object_mut() {
        map.entry("metadata").or_insert(json!({}));
    }
    if call.res.plural != "selfsubjectrulesreviews" {
        // kube answers a new SelfSubjectRulesReview, without the request's fields.
        track(call, &mut review);
    }
    let spec = review.get("spec").cloned().unwrap_or(json!({}));
    let status = match call.res.plural.as_str() {
        "tokenreviews" => token_review(call, &spec).await?,
        "selfsubjectreviews" => json!({"userInfo": call.user()}),
        "subjectaccessreviews" => access(call, &spec, subject(call, &spec)?).await?,
        "selfsubjectaccessreviews" => access(call, &spec, call.user().clone()).await?,
        "localsubjectaccessreviews" => local_access(call, &spec).await?,
        "selfsubjectrulesreviews" => rules(call, &spec).await,
        _ => return Err(ApiError::no_such_route()),
    };
    review["status"] = status;
    if call.res.plural == "selfsubjectrulesreviews" {
        // kube answers a new review holding only the status.
        review["spec"] = json!({});
    }
    Ok(respond(StatusCode::CREATED, &review, output, &[]))
}

/// The Update entry kube's create handler records for the request's fields
/// (manager from `fieldManager` or the User-Agent) before the review is answered.
fn track(call: &Call<'_>, review: &mut Value) {
    let manager = call.field_manager();
    let who = call.tracking(&manager);
    let entries = crate::patch::managed_fields::record(call.res, None, review, review, &who);
    let metadata = review.get_mut("metadata").and_then(Value::as_object_mut);
    if let (Some(entries), Some(metadata)) = (entries, metadata) {
        metadata.insert("managedFields".into(), entries);
    }
}

async fn token_review(call: &Call<'_>, spec: &Value) -> ApiResult<Value> {
    let token = spec["token"].as_str().unwrap_or_default();
    if token.is_empty() {
        return Err(ApiError::bad_request(
            "token is required for TokenReview in authentication",
        ));
    }
    let audiences: Vec<String> =
        serde_json::from_value(spec["audiences"].clone()).unwrap_or_default();
    Ok(call
        .state
        .auth
        .authenticator
        .review_token(token, &audiences)
        .await)
}

/// The user a SubjectAccessReview asks about.
fn subject(call: &Call<'_>, spec: &Value) -> ApiResult<UserInfo> {
    let user = UserInfo {
        username: spec["user"].as_str().unwrap_or_default().to_string(),
        uid: spec["uid"].as_str().unwrap_or_default().to_string(),
        groups: serde_json::from_value(spec["groups"].clone()).unwrap_or_default(),
        extra: serde_json::from_value(spec["extra"].clone()).unwrap_or_default(),
    };
    if user.username.is_empty() && user.groups.is_empty() {
        let cause = Cause::invalid(
            "spec.user",
            "",
            "at least one of user or group must be specified",
        );
        return Err(ApiError::invalid(
            &call.res.group,
            &call.res.kind,
            "",
            vec![cause],
        ));
    }
    Ok(user)
}

async fn access(call: &Call<'_>, spec: &Value, user: UserInfo) -> ApiResult<Value> {
    let attrs = Attributes::from_review_spec(spec, user).map_err(|why| {
        let cause = Cause::invalid("spec.resourceAttributes", "", &why);
        ApiError::invalid(&call.res.group, &call.res.kind, "", vec![cause])
    })?;
    let decision = call.state.auth.authorizer.authorize(&attrs).await;
    let mut status = json!({"allowed": decision.allowed()});
    if matches!(decision, Decision::Deny(_)) {
        status["denied"] = json!(true);
    }
    if !decision.reason().is_empty() {
        status["reason"] = json!(decision.reason());
    }
    Ok(status)
}

/// A LocalSubjectAccessReview: resource attributes in the URL's namespace.
async fn local_access(call: &Call<'_>, spec: &Value) -> ApiResult<Value> {
    let namespace = call.namespace().unwrap_or_default();
    let asked = spec
        .pointer("/resourceAttributes/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if asked != namespace {
        return Err(ApiError::bad_request(format!(
            "spec.resourceAttributes.namespace must match namespace: {namespace}"
        )));
    }
    if spec
        .get("nonResourceAttributes")
        .is_some_and(|v| !v.is_null())
    {
        let cause = Cause::invalid(
            "spec.nonResourceAttributes",
            "",
            "disallowed on this kind of request",
        );
        return Err(ApiError::invalid(
            &call.res.group,
            &call.res.kind,
            "",
            vec![cause],
        ));
    }
    access(call, spec, subject(call, spec)?).await
}

async fn rules(call: &Call<'_>, spec: &Value) -> Value {
    let namespace = spec["namespace"].as_str().unwrap_or_default();
    call.state
        .auth
        .authorizer
        .rules(call.user(), namespace)
        .await
}
