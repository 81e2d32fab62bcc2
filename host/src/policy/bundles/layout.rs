//! A bundle on disk: an OCI image layout directory or a tarball of one.
//! Writing lays out the files a build made; loading reads them back within
//! bounds and verifies every blob (digest and size), the image manifest's
//! shape (artifactType, media types) and that each policy names one of the
//! layers.

use super::manifest::BundleManifest;
use super::ADMISSION_POLICY_MEDIA_TYPE;
use super::{parse_error, ARTIFACT_TYPE, COMPONENT_MEDIA_TYPE, CONFIG_MEDIA_TYPE};
use super::{MAX_BUNDLE_BYTES, MAX_COMPONENT_BYTES, MAX_JSON_BYTES, MAX_POLICIES};
use crate::cosign::digest;
use anyhow::Context;
use oci_spec::image::{Descriptor, ImageIndex, ImageManifest, MediaType, OciLayout};
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;

/// The `imageLayoutVersion` written and accepted.
const LAYOUT_VERSION: &str = "1.0.0";

/// A loaded, verified bundle.
#[derive(Debug)]
pub struct Bundle {
    /// Where it was read from (for messages).
    pub source: String,
    /// The digest of the image manifest: what pins the bundle.
    pub manifest_digest: String,
    pub image_manifest: ImageManifest,
    pub manifest: BundleManifest,
    /// Components by their layer's digest.
    pub components: BTreeMap<String, Vec<u8>>,
}

impl Bundle {
    /// The component a policy names (loading checked it exists).
    pub fn component(&self, module: &str) -> &[u8] {
        self.components.get(module).map_or(&[], Vec::as_slice)
    }
}

/// The files of a layout: relative path → content.
pub type Files = BTreeMap<String, Vec<u8>>;

/// `blobs/sha256/<hex>` of a digest.
pub fn blob_path(digest: &str) -> String {
    format!("blobs/{}", digest.replacen(':', "/", 1))
}

/// `oci-layout`'s content.
pub fn oci_layout_file() -> anyhow::Result<Vec<u8>> {
    let layout = oci_spec::image::OciLayoutBuilder::default()
        .image_layout_version(LAYOUT_VERSION)
        .build()?;
    Ok(serde_json::to_vec(&layout)?)
}

/// Writes `files` as a layout directory, or as a tarball when `out` ends in `.tar`.
pub fn write(out: &Path, files: &Files) -> anyhow::Result<()> {
    match out.extension().is_some_and(|e| e == "tar") {
        true => write_tar(out, files),
        false => write_dir(out, files),
    }
    .with_context(|| format!("writing {}", out.display()))
}

/// Into a new or empty directory, or over an earlier layout (its blobs replaced).
fn write_dir(out: &Path, files: &Files) -> anyhow::Result<()> {
    if out.join("oci-layout").exists() {
        let _ = std::fs::remove_dir_all(out.join("blobs"));
    } else if out.read_dir().is_ok_and(|mut d| d.next().is_some()) {
        anyhow::bail!("the directory is not empty and not an OCI image layout");
    }
    for (path, bytes) in files {
        let path = out.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, bytes)?;
    }
    Ok(())
}

/// A tarball with fixed owners, modes and times: the same bundle is the same bytes.
fn write_tar(out: &Path, files: &Files) -> anyhow::Result<()> {
    let mut tar = tar::Builder::new(std::fs::File::create(out)?);
    for dir in ["blobs/", "blobs/sha256/"] {
        let mut header = header(tar::EntryType::Directory, 0o755, 0);
        tar.append_data(&mut header, dir, std::io::empty())?;
    }
    for (path, bytes) in files {
        let mut header = header(tar::EntryType::Regular, 0o644, bytes.len() as u64);
        tar.append_data(&mut header, path, bytes.as_slice())?;
    }
    tar.into_inner()?.sync_all()?;
    Ok(())
}

fn header(kind: tar::EntryType, mode: u32, size: u64) -> tar::Header {
    let mut header = tar::Header::new_ustar();
    header.set_entry_type(kind);
    header.set_mode(mode);
    header.set_size(size);
    header.set_mtime(0);
    header.set_uid(0);
    header.set_gid(0);
    header
}

/// Where blobs are read from.
enum Source {
    /// A layout directory (canonical: symlinks resolved).
    Dir(std::path::PathBuf),
    /// A tarball's regular files, read into memory within the bounds.
    Tar(HashMap<String, Vec<u8>>),
}

