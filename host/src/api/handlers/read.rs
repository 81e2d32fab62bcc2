//! GET of one object and LIST of a collection (paged, filtered), in JSON or as a Table.

use super::negotiate::{partial_metadata, respond, respond_json_bytes, Output};
use super::Call;
use crate::api::table;
use crate::apimachinery::selectors::{self, FieldSelector, LabelSelector};
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::registry::stored::ListItem;
use crate::registry::{scale, ListPage, ListQuery};
use axum::response::Response;
use http::StatusCode;
use serde_json::{json, Value};

pub async fn get(call: &Call<'_>) -> ApiResult<Response> {
    let output = call.output()?;
    wait_until_fresh(call).await?;
    let scale = call.req.subresource.as_deref() == Some("scale");
    if output == Output::Json && call.res.served_as_stored() && !scale {
        let served = call
            .state
            .registry
            .get_served(call.res, call.namespace(), call.name());
        let mut body = served.await?.to_vec();
        body.push(b'\n');
        return Ok(respond_json_bytes(StatusCode::OK, body));
    }
    let obj = call
        .state
        .registry
        .get(call.res, call.namespace(), call.name())
        .await?;
    if scale {
        return Ok(respond(
            StatusCode::OK,
            &scale::to_scale(call.res, &obj),
            Output::Json,
            &[],
        ));
    }
    let rv = obj
        .pointer("/metadata/resourceVersion")
        .cloned()
        .unwrap_or(json!(""));
    let body = render(
        call,
        output,
        vec![obj],
        json!({"resourceVersion": rv}),
        true,
    )
    .await?;
    Ok(respond(StatusCode::OK, &body, output, &[]))
}

/// Label and field selectors of a list or watch, checked against the resource.
pub struct Filter {
    labels: Option<LabelSelector>,
    fields: Option<FieldSelector>,
    field_labels: &'static selectors::FieldLabels,
    custom: bool,
}

impl Filter {
    pub fn from_call(call: &Call<'_>) -> ApiResult<Filter> {
        let labels = match call.query.get("labelSelector") {
            Some(s) => Some(selectors::parse_label_selector(s).map_err(ApiError::bad_request)?),
            None => None,
        };
        let fields = match call.query.get("fieldSelector") {
            Some(s) => {
                let sel = selectors::parse_field_selector(s).map_err(ApiError::bad_request)?;
                match &call.res.custom {
                    Some(c) => selectors::check_custom_fields_supported(
                        &sel,
                        !call.res.namespaced,
                        &c.selectable_fields,
                    ),
                    None => selectors::check_fields_supported(&sel, call.res.field_labels),
                }
                .map_err(ApiError::bad_request)?;
                Some(sel)
            }
            None => None,
        };
        Ok(Filter {
            labels,
            fields,
            field_labels: call.res.field_labels,
            custom: call.res.custom.is_some(),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_none() && self.fields.is_none()
    }

    pub fn matches(&self, obj: &Value) -> bool {
        let empty = serde_json::Map::new();
        let labels = obj
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        self.labels.as_ref().is_none_or(|l| l.matches(labels))
            && self.fields.as_ref().is_none_or(|f| match self.custom {
                true => f.matches_custom(obj),
                false => f.matches(self.field_labels, obj),
            })
    }
}

pub async fn list(call: &Call<'_>) -> ApiResult<Response> {
    let output = call.output()?;
    call.query.check_list_options(false)?;
    if output == Output::Json && call.res.served_as_stored() {
        return list_served(call).await;
    }
    let page = list_page(call).await?;
    let meta = list_meta(&page);
    if let Output::Table(include) = output {
        let body = table_of(call, &page.items, include, meta).await?;
        return Ok(crate::cpu::heavy(|| {
            respond(StatusCode::OK, &body, output, &[])
        }));
    }
    Ok(crate::cpu::heavy(|| {
        let body = render_now(call, output, page.items, meta, false);
        respond(StatusCode::OK, &body, output, &[])
    }))
}

/// A JSON list of a built-in resource, joined from each object's served
/// bytes (see `registry::list`).
async fn list_served(call: &Call<'_>) -> ApiResult<Response> {
    let req = PageRequest::from_call(call).await?;
    let matcher = |o: &Value| req.filter.matches(o);
    let q = req.query(&matcher);
    let page = call
        .state
        .registry
        .list_served(call.res, call.namespace(), &q)
        .await?;
    let head = json!({"kind": call.res.list_kind, "apiVersion": call.res.api_version(),
                      "metadata": list_meta(&page)});
    let body = crate::cpu::heavy(|| {
        let items: Vec<ListItem<'_>> = page.items.iter().map(ListItem).collect();
        crate::apimachinery::kube_json::list_with_items(&head, &items)
    });
    Ok(respond_json_bytes(StatusCode::OK, body))
}

/// The ListMeta of a page.
fn list_meta<T>(page: &ListPage<T>) -> Value {
    let mut meta = json!({"resourceVersion": page.revision.to_string()});
    if let Some(c) = &page.continue_token {
        meta["continue"] = json!(c);
    }
    if let Some(r) = page.remaining.filter(|r| *r > 0) {
        meta["remainingItemCount"] = json!(r);
    }
    meta
}

/// A read with `resourceVersion=N` (not "0") wants data not older than N:
/// it waits for the store to reach N, as kube's watch cache does.
async fn wait_until_fresh(call: &Call<'_>) -> ApiResult<()> {
    match call
        .query
        .get("resourceVersion")
        .filter(|rv| !rv.is_empty())
    {
        None | Some("0") => Ok(()),
        Some(rv) if call.query.get("continue").is_some() => parse_rv(Some(rv)).map(|_| ()),
        Some(rv) => {
            let revision = parse_rv(Some(rv))?;
            call.state
                .registry
                .wait_for_revision(call.res, revision)
                .await
        }
    }
}

/// What a list call asks for, checked (and the store caught up with it).
struct PageRequest<'c> {
    filter: Filter,
    limit: Option<usize>,
    exact: Option<i64>,
    continue_token: Option<&'c str>,
}

impl<'c> PageRequest<'c> {
    async fn from_call(call: &'c Call<'_>) -> ApiResult<PageRequest<'c>> {
        let filter = Filter::from_call(call)?;
        wait_until_fresh(call).await?;
        let limit = call.query.int("limit")?.filter(|l| *l > 0);
        // check_list_options has refused any other value.
        let exact = match call.query.get("resourceVersionMatch") {
            Some("Exact") => Some(parse_rv(call.query.get("resourceVersion"))?),
            _ => None,
        };
        Ok(PageRequest {
            filter,
            limit: limit.map(|l| l as usize),
            exact,
            continue_token: call.query.get("continue"),
        })
    }

