//! Every failure a client sees is a `metav1.Status`: this is the one error type
//! the request path returns, with the reason and code kube-apiserver uses and
//! its wording where kubectl shows it.

use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde_json::{json, Value};

/// A failed request, rendered as a `metav1.Status`.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    pub details: Option<Box<Value>>,
    /// The Status's `metadata.continue` (kube's inconsistent-continue 410).
    pub list_continue: Option<String>,
}

/// `a` for one problem, `[a, b]` for several, as kube-apiserver words them.
fn invalid_summary(parts: &[String]) -> String {
    if parts.len() == 1 {
        parts[0].clone()
    } else {
        format!("[{}]", parts.join(", "))
    }
}

/// One field-level problem inside an Invalid (422) error.
#[derive(Debug, Clone)]
pub struct Cause {
    pub reason: &'static str,
    pub field: String,
    pub message: String,
}

impl Cause {
    pub fn invalid(field: &str, value: &str, detail: &str) -> Self {
        Cause {
            reason: "FieldValueInvalid",
            field: field.to_string(),
            message: format!("Invalid value: {}: {detail}", json!(value)),
        }
    }

    pub fn required(field: &str, detail: &str) -> Self {
        let message = if detail.is_empty() {
            "Required value".to_string()
        } else {
            format!("Required value: {detail}")
        };
        Cause {
            reason: "FieldValueRequired",
            field: field.to_string(),
            message,
        }
    }

    pub fn not_supported(field: &str, value: &str, supported: &[&str]) -> Self {
        let list: Vec<String> = supported.iter().map(|s| json!(s).to_string()).collect();
        Cause {
            reason: "FieldValueNotSupported",
            field: field.to_string(),
            message: format!(
                "Unsupported value: {}: supported values: {}",
                json!(value),
                list.join(", ")
            ),
        }
    }

    pub fn forbidden(field: &str, detail: &str) -> Self {
        Cause {
            reason: "FieldValueForbidden",
            field: field.to_string(),
            message: format!("Forbidden: {detail}"),
        }
    }
}

/// The `group/resource` a message names: `configmaps` or `deployments.apps`.
pub fn qualified_resource(group: &str, resource: &str) -> String {
    if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    }
}

/// StatusDetails `{name, group, kind}` in Go field order (`group` only when set).
/// `Status.details` naming an object; Go leaves out the empty fields.
fn name_details(group: &str, kind: &str, name: &str) -> Value {
    let mut details = serde_json::Map::new();
    for (field, value) in [("name", name), ("group", group), ("kind", kind)] {
        if !value.is_empty() {
            details.insert(field.into(), json!(value));
        }
    }
    Value::Object(details)
}

