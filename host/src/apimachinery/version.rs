//! `/version`: kube's version.Info of this build (the Kubernetes API level
//! it serves, Capstan's own version in `gitVersion`).

use serde_json::json;

/// The Kubernetes API level this build serves.
pub const KUBE_MAJOR: &str = "1";
pub const KUBE_MINOR: &str = "33";

pub fn version() -> serde_json::Value {
    let ours = env!("CARGO_PKG_VERSION");
    json!({
        "major": KUBE_MAJOR,
        "minor": KUBE_MINOR,
        "emulationMajor": KUBE_MAJOR,
        "emulationMinor": KUBE_MINOR,
        "minCompatibilityMajor": KUBE_MAJOR,
        "minCompatibilityMinor": "32",
        "gitVersion": format!("v{KUBE_MAJOR}.{KUBE_MINOR}.0+capstan.{ours}"),
        "gitCommit": option_env!("CAPSTAN_GIT_COMMIT").unwrap_or("unknown"),
        "gitTreeState": "clean",
        "buildDate": option_env!("CAPSTAN_BUILD_DATE").unwrap_or("1970-01-01T00:00:00Z"),
        "goVersion": "n/a (rust)",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, go_arch()),
    })
}

fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}
