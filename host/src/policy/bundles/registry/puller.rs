//! The pull side of the OCI distribution API, over `transport.rs`: a manifest
//! (`GET /v2/<repo>/manifests/<tag|digest>`) and blobs (`GET
//! /v2/<repo>/blobs/<digest>`), each bounded and checked against its
//! digest, with the distribution token protocol when a registry answers
//! 401 (`WWW-Authenticate: Bearer realm=...,service=...,scope=...`; the
//! token answer bounded by [`MAX_TOKEN_BYTES`]) or basic credentials.

use super::transport::{self as client, clip, error_text, read_body, shown_url, Http, Redirects};
use ::http::StatusCode;
use oci_client::secrets::RegistryAuth;
use oci_client::Reference;
use std::sync::Mutex;
use url::Url;

/// A token service's answer is refused past this (tokens are a few KiB).
pub const MAX_TOKEN_BYTES: u64 = 64 << 10;
const MANIFEST_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";

/// One repository of one registry, pulled from.
pub struct Puller {
    http: Http,
    base: Url,
    repository: String,
    /// Basic credentials (`user:password`), if any.
    basic: Option<String>,
    /// The bearer token obtained after a 401, reused by later requests.
    bearer: Mutex<Option<String>>,
}

impl Puller {
    pub fn new(http: Http, reference: &Reference, auth: &RegistryAuth) -> Result<Puller, String> {
        let registry = reference.resolve_registry();
        let base = Url::parse(&format!("{}://{registry}/", http.scheme(registry)))
            .map_err(|e| format!("registry {}: {e}", clip(registry)))?;
        let basic = match auth {
            RegistryAuth::Basic(user, password) => Some(format!("{user}:{password}")),
            _ => None,
        };
        Ok(Puller {
            http,
            base,
            repository: reference.repository().to_string(),
            basic,
            bearer: Mutex::new(None),
        })
    }

    /// The manifest at `tag_or_digest` (None: the registry does not have
    /// it), at most `max` bytes, and its digest (checked when asked by digest).
    pub async fn manifest(
        &self,
        tag_or_digest: &str,
        max: u64,
    ) -> Result<Option<(Vec<u8>, String)>, String> {
        let path = format!("v2/{}/manifests/{tag_or_digest}", self.repository);
        let response = self.get(&path, MANIFEST_TYPE, Redirects::SameHost).await?;
        if response.status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        let what = format!("the manifest {}", shown_url(&response.url));
        let bytes = read_body(success(response).await?, max, &what).await?;
        let digest = crate::cosign::digest(&bytes);
        if tag_or_digest.starts_with("sha256:") && tag_or_digest != digest {
            return Err(format!(
                "{what}: its content's digest is {digest}, not the one asked for"
            ));
        }
        Ok(Some((bytes, digest)))
    }

    /// The blob `digest` of `size` bytes, checked against both as it downloads.
    pub async fn blob(&self, digest: &str, size: u64) -> Result<Vec<u8>, String> {
        let path = format!("v2/{}/blobs/{digest}", self.repository);
        let response = self
            .get(&path, "application/octet-stream", Redirects::AnyHost)
            .await?;
        let what = format!("blob {digest}");
        let response = success(response)
            .await
            .map_err(|e| format!("{what}: {e}"))?;
        let bytes = read_body(response, size, &what).await?;
        if bytes.len() as u64 != size {
            return Err(format!(
                "{what}: {} bytes, the descriptor says {size}",
                bytes.len()
            ));
        }
        match crate::cosign::digest(&bytes) {
            d if d == digest => Ok(bytes),
            d => Err(format!("{what}: its content's digest is {d}")),
        }
    }

    /// GETs `path` of the registry, authenticating once when it answers 401.
    async fn get(
        &self,
        path: &str,
        accept: &str,
        redirects: Redirects,
    ) -> Result<client::Response, String> {
        let url = self
            .base
            .join(path)
            .map_err(|e| format!("{}: {e}", clip(path)))?;
        let response = self
            .http
            .get(&url, accept, self.authorization().as_deref(), redirects)
            .await?;
        if response.status != StatusCode::UNAUTHORIZED || self.has_bearer() {
            return Ok(response);
        }
        let challenge = response
            .headers
            .get(::http::header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        self.authenticate(&challenge, &url).await?;
        self.http
            .get(&url, accept, self.authorization().as_deref(), redirects)
            .await
    }

    fn has_bearer(&self) -> bool {
        self.bearer.lock().is_ok_and(|b| b.is_some())
    }

    fn authorization(&self) -> Option<String> {
        use base64::Engine;
        if let Some(token) = self.bearer.lock().ok().and_then(|b| b.clone()) {
            return Some(format!("Bearer {token}"));
        }
        let basic = self.basic.as_ref()?;
        Some(format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(basic)
        ))
    }

