//! A component as a [`ReviewTransport`]: the review handed to the plugin
//! with its configuration, object reader and limits.

use super::{CallContext, Limits, ObjectReader, Plugin};
use crate::transport::ReviewTransport;
use futures_util::future::BoxFuture;
use std::sync::Arc;

/// A loaded plugin and what each of its calls gets.
#[derive(Clone)]
pub struct WasmTransport {
    pub plugin: Plugin,
    pub config: String,
    pub reader: Arc<dyn ObjectReader>,
    pub limits: Limits,
}

impl ReviewTransport for WasmTransport {
    fn call<'a>(&'a self, review: &'a str) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let ctx = CallContext {
                config: self.config.clone(),
                reader: self.reader.clone(),
                limits: self.limits.clone(),
            };
            self.plugin
                .call(review, ctx)
                .await
                .map_err(|f| f.to_string())
        })
    }
}
