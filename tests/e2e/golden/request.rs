//! A golden request: what is sent, kept beside the recorded answer so the
//! comparison replays exactly what the recorder sent.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Request {
    pub method: String,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accept: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// A JSON body.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    /// A body sent as these exact bytes (malformed ones).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_body: Option<String>,
}

impl Request {
    pub fn get(path: &str) -> Request {
        Request {
            method: "GET".into(),
            path: path.into(),
            ..Default::default()
        }
    }

    pub fn accept(&self) -> &str {
        self.accept.as_deref().unwrap_or("application/json")
    }

    pub fn content_type(&self) -> &str {
        self.content_type.as_deref().unwrap_or("application/json")
    }

    pub fn body_bytes(&self) -> Option<Vec<u8>> {
        match (&self.raw_body, &self.body) {
            (Some(raw), _) => Some(raw.clone().into_bytes()),
            (None, Some(v)) => Some(serde_json::to_vec(v).expect("a JSON value encodes")),
            (None, None) => None,
        }
    }
}
