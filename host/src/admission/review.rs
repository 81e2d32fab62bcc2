//! The AdmissionReview (admission.k8s.io/v1) contract: the request every
//! admission entry receives, Wasm plugin or webhook alike, and the reading of
//! its response (allowed, status, JSONPatch, warnings, audit annotations).

use crate::apimachinery::status::ApiError;
use base64::Engine;
use serde::Serialize;
use serde_json::{json, Value};

/// Who is asking and what they are doing, shared by every entry of one request.
#[derive(Clone, Debug)]
pub struct ReviewRequest {
    pub operation: &'static str,
    /// Group and version of the resource.
    pub group: String,
    pub version: String,
    /// Group, version and kind of the object under review (autoscaling/v1
    /// Scale for the scale subresource, else the resource's own).
    pub kind_group: String,
    pub kind_version: String,
    pub kind: String,
    pub resource: String,
    pub subresource: String,
    pub namespace: Option<String>,
    pub name: String,
    pub user: Value,
    pub dry_run: bool,
}

/// `request.kind` and `request.requestKind`.
#[derive(Serialize)]
struct Gvk<'a> {
    group: &'a str,
    version: &'a str,
    kind: &'a str,
}

/// `request.resource` and `request.requestResource`.
#[derive(Serialize)]
struct Gvr<'a> {
    group: &'a str,
    version: &'a str,
    resource: &'a str,
}

/// `request.options`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Options {
    kind: &'static str,
    api_version: &'static str,
}

/// Every field of `request` but its uid, borrowed from the request and
/// the objects: encoded without copying them first.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RequestFields<'a> {
    kind: Gvk<'a>,
    resource: Gvr<'a>,
    #[serde(skip_serializing_if = "str::is_empty")]
    sub_resource: &'a str,
    request_kind: Gvk<'a>,
    request_resource: Gvr<'a>,
    #[serde(skip_serializing_if = "str::is_empty")]
    request_sub_resource: &'a str,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    namespace: Option<&'a str>,
    operation: &'a str,
    user_info: &'a Value,
    object: Option<&'a Value>,
    old_object: Option<&'a Value>,
    dry_run: bool,
    options: Options,
}

/// The envelope up to the request's uid.
const HEAD: &str =
    r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":""#;

/// An AdmissionReview encoded once for one state of the object and shared
/// by every entry called with it; each call only sets its own uid.
#[derive(Debug)]
pub struct EncodedReview {
    /// `request`'s fields after the uid, and the closing braces.
    tail: String,
}

impl EncodedReview {
    /// The review's text with `uid` (a UUID: nothing to escape).
    pub fn with_uid(&self, uid: &str) -> String {
        let mut text = String::with_capacity(HEAD.len() + uid.len() + 2 + self.tail.len());
        text.push_str(HEAD);
        text.push_str(uid);
        text.push_str("\",");
        text.push_str(&self.tail);
        text
    }
}

impl ReviewRequest {
    fn options(&self) -> Options {
        let kind = match self.operation {
            "CREATE" => "CreateOptions",
            "UPDATE" => "UpdateOptions",
            _ => "DeleteOptions",
        };
        Options {
            kind,
            api_version: "meta.k8s.io/v1",
        }
    }

    /// The request an AdmissionReview's `request` describes (offline
    /// tests); None without a known operation.
    pub fn from_request(request: &Value) -> Option<ReviewRequest> {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        let operation = ["CREATE", "UPDATE", "DELETE", "CONNECT"]
            .into_iter()
            .find(|o| request["operation"] == *o)?;
        let (kind, resource) = (&request["kind"], &request["resource"]);
        Some(ReviewRequest {
            operation,
            group: text(&resource["group"]),
            version: text(&resource["version"]),
            kind_group: text(&kind["group"]),
            kind_version: text(&kind["version"]),
            kind: text(&kind["kind"]),
            resource: text(&resource["resource"]),
            subresource: text(&request["subResource"]),
            namespace: request["namespace"]
                .as_str()
                .filter(|n| !n.is_empty())
                .map(String::from),
            name: text(&request["name"]),
            user: request["userInfo"].clone(),
            dry_run: request["dryRun"].as_bool().unwrap_or(false),
        })
    }

    /// `request` without its uid and objects, as CEL expressions see it
    /// (`request` of matchConditions and admission policies).
    pub fn request_value(&self) -> Value {
        let mut request = serde_json::to_value(self.fields(None, None)).unwrap_or(Value::Null);
        if let Some(fields) = request.as_object_mut() {
            // Unset in kube's `request` (`has(request.object)` is false).
            fields.remove("object");
            fields.remove("oldObject");
        }
        request
    }

