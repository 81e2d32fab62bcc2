//! The ConversionReview both transports speak: the request sent (objects
//! not yet in the desired version), and the answer validated as kube's
//! webhook converter does, with its error texts.

use super::metadata;
use crate::transport::https::HttpsWebhook;
use crate::transport::ReviewTransport;
use crate::wasm::WasmTransport;
use serde_json::{json, Value};

const GROUP_VERSION_V1: &str = "apiextensions.k8s.io/v1";
const GROUP_VERSION_V1BETA1: &str = "apiextensions.k8s.io/v1beta1";

/// Which ConversionReview is spoken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ReviewVersion {
    V1,
    V1beta1,
}

impl ReviewVersion {
    /// The first of a CRD's `conversionReviewVersions` we speak.
    pub(super) fn first_supported<'a>(
        versions: impl IntoIterator<Item = &'a str>,
    ) -> Option<ReviewVersion> {
        versions.into_iter().find_map(|v| match v {
            "v1" => Some(ReviewVersion::V1),
            "v1beta1" => Some(ReviewVersion::V1beta1),
            _ => None,
        })
    }

    fn api_version(self) -> &'static str {
        match self {
            ReviewVersion::V1 => GROUP_VERSION_V1,
            ReviewVersion::V1beta1 => GROUP_VERSION_V1BETA1,
        }
    }
}

/// Where a review goes.
pub(super) enum Endpoint {
    Webhook(HttpsWebhook),
    Plugin(WasmTransport),
}

impl Endpoint {
    /// Sends `review` of `objects` objects; a webhook's answer is bounded
    /// by their number ([`crate::transport::https::conversion_answer_limit`]).
    async fn call(&self, review: &str, objects: usize) -> Result<String, String> {
        match self {
            Endpoint::Webhook(hook) => {
                let limit = crate::transport::https::conversion_answer_limit(objects);
                hook.post_plain(review, limit).await
            }
            Endpoint::Plugin(plugin) => plugin.call(review).await,
        }
    }
}

/// One review: what was sent and what the answer must match.
pub(super) struct Call {
    version: ReviewVersion,
    uid: String,
    desired: String,
    /// Indexes (in the caller's objects) of the objects sent, in order.
    sent: Vec<usize>,
    /// The first sent object's `group/version, Kind=kind`, as kube names the input.
    gvk: String,
    /// One object in all (kube's single-object wording) rather than a list.
    single: bool,
    body: String,
}

impl Call {
    pub(super) fn new(
        version: ReviewVersion,
        objects: &[Value],
        sent: &[usize],
        desired: &str,
        single: bool,
    ) -> Call {
        let uid = uuid::Uuid::new_v4().to_string();
        let sent_objects: Vec<&Value> = sent.iter().filter_map(|&i| objects.get(i)).collect();
        // Encoding (and below, decoding) many objects is a CPU-heavy step.
        let body = crate::cpu::for_request(|| {
            json!({
                "kind": "ConversionReview",
                "apiVersion": version.api_version(),
                "request": {"uid": uid, "desiredAPIVersion": desired, "objects": sent_objects},
                "response": {"uid": "", "convertedObjects": null, "result": {"metadata": {}}},
            })
            .to_string()
        });
        let gvk = sent_objects
            .first()
            .map(|o| gvk_string(str_of(o, "apiVersion"), str_of(o, "kind")))
            .unwrap_or_default();
        Call {
            version,
            uid,
            desired: desired.to_string(),
            sent: sent.to_vec(),
            gvk,
            single,
            body,
        }
    }

    /// Sends the review and puts the converted objects in place of the sent ones.
    pub(super) async fn run(
        &self,
        endpoint: &Endpoint,
        mut objects: Vec<Value>,
    ) -> Result<Vec<Value>, String> {
        let failed = |e: String| format!("conversion webhook for {} failed: {e}", self.gvk);
        let answer = endpoint
            .call(&self.body, self.sent.len())
            .await
            .map_err(failed)?;
        crate::cpu::mark_large(answer.len());
        let converted =
            crate::cpu::for_request(|| self.converted_objects(&answer)).map_err(failed)?;
        if converted.len() != self.sent.len() {
            return Err(format!(
                "conversion webhook for {} returned {} objects, expected {}",
                self.gvk,
                converted.len(),
                self.sent.len()
            ));
        }
        for (k, (converted, &i)) in converted.into_iter().zip(&self.sent).enumerate() {
            let Some(slot) = objects.get_mut(i) else {
                continue;
            };
            let original = std::mem::take(slot);
            *slot = self.accept(k, &original, converted)?;
        }
        Ok(objects)
    }

