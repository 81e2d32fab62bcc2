//! The `converter` world's contract: kube's ConversionReview
//! (apiextensions.k8s.io/v1, or v1beta1 when the CRD's webhook settings ask
//! for it; the answer echoes the request's apiVersion). A converter turns
//! each object of `request.objects` into `request.desiredAPIVersion`; the
//! dispatcher fills in the response (uid, result, convertedObjects in the
//! request's order) so a converter only writes the per-object change.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// A ConversionReview: `request` on the way in, `response` on the way out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversionReview {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<ConversionRequest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<ConversionResponse>,
}

/// `ConversionReview.request`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversionRequest {
    #[serde(default)]
    pub uid: String,
    /// `<group>/<version>` every object must end up in.
    #[serde(default, rename = "desiredAPIVersion")]
    pub desired_api_version: String,
    #[serde(default)]
    pub objects: Vec<Value>,
}

/// `ConversionReview.response`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversionResponse {
    #[serde(default)]
    pub uid: String,
    /// kube sends `null` in the request's empty response: read as empty.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub converted_objects: Vec<Value>,
    /// A metav1.Status: `{"status": "Success"}` or `{"status": "Failure", "message"}`.
    #[serde(default)]
    pub result: Value,
}

impl ConversionResponse {
    /// Every object converted, in the request's order.
    pub fn success(uid: &str, converted_objects: Vec<Value>) -> Self {
        ConversionResponse {
            uid: uid.to_string(),
            converted_objects,
            result: json!({"status": "Success"}),
        }
    }

    /// The conversion failed: kube-apiserver shows `message` to the client.
    pub fn failure(uid: &str, message: &str) -> Self {
        ConversionResponse {
            uid: uid.to_string(),
            converted_objects: Vec::new(),
            result: json!({"status": "Failure", "message": message}),
        }
    }
}

fn null_as_empty<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Value>, D::Error> {
    Ok(Option::<Vec<Value>>::deserialize(d)?.unwrap_or_default())
}

/// The version part of an apiVersion (`example.com/v2` → `v2`).
pub fn version_of(api_version: &str) -> &str {
    api_version.rsplit('/').next().unwrap_or(api_version)
}

/// Converts every object with `convert` and sets its apiVersion to the
/// desired one; the first `Err` fails the whole review with its message.
pub fn convert_all(
    request: &ConversionRequest,
    mut convert: impl FnMut(Value, &str) -> Result<Value, String>,
) -> ConversionResponse {
    let desired = request.desired_api_version.as_str();
    let mut converted = Vec::with_capacity(request.objects.len());
    for object in &request.objects {
        match convert(object.clone(), desired) {
            Ok(mut out) => {
                if let Some(map) = out.as_object_mut() {
                    map.insert("apiVersion".into(), json!(desired));
                }
                converted.push(out);
            }
            Err(message) => return ConversionResponse::failure(&request.uid, &message),
        }
    }
    ConversionResponse::success(&request.uid, converted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_carry_the_message_and_no_objects() {
        let request = ConversionRequest {
            uid: "u".into(),
            desired_api_version: "example.com/v2".into(),
            objects: vec![
                json!({"apiVersion": "example.com/v1", "kind": "W"}),
                json!({}),
            ],
        };
        let ok = convert_all(&request, |o, _| Ok(o));
        assert_eq!(ok.converted_objects[0]["apiVersion"], "example.com/v2");
        assert_eq!(ok.result, json!({"status": "Success"}));
        let bad = convert_all(&request, |_, to| Err(format!("cannot reach {to}")));
        assert_eq!(
            bad.result,
            json!({"status": "Failure", "message": "cannot reach example.com/v2"})
        );
        assert!(bad.converted_objects.is_empty());
        assert_eq!(version_of("example.com/v2"), "v2");
    }
}