    /// The review of `object` and `old`, encoded once for every entry that
    /// sees them.
    pub fn encode(&self, object: Option<&Value>, old: Option<&Value>) -> EncodedReview {
        let fields = self.fields(object, old);
        // Encoding strings and Values cannot fail; were it to, the entries
        // would see a review without objects rather than the server panic.
        let mut tail =
            serde_json::to_string(&fields).unwrap_or_else(|_| r#"{"object":null}"#.into());
        // `{"kind":...}` becomes `"kind":...}}`: the uid comes first.
        tail.remove(0);
        tail.push('}');
        EncodedReview { tail }
    }

    fn fields<'a>(
        &'a self,
        object: Option<&'a Value>,
        old: Option<&'a Value>,
    ) -> RequestFields<'a> {
        let gvk = || Gvk {
            group: &self.kind_group,
            version: &self.kind_version,
            kind: &self.kind,
        };
        let gvr = || Gvr {
            group: &self.group,
            version: &self.version,
            resource: &self.resource,
        };
        RequestFields {
            kind: gvk(),
            resource: gvr(),
            sub_resource: &self.subresource,
            request_kind: gvk(),
            request_resource: gvr(),
            request_sub_resource: &self.subresource,
            name: &self.name,
            namespace: self.namespace.as_deref(),
            operation: self.operation,
            user_info: &self.user,
            object,
            old_object: old,
            dry_run: self.dry_run,
            options: self.options(),
        }
    }

    /// The review sent for one call, with a fresh uid, as a value (for
    /// matchConditions and tests; calls send [`ReviewRequest::encode`]'s text).
    pub fn review(&self, object: Option<&Value>, old: Option<&Value>) -> Value {
        let text = self
            .encode(object, old)
            .with_uid(&uuid::Uuid::new_v4().to_string());
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }
}

/// What one entry answered.
#[derive(Debug, Default)]
pub struct Verdict {
    pub allowed: bool,
    /// The denial as the client will see it (when not allowed).
    pub denial: Option<ApiError>,
    pub patch: Option<Vec<u8>>,
    pub warnings: Vec<String>,
    pub audit_annotations: Vec<(String, String)>,
}

/// Reads an AdmissionReview response. `verbatim` keeps a denial's status as
/// the plugin wrote it (built-in plugins speak as kube-apiserver's own);
/// otherwise the message names the entry, as kube-apiserver does for webhooks.
pub fn read_response(
    text: &str,
    uid: &str,
    entry: &str,
    verbatim: bool,
) -> Result<Verdict, String> {
    let review: Value = serde_json::from_str(text)
        .map_err(|e| format!("response is not an AdmissionReview: {e}"))?;
    let resp = review
        .get("response")
        .ok_or("response is not an AdmissionReview: no response")?;
    let got_uid = resp.get("uid").and_then(Value::as_str).unwrap_or_default();
    if !got_uid.is_empty() && got_uid != uid {
        return Err(format!("expected response.uid={uid:?}, got {got_uid:?}"));
    }
    let allowed = resp
        .get("allowed")
        .and_then(Value::as_bool)
        .ok_or("response.allowed is missing")?;
    let mut v = Verdict {
        allowed,
        ..Verdict::default()
    };
    v.warnings = strings(resp.get("warnings"));
    if let Some(a) = resp.get("auditAnnotations").and_then(Value::as_object) {
        v.audit_annotations = a
            .iter()
            .map(|(k, x)| (k.clone(), x.as_str().unwrap_or_default().to_string()))
            .collect();
    }
    if let Some(p) = resp.get("patch").and_then(Value::as_str) {
        if resp
            .get("patchType")
            .and_then(Value::as_str)
            .unwrap_or("JSONPatch")
            != "JSONPatch"
        {
            return Err("only patchType JSONPatch is supported".into());
        }
        let raw = base64::engine::general_purpose::STANDARD
            .decode(p)
            .map_err(|e| format!("response.patch is not base64: {e}"))?;
        v.patch = Some(raw);
    }
    if !allowed {
        v.denial = Some(denial(resp.get("status"), entry, verbatim));
    }
    Ok(v)
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn denial(status: Option<&Value>, entry: &str, verbatim: bool) -> ApiError {
    let st = status.cloned().unwrap_or(json!({}));
    let code = st
        .get("code")
        .and_then(Value::as_u64)
        .filter(|c| (400..600).contains(c))
        .unwrap_or(403) as u16;
    let message = st
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let reason = st
        .get("reason")
        .and_then(Value::as_str)
        .map(reason_name)
        .unwrap_or_else(|| default_reason(code));
    let message = if verbatim {
        message
    } else if message.is_empty() {
        format!("admission webhook \"{entry}\" denied the request without explanation")
    } else {
        format!("admission webhook \"{entry}\" denied the request: {message}")
    };
    ApiError {
        code,
        reason,
        message,
        details: st.get("details").cloned().map(Box::new),
        list_continue: None,
    }
}

/// Maps a reason string to the static name the status type keeps.
fn reason_name(r: &str) -> &'static str {
    const KNOWN: [&str; 14] = [
        "Forbidden",
        "NotFound",
        "AlreadyExists",
        "Conflict",
        "Invalid",
        "BadRequest",
        "Unauthorized",
        "MethodNotAllowed",
        "Gone",
        "Expired",
        "TooManyRequests",
        "InternalError",
        "ServiceUnavailable",
        "Timeout",
    ];
    KNOWN
        .iter()
        .find(|k| **k == r)
        .copied()
        .unwrap_or("Forbidden")
}

