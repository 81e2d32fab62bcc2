//! A failure as the client receives it: the `metav1.Status` body (Go's field
//! order), its HTTP code, `Retry-After` when the Status asks for one, and
//! the Status recorded as the audit event's response.

use crate::apimachinery::status::ApiError;
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde_json::Value;

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let status = self.to_status();
        crate::audit::response_object(&status);
        let body = crate::apimachinery::kube_json::to_vec(&status);
        let mut resp = (code, body).into_response();
        resp.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
        let retry_after = self.details.as_ref().map(|d| &d["retryAfterSeconds"]);
        if let Some(seconds) = retry_after.and_then(Value::as_u64).filter(|s| *s > 0) {
            resp.headers_mut()
                .insert(http::header::RETRY_AFTER, http::HeaderValue::from(seconds));
        }
        resp
    }
}
