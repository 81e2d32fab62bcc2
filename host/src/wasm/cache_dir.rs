//! Where compiled plugins are cached when `--plugin-cache-dir` is not given:
//! the user's cache directory (`$XDG_CACHE_HOME/capstan/plugins`, else
//! `~/.cache/capstan/plugins`), shared by every data directory of this user,
//! so only the first start on a machine compiles the built-ins. A cache
//! entry's name binds the wasm bytes and the engine's compatibility hash
//! (`cache.rs`), so servers of other builds share the directory safely.
//! When that directory cannot be used (no home, not writable, writable by
//! others), `<data-dir>/plugin-cache`.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The cache directory of a server: the flag, else the user's cache if it is
/// usable, else the data directory's.
pub fn resolve(flag: Option<&Path>, data_dir: &Path) -> PathBuf {
    shared(flag).unwrap_or_else(|| data_dir.join("plugin-cache"))
}

/// The flag, else the user's cache if it is usable (`capstan plugin run`,
/// which has no data directory, then compiles without caching).
pub fn shared(flag: Option<&Path>) -> Option<PathBuf> {
    if let Some(dir) = flag {
        return Some(dir.to_path_buf());
    }
    let user = user_cache_dir(|name| std::env::var_os(name))?;
    match usable(&user) {
        Ok(()) => Some(user),
        Err(why) => {
            tracing::info!(dir = %user.display(), %why, "not caching compiled plugins in the user's cache");
            None
        }
    }
}

/// `$XDG_CACHE_HOME/capstan/plugins` (an absolute one, as the XDG base
/// directory specification requires), else `$HOME/.cache/capstan/plugins`.
fn user_cache_dir(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let absolute = |name: &str| env(name).map(PathBuf::from).filter(|p| p.is_absolute());
    let base = absolute("XDG_CACHE_HOME").or_else(|| absolute("HOME").map(|h| h.join(".cache")))?;
    Some(base.join("capstan").join("plugins"))
}

/// Creates `dir` (mode 0700) when missing and checks that only this user can
/// write there: compiled code is loaded from it without further checks.
fn usable(dir: &Path) -> Result<(), String> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("cannot create it: {e}"))?;
    // A file this process creates is owned by its effective user.
    let probe = dir.join(format!(".probe{}", std::process::id()));
    let created = std::fs::File::create(&probe).and_then(|f| f.metadata());
    let _ = std::fs::remove_file(&probe);
    let me = created.map_err(|e| format!("not writable: {e}"))?.uid();
    let meta = std::fs::metadata(dir).map_err(|e| e.to_string())?;
    if meta.uid() != me {
        return Err(format!("owned by uid {}, not {me}", meta.uid()));
    }
    if meta.permissions().mode() & 0o022 != 0 {
        return Err("writable by other users".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<std::ffi::OsString> + 'a {
        move |name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.into())
    }

    #[test]
    fn xdg_cache_home_wins_over_home_and_must_be_absolute() {
        let both = [("XDG_CACHE_HOME", "/x"), ("HOME", "/h")];
        assert_eq!(
            user_cache_dir(env(&both)),
            Some(PathBuf::from("/x/capstan/plugins"))
        );
        let relative = [("XDG_CACHE_HOME", "x"), ("HOME", "/h")];
        assert_eq!(
            user_cache_dir(env(&relative)),
            Some(PathBuf::from("/h/.cache/capstan/plugins"))
        );
        assert_eq!(user_cache_dir(env(&[])), None);
    }

    #[test]
    fn the_flag_overrides_everything() {
        let flag = Path::new("/somewhere/else");
        assert_eq!(resolve(Some(flag), Path::new("/data")), flag);
    }

    #[test]
    fn a_directory_others_may_write_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("capstan/plugins");
        assert_eq!(usable(&cache), Ok(()));
        let mode = std::fs::metadata(&cache).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert_eq!(usable(&cache), Err("writable by other users".to_string()));
        assert_eq!(
            std::fs::read_dir(&cache).unwrap().count(),
            0,
            "probe left behind"
        );
    }
}
