//! Where a PolicyBundle's bundle may be read from. A relative `bundle` is
//! under `<data-dir>/bundles/`; an absolute one must be under it too, or
//! under a directory the operator allowed with `--policy-bundle-dir`
//! (repeatable). A `..` component is refused either way. The rule is
//! checked twice: on write, on the path as written (an absolute path
//! outside every root is a 422, `strategy.rs`); on load, on the path with
//! its symlinks resolved, so a link under a root that leads out of it is
//! refused then (the condition names the path and the rule, never anything
//! read). Only directories and regular files are read: a FIFO, device or
//! socket is refused without being opened.
//!
//! kube has no such resource; the rule is ours, so that a PolicyBundle (a
//! cluster-admin's object, but one that every replica acts on with the
//! server's own file access) cannot make the server read its secrets.

use std::path::{Component, Path, PathBuf};

/// The directories bundles may be read from.
#[derive(Clone, Debug, Default)]
pub struct BundleRoots {
    /// `<data-dir>/bundles`: relative paths, and the registry cache.
    pub data_bundles: PathBuf,
    /// `--policy-bundle-dir`s, absolute.
    pub allowed: Vec<PathBuf>,
}

/// Why a bundle path is refused: the condition's reason and its message.
pub type Refused = (&'static str, String);

impl BundleRoots {
    pub fn new(data_dir: &Path, allowed: &[PathBuf]) -> BundleRoots {
        let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        BundleRoots {
            data_bundles: absolute(&data_dir.join("bundles")),
            allowed: allowed.iter().map(|p| absolute(p)).collect(),
        }
    }

    fn roots(&self) -> impl Iterator<Item = &PathBuf> {
        std::iter::once(&self.data_bundles).chain(&self.allowed)
    }

    /// The rule a refused path broke, naming the roots.
    pub fn rule(&self) -> String {
        let roots: Vec<String> = self.roots().map(|r| format!("{}/", r.display())).collect();
        format!(
            "a bundle path must be under {} (the data directory's bundles/ or a --policy-bundle-dir)",
            roots.join(" or ")
        )
    }

    /// The path `bundle` names, as written (no file system access): under
    /// `<data-dir>/bundles/` when relative; refused when it has a `..`
    /// component or is absolute and outside every root.
    pub fn path(&self, bundle: &str) -> Result<PathBuf, String> {
        let path = Path::new(bundle);
        if path.components().any(|c| c == Component::ParentDir) {
            return Err(format!(
                "bundle {bundle:?} must not contain a '..' path segment"
            ));
        }
        if !path.is_absolute() {
            return Ok(self.data_bundles.join(path));
        }
        match self.roots().any(|r| path.starts_with(r)) {
            true => Ok(path.to_path_buf()),
            false => Err(format!("bundle {bundle:?}: {}", self.rule())),
        }
    }

    /// The bundle's path with its symlinks resolved, checked against the
    /// roots (themselves resolved) and its type (a directory or a regular
    /// file). Blocking (file system calls): not on the async workers.
    pub fn resolve(&self, bundle: &str) -> Result<PathBuf, Refused> {
        let path = self.path(bundle).map_err(|m| ("PathNotAllowed", m))?;
        let real = std::fs::canonicalize(&path).map_err(|e| {
            let reason = match e.kind() {
                std::io::ErrorKind::NotFound => "BundleNotFound",
                _ => "InvalidBundle",
            };
            (
                reason,
                format!("bundle {}: cannot read it: {e}", path.display()),
            )
        })?;
        let inside = self
            .roots()
            .filter_map(|r| std::fs::canonicalize(r).ok())
            .any(|r| real.starts_with(r));
        if !inside {
            let m = format!(
                "bundle {bundle}: resolves to {} (symlinks resolved): {}",
                real.display(),
                self.rule()
            );
            return Err(("PathNotAllowed", m));
        }
        match std::fs::metadata(&real) {
            Ok(m) if m.is_dir() || m.is_file() => Ok(real),
            Ok(_) => Err((
                "InvalidBundle",
                format!("bundle {bundle}: not a regular file or a directory (FIFOs, devices and sockets are not read)"),
            )),
            Err(e) => Err(("InvalidBundle", format!("bundle {bundle}: cannot read it: {e}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_as_written_stay_under_the_roots() {
        let roots = BundleRoots::new(Path::new("/var/lib/capstan"), &["/opt/b".into()]);
        assert_eq!(
            roots.path("baseline.tar").unwrap(),
            Path::new("/var/lib/capstan/bundles/baseline.tar")
        );
        assert_eq!(
            roots.path("/opt/b/layout").unwrap(),
            Path::new("/opt/b/layout")
        );
        assert!(roots.path("/var/lib/capstan/bundles/x.tar").is_ok());
        for escape in ["../x.tar", "a/../../x", "/opt/b/../etc"] {
            let e = roots.path(escape).unwrap_err();
            assert!(e.contains("must not contain a '..' path segment"), "{e}");
        }
        for outside in [
            "/etc/shadow",
            "/proc/self/environ",
            "/opt/bb/x.tar",
            "/var/lib/capstan/pki/ca.key",
        ] {
            let e = roots.path(outside).unwrap_err();
            assert!(
                e.contains("must be under /var/lib/capstan/bundles/ or /opt/b/"),
                "{e}"
            );
        }
        assert!(roots.path("a..b/c.tar").is_ok());
    }

    #[test]
    fn symlinks_out_and_special_files_are_refused_on_load() {
        let data = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let bundles = data.path().join("bundles");
        std::fs::create_dir_all(&bundles).unwrap();
        let secret = outside.path().join("secret");
        std::fs::write(&secret, "root:SECRET\n").unwrap();
        std::os::unix::fs::symlink(&secret, bundles.join("link.tar")).unwrap();
        std::fs::write(bundles.join("plain.tar"), "x").unwrap();
        let fifo = bundles.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);

        let roots = BundleRoots::new(data.path(), &[]);
        let (reason, message) = roots.resolve("link.tar").unwrap_err();
        assert_eq!(reason, "PathNotAllowed");
        assert!(message.contains("symlinks resolved"), "{message}");
        assert!(!message.contains("SECRET"), "{message}");
        let (reason, _) = roots.resolve("fifo").unwrap_err();
        assert_eq!(reason, "InvalidBundle");
        assert_eq!(
            roots.resolve("missing.tar").unwrap_err().0,
            "BundleNotFound"
        );
        assert!(roots.resolve("plain.tar").is_ok());
        let allowed = BundleRoots::new(data.path(), &[outside.path().to_path_buf()]);
        assert!(allowed.resolve("link.tar").is_ok());
    }
}