impl ApiError {
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
            list_continue: None,
        }
    }

    pub fn not_found(group: &str, resource: &str, name: &str) -> Self {
        let message = format!(
            "{} \"{name}\" not found",
            qualified_resource(group, resource)
        );
        ApiError {
            details: Some(Box::new(name_details(group, resource, name))),
            ..Self::new(404, "NotFound", message)
        }
    }

    /// kube's `admission.NewForbidden` with a policy's `reason`: `resource
    /// "name" is forbidden: message`, the message again as the one cause.
    pub fn admission_forbidden(
        group: &str,
        resource: &str,
        name: &str,
        message: &str,
        reason: &'static str,
    ) -> Self {
        let code = match reason {
            "Forbidden" => 403,
            "Unauthorized" => 401,
            "RequestEntityTooLarge" => 413,
            _ => 422,
        };
        let qualified = qualified_resource(group, resource);
        let full = format!("{qualified} \"{name}\" is forbidden: {message}");
        ApiError {
            code,
            message: full,
            ..Self::policy_denied(group, resource, name, message, reason)
        }
    }

    /// kube's error of its generic policy dispatcher (MutatingAdmissionPolicy):
    /// `admission.NewForbidden`'s 403 and details, the message (its one
    /// cause too) and reason the policy's.
    pub fn policy_denied(
        group: &str,
        resource: &str,
        name: &str,
        message: &str,
        reason: &'static str,
    ) -> Self {
        let mut details = name_details(group, resource, name);
        details["causes"] = json!([{ "message": message }]);
        ApiError {
            details: Some(Box::new(details)),
            ..Self::new(403, reason, message.to_string())
        }
    }

    pub fn no_such_route() -> Self {
        ApiError {
            details: Some(Box::new(json!({}))),
            ..Self::new(
                404,
                "NotFound",
                "the server could not find the requested resource",
            )
        }
    }

    pub fn already_exists(group: &str, resource: &str, name: &str) -> Self {
        let message = format!(
            "{} \"{name}\" already exists",
            qualified_resource(group, resource)
        );
        ApiError {
            details: Some(Box::new(name_details(group, resource, name))),
            ..Self::new(409, "AlreadyExists", message)
        }
    }

    pub fn conflict(group: &str, resource: &str, name: &str, why: &str) -> Self {
        let message = format!(
            "Operation cannot be fulfilled on {} \"{name}\": {why}",
            qualified_resource(group, resource)
        );
        ApiError {
            details: Some(Box::new(name_details(group, resource, name))),
            ..Self::new(409, "Conflict", message)
        }
    }

    pub fn stale(group: &str, resource: &str, name: &str) -> Self {
        Self::conflict(
            group,
            resource,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 422 Invalid: `Kind "name" is invalid: field: message, ...`.
    pub fn invalid(group: &str, kind: &str, name: &str, causes: Vec<Cause>) -> Self {
        let parts: Vec<String> = causes
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        let summary = invalid_summary(&parts);
        let message = format!(
            "{} \"{name}\" is invalid: {summary}",
            qualified_resource(group, kind)
        );
        let mut details = name_details(group, kind, name);
        details["causes"] = Value::Array(
            causes
                .iter()
                .map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field}))
                .collect(),
        );
        ApiError {
            details: Some(Box::new(details)),
            ..Self::new(422, "Invalid", message)
        }
    }
    /// Both Invalid errors about one object as one, `self`'s causes first:
    /// kube reports every field problem of an object at once. Any other
    /// error is returned as it is.
    pub fn and_invalid(mut self, other: ApiError) -> Self {
        if self.reason != "Invalid" || other.reason != "Invalid" {
            return self;
        }
        let causes = |e: &ApiError| {
            e.details
                .as_ref()
                .and_then(|d| d["causes"].as_array().cloned())
                .unwrap_or_default()
        };
        let all: Vec<Value> = causes(&self).into_iter().chain(causes(&other)).collect();
        let parts: Vec<String> = all
            .iter()
            .map(|c| {
                format!(
                    "{}: {}",
                    c["field"].as_str().unwrap_or_default(),
                    c["message"].as_str().unwrap_or_default()
                )
            })
            .collect();
        let subject = self
            .message
            .split(" is invalid: ")
            .next()
            .unwrap_or_default();
        self.message = format!("{subject} is invalid: {}", invalid_summary(&parts));
        if let Some(details) = self.details.as_mut() {
            details["causes"] = Value::Array(all);
        }
        self
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        ApiError {
            details: Some(Box::new(json!({}))),
            ..Self::new(405, "MethodNotAllowed", message)
        }
    }

    /// A body in a media type no decoder reads (kube's list of them).
    pub fn unsupported_media_type() -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: \
             application/json, application/yaml, application/vnd.kubernetes.protobuf",
        )
    }

    /// A PATCH whose content type is not one of the resource's patch types.
    pub fn unsupported_patch_type(allowed: &[&str]) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                allowed.join(", ")
            ),
        )
    }

    /// kube's router: no route produces a media type the client accepts.
    pub fn no_representation(available: &str) -> Self {
        ApiError {
            details: Some(Box::new(json!({}))),
            ..Self::new(
                406,
                "NotAcceptable",
                format!("406: Not Acceptable\n\nAvailable representations: {available}"),
            )
        }
    }

    /// kube's router: a PATCH whose content type no patch route consumes.
    pub fn no_route_for_media_type() -> Self {
        ApiError {
            details: Some(Box::new(json!({}))),
            ..Self::new(415, "UnsupportedMediaType", "415: Unsupported Media Type")
        }
    }

    pub fn not_acceptable(accepted: &str) -> Self {
        Self::new(
            406,
            "NotAcceptable",
            format!("only the following media types are accepted: {accepted}"),
        )
    }

    pub fn too_large(limit: usize) -> Self {
        Self::new(
            413,
            "RequestEntityTooLarge",
            format!("Request entity too large: limit is {limit}"),
        )
    }

    /// 431: more request headers than the server reads (kube has no Status
    /// reason for it, so the reason is left out as for unknown codes).
    pub fn header_fields_too_large(limit: usize) -> Self {
        Self::new(
            431,
            "",
            format!("Request Header Fields Too Large: more than {limit} headers"),
        )
    }

    pub fn gone(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, "Forbidden", message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(
            500,
            "InternalError",
            format!("Internal error occurred: {}", message.into()),
        )
    }

    /// 429 TooManyRequests; `retry_after` seconds (when not 0) also go in
    /// the Retry-After header, as kube's NewTooManyRequests.
    pub fn too_many_requests(
        message: impl Into<String>,
        retry_after: u32,
        causes: Vec<Value>,
    ) -> Self {
        let mut details = json!({});
        if !causes.is_empty() {
            details["causes"] = Value::Array(causes);
        }
        if retry_after > 0 {
            details["retryAfterSeconds"] = json!(retry_after);
        }
        ApiError {
            details: Some(Box::new(details)),
            ..Self::new(429, "TooManyRequests", message)
        }
    }

    /// An error kube's REST code returns that is not a Status: kube-apiserver
    /// answers it as a 500 without a reason, the message as it is.
    pub fn unknown(message: impl Into<String>) -> Self {
        Self::new(500, "", message)
    }

    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(503, "ServiceUnavailable", message)
    }

    pub fn timeout(message: impl Into<String>) -> Self {
        Self::new(504, "Timeout", message)
    }

    /// The request timeout filter's 504: `--request-timeout` passed.
    pub fn request_timeout() -> Self {
        Self::timeout(
            "Timeout: request did not complete within requested timeout - context deadline exceeded",
        )
    }

    /// kube's `NewTooLargeResourceVersionError`: a read asked for a revision
    /// the store has not reached (clients retry after a second).
    pub fn too_large_resource_version(requested: i64, current: i64) -> Self {
        ApiError {
            details: Some(Box::new(json!({
                "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                "retryAfterSeconds": 1,
            }))),
            ..Self::timeout(format!(
                "Timeout: Too large resource version: {requested}, current: {current}"
            ))
        }
    }

    /// The `metav1.Status` object for this error.
    pub fn to_status(&self) -> Value {
        let mut s = serde_json::Map::new();
        s.insert("kind".into(), json!("Status"));
        s.insert("apiVersion".into(), json!("v1"));
        let metadata = match &self.list_continue {
            Some(token) => json!({"continue": token}),
            None => json!({}),
        };
        s.insert("metadata".into(), metadata);
        s.insert("status".into(), json!("Failure"));
        s.insert("message".into(), json!(self.message));
        if !self.reason.is_empty() {
            s.insert("reason".into(), json!(self.reason));
        }
        if let Some(d) = &self.details {
            s.insert("details".into(), (**d).clone());
        }
        s.insert("code".into(), json!(self.code));
        Value::Object(s)
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.code, self.reason, self.message)
    }
}

