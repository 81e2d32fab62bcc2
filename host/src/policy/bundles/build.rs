//! `capstan policy build`: a folder with a bundle manifest (`bundle.yaml`
//! or `bundle.json`) and the components (and admission policy files) it
//! names becomes the files of an OCI image layout. Each policy's `module` becomes its layer's digest in
//! the config blob; the layer keeps the file name as its title. Nothing
//! depends on the time or the machine: the same inputs give the same
//! digests.

use super::admission_policies;
use super::layout::{self, blob_path, Files};
use super::manifest::{BundleManifest, PolicyKind};
use super::ADMISSION_POLICY_MEDIA_TYPE;
use super::{ARTIFACT_TYPE, COMPONENT_MEDIA_TYPE, CONFIG_MEDIA_TYPE, MAX_COMPONENT_BYTES};
use crate::cosign::digest;
use anyhow::{anyhow, Context};
use oci_spec::image::{
    Descriptor, ImageIndexBuilder, ImageManifestBuilder, MediaType, ANNOTATION_DESCRIPTION,
    ANNOTATION_REF_NAME, ANNOTATION_TITLE, ANNOTATION_VERSION,
};
use std::collections::HashMap;
use std::path::Path;

/// What a build wrote.
pub struct Built {
    pub manifest_digest: String,
    pub manifest: BundleManifest,
}

/// Builds the bundle of `folder` into `out` (a layout directory, or a
/// tarball when it ends in `.tar`); components are looked up in
/// `modules_dir` (default: the folder), admission policy files in the
/// folder.
pub fn build(folder: &Path, modules_dir: Option<&Path>, out: &Path) -> anyhow::Result<Built> {
    let mut manifest = read_source(folder)?;
    let modules_dir = modules_dir.unwrap_or(folder);
    let mut files = Files::new();
    let mut layers: Vec<Descriptor> = Vec::new();
    for policy in &mut manifest.policies {
        let name = &policy.manifest.name;
        // Components may be built elsewhere; policy files are the folder's.
        let (path, field, media_type, bytes) = match policy.kind {
            PolicyKind::Component => {
                let path = modules_dir.join(&policy.module);
                let bytes = read_component(name, &path);
                (path, "module", COMPONENT_MEDIA_TYPE, bytes)
            }
            PolicyKind::AdmissionPolicy => {
                let path = folder.join(&policy.module);
                let bytes = admission_policies::layer_from_file(name, &path);
                (path, "admissionPolicy", ADMISSION_POLICY_MEDIA_TYPE, bytes)
            }
        };
        let bytes = bytes.with_context(|| format!("policy {name}: {field} {}", path.display()))?;
        let descriptor = descriptor(media_type, &bytes, Some(&policy.module))?;
        policy.module = descriptor.digest().to_string();
        if !layers.iter().any(|l| l.digest() == descriptor.digest()) {
            layers.push(descriptor);
        }
        files.insert(blob_path(&policy.module), bytes);
    }
    let config = serde_json::to_vec(&manifest)?;
    let config_descriptor = descriptor(CONFIG_MEDIA_TYPE, &config, None)?;
    files.insert(blob_path(config_descriptor.digest().as_ref()), config);
    let image_manifest = ImageManifestBuilder::default()
        .schema_version(2u32)
        .media_type(MediaType::ImageManifest)
        .artifact_type(MediaType::from(ARTIFACT_TYPE))
        .config(config_descriptor)
        .layers(layers)
        .annotations(annotations(&manifest))
        .build()?;
    let image_bytes = canonical_json(&image_manifest)?;
    let mut manifest_descriptor = descriptor(MediaType::ImageManifest, &image_bytes, None)?;
    manifest_descriptor.set_artifact_type(Some(MediaType::from(ARTIFACT_TYPE)));
    manifest_descriptor.set_annotations(Some(HashMap::from([(
        ANNOTATION_REF_NAME.to_string(),
        manifest.version.clone(),
    )])));
    let manifest_digest = manifest_descriptor.digest().to_string();
    files.insert(blob_path(&manifest_digest), image_bytes);
    let index = ImageIndexBuilder::default()
        .schema_version(2u32)
        .media_type(MediaType::ImageIndex)
        .manifests(vec![manifest_descriptor])
        .build()?;
    files.insert("index.json".into(), canonical_json(&index)?);
    files.insert("oci-layout".into(), layout::oci_layout_file()?);
    layout::write(out, &files)?;
    Ok(Built {
        manifest_digest,
        manifest,
    })
}

/// `bundle.yaml` or `bundle.json` in `folder`.
fn read_source(folder: &Path) -> anyhow::Result<BundleManifest> {
    let path = ["bundle.yaml", "bundle.yml", "bundle.json"]
        .iter()
        .map(|f| folder.join(f))
        .find(|p| p.is_file())
        .ok_or_else(|| anyhow!("{}: no bundle.yaml or bundle.json", folder.display()))?;
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    BundleManifest::parse(&text).map_err(|e| anyhow!("{}: {e}", path.display()))
}

/// A component file, within the bound, that is a component (not a core module).
fn read_component(policy: &str, path: &Path) -> anyhow::Result<Vec<u8>> {
    let len = std::fs::metadata(path)?.len();
    if len > MAX_COMPONENT_BYTES {
        anyhow::bail!("{len} bytes, more than the bound {MAX_COMPONENT_BYTES}");
    }
    let bytes = std::fs::read(path)?;
    crate::wasm::check_is_component(policy, &bytes)?;
    Ok(bytes)
}

fn descriptor(
    media_type: impl Into<MediaType>,
    bytes: &[u8],
    title: Option<&str>,
) -> anyhow::Result<Descriptor> {
    let digest: oci_spec::image::Digest = digest(bytes).parse()?;
    let mut d = Descriptor::new(media_type.into(), bytes.len() as u64, digest);
    if let Some(title) = title {
        d.set_annotations(Some(HashMap::from([(
            ANNOTATION_TITLE.to_string(),
            title.to_string(),
        )])));
    }
    Ok(d)
}

fn annotations(m: &BundleManifest) -> HashMap<String, String> {
    let mut out = HashMap::from([
        (ANNOTATION_TITLE.to_string(), m.name.clone()),
        (ANNOTATION_VERSION.to_string(), m.version.clone()),
    ]);
    if let Some(d) = &m.description {
        out.insert(ANNOTATION_DESCRIPTION.to_string(), d.clone());
    }
    out
}

/// JSON with every `annotations` map's keys sorted (oci-spec keeps them in
/// a HashMap, whose order changes from run to run), so digests are stable.
fn canonical_json(value: &impl serde::Serialize) -> anyhow::Result<Vec<u8>> {
    let mut value = serde_json::to_value(value)?;
    sort_annotations(&mut value);
    Ok(serde_json::to_vec(&value)?)
}

fn sort_annotations(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            if let Some(serde_json::Value::Object(a)) = map.get_mut("annotations") {
                a.sort_keys();
            }
            map.values_mut().for_each(sort_annotations);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(sort_annotations),
        _ => {}
    }
}
