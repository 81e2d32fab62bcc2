//! The recorded answers in `tests/golden/answers/<set>/<name>.json`: the
//! request and kube's normalized answer, one file each.

use super::request::Request;
use super::setup::Setup;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;

/// Files larger than this are written on one line (OpenAPI documents).
const PRETTY_UP_TO: usize = 256 * 1024;

#[derive(Serialize, Deserialize)]
pub struct Recorded {
    pub request: Request,
    #[serde(flatten)]
    pub setup: Setup,
    pub code: u16,
    pub body: Value,
}

/// `tests/golden`.
pub fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/golden")
}

/// Every recorded answer, as (`<set>/<name>`, answer), in name order.
pub fn load_all() -> Vec<(String, Recorded)> {
    let root = golden_dir().join("answers");
    let mut out = Vec::new();
    for set in sorted_entries(&root) {
        for file in sorted_entries(&set) {
            let id = format!(
                "{}/{}",
                file_name(&set),
                file_name(&file).trim_end_matches(".json")
            );
            let text = std::fs::read_to_string(&file).expect("read a recorded answer");
            let recorded = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{id}: {e}"));
            out.push((id, recorded));
        }
    }
    out
}

/// Writes one recorded answer.
pub fn write(set: &str, name: &str, recorded: &Recorded) {
    let dir = golden_dir().join("answers").join(set);
    std::fs::create_dir_all(&dir).expect("create the answers folder");
    let mut text = serde_json::to_string(recorded).expect("encode");
    if text.len() <= PRETTY_UP_TO {
        text = serde_json::to_string_pretty(recorded).expect("encode");
    }
    text.push('\n');
    std::fs::write(dir.join(format!("{name}.json")), text).expect("write a recorded answer");
}

fn sorted_entries(dir: &std::path::Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = read.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    paths
}

fn file_name(path: &std::path::Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
