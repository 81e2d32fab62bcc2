//! CertificateSigningRequest writes, with kube's CSR strategy
//! (`crate::certificates::rules`): create stamps the requester; PUT and
//! PATCH of the request, its `/approval` and its `/status` keep what each
//! may not change and are validated as kube validates them.

use super::read::render;
use super::scoped_write::Desired;
use super::{body, respond, Call};
use crate::apimachinery::meta;
use crate::apimachinery::request_info::Verb;
use crate::apimachinery::status::{ApiError, ApiResult, Cause};
use crate::certificates::rules;
use axum::body::Body;
use axum::response::Response;
use http::StatusCode;
use serde_json::{json, Value};

const GROUP: &str = "certificates.k8s.io";
const KIND: &str = "CertificateSigningRequest";

/// Whether the request is a CSR write served here (server-side apply of
/// the request itself stays with the generic path).
pub fn handles(call: &Call<'_>) -> bool {
    if call.res.group != GROUP || call.res.plural != "certificatesigningrequests" {
        return false;
    }
    let apply =
        body::media_type(call.header(http::header::CONTENT_TYPE)) == "application/apply-patch+yaml";
    match call.req.verb {
        Verb::Create => call.req.subresource.is_none(),
        Verb::Update => true,
        Verb::Patch => !apply,
        _ => false,
    }
}

fn invalid(name: &str, causes: Vec<Cause>) -> ApiError {
    ApiError::invalid(GROUP, KIND, name, causes)
}

pub async fn serve(call: &Call<'_>, raw: Body) -> ApiResult<Response> {
    if call.req.verb == Verb::Create {
        let user = call.user().clone();
        return super::write::create_prepared(call, raw, &move |csr: &mut Value| {
            rules::prepare_create(csr, &user);
            let causes = rules::validate_create(csr);
            match causes.is_empty() {
                true => Ok(()),
                false => Err(invalid(meta::name(csr).unwrap_or_default(), causes)),
            }
        })
        .await;
    }
    let output = call.output()?;
    let desired = Desired::read(call, raw).await?;
    let sub = call.req.subresource.clone().unwrap_or_default();
    let mut opts = call.query.write_options()?;
    let admission = call.admission("UPDATE", opts.dry_run);
    opts.admit = &admission;
    let change = |current: Value| {
        let wanted = desired.apply(call, &current)?;
        let rv = meta::resource_version(&wanted).map(String::from);
        let mut next = rules::prepare_update(&sub, &current, wanted);
        let m = meta::metadata_mut(&mut next);
        match rv {
            Some(rv) => m.insert("resourceVersion".into(), json!(rv)),
            None => m.remove("resourceVersion"),
        };
        let causes = rules::validate_update(&next, &current);
        match causes.is_empty() {
            true => Ok(next),
            false => Err(invalid(call.name(), causes)),
        }
    };
    let out = call
        .state
        .registry
        .guaranteed_update(call.res, call.namespace(), call.name(), opts, &change)
        .await?;
    let body = render(call, output, vec![out.object().clone()], json!({}), true).await?;
    Ok(respond(
        StatusCode::OK,
        &body,
        output,
        &admission.take_warnings(),
    ))
}
