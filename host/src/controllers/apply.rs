//! Server-side apply by the server's own controllers, as kube's controllers
//! call `Apply`/`ApplyStatus` with `Force: true`: the configuration is
//! merged into the existing object and its fields recorded in an `Apply`
//! entry of `manager` (on `subresource`, "" for the object itself), taken
//! over from any other manager. The object must exist (404 otherwise).

use crate::api::state::AppState;
use crate::apimachinery::meta;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::catalogue::ResourceInfo;
use crate::patch::apply::{server_side_apply, Applier};
use crate::registry::{UpdateOutcome, WriteOptions};
use serde_json::Value;

/// Who applies: the manager and the subresource written.
#[derive(Clone, Copy)]
pub struct Controller<'a> {
    pub manager: &'a str,
    pub subresource: &'a str,
}

/// Applies `configuration` (apiVersion, kind, metadata.name and the fields
/// the controller owns) to the object it names, forced.
pub async fn apply(
    state: &AppState,
    res: &ResourceInfo,
    ns: Option<&str>,
    configuration: &Value,
    by: Controller<'_>,
) -> ApiResult<UpdateOutcome> {
    let name = meta::name(configuration).unwrap_or_default();
    let api_version = res.api_version();
    let who = Applier {
        manager: by.manager,
        force: true,
        api_version: &api_version,
        skip_status: by.subresource.is_empty() && res.has_subresource("status"),
        subresource: by.subresource,
    };
    let schemas = state.catalogue.builtin().schemas();
    let root = Some(res.schema_name.as_str());
    let change = |current: Value| {
        server_side_apply(Some(&current), configuration, &who, root, schemas)
            .map_err(|e| ApiError::internal(format!("{} applying {name}: {e:?}", by.manager)))
    };
    state
        .registry
        .guaranteed_update(res, ns, name, WriteOptions::default(), &change)
        .await
}
