//! A custom resource's versions: objects are stored in the CRD's storage
//! version and shown in the version a request names, converted by the
//! CRD's converter (`conversion`: None, a webhook or a Wasm plugin). Objects
//! already in the wanted version are never sent anywhere. Built-ins served
//! at several versions are converted by their `catalogue::conversion`; the
//! others pass through untouched.

use serde_json::{json, Value};

use crate::apimachinery::status::ApiResult;
use crate::catalogue::{conversion, ResourceInfo};

fn api_version(obj: &Value) -> &str {
    obj.get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Objects (as stored) in `res`'s version, defaulted by its schema as kube
/// defaults what it reads from storage.
pub async fn view_all(res: &ResourceInfo, objects: Vec<Value>) -> ApiResult<Vec<Value>> {
    let desired = res.api_version();
    let Some(custom) = &res.custom else {
        return builtin_view(res, objects, &desired);
    };
    let mut objects = match objects.iter().all(|o| api_version(o) == desired) {
        true => objects,
        false => convert(custom, objects, &desired).await?,
    };
    if let (true, Some(schema)) = (custom.has_defaults, &custom.compiled) {
        objects.iter_mut().for_each(|o| schema.apply_defaults(o));
    }
    Ok(objects)
}

/// A built-in's stored objects in the version `desired`.
fn builtin_view(res: &ResourceInfo, objects: Vec<Value>, desired: &str) -> ApiResult<Vec<Value>> {
    let Some(conversion) = conversion::of(res) else {
        return Ok(objects);
    };
    objects
        .into_iter()
        .map(|o| conversion.to_api_version(o, desired))
        .collect()
}

/// One stored object in `res`'s version.
pub async fn view(res: &ResourceInfo, obj: Value) -> ApiResult<Value> {
    if res.served_as_stored() {
        return Ok(obj);
    }
    let mut converted = view_all(res, vec![obj]).await?;
    Ok(converted.pop().unwrap_or_default())
}

/// The object as it is to be stored (in the CRD's storage version); `None`
/// when it already is, or `res` is a built-in, so callers need no copy.
pub async fn to_storage(res: &ResourceInfo, obj: &Value) -> ApiResult<Option<Value>> {
    let Some(custom) = &res.custom else {
        return builtin_to_storage(res, obj);
    };
    let storage = custom.storage_api_version(&res.group);
    if api_version(obj) == storage {
        return Ok(None);
    }
    let mut converted = convert(custom, vec![obj.clone()], &storage).await?;
    Ok(converted.pop())
}

/// A built-in's object in its storage version, if it is not already.
fn builtin_to_storage(res: &ResourceInfo, obj: &Value) -> ApiResult<Option<Value>> {
    let Some(conversion) = conversion::of(res) else {
        return Ok(None);
    };
    let storage = conversion.storage_api_version();
    if api_version(obj) == storage {
        return Ok(None);
    }
    conversion.to_api_version(obj.clone(), &storage).map(Some)
}

async fn convert(
    custom: &super::CustomResource,
    objects: Vec<Value>,
    desired: &str,
) -> ApiResult<Vec<Value>> {
    match &custom.converter {
        Some(converter) => converter.convert(objects, desired).await,
        None => Ok(objects
            .into_iter()
            .map(|mut o| {
                if let Some(m) = o.as_object_mut() {
                    m.insert("apiVersion".into(), json!(desired));
                }
                o
            })
            .collect()),
    }
}