impl std::error::Error for ApiError {}

/// A successful-deletion Status, as kube-apiserver returns for immediate deletes.
pub fn success_status(group: &str, resource: &str, name: &str, uid: &str) -> Value {
    let mut details = name_details(group, resource, name);
    details["uid"] = json!(uid);
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details})
}

pub type ApiResult<T> = Result<T, ApiError>;

/// kube's answer for a path no handler serves (outside `/api` and the
/// served groups): Go's plain-text `404 page not found`, not a Status.
pub fn page_not_found() -> Response {
    plain_text(StatusCode::NOT_FOUND, "404 page not found\n")
}

/// A plain-text answer, as Go's `http.Error` writes one.
pub fn plain_text(code: StatusCode, text: &'static str) -> Response {
    let mut resp = (code, text).into_response();
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_errors_about_one_object_join_their_causes() {
        let name = ApiError::invalid(
            "",
            "Pod",
            "Bad_Name",
            vec![Cause::invalid("metadata.name", "Bad_Name", "bad")],
        );
        let spec = ApiError::invalid(
            "",
            "Pod",
            "Bad_Name",
            vec![Cause::required("spec.containers", "")],
        );
        let both = name.and_invalid(spec);
        assert_eq!(
            both.message,
            r#"Pod "Bad_Name" is invalid: [metadata.name: Invalid value: "Bad_Name": bad, spec.containers: Required value]"#
        );
        assert_eq!(both.details.unwrap()["causes"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn not_found_reads_like_kube() {
        let e = ApiError::not_found("apps", "deployments", "web");
        assert_eq!(e.message, "deployments.apps \"web\" not found");
        let s = e.to_status();
        assert_eq!(s["code"], 404);
        assert_eq!(s["details"]["group"], "apps");
    }

    #[test]
    fn invalid_lists_causes() {
        let e = ApiError::invalid(
            "",
            "ConfigMap",
            "Bad",
            vec![Cause::invalid("metadata.name", "Bad", "must be lowercase")],
        );
        assert_eq!(e.code, 422);
        assert_eq!(e.message, "ConfigMap \"Bad\" is invalid: metadata.name: Invalid value: \"Bad\": must be lowercase");
        assert_eq!(
            e.to_status()["details"]["causes"][0]["field"],
            "metadata.name"
        );
    }
}
