//! `pods/<name>/resize` (kube's ResizeREST, served as the
//! InPlacePodVerticalScaling gate is on by default in 1.32): GET returns the
//! pod; PUT and PATCH go through the strategy plugin's resize rules, which
//! keep only the containers' `resources` and `resizePolicy` of what was
//! sent, mark the pod's `status.resize` Proposed and validate the change as
//! kube's ValidatePodResize.

use super::super::scoped_write::Desired;
use super::{pod, Call};
use crate::apimachinery::status::ApiResult;
use axum::body::Body;
use axum::response::Response;
use http::Method;
use serde_json::Value;

pub async fn serve(call: &Call<'_>, raw: Body) -> ApiResult<Response> {
    let obj = match call.parts.method {
        Method::GET => pod(call).await?,
        _ => write(call, &Desired::read(call, raw).await?).await?,
    };
    super::answer_pod(call, obj).await
}

/// Stores the pod with the resources the request gives its containers.
async fn write(call: &Call<'_>, desired: &Desired) -> ApiResult<Value> {
    let mut opts = call.query.write_options()?;
    let admission = call.admission("UPDATE", opts.dry_run);
    opts.admit = &admission;
    // A resourceVersion in what was sent is a precondition (a patch
    // carries the one it was applied to, so it is retried on conflicts).
    let change = |current: Value| desired.apply(call, &current);
    let out = call
        .state
        .registry
        .guaranteed_update_subresource(
            (call.res, "resize"),
            call.namespace(),
            call.name(),
            opts,
            &change,
        )
        .await?;
    Ok(out.object().clone())
}
