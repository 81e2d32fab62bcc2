//! Resource handlers, one per verb, generic over the catalogue: no per-kind
//! code lives here. `handle` resolves the resource and dispatches.

pub(crate) mod body;
mod certificates;
mod component_status;
mod delete;
pub mod event_lines;
pub mod namespace;
mod negotiate;
mod pod_subresources;
mod proxy;
pub mod query;
mod read;
mod reviews;
mod scoped_write;
mod token_request;
mod watch;
mod write;

use crate::admission::review::ReviewRequest;
use crate::admission::RequestAdmission;
use crate::api::state::AppState;
use crate::apimachinery::request_info::{ResourceRequest, Verb};
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::apimachinery::user::UserInfo;
use crate::catalogue::{Catalogue, ResourceInfo};
use axum::body::Body;
use axum::response::{IntoResponse, Response};
use http::request::Parts;
use std::sync::Arc;

pub use negotiate::{negotiate, respond, Output};

/// Everything a verb handler needs about the request.
pub struct Call<'a> {
    pub state: &'a AppState,
    /// The catalogue as it was when the request arrived.
    pub cat: &'a Catalogue,
    pub res: &'a ResourceInfo,
    pub req: &'a ResourceRequest,
    pub parts: &'a Parts,
    pub query: query::Query,
}

impl Call<'_> {
    pub fn namespace(&self) -> Option<&str> {
        self.req.namespace.as_deref()
    }

    /// The object name; handlers of named verbs are only reached with one.
    pub fn name(&self) -> &str {
        self.req.name.as_deref().unwrap_or_default()
    }

    pub fn header(&self, name: http::header::HeaderName) -> Option<&str> {
        self.parts.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The manager a write is recorded under in managedFields: the
    /// `fieldManager` parameter, else the User-Agent's product (kube's
    /// `managerOrUserAgent`).
    pub fn field_manager(&self) -> String {
        match self.query.get("fieldManager") {
            Some(m) if !m.is_empty() => m.to_string(),
            _ => crate::patch::managed_fields::from_user_agent(
                self.header(http::header::USER_AGENT).unwrap_or_default(),
            ),
        }
    }

    /// This request's write, recorded under `manager` (see [`Self::field_manager`]).
    pub fn tracking<'s>(&'s self, manager: &'s str) -> crate::patch::managed_fields::Tracking<'s> {
        crate::patch::managed_fields::Tracking {
            manager,
            subresource: self.req.subresource.as_deref().unwrap_or_default(),
            schemas: self.cat.schemas(),
        }
    }

    /// The authenticated (or impersonated) user the request acts as.
    pub fn user(&self) -> &UserInfo {
        static NOBODY: std::sync::LazyLock<UserInfo> = std::sync::LazyLock::new(UserInfo::default);
        self.parts.extensions.get::<UserInfo>().unwrap_or(&NOBODY)
    }

    /// The requester as AdmissionReview's userInfo.
    pub fn user_info(&self) -> serde_json::Value {
        serde_json::to_value(self.user()).unwrap_or_default()
    }

    /// The admission chain bound to this request for `operation`.
    pub fn admission(&self, operation: &'static str, dry_run: bool) -> RequestAdmission {
        let kind = match self
            .req
            .subresource
            .as_deref()
            .and_then(|s| self.res.subresource(s))
        {
            Some(sub) if sub.name == "scale" => {
                (sub.group.clone(), sub.version.clone(), sub.kind.clone())
            }
            _ => (
                self.res.group.clone(),
                self.res.version.clone(),
                self.res.kind.clone(),
            ),
        };
        let request = ReviewRequest {
            operation,
            group: self.res.group.clone(),
            version: self.res.version.clone(),
            kind_group: kind.0,
            kind_version: kind.1,
            kind: kind.2,
            resource: self.res.plural.clone(),
            subresource: self.req.subresource.clone().unwrap_or_default(),
            namespace: self.namespace().map(String::from),
            name: self.name().to_string(),
            user: self.user_info(),
            dry_run,
        };
        RequestAdmission::new(self.state.admission.clone(), request)
    }

    pub fn output(&self) -> ApiResult<Output> {
        negotiate(
            self.header(http::header::ACCEPT),
            self.query.get("includeObject"),
            matches!(self.req.verb, Verb::List | Verb::Watch),
            self.prints_tables(),
            crate::api::protobuf::encodable(&self.res.api_version(), &self.res.kind),
        )
    }

    /// Whether kube's REST for this request has a TableConvertor: every
    /// lister and its status and scale, not the create-only reviews nor
    /// subresources such as token, eviction or finalize (a Table asked of
    /// them is not acceptable).
    fn prints_tables(&self) -> bool {
        match self.req.subresource.as_deref() {
            None => self.res.has_verb("list"),
            Some(sub) => matches!(sub, "status" | "scale"),
        }
    }
}