impl Source {
    /// A directory, or a regular file read as a tarball; anything else
    /// (a FIFO, a device, a socket) is refused without being opened.
    fn open(path: &Path) -> Result<Source, String> {
        let meta = std::fs::metadata(path).map_err(|e| format!("cannot read it: {e}"))?;
        if meta.is_dir() {
            let dir = std::fs::canonicalize(path).map_err(|e| format!("cannot read it: {e}"))?;
            return Ok(Source::Dir(dir));
        }
        read_tar(open_regular(path)?).map(Source::Tar)
    }

    /// The file at `path`, refused past `max` bytes.
    fn read(&self, path: &str, max: u64) -> Result<Vec<u8>, String> {
        match self {
            Source::Dir(dir) => read_in(dir, path, max),
            Source::Tar(files) => {
                let bytes = files
                    .get(path)
                    .ok_or_else(|| format!("{path}: not in the tarball"))?;
                match bytes.len() as u64 > max {
                    true => Err(format!("{path} is {} bytes, more than {max}", bytes.len())),
                    false => Ok(bytes.clone()),
                }
            }
        }
    }
}

/// `path` of the layout directory `dir`: a regular file inside it (a
/// symlink may not lead out of it), at most `max` bytes.
fn read_in(dir: &Path, path: &str, max: u64) -> Result<Vec<u8>, String> {
    let full = std::fs::canonicalize(dir.join(path)).map_err(|e| format!("{path}: {e}"))?;
    if !full.starts_with(dir) {
        return Err(format!("{path}: a symlink out of the layout directory"));
    }
    let file = open_regular(&full).map_err(|e| format!("{path}: {e}"))?;
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{path}: {e}"))?;
    match bytes.len() as u64 > max {
        true => Err(format!("{path} is more than {max} bytes")),
        false => Ok(bytes),
    }
}

/// Opens a regular file for reading without ever blocking on the open (a
/// FIFO's open waits for a writer): the type is checked before, the open
/// is non-blocking, and the opened file's type is checked again.
pub fn open_regular(path: &Path) -> Result<std::fs::File, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let not_regular = || {
        "not a regular file or a directory (FIFOs, devices and sockets are not read)".to_string()
    };
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read it: {e}"))?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("cannot read it: {e}"))?;
    match file.metadata().map(|m| m.is_file()) {
        Ok(true) => Ok(file),
        Ok(false) => Err(not_regular()),
        Err(e) => Err(format!("cannot read it: {e}")),
    }
}

/// A tarball's regular files, bounded in count, each size and the total.
/// Errors never quote the tarball's bytes (the tar crate's header errors
/// do: a file that is not a tarball would have its first line echoed).
fn read_tar(file: std::fs::File) -> Result<HashMap<String, Vec<u8>>, String> {
    const NOT_TAR: &str = "not a tarball (or a corrupt one)";
    let max_entries = 3 + 2 * MAX_POLICIES + 8;
    let mut files = HashMap::new();
    let mut total = 0u64;
    let mut archive = tar::Archive::new(file);
    let entries = archive.entries().map_err(|_| NOT_TAR.to_string())?;
    for (i, entry) in entries.enumerate() {
        let entry = entry.map_err(|_| NOT_TAR.to_string())?;
        if i >= max_entries {
            return Err(format!("the tarball has more than {max_entries} entries"));
        }
        if entry.header().entry_type() != tar::EntryType::Regular {
            continue;
        }
        let path = entry.path().map_err(|_| NOT_TAR.to_string())?;
        let path = path.to_string_lossy();
        let path = path.trim_start_matches("./").to_string();
        let size = entry.header().size().map_err(|_| NOT_TAR.to_string())?;
        total = total.saturating_add(size);
        if size > MAX_COMPONENT_BYTES || total > MAX_BUNDLE_BYTES {
            return Err(format!("the tarball's files exceed the bounds ({MAX_COMPONENT_BYTES} bytes a file, {MAX_BUNDLE_BYTES} in all)"));
        }
        let mut bytes = Vec::with_capacity(size as usize);
        entry
            .take(size)
            .read_to_end(&mut bytes)
            .map_err(|_| format!("{NOT_TAR}: an entry cannot be read"))?;
        files.insert(path, bytes);
    }
    Ok(files)
}

/// Why the bundle at a path could not be loaded: unreadable, not an OCI
/// layout of one Capstan bundle, a blob that does not match its digest or
/// bound, a manifest or policy that does not check.
#[derive(Debug, thiserror::Error)]
#[error("bundle {bundle}: {reason}")]
pub struct LoadError {
    pub bundle: String,
    pub reason: String,
}

/// Reads and verifies the bundle at `path` (a layout directory or a tarball).
pub fn load(path: &Path) -> Result<Bundle, LoadError> {
    let bundle = path.display().to_string();
    load_from(&bundle, path).map_err(|reason| LoadError { bundle, reason })
}

