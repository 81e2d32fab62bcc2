//! `capstan policy push/pull/sign/verify/generate-key-pair`: bundles in an
//! OCI registry (`policy/bundles/registry.rs`) and cosign-compatible key-based
//! signatures (`crate::cosign`), for a registry reference or a bundle on disk
//! (whose signatures are kept in its layout, as `cosign save` keeps them).

use crate::cosign::{simple_signing, PrivateKey, PublicKey};
use crate::policy::bundles::layout::Layout;
use crate::policy::bundles::registry::{self, Access, Registry};
use crate::policy::bundles::signatures;
use anyhow::{anyhow, bail, Context};
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Args, Debug, Clone)]
pub struct RegistryArgs {
    /// Reach the registry over plain HTTP (a local or test registry).
    #[arg(long)]
    pub insecure: bool,
}

impl RegistryArgs {
    fn registry(&self, reference: &oci_client::Reference) -> Registry {
        let insecure = match self.insecure {
            true => vec![reference.resolve_registry().to_string()],
            false => Vec::new(),
        };
        Registry::new(Access {
            insecure,
            docker_config: true,
        })
    }
}

#[derive(Args, Debug, Clone)]
pub struct PushArgs {
    /// The bundle: an OCI image layout directory or its tarball.
    pub bundle: PathBuf,
    /// Where to push it: `host[:port]/repository:tag`.
    pub reference: String,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

#[derive(Args, Debug, Clone)]
pub struct PullArgs {
    /// `host[:port]/repository:tag` or `...@sha256:<hex>`.
    pub reference: String,
    /// Where to write it: a `.tar` file or a directory (OCI image layout).
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

#[derive(Args, Debug, Clone)]
pub struct SignArgs {
    /// cosign's encrypted private key (password in COSIGN_PASSWORD).
    #[arg(long)]
    pub key: PathBuf,
    /// A registry reference, or a bundle on disk (the signature is kept in its layout).
    pub bundle: String,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

#[derive(Args, Debug, Clone)]
pub struct VerifyArgs {
    /// The public key (PEM, as `cosign.pub`).
    #[arg(long)]
    pub key: PathBuf,
    /// A registry reference, or a bundle on disk.
    pub bundle: String,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

#[derive(Args, Debug, Clone)]
pub struct GenerateKeyPairArgs {
    /// The files' prefix: `<prefix>.key` and `<prefix>.pub`.
    #[arg(long = "output-key-prefix", default_value = "cosign")]
    pub prefix: PathBuf,
}

pub async fn push(args: PushArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    crate::policy::bundles::load(&args.bundle)?;
    let reference = registry::parse_reference(&args.reference).map_err(|e| anyhow!(e))?;
    let layout =
        Layout::open(&args.bundle).map_err(|e| anyhow!("bundle {}: {e}", args.bundle.display()))?;
    let digest = args
        .registry
        .registry(&reference)
        .push(&layout, &reference)
        .await
        .map_err(|e| anyhow!(e))?;
    writeln!(
        out,
        "pushed {} to {}\ndigest: {digest}",
        args.bundle.display(),
        reference.whole()
    )?;
    Ok(())
}

pub async fn pull(args: PullArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let reference = registry::parse_reference(&args.reference).map_err(|e| anyhow!(e))?;
    let (digest, files) = args
        .registry
        .registry(&reference)
        .pull(&reference)
        .await
        .map_err(|e| anyhow!(e))?;
    crate::policy::bundles::layout::write(&args.output, &files)?;
    let bundle = crate::policy::bundles::load(&args.output)?;
    writeln!(
        out,
        "pulled {} ({} {}) into {}\ndigest: {digest}",
        reference.whole(),
        bundle.manifest.name,
        bundle.manifest.version,
        args.output.display()
    )?;
    Ok(())
}

pub async fn sign(args: SignArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let password = std::env::var("COSIGN_PASSWORD")
        .context("set COSIGN_PASSWORD to the private key's password")?;
    let text = read_key_file(&args.key)?;
    let key = PrivateKey::from_encrypted_pem(&text, password.as_bytes())
        .map_err(|e| anyhow!("{}: {e}", args.key.display()))?;
    let path = Path::new(&args.bundle);
    let digest = if path.exists() {
        crate::policy::bundles::load(path)?;
        let name = format!("capstan.dev/bundles/{}", file_stem(path));
        signatures::sign(path, &key, &name)
            .map_err(|e| anyhow!("bundle {}: {e}", path.display()))?
    } else {
        let reference = registry::parse_reference(&args.bundle).map_err(|e| anyhow!(e))?;
        args.registry
            .registry(&reference)
            .sign(&reference, &key)
            .await
            .map_err(|e| anyhow!(e))?
    };
    writeln!(out, "signed {} ({digest})", args.bundle)?;
    Ok(())
}

pub async fn verify(args: VerifyArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let key = PublicKey::from_pem(&read_key_file(&args.key)?)
        .map_err(|e| anyhow!("{}: {e}", args.key.display()))?;
    let local = local(&args.bundle, &args.registry).await?;
    let (digest, payload) =
        signatures::verify(&local.path, &[key]).map_err(|e| e.shown_as(&args.bundle))?;
    writeln!(out, "Verification for {} ({digest}) --\nThe following checks were performed:\n  - the cosign claims were validated (type {:?}, digest)\n  - the signature was verified against the public key {}\n{}",
        args.bundle, simple_signing::SIGNATURE_TYPE, args.key.display(), payload)?;
    Ok(())
}

pub fn generate_key_pair(args: GenerateKeyPairArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let password = std::env::var("COSIGN_PASSWORD")
        .context("set COSIGN_PASSWORD to the password for the new private key (it may be empty)")?;
    let (key_path, pub_path) = (
        args.prefix.with_extension("key"),
        args.prefix.with_extension("pub"),
    );
    for p in [&key_path, &pub_path] {
        if p.exists() {
            bail!("{} exists: not overwriting it", p.display());
        }
    }
    let key = PrivateKey::generate().map_err(|e| anyhow!(e))?;
    let private = key
        .to_encrypted_pem(password.as_bytes())
        .map_err(|e| anyhow!(e))?;
    write_private(&key_path, private.as_bytes())?;
    std::fs::write(&pub_path, key.public_key().to_pem())?;
    writeln!(
        out,
        "Private key written to {}\nPublic key written to {}",
        key_path.display(),
        pub_path.display()
    )?;
    Ok(())
}

fn write_private(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(bytes)?;
    Ok(())
}

fn read_key_file(path: &Path) -> anyhow::Result<String> {
    let len = std::fs::metadata(path)
        .with_context(|| path.display().to_string())?
        .len();
    if len > crate::cosign::keys::MAX_KEY_FILE_BYTES as u64 {
        bail!("{}: {len} bytes, not a key file", path.display());
    }
    std::fs::read_to_string(path).with_context(|| path.display().to_string())
}

fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "bundle".into())
}

/// A bundle on disk: the path given, or a registry reference pulled into a
/// scratch directory that is removed when this is dropped.
pub struct Local {
    pub path: PathBuf,
    scratch: bool,
}

impl Drop for Local {
    fn drop(&mut self) {
        if self.scratch {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// `bundle` as a path on disk, pulling it first when it is a reference.
pub async fn local(bundle: &str, registry: &RegistryArgs) -> anyhow::Result<Local> {
    let path = Path::new(bundle);
    if path.exists() {
        return Ok(Local {
            path: path.to_path_buf(),
            scratch: false,
        });
    }
    let reference = registry::parse_reference(bundle)
        .map_err(|e| anyhow!("{bundle}: no such file, nor a registry reference ({e})"))?;
    let (digest, files) = registry
        .registry(&reference)
        .pull(&reference)
        .await
        .map_err(|e| anyhow!(e))?;
    let local = Local {
        path: tempdir_for(&digest)?,
        scratch: true,
    };
    crate::policy::bundles::layout::write(&local.path, &files)?;
    Ok(local)
}

fn tempdir_for(digest: &str) -> anyhow::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!(
        "capstan-pull-{}-{}",
        std::process::id(),
        digest.replace(':', "-")
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
