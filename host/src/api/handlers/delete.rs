//! DELETE of one object and of a collection, with DeleteOptions
//! (preconditions, propagationPolicy, dryRun) from the body or the query.

use super::body;
use super::negotiate::respond;
use super::read::{list_page, render};
use super::Call;
use crate::apimachinery::status::{success_status, ApiError, ApiResult, Cause};
use crate::registry::{DeleteOutcome, Propagation, WriteOptions};
use axum::body::Body;
use axum::response::Response;
use http::StatusCode;
use serde_json::{json, Value};

/// DeleteOptions from the body (if any) merged with the query's.
async fn delete_options(call: &Call<'_>, raw: Body) -> ApiResult<(Value, WriteOptions<'static>)> {
    let bytes = body::read(raw).await?;
    let opts = if bytes.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        body::decode(
            &bytes,
            call.header(http::header::CONTENT_TYPE),
            call.cat.schemas(),
        )?
    };
    let mut write = call.query.write_options()?;
    if let Some(dry) = opts.get("dryRun").and_then(Value::as_array) {
        write.dry_run |= dry.iter().any(|d| d == "All");
    }
    write.propagation = propagation(call, &opts)?;
    let grace = opts
        .get("gracePeriodSeconds")
        .and_then(Value::as_i64)
        .or(call.query.int("gracePeriodSeconds")?);
    if grace.is_some_and(|g| g < 0) {
        let cause = Cause::invalid(
            "gracePeriodSeconds",
            &grace.unwrap_or_default().to_string(),
            "must be greater than or equal to 0",
        );
        return Err(ApiError::invalid(
            "meta.k8s.io",
            "DeleteOptions",
            "",
            vec![cause],
        ));
    }
    Ok((
        opts.get("preconditions").cloned().unwrap_or(json!({})),
        write,
    ))
}

/// propagationPolicy (or the deprecated orphanDependents) from the body or the query.
fn propagation(call: &Call<'_>, opts: &Value) -> ApiResult<Propagation> {
    let policy = opts
        .get("propagationPolicy")
        .and_then(Value::as_str)
        .or(call.query.get("propagationPolicy"));
    let orphan = opts
        .get("orphanDependents")
        .and_then(Value::as_bool)
        .or(call.query.get("orphanDependents").map(|v| v == "true"));
    let invalid = |cause| ApiError::invalid("meta.k8s.io", "DeleteOptions", "", vec![cause]);
    match (policy, orphan) {
        (Some(_), Some(_)) => Err(invalid(Cause::invalid(
            "propagationPolicy",
            policy.unwrap_or_default(),
            "orphanDependents and deletionPropagation cannot be both set",
        ))),
        (Some(p), None) => Propagation::parse(p).ok_or_else(|| {
            invalid(Cause::not_supported(
                "propagationPolicy",
                p,
                &Propagation::NAMES,
            ))
        }),
        (None, Some(true)) => Ok(Propagation::Orphan),
        (None, _) => Ok(Propagation::Background),
    }
}

pub async fn delete(call: &Call<'_>, raw: Body) -> ApiResult<Response> {
    let output = call.output()?;
    let (preconditions, mut opts) = delete_options(call, raw).await?;
    let admission = call.admission("DELETE", opts.dry_run);
    opts.admit = &admission;
    let outcome = if call.res.group.is_empty() && call.res.plural == "namespaces" {
        // Namespace deletion removes the content itself; no GC finalizers.
        opts.propagation = Propagation::Background;
        super::namespace::delete(call.state, call.name(), &preconditions, opts).await?
    } else {
        call.state
            .registry
            .delete(
                call.res,
                call.namespace(),
                call.name(),
                &preconditions,
                opts,
            )
            .await?
    };
    let body = match outcome {
        DeleteOutcome::Pending(obj) => render(call, output, vec![obj], json!({}), true).await?,
        DeleteOutcome::Deleted(obj) if call.res.returns_deleted_object => {
            render(call, output, vec![obj], json!({}), true).await?
        }
        DeleteOutcome::Deleted(obj) => {
            let uid = obj
                .pointer("/metadata/uid")
                .and_then(Value::as_str)
                .unwrap_or_default();
            success_status(&call.res.group, &call.res.plural, call.name(), uid)
        }
    };
    Ok(respond(
        StatusCode::OK,
        &body,
        output,
        &admission.take_warnings(),
    ))
}

pub async fn delete_collection(call: &Call<'_>, raw: Body) -> ApiResult<Response> {
    let output = call.output()?;
    let (preconditions, mut opts) = delete_options(call, raw).await?;
    let admission = call.admission("DELETE", opts.dry_run);
    opts.admit = &admission;
    let page = list_page(call).await?;
    let mut deleted = Vec::new();
    for obj in page.items {
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let ns = obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .map(String::from);
        match call
            .state
            .registry
            .delete(call.res, ns.as_deref(), &name, &preconditions, opts)
            .await
        {
            Ok(DeleteOutcome::Deleted(o)) | Ok(DeleteOutcome::Pending(o)) => deleted.push(o),
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    let body = render(
        call,
        output,
        deleted,
        json!({"resourceVersion": page.revision.to_string()}),
        false,
    )
    .await?;
    Ok(respond(StatusCode::OK, &body, output, &[]))
}