/// The `org.opencontainers.image.ref.name` annotation of an index entry.
pub const REF_NAME: &str = "org.opencontainers.image.ref.name";
/// `cosign save`'s annotation of what an index entry is, and its values.
pub const KIND: &str = "kind";
pub const KIND_IMAGE: &str = "dev.cosignproject.cosign/image";
pub const KIND_SIGNATURES: &str = "dev.cosignproject.cosign/sigs";

/// An opened layout: its index read, blobs read on demand.
pub struct Layout {
    source: Source,
    pub index: ImageIndex,
}

impl Layout {
    pub fn open(path: &Path) -> Result<Layout, String> {
        let source = Source::open(path)?;
        check_layout_version(&source)?;
        let index = source.read("index.json", MAX_JSON_BYTES)?;
        let index: ImageIndex = serde_json::from_slice(&index)
            .map_err(|e| format!("index.json: {}", parse_error(&e)))?;
        if index.manifests().len() > 2 {
            return Err(format!(
                "index.json lists {} manifests: a bundle's and at most its signatures'",
                index.manifests().len()
            ));
        }
        Ok(Layout { source, index })
    }

    /// The bundle's manifest: the one entry that is not signatures (tagged
    /// `sha256-<hex>.sig`, or of `cosign save`'s kind `dev.cosignproject.cosign/sigs`).
    pub fn bundle_descriptor(&self) -> Result<&Descriptor, String> {
        let bundles: Vec<&Descriptor> = self
            .index
            .manifests()
            .iter()
            .filter(|d| !is_signatures(d))
            .collect();
        match bundles.as_slice() {
            [one] => Ok(one),
            many => Err(format!(
                "index.json must list exactly one bundle manifest, it lists {}",
                many.len()
            )),
        }
    }

    /// The signature manifest of `digest` (tagged `sha256-<hex>.sig`; else,
    /// as `cosign save` writes one image's, of kind `dev.cosignproject.cosign/sigs`), if any.
    pub fn signature_descriptor(&self, digest: &str) -> Option<&Descriptor> {
        let tag = crate::cosign::signature_tag(digest);
        let manifests = self.index.manifests();
        manifests
            .iter()
            .find(|d| annotation(d, REF_NAME) == Some(tag.as_str()))
            .or_else(|| {
                manifests
                    .iter()
                    .find(|d| annotation(d, KIND) == Some(KIND_SIGNATURES))
            })
    }

    /// A blob, checked against its bound, size and digest.
    pub fn blob(&self, descriptor: &Descriptor, max: u64) -> Result<Vec<u8>, String> {
        blob(&self.source, descriptor, max)
    }

    /// Every file of the layout (`oci-layout`, `index.json`, the blobs the
    /// index reaches), to be written again with additions.
    pub fn files(&self) -> Result<Files, String> {
        let mut files = Files::new();
        files.insert("oci-layout".into(), self.source.read("oci-layout", 4096)?);
        files.insert(
            "index.json".into(),
            self.source.read("index.json", MAX_JSON_BYTES)?,
        );
        for d in self.index.manifests() {
            let manifest = self.blob(d, MAX_JSON_BYTES)?;
            let parsed: ImageManifest = serde_json::from_slice(&manifest)
                .map_err(|e| format!("manifest {}: {}", d.digest(), parse_error(&e)))?;
            if parsed.layers().len() > MAX_POLICIES {
                return Err(format!(
                    "manifest {}: more than {MAX_POLICIES} layers",
                    d.digest()
                ));
            }
            for b in std::iter::once(parsed.config()).chain(parsed.layers()) {
                files.insert(
                    blob_path(b.digest().as_ref()),
                    self.blob(b, MAX_COMPONENT_BYTES)?,
                );
            }
            files.insert(blob_path(d.digest().as_ref()), manifest);
        }
        Ok(files)
    }
}

fn annotation<'a>(d: &'a Descriptor, key: &str) -> Option<&'a str> {
    d.annotations()
        .as_ref()
        .and_then(|a| a.get(key))
        .map(String::as_str)
}

fn is_signatures(d: &Descriptor) -> bool {
    annotation(d, REF_NAME).is_some_and(|n| n.ends_with(".sig"))
        || annotation(d, KIND) == Some(KIND_SIGNATURES)
}

