//! An authenticator or authorizer entry: a Wasm plugin or an HTTPS webhook
//! behind the one [`ReviewTransport`], both sent the same review
//! (TokenReview, SubjectAccessReview) and answering it with `status` set.

use crate::transport::ReviewTransport;
use serde_json::Value;
use std::sync::Arc;

/// A named entry of the authentication or authorization chain.
pub struct Entry {
    pub name: String,
    pub transport: Arc<dyn ReviewTransport>,
}

impl Entry {
    /// Sends `review` and returns the answer, which must be a JSON object.
    pub async fn call(&self, review: &Value) -> Result<Value, String> {
        let answer = self.transport.call(&review.to_string()).await?;
        match serde_json::from_str::<Value>(&answer) {
            Ok(v) if v.is_object() => Ok(v),
            _ => Err("the answer is not a JSON object".to_string()),
        }
    }
}