/// Serves one resource request.
pub async fn handle(state: &AppState, req: ResourceRequest, parts: Parts, body: Body) -> Response {
    let served = crate::cpu::request_scope(dispatch(state, &req, &parts, body)).await;
    match served {
        Ok(resp) => resp,
        Err(e) => e.into_response(),
    }
}

async fn dispatch(
    state: &AppState,
    req: &ResourceRequest,
    parts: &Parts,
    body: Body,
) -> ApiResult<Response> {
    // A body left unread by an early error is drained by `unread_body`.
    let cat = catalogue_for(state, req).await;
    if !cat.serves_group(&req.group) {
        return Ok(crate::apimachinery::status::page_not_found());
    }
    let res = resolve(&cat, req)?;
    let call = Call {
        state,
        cat: &cat,
        res,
        req,
        parts,
        query: query::Query::parse(parts.uri.query(), &parts.method),
    };
    let mut served = route(&call, body).await;
    if let (Ok(resp), Some(warning)) = (&mut served, deprecation_warning(res)) {
        negotiate::add_warnings(resp, &[warning]);
    }
    served
}

/// kube's warning on every request to a deprecated version of a CRD.
fn deprecation_warning(res: &ResourceInfo) -> Option<String> {
    res.custom.as_ref()?.deprecation_warning.clone()
}

async fn route(call: &Call<'_>, body: Body) -> ApiResult<Response> {
    if reviews::is_review(call) {
        return reviews::create(call, body).await;
    }
    if token_request::is_token_request(call) {
        return token_request::create(call, body).await;
    }
    if certificates::handles(call) {
        return certificates::serve(call, body).await;
    }
    if component_status::is_component_status(call) {
        return component_status::serve(call).await;
    }
    if proxy::handles(call) {
        return proxy::serve(call, body).await;
    }
    if pod_subresources::handles(call) {
        return pod_subresources::serve(call, body).await;
    }
    match call.req.verb {
        Verb::Get => read::get(call).await,
        Verb::List => read::list(call).await,
        Verb::Watch => watch::watch(call).await,
        Verb::Create => write::create(call, body).await,
        Verb::Update => write::update(call, body).await,
        Verb::Patch => write::patch(call, body).await,
        Verb::Delete => delete::delete(call, body).await,
        Verb::DeleteCollection => delete::delete_collection(call, body).await,
    }
}

/// The catalogue to serve `req` from: the current one, or, when it lacks
/// the resource that an Established CRD in the store serves, the one that
/// includes it once this server has caught up with that CRD.
async fn catalogue_for(state: &AppState, req: &ResourceRequest) -> Arc<Catalogue> {
    let cat = state.catalogue.get();
    if cat
        .lookup(&req.group, &req.version, &req.resource)
        .is_some()
    {
        return cat;
    }
    match crate::crd::served::revision_serving(&*state.storage, &req.group, &req.resource).await {
        Some(revision) if state.catalogue.caught_up(revision, CATCH_UP).await => {
            state.catalogue.get()
        }
        _ => cat,
    }
}

/// How long a request waits for this server to learn of a CRD the store has.
const CATCH_UP: std::time::Duration = std::time::Duration::from_secs(2);

/// Finds the catalogue entry and checks the request's shape against it.
fn resolve<'a>(cat: &'a Catalogue, req: &ResourceRequest) -> ApiResult<&'a ResourceInfo> {
    let res = cat
        .lookup(&req.group, &req.version, &req.resource)
        .ok_or_else(ApiError::no_such_route)?;
    if !res.namespaced && req.namespace.is_some() {
        return Err(ApiError::no_such_route());
    }
    let named = matches!(
        req.verb,
        Verb::Get | Verb::Update | Verb::Patch | Verb::Delete
    );
    if res.namespaced && req.namespace.is_none() && (named || req.verb == Verb::Create) {
        return Err(ApiError::no_such_route());
    }
    if let Some(sub) = &req.subresource {
        // kube routes every method to a subresource it serves and answers
        // 405 for the ones its REST does not implement.
        let served = res.subresource(sub).ok_or_else(ApiError::no_such_route)?;
        return if served.verbs.iter().any(|v| v == req.verb.as_str()) {
            Ok(res)
        } else {
            Err(method_not_allowed())
        };
    }
    if !res.verbs.iter().any(|v| v == req.verb.as_str()) || no_route_for_method(req) {
        return Err(method_not_allowed());
    }
    Ok(res)
}

fn method_not_allowed() -> ApiError {
    ApiError::method_not_allowed("the server does not allow this method on the requested resource")
}

/// kube has no route for a POST to an object or a PUT or PATCH of a collection.
fn no_route_for_method(req: &ResourceRequest) -> bool {
    match req.verb {
        Verb::Create => req.name.is_some(),
        Verb::Update | Verb::Patch => req.name.is_none(),
        _ => false,
    }
}