fn load_from(name: &str, path: &Path) -> Result<Bundle, String> {
    let layout = Layout::open(path)?;
    let descriptor = layout.bundle_descriptor()?;
    let source = &layout.source;
    expect_media_type(
        descriptor,
        &MediaType::ImageManifest,
        "index.json's manifest",
    )?;
    let manifest_digest = descriptor.digest().to_string();
    let bytes = blob(source, descriptor, MAX_JSON_BYTES)?;
    let image_manifest: ImageManifest = serde_json::from_slice(&bytes)
        .map_err(|e| format!("manifest {manifest_digest}: {}", parse_error(&e)))?;
    check_shape(&image_manifest).map_err(|e| format!("manifest {manifest_digest}: {e}"))?;
    let config = image_manifest.config();
    let manifest = BundleManifest::from_json(&blob(source, config, MAX_JSON_BYTES)?)
        .map_err(|e| format!("config {}: {e}", config.digest()))?;
    let mut components = BTreeMap::new();
    for layer in image_manifest.layers() {
        components.insert(
            layer.digest().to_string(),
            blob(source, layer, MAX_COMPONENT_BYTES)?,
        );
    }
    check_modules(&manifest, &components)?;
    Ok(Bundle {
        source: name.to_string(),
        manifest_digest,
        image_manifest,
        manifest,
        components,
    })
}

fn check_layout_version(source: &Source) -> Result<(), String> {
    let text = source.read("oci-layout", 4096)?;
    let layout: OciLayout =
        serde_json::from_slice(&text).map_err(|e| format!("oci-layout: {}", parse_error(&e)))?;
    match layout.image_layout_version() == LAYOUT_VERSION {
        true => Ok(()),
        false => Err(format!(
            "oci-layout: imageLayoutVersion {:?} (expected {LAYOUT_VERSION})",
            layout.image_layout_version()
        )),
    }
}

/// The blob a descriptor names, checked against its size bound, size and digest.
fn blob(source: &Source, descriptor: &Descriptor, max: u64) -> Result<Vec<u8>, String> {
    let named = descriptor.digest().to_string();
    if descriptor.as_digest_sha256().is_none() {
        return Err(format!("blob {named}: only sha256 digests are supported"));
    }
    if descriptor.size() > max {
        return Err(format!(
            "blob {named}: its size {} is more than the bound {max}",
            descriptor.size()
        ));
    }
    let bytes = source
        .read(&blob_path(&named), max)
        .map_err(|e| format!("blob {named}: {e}"))?;
    let actual = digest(&bytes);
    if actual != named {
        return Err(format!(
            "blob {named}: its content's digest is {actual} (tampered with or corrupt)"
        ));
    }
    if bytes.len() as u64 != descriptor.size() {
        return Err(format!(
            "blob {named}: {} bytes, the descriptor says {}",
            bytes.len(),
            descriptor.size()
        ));
    }
    Ok(bytes)
}

/// Capstan's artifact: our artifactType, config and layer media types, bounded layers.
pub fn check_shape(m: &ImageManifest) -> Result<(), String> {
    if m.media_type().as_ref() != Some(&MediaType::ImageManifest) {
        return Err("mediaType must be application/vnd.oci.image.manifest.v1+json".into());
    }
    let artifact = m.artifact_type().as_ref().map(|t| t.to_string());
    if artifact.as_deref() != Some(ARTIFACT_TYPE) {
        return Err(format!(
            "artifactType is {artifact:?}, not {ARTIFACT_TYPE:?}: not a Capstan policy bundle"
        ));
    }
    expect_media_type(m.config(), &MediaType::from(CONFIG_MEDIA_TYPE), "config")?;
    let layers = m.layers();
    if layers.is_empty() || layers.len() > MAX_POLICIES {
        return Err(format!(
            "a bundle has 1 to {MAX_POLICIES} layers, this one {}",
            layers.len()
        ));
    }
    for layer in layers
        .iter()
        .filter(|l| l.media_type().to_string() != ADMISSION_POLICY_MEDIA_TYPE)
    {
        expect_media_type(layer, &MediaType::from(COMPONENT_MEDIA_TYPE), "a layer")?;
    }
    Ok(())
}

fn expect_media_type(d: &Descriptor, expected: &MediaType, what: &str) -> Result<(), String> {
    match d.media_type() == expected {
        true => Ok(()),
        false => Err(format!(
            "{what} ({}) has mediaType {}, expected {expected}",
            d.digest(),
            d.media_type()
        )),
    }
}

/// Every policy names a layer, and every layer is some policy's.
fn check_modules(
    manifest: &BundleManifest,
    components: &BTreeMap<String, Vec<u8>>,
) -> Result<(), String> {
    for p in &manifest.policies {
        if !components.contains_key(&p.module) {
            return Err(format!(
                "policy {}: module {} is not one of the manifest's layers",
                p.manifest.name, p.module
            ));
        }
    }
    for digest in components.keys() {
        if !manifest.policies.iter().any(|p| &p.module == digest) {
            return Err(format!("layer {digest} is no policy's module"));
        }
    }
    Ok(())
}
