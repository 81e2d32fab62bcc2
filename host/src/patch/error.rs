//! Why a PATCH could not be applied, and the `metav1.Status` kube-apiserver
//! answers with for each case.

use serde_json::{json, Value};

/// Message kube puts in a 422 built by `NewGenericServerResponse`.
const UNPROCESSABLE_MESSAGE: &str =
    "the server rejected our request due to an error in our request";

/// A patch failure. The string is the error text kube produces; how it lands in
/// the Status differs per variant (see [`PatchError::to_status`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// The patch document is malformed: 400 BadRequest, message = the text.
    #[error("{0}")]
    BadRequest(String),
    /// The patch is well formed but cannot be applied (a JSON patch op failed,
    /// lists of lists...): 422 Invalid, generic message, the text as a cause.
    #[error("{0}")]
    Invalid(String),
    /// More than 10000 JSON patch operations: 413 RequestEntityTooLarge.
    #[error("{0}")]
    TooLarge(String),
    /// Errors kube does not classify (e.g. a list item missing its merge key):
    /// 500 with an empty reason, message = the text.
    #[error("{0}")]
    Internal(String),
}

impl PatchError {
    /// HTTP status code of the response.
    pub fn status_code(&self) -> u16 {
        match self {
            PatchError::BadRequest(_) => 400,
            PatchError::Invalid(_) => 422,
            PatchError::TooLarge(_) => 413,
            PatchError::Internal(_) => 500,
        }
    }

    /// `Status.reason`; empty means the field is omitted (StatusReasonUnknown).
    pub fn reason(&self) -> &'static str {
        match self {
            PatchError::BadRequest(_) => "BadRequest",
            PatchError::Invalid(_) => "Invalid",
            PatchError::TooLarge(_) => "RequestEntityTooLarge",
            PatchError::Internal(_) => "",
        }
    }

    /// `Status.message` as kube writes it.
    pub fn status_message(&self) -> String {
        match self {
            PatchError::BadRequest(m) | PatchError::Internal(m) => m.clone(),
            PatchError::Invalid(_) => UNPROCESSABLE_MESSAGE.to_string(),
            PatchError::TooLarge(m) => format!("Request entity too large: {m}"),
        }
    }

    /// `Status.details`, present only for the 422, and empty there: kube
    /// 1.32 answers a failed JSON patch operation with `"details": {}` (the
    /// operation's error is not shown).
    pub fn details(&self) -> Option<Value> {
        match self {
            PatchError::Invalid(_) => Some(json!({})),
            _ => None,
        }
    }

    /// The whole `metav1.Status` body.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.status_message(),
        });
        if !self.reason().is_empty() {
            status["reason"] = json!(self.reason());
        }
        if let Some(details) = self.details() {
            status["details"] = details;
        }
        status["code"] = json!(self.status_code());
        status
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_json_patch_op_renders_as_kubectl_sees_it() {
        let status = PatchError::Invalid("testing value /a failed: test failed".into()).to_status();
        assert_eq!(status["code"], 422);
        assert_eq!(status["reason"], "Invalid");
        assert_eq!(status["message"], UNPROCESSABLE_MESSAGE);
        // As kube-apiserver 1.32 answers (tests/golden/answers/errors/json-patch-test-fails.json).
        assert_eq!(status["details"], json!({}));
    }

    #[test]
    fn bad_request_too_large_and_internal_statuses() {
        let bad = PatchError::BadRequest("invalid patch format of retainKeys".into()).to_status();
        assert_eq!(
            (bad["code"].clone(), bad["reason"].clone()),
            (json!(400), json!("BadRequest"))
        );
        assert_eq!(bad["message"], "invalid patch format of retainKeys");

        let big = PatchError::TooLarge(
            "The allowed maximum operations in a JSON patch is 10000, got 10001".into(),
        );
        assert_eq!(big.status_code(), 413);
        assert_eq!(
            big.status_message(),
            "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
        );

        let internal = PatchError::Internal("boom".into()).to_status();
        assert_eq!(internal["code"], 500);
        assert!(internal.get("reason").is_none());
        assert_eq!(internal["message"], "boom");
    }
}