    /// kube's getConvertedObjectsFromResponse.
    fn converted_objects(&self, answer: &str) -> Result<Vec<Value>, String> {
        if answer.trim().is_empty() {
            return Err(
                "0-length response with status code: 200 and content type: application/json".into(),
            );
        }
        let review: Value = serde_json::from_str(answer)
            .map_err(|e| format!("couldn't decode the ConversionReview: {e}"))?;
        let api_version = str_of(&review, "apiVersion");
        let kind = str_of(&review, "kind");
        let v1 = self.version == ReviewVersion::V1;
        if v1 && (api_version != GROUP_VERSION_V1 || kind != "ConversionReview") {
            return Err(format!(
                "expected webhook response of {}, got {}",
                gvk_string(GROUP_VERSION_V1, "ConversionReview"),
                gvk_string(api_version, kind)
            ));
        }
        let response = match review.get("response") {
            Some(r) if !r.is_null() => r,
            _ => return Err("no response provided".into()),
        };
        let uid = str_of(response, "uid");
        if v1 && uid != self.uid {
            return Err(format!("expected response.uid={:?}, got {uid:?}", self.uid));
        }
        let status = response.pointer("/result/status").and_then(Value::as_str);
        if status != Some("Success") {
            let message = response.pointer("/result/message").and_then(Value::as_str);
            return Err(match message.filter(|m| !m.is_empty()) {
                Some(m) => m.to_string(),
                None => format!(
                    "response.result.status was '{}', not 'Success'",
                    status.unwrap_or_default()
                ),
            });
        }
        Ok(match response.get("convertedObjects") {
            Some(Value::Array(items)) => items.clone(),
            _ => Vec::new(),
        })
    }

    /// Checks the `k`-th converted object against its original and restores
    /// the original's metadata but for labels and annotations.
    fn accept(&self, k: usize, original: &Value, mut converted: Value) -> Result<Value, String> {
        let gvk = &self.gvk;
        let (at, invalid) = if self.single {
            (
                0,
                format!("conversion webhook for {gvk} returned invalid object"),
            )
        } else {
            // kube counts the object before checking it: its index is one more.
            (
                k + 1,
                format!("conversion webhook for {gvk} returned invalid converted object"),
            )
        };
        if let Err(e) = as_unstructured(&converted) {
            return Err(match self.single {
                true => e,
                false => format!("{invalid} at index {k}: {e}"),
            });
        }
        let got = str_of(&converted, "apiVersion");
        if got != self.desired {
            let desired = &self.desired;
            return Err(format!(
                "{invalid} at index {at}: invalid groupVersion (expected {desired}, received {got})"
            ));
        }
        let (want_kind, got_kind) = (str_of(original, "kind"), str_of(&converted, "kind"));
        if want_kind != got_kind {
            return Err(format!(
                "{invalid} at index {at}: invalid kind (expected {want_kind}, received {got_kind})"
            ));
        }
        metadata::same_identity(original, &converted).map_err(|e| match self.single {
            true => format!("{invalid}: {e}"),
            false => format!("{invalid} at index {at}: {e}"),
        })?;
        metadata::restore(original, &mut converted).map_err(|e| match self.single {
            true => format!("conversion webhook for {gvk} returned invalid metadata: {e}"),
            false => format!(
                "conversion webhook for {gvk} returned invalid metadata in object at index {at}: {e}"
            ),
        })?;
        Ok(converted)
    }
}

/// What decoding a converted object as Unstructured demands: a JSON object with a kind.
fn as_unstructured(object: &Value) -> Result<(), String> {
    match object {
        Value::Object(map)
            if map
                .get("kind")
                .and_then(Value::as_str)
                .is_some_and(|k| !k.is_empty()) =>
        {
            Ok(())
        }
        Value::Object(_) | Value::Null => Err(format!("Object 'Kind' is missing in '{object}'")),
        other => Err(format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            kube_rules::gofmt::json_kind(other)
        )),
    }
}

/// Go's `GroupVersionKind.String()`: `group/version, Kind=kind`.
fn gvk_string(api_version: &str, kind: &str) -> String {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    format!("{group}/{version}, Kind={kind}")
}

fn str_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}
