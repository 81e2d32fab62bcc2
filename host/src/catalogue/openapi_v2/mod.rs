//! OpenAPI v2 (Swagger 2.0) as kube-apiserver publishes it at `/openapi/v2`,
//! for kubectl up to 1.28 (`apply`'s patch metadata, `explain
//! --output=plaintext-openapiv2`, the `fieldValidation` check): one document
//! with the paths of every group-version and kube's shared parameters
//! (`paths.rs`, from the same path items as the v3 documents), the catalogue's component schemas
//! converted to definitions (`definitions.rs`), and its protobuf form
//! (`protobuf.rs`, gnostic's `openapi.v2.Document`). Nobody newer asks for
//! it, so [`V2Prepared`] is built on first request (see `OpenApiCache::v2`).

mod definitions;
mod paths;
mod protobuf;
mod wire;

use bytes::Bytes;
use serde_json::{json, Value};

use super::Catalogue;

/// The Swagger 2.0 document of everything the catalogue serves.
pub fn v2_document(cat: &Catalogue) -> Value {
    json!({
        "definitions": definitions::definitions(cat.schemas(), &super::kube_openapi::kube_paths().definitions),
        "info": super::openapi::info(),
        "parameters": super::kube_openapi::kube_paths().parameters.clone(),
        "paths": paths::all_paths(cat),
        "security": [{ "BearerToken": [] }],
        "securityDefinitions": {
            "BearerToken": {
                "description": "Bearer Token authentication",
                "in": "header",
                "name": "authorization",
                "type": "apiKey"
            }
        },
        "swagger": "2.0"
    })
}

/// The v2 document ready to serve: compact JSON and protobuf, and the
/// entity tag of the JSON (kube gives both forms that one tag).
#[derive(Debug)]
pub struct V2Prepared {
    pub json: Bytes,
    pub protobuf: Bytes,
    pub etag: String,
}

impl V2Prepared {
    /// Builds both forms (CPU-heavy: call it through `cpu::heavy`).
    pub fn build(cat: &Catalogue) -> V2Prepared {
        let doc = v2_document(cat);
        let json = serde_json::to_vec(&doc).unwrap_or_default();
        let protobuf = protobuf::encode_document(&doc);
        V2Prepared {
            etag: super::openapi::bytes_hash(&json),
            json: Bytes::from(json),
            protobuf: Bytes::from(protobuf),
        }
    }
}

#[cfg(test)]
mod tests;
