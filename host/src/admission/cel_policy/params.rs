//! What a binding's paramRef finds (kube's `CollectParams`), and the
//! request's namespace, read as the write path's plugins read: from the
//! watch cache, not older than this server's last write.

use kube_cel::cel::Value as CelValue;
use serde_json::Value;

use super::cel_value;
use super::compile::{Binding, ParamKind, Policy};
use crate::admission::review::ReviewRequest;
use crate::registry::store_reader::StoreReader;
use crate::wasm::ObjectReader;

/// Where policies read params and namespaces: the server's watch cache,
/// or a fixture's objects (`capstan policy test`).
pub trait Lookups: Send + Sync {
    fn reader(&self) -> &dyn ObjectReader;
    /// The plural and scope of the resource serving `kind`.
    fn resource_of(&self, kind: &ParamKind) -> Option<(String, bool)>;
    /// The resources and schemas (an apply configuration merges by them).
    fn catalogue(&self) -> std::sync::Arc<crate::catalogue::Catalogue>;
}

impl Lookups for StoreReader {
    fn reader(&self) -> &dyn ObjectReader {
        self
    }

    fn resource_of(&self, kind: &ParamKind) -> Option<(String, bool)> {
        let catalogue = self.catalogue.get();
        let res = catalogue.by_kind(&kind.group, &kind.version, &kind.kind)?;
        Some((res.plural.clone(), res.namespaced))
    }

    fn catalogue(&self) -> std::sync::Arc<crate::catalogue::Catalogue> {
        self.catalogue.get()
    }
}

/// No objects: params are never found, namespaces never read.
impl Lookups for crate::wasm::EmptyReader {
    fn reader(&self) -> &dyn ObjectReader {
        self
    }

    fn resource_of(&self, kind: &ParamKind) -> Option<(String, bool)> {
        let catalogue = crate::catalogue::Catalogue::builtin_ref();
        let res = catalogue.by_kind(&kind.group, &kind.version, &kind.kind)?;
        Some((res.plural.clone(), res.namespaced))
    }

    fn catalogue(&self) -> std::sync::Arc<crate::catalogue::Catalogue> {
        std::sync::Arc::new(crate::catalogue::Catalogue::builtin())
    }
}

/// The params to evaluate the policy with: `[null]` when the policy or the
/// binding takes none; empty when none was found and that is allowed.
pub async fn collect(
    lookups: &dyn Lookups,
    policy: &Policy,
    binding: &Binding,
    req: &ReviewRequest,
) -> Result<Vec<CelValue>, String> {
    let (Some(kind), Some(param_ref)) = (&policy.param_kind, &binding.param_ref) else {
        return Ok(vec![CelValue::Null]);
    };
    let (plural, namespaced, api_version) = resource_of(lookups, kind)?;
    let reader = lookups.reader();
    let namespace = if namespaced {
        match (param_ref.namespace.as_str(), req.namespace.as_deref()) {
            ("", None) => {
                return Err("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources".into())
            }
            ("", Some(ns)) => Some(ns.to_string()),
            (ns, _) => Some(ns.to_string()),
        }
    } else if !param_ref.namespace.is_empty() {
        return Err(
            "paramRef.namespace must not be provided for a cluster-scoped `paramKind`".into(),
        );
    } else {
        None
    };
    let found: Vec<Value> = if !param_ref.name.is_empty() {
        if param_ref.selector.is_some() {
            return Err("paramRef.name and paramRef.selector are mutually exclusive".into());
        }
        let got = reader
            .get(&api_version, &plural, namespace.as_deref(), &param_ref.name)
            .await?;
        got.and_then(|text| serde_json::from_str(&text).ok())
            .into_iter()
            .collect()
    } else if let Some(selector) = &param_ref.selector {
        let text = reader
            .list(&api_version, &plural, namespace.as_deref(), None, None)
            .await?;
        let list: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        let items = list
            .get("items")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        items
            .into_iter()
            .filter(|o| selector.matches(&crate::admission::matcher::labels_of(Some(o))))
            .collect()
    } else {
        return Err("one of name or selector must be provided".into());
    };
    if found.is_empty() && param_ref.deny_when_missing {
        return Err(
            "no params found for policy binding with `Deny` parameterNotFoundAction".into(),
        );
    }
    Ok(found.iter().map(|p| cel_value(Some(p))).collect())
}

/// The resource serving `kind`: its plural, scope and apiVersion.
fn resource_of(lookups: &dyn Lookups, kind: &ParamKind) -> Result<(String, bool, String), String> {
    let api_version = crate::catalogue::group_version(&kind.group, &kind.version);
    lookups
        .resource_of(kind)
        .map(|(plural, namespaced)| (plural, namespaced, api_version.clone()))
        .ok_or_else(|| {
            format!(
                "paramKind kind `&ParamKind{{APIVersion:{api_version},Kind:{},}}` not known",
                kind.kind
            )
        })
}

/// The namespace `name`, if it exists.
pub async fn namespace(lookups: &dyn Lookups, name: &str) -> Option<Value> {
    match lookups.reader().get("v1", "namespaces", None, name).await {
        Ok(Some(text)) => serde_json::from_str(&text).ok(),
        Ok(None) => None,
        Err(e) => {
            tracing::warn!(namespace = %name, error = %e, "could not read the request's namespace");
            None
        }
    }
}
