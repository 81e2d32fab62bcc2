//! What a PUT or PATCH asks an object to become, for the writes whose rules
//! then decide what of it is kept (pods/ephemeralcontainers,
//! CertificateSigningRequests and their approval and status).

use super::{body, Call};
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::patch::{self, PatchType};
use axum::body::Body;
use serde_json::Value;

/// The request's body (PUT) or patch (PATCH), read once.
pub enum Desired {
    Object(Value),
    Patch(PatchType, bytes::Bytes),
}

impl Desired {
    /// Reads the request (415 for a patch type it cannot apply).
    pub async fn read(call: &Call<'_>, raw: Body) -> ApiResult<Desired> {
        let ct = call.header(http::header::CONTENT_TYPE);
        if call.parts.method == http::Method::PATCH {
            let mt = body::media_type(ct);
            let kind = PatchType::from_content_type(&mt)
                .ok_or_else(|| ApiError::unsupported_patch_type(super::write::patch_types(call)))?;
            return Ok(Desired::Patch(kind, body::read(raw).await?));
        }
        let bytes = body::read(raw).await?;
        let mut obj = body::decode(&bytes, ct, call.cat.schemas())?;
        body::check_object(call.res, &mut obj, call.namespace())?;
        Ok(Desired::Object(obj))
    }

    /// The object the client wants, given the stored one.
    pub fn apply(&self, call: &Call<'_>, current: &Value) -> ApiResult<Value> {
        let wanted = match self {
            Desired::Object(obj) => obj.clone(),
            Desired::Patch(kind, bytes) => patch::apply_patch(
                *kind,
                current,
                bytes,
                Some(&call.res.schema_name),
                call.cat.schemas(),
            )
            .map_err(super::write::patch_error)?,
        };
        let name = wanted
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if name != call.name() {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({name}) does not match the name on the URL ({})",
                call.name()
            )));
        }
        Ok(wanted)
    }
}