fn default_reason(code: u16) -> &'static str {
    match code {
        400 => "BadRequest",
        401 => "Unauthorized",
        404 => "NotFound",
        409 => "Conflict",
        422 => "Invalid",
        429 => "TooManyRequests",
        500 => "InternalError",
        _ => "Forbidden",
    }
}

/// Applies an entry's JSONPatch to the object.
pub fn apply_patch(obj: &Value, patch: &[u8]) -> Result<Value, String> {
    let ops: json_patch::Patch = serde_json::from_slice(patch)
        .map_err(|e| format!("response.patch is not a JSON patch: {e}"))?;
    let mut out = obj.clone();
    json_patch::patch(&mut out, &ops)
        .map_err(|e| format!("response.patch could not be applied: {e}"))?;
    Ok(out)
}

/// The request's coordinates, as the chain matches them.
pub fn attributes(request: &serde_json::Value) -> Option<super::matcher::RequestAttributes> {
    ReviewRequest::from_request(request).map(|req| crate::admission::chain::attributes(&req))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req() -> ReviewRequest {
        ReviewRequest {
            operation: "CREATE",
            group: "apps".into(),
            version: "v1".into(),
            kind_group: "apps".into(),
            kind_version: "v1".into(),
            kind: "Deployment".into(),
            resource: "deployments".into(),
            subresource: String::new(),
            namespace: Some("default".into()),
            name: "web".into(),
            user: json!({"username": "alice"}),
            dry_run: false,
        }
    }

    #[test]
    fn review_carries_the_request() {
        let r = req().review(Some(&json!({"a": 1})), None);
        assert_eq!(r["request"]["operation"], "CREATE");
        assert_eq!(r["request"]["kind"]["kind"], "Deployment");
        assert_eq!(r["request"]["namespace"], "default");
        assert_eq!(r["request"]["oldObject"], Value::Null);
        assert_eq!(r["request"]["options"]["kind"], "CreateOptions");
    }

    #[test]
    fn one_encoding_serves_every_call_each_with_its_own_uid() {
        let encoded = req().encode(Some(&json!({"a": 1})), Some(&json!({"a": 0})));
        let first: Value = serde_json::from_str(&encoded.with_uid("u-1")).unwrap();
        let second: Value = serde_json::from_str(&encoded.with_uid("u-2")).unwrap();
        assert_eq!(first["request"]["uid"], "u-1");
        assert_eq!(second["request"]["uid"], "u-2");
        assert_eq!(first["request"]["object"], json!({"a": 1}));
        assert_eq!(first["request"]["oldObject"], json!({"a": 0}));
        assert_eq!(first["request"]["userInfo"]["username"], "alice");
        assert_eq!(first["kind"], "AdmissionReview");
        assert_eq!(first["request"].get("subResource"), None);
    }

    #[test]
    fn denial_names_the_entry_unless_verbatim() {
        let text = r#"{"response": {"uid": "u", "allowed": false, "status": {"code": 403, "message": "no team label"}}}"#;
        let v = read_response(text, "u", "require-labels", false).unwrap();
        let d = v.denial.unwrap();
        assert_eq!((d.code, d.reason), (403, "Forbidden"));
        assert_eq!(
            d.message,
            "admission webhook \"require-labels\" denied the request: no team label"
        );
        let text = r#"{"response": {"allowed": false, "status": {"code": 404, "reason": "NotFound", "message": "namespaces \"x\" not found"}}}"#;
        let d = read_response(text, "u", "namespace-lifecycle", true)
            .unwrap()
            .denial
            .unwrap();
        assert_eq!(
            (d.code, d.message.as_str()),
            (404, "namespaces \"x\" not found")
        );
    }

    #[test]
    fn patches_and_bad_answers() {
        let patch = base64::engine::general_purpose::STANDARD
            .encode(r#"[{"op":"add","path":"/b","value":2}]"#);
        let text = format!(
            r#"{{"response": {{"uid": "u", "allowed": true, "patch": "{patch}", "patchType": "JSONPatch", "warnings": ["careful"]}}}}"#
        );
        let v = read_response(&text, "u", "m", false).unwrap();
        assert_eq!(
            apply_patch(&json!({"a": 1}), &v.patch.unwrap()).unwrap(),
            json!({"a": 1, "b": 2})
        );
        assert_eq!(v.warnings, ["careful"]);
        assert!(read_response("not json", "u", "m", false).is_err());
        assert!(read_response(
            r#"{"response": {"uid": "other", "allowed": true}}"#,
            "u",
            "m",
            false
        )
        .is_err());
    }
}
