//! Policy bundles: a set of admission policies (Wasm components) shipped as
//! one OCI artifact, as a security team ships them to clusters.
//!
//! The format (`layout.rs`) is an OCI image layout (a directory with
//! `oci-layout`, `index.json` and `blobs/sha256/…`) or a tarball of one: an
//! image manifest of artifactType [`ARTIFACT_TYPE`] whose config blob is the
//! bundle manifest (`manifest.rs`, media type [`CONFIG_MEDIA_TYPE`]) and
//! whose layers are the components ([`COMPONENT_MEDIA_TYPE`]) or CEL
//! admission policies ([`ADMISSION_POLICY_MEDIA_TYPE`],
//! `admission_policies.rs`), each policy naming its layer by digest. `build.rs` makes one from a folder;
//! `components.rs` loads its components as the worlds they are declared;
//! `fixtures.rs` runs them against AdmissionReview fixtures (`capstan
//! policy test`), each case's cluster from `fixture_cluster.rs`. The commands are in `policy_cli.rs`.
//!
//! Every blob is read within a bound and checked against its digest and
//! size; errors name the bundle, the digest and why.

pub mod admission_policies;
mod build;
pub mod cel_fixtures;
pub mod components;
pub mod fixture_cluster;
pub mod fixtures;
pub mod layout;
pub mod manifest;
pub mod registry;
pub mod signatures;

pub use build::build;
pub use layout::{load, Bundle};

/// The image manifest's artifactType.
pub const ARTIFACT_TYPE: &str = "application/vnd.capstan.policy.bundle.v1+json";
/// The config blob: the bundle manifest (JSON).
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.capstan.policy.bundle.config.v1+json";
/// A layer: one WebAssembly component.
pub const COMPONENT_MEDIA_TYPE: &str = "application/vnd.capstan.policy.component.v1+wasm";
/// A layer: one ValidatingAdmissionPolicy and its bindings (JSON,
/// `admission_policies.rs`).
pub const ADMISSION_POLICY_MEDIA_TYPE: &str =
    "application/vnd.capstan.policy.admission-policy.v1+json";

/// At most this many policies in a bundle (and so layers).
pub const MAX_POLICIES: usize = 64;
/// A component's bound (componentize-js and Python components are tens of MiB).
pub const MAX_COMPONENT_BYTES: u64 = 64 << 20;
/// `index.json`, the image manifest and the config blob.
pub const MAX_JSON_BYTES: u64 = 1 << 20;
/// A tarball's files, added up.
pub const MAX_BUNDLE_BYTES: u64 = 512 << 20;

/// `text` without control characters, cut to `max` characters (`…` marks
/// a cut): what of a registry's or a file's words goes into a log line or
/// a status condition.
pub fn clip(text: &str, max: usize) -> String {
    let mut out: String = text
        .chars()
        .filter(|c| !c.is_control())
        .take(max + 1)
        .collect();
    if out.chars().count() > max {
        out = out.chars().take(max).collect();
        out.push('…');
    }
    out
}

/// What a JSON parse error of a file may say: where, and what kind of
/// problem, never the file's bytes (serde's "invalid type: string \"...\""
/// quotes them; a file read by mistake, or a hostile registry's answer,
/// must not be echoed into a status or a log line). "missing field" names
/// a field of our type, so it is kept.
pub fn parse_error(e: &serde_json::Error) -> String {
    let at = format!("line {}, column {}", e.line(), e.column());
    match e.classify() {
        serde_json::error::Category::Io => "cannot be read".to_string(),
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
            format!("not valid JSON (at {at})")
        }
        serde_json::error::Category::Data => {
            let text = e.to_string();
            match text.strip_prefix("missing field ") {
                Some(rest) if !rest.contains('"') => format!(
                    "missing field {}",
                    rest.split(" at line").next().unwrap_or(rest)
                ),
                _ => format!("a value is not of the expected type or form (at {at})"),
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