    /// The store's query, with `matcher` (this request's filter) when it filters.
    fn query<'a>(&'a self, matcher: &'a (dyn Fn(&Value) -> bool + Send + Sync)) -> ListQuery<'a> {
        ListQuery {
            limit: self.limit,
            continue_token: self.continue_token,
            exact_revision: self.exact,
            filter: (!self.filter.is_empty()).then_some(matcher),
            recent: None,
        }
    }
}

/// Reads the page a list call asks for.
pub async fn list_page(call: &Call<'_>) -> ApiResult<ListPage> {
    let req = PageRequest::from_call(call).await?;
    let matcher = |o: &Value| req.filter.matches(o);
    let q = req.query(&matcher);
    call.state
        .registry
        .list(call.res, call.namespace(), &q)
        .await
}

/// Parses a resourceVersion parameter that must name a revision.
pub fn parse_rv(rv: Option<&str>) -> ApiResult<i64> {
    let rv = rv.ok_or_else(|| {
        ApiError::bad_request(
            "resourceVersionMatch is forbidden unless resourceVersion is provided",
        )
    })?;
    rv.parse::<u64>()
        .ok()
        .and_then(|v| i64::try_from(v).ok())
        .ok_or_else(|| ApiError::bad_request(format!(
            "resourceVersion: Invalid value: {rv:?}: strconv.ParseUint: parsing {rv:?}: invalid syntax"
        )))
}

/// A list (or one object, when `single`) in the negotiated form.
pub async fn render(
    call: &Call<'_>,
    output: Output,
    items: Vec<Value>,
    meta: Value,
    single: bool,
) -> ApiResult<Value> {
    match output {
        Output::Table(include) => table_of(call, &items, include, meta).await,
        _ => Ok(render_now(call, output, items, meta, single)),
    }
}

/// The Table of objects of the call's resource (the strategy prints them).
async fn table_of(
    call: &Call<'_>,
    items: &[Value],
    include: table::IncludeObject,
    meta: Value,
) -> ApiResult<Value> {
    let strategy = call.state.registry.strategy.as_ref();
    table::build_table(strategy, call.res, items, include, meta, chrono::Utc::now()).await
}

/// [`render`] for every form but a Table (which [`table_of`] prints).
fn render_now(
    call: &Call<'_>,
    output: Output,
    items: Vec<Value>,
    meta: Value,
    single: bool,
) -> Value {
    match output {
        Output::Table(_) => Value::Null,
        o if o.is_metadata() && single => items.first().map(partial_metadata).unwrap_or(json!({})),
        Output::PartialMetadata | Output::ProtobufMetadata => json!({
            "kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1", "metadata": meta,
            "items": items.iter().map(partial_metadata).collect::<Vec<_>>(),
        }),
        Output::Json | Output::Yaml | Output::Protobuf if single => {
            items.into_iter().next().unwrap_or(json!({}))
        }
        Output::Json | Output::Yaml | Output::Protobuf => json!({
            "kind": call.res.list_kind, "apiVersion": call.res.api_version(), "metadata": meta,
            "items": typed_items(call, items),
        }),
    }
}

/// A built-in kind's list items as kube encodes them: without `kind` and
/// `apiVersion` (a custom resource's keep them).
fn typed_items(call: &Call<'_>, mut items: Vec<Value>) -> Vec<Value> {
    if call.res.custom.is_none() {
        for item in &mut items {
            if let Some(fields) = item.as_object_mut() {
                fields.shift_remove("kind");
                fields.shift_remove("apiVersion");
            }
        }
    }
    items
}