    /// A bearer token from the challenge's realm (basic credentials, if
    /// any, sent to it); a basic challenge needs credentials we have.
    async fn authenticate(&self, challenge: &str, asked: &Url) -> Result<(), String> {
        let shown = shown_url(asked);
        let Some(params) = challenge.strip_prefix("Bearer ") else {
            return Err(format!(
                "{shown}: HTTP 401 (authentication required{})",
                match self.basic {
                    Some(_) => ": the credentials were refused",
                    None => "; the server pulls anonymously",
                }
            ));
        };
        let params = challenge_params(params);
        let param = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        let realm =
            param("realm").ok_or_else(|| format!("{shown}: a Bearer challenge without a realm"))?;
        let mut url =
            Url::parse(realm).map_err(|_| format!("{shown}: the token realm is not a URL"))?;
        if url.scheme() != "https" && self.base.scheme() != "http" {
            return Err(format!(
                "{shown}: the token realm {} is not HTTPS",
                shown_url(&url)
            ));
        }
        let default_scope = format!("repository:{}:pull", self.repository);
        url.query_pairs_mut()
            .append_pair("scope", param("scope").unwrap_or(&default_scope));
        if let Some(service) = param("service") {
            url.query_pairs_mut().append_pair("service", service);
        }
        let token = self.token(&url).await?;
        if let Ok(mut bearer) = self.bearer.lock() {
            *bearer = Some(token);
        }
        Ok(())
    }

    async fn token(&self, url: &Url) -> Result<String, String> {
        use base64::Engine;
        let basic = self.basic.as_ref().map(|b| {
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(b)
            )
        });
        let response = self
            .http
            .get(
                url,
                "application/json",
                basic.as_deref(),
                Redirects::SameHost,
            )
            .await?;
        let what = format!("the token from {}", shown_url(url));
        let response = success(response)
            .await
            .map_err(|e| format!("{what}: {e}"))?;
        let body = read_body(response, MAX_TOKEN_BYTES, &what).await?;
        let answer: serde_json::Value =
            serde_json::from_slice(&body).map_err(|_| format!("{what}: not JSON"))?;
        answer
            .get("token")
            .or_else(|| answer.get("access_token"))
            .and_then(|t| t.as_str())
            .filter(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_graphic()))
            .map(str::to_string)
            .ok_or_else(|| format!("{what}: no token in the answer"))
    }
}

/// A 2xx answer, else its error text (bounded).
async fn success(response: client::Response) -> Result<client::Response, String> {
    match response.status.is_success() {
        true => Ok(response),
        false => {
            let url = shown_url(&response.url);
            Err(format!("{url}: {}", error_text(response).await))
        }
    }
}

/// `k="v",k2="v2"` of a challenge (values may hold commas inside quotes).
fn challenge_params(text: &str) -> Vec<(String, String)> {
    let mut params = Vec::new();
    let mut rest = text.trim();
    while let Some((name, after)) = rest.split_once('=') {
        let name = name
            .trim()
            .trim_start_matches(',')
            .trim()
            .to_ascii_lowercase();
        let (value, tail) = match after.strip_prefix('"') {
            Some(quoted) => match quoted.split_once('"') {
                Some((v, tail)) => (v, tail),
                None => (quoted, ""),
            },
            None => after.split_once(',').unwrap_or((after, "")),
        };
        params.push((name, value.to_string()));
        rest = tail.trim_start_matches([',', ' ']);
    }
    params
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_parsed_with_quoted_commas() {
        let p = challenge_params(
            r#"realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull,push""#,
        );
        assert_eq!(
            p,
            [
                ("realm".into(), "https://auth.example/token".into()),
                ("service".into(), "registry.example".into()),
                ("scope".into(), "repository:a/b:pull,push".into())
            ]
        );
    }
}
