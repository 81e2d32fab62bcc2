//! `capstan policy test`: a bundle's policies against a folder of fixtures,
//! the offline harness a security team runs in its own CI (as kwctl's and
//! gator's). A fixture is an AdmissionReview `<case>.json` with a sibling
//! `<case>.expect.yaml` holding one expectation or a list of them:
//!
//! ```yaml
//! policy: disallow-latest-tag     # which policy of the bundle
//! allowed: false                  # the verdict expected
//! message: 'uses image "nginx"'   # optional: a substring of the denial's message
//! settings: {registries: [ghcr.io/acme/]}   # optional: instead of the default settings
//! object: {metadata: {labels: {team: web}}}  # optional, a mutating admission policy's:
//!                                             # what the mutated object must contain
//! ```
//!
//! An optional `<case>.cluster.yaml` holds the objects the policy finds
//! through `get-object` and `list-objects` (`fixture_cluster.rs`); without
//! it the cluster is empty.
//!
//! A case sees what the chain would do: a request the policy's rules do not
//! cover is allowed without a call; a policy that fails (trap, timeout, an
//! error returned) denies under failurePolicy Fail and allows under Ignore.

use super::admission_policies::offline_verdict;
use super::components::{LoadedPolicy, Runs};
use super::fixture_cluster::{FixtureCluster, CLUSTER_SUFFIX};
use crate::admission::config::FailurePolicy;
use crate::admission::review::attributes;
use crate::wasm::offline::call_offline;
use crate::wasm::Limits;
use crate::wasm::DEFAULT_MEMORY_MIB;
use crate::wasm::DEFAULT_TIMEOUT;
use anyhow::{anyhow, Context};
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

const EXPECT_SUFFIX: &str = ".expect.yaml";
/// A review file's bound (kube's request body limit).
const MAX_REVIEW_BYTES: u64 = 3 << 20;
/// At most this many cases in a folder.
const MAX_CASES: usize = 10_000;

/// One expected verdict.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Expectation {
    pub policy: String,
    pub allowed: bool,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub settings: Option<Value>,
    /// Fields the mutated object must have (their values; lists whole).
    #[serde(default)]
    pub object: Option<Value>,
}

/// A review and what one policy should answer.
#[derive(Debug)]
pub struct Case {
    /// The fixture's path under the folder, without `.json`.
    pub name: String,
    pub review: Value,
    pub expect: Expectation,
    /// What the policy's reads find.
    pub cluster: Arc<FixtureCluster>,
}

/// The result of one case.
#[derive(Debug)]
pub struct Outcome {
    pub case: String,
    pub policy: String,
    pub passed: bool,
    /// The verdict seen, and what was expected when they differ.
    pub detail: String,
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mark = if self.passed { "PASS" } else { "FAIL" };
        write!(f, "{mark} {} [{}]: {}", self.case, self.policy, self.detail)
    }
}

/// Every case under `folder` (recursively), sorted by path.
pub fn read_cases(folder: &Path) -> anyhow::Result<Vec<Case>> {
    let mut files = Vec::new();
    walk(folder, &mut files)?;
    files.sort();
    let mut cases = Vec::new();
    for json in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "json"))
    {
        let base = json.with_extension("");
        let expect = PathBuf::from(format!("{}{EXPECT_SUFFIX}", base.display()));
        if !files.contains(&expect) {
            anyhow::bail!("{}: no {} beside it", json.display(), expect.display());
        }
        let name = base
            .strip_prefix(folder)
            .unwrap_or(&base)
            .display()
            .to_string();
        let review = read_review(json)?;
        let cluster_file = PathBuf::from(format!("{}{CLUSTER_SUFFIX}", base.display()));
        let cluster = match files.contains(&cluster_file) {
            true => FixtureCluster::read(&cluster_file)?,
            false => Arc::default(),
        };
        for e in read_expectations(&expect)? {
            cases.push(Case {
                name: name.clone(),
                review: review.clone(),
                expect: e,
                cluster: cluster.clone(),
            });
        }
        if cases.len() > MAX_CASES {
            anyhow::bail!("{}: more than {MAX_CASES} cases", folder.display());
        }
    }
    for suffix in [EXPECT_SUFFIX, CLUSTER_SUFFIX] {
        for companion in files
            .iter()
            .filter(|f| f.to_string_lossy().ends_with(suffix))
        {
            let text = companion.to_string_lossy();
            let json = format!("{}.json", &text[..text.len() - suffix.len()]);
            if !files.contains(&PathBuf::from(&json)) {
                anyhow::bail!("{}: no {json} beside it", companion.display());
            }
        }
    }
    Ok(cases)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    for entry in entries {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

fn read_review(path: &Path) -> anyhow::Result<Value> {
    let len = std::fs::metadata(path)?.len();
    if len > MAX_REVIEW_BYTES {
        anyhow::bail!(
            "{}: {len} bytes, more than {MAX_REVIEW_BYTES}",
            path.display()
        );
    }
    let text = std::fs::read_to_string(path)?;
    let review: Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
    if !review.get("request").is_some_and(Value::is_object) {
        anyhow::bail!(
            "{}: an AdmissionReview with `request` set is expected",
            path.display()
        );
    }
    Ok(review)
}

/// One mapping or a list of them.
fn read_expectations(path: &Path) -> anyhow::Result<Vec<Expectation>> {
    let text = std::fs::read_to_string(path)?;
    let value: Value = crate::apimachinery::yaml::config_from_str(&text)
        .map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let items = match value {
        Value::Array(items) => items,
        one => vec![one],
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            serde_json::from_value(v).map_err(|e| anyhow!("{}: [{i}]: {e}", path.display()))
        })
        .collect()
}

/// The verdict a policy gave.
#[derive(Default)]
pub(crate) struct Verdict {
    pub allowed: bool,
    pub message: String,
    pub note: &'static str,
    /// The object as a mutating admission policy left it.
    pub object: Option<Value>,
}

/// Runs every case against the loaded policies.
pub async fn run(policies: &[LoadedPolicy<'_>], cases: &[Case]) -> Vec<Outcome> {
    let mut out = Vec::with_capacity(cases.len());
    for case in cases {
        let verdict = match policies
            .iter()
            .find(|p| p.policy.manifest.name == case.expect.policy)
        {
            Some(policy) => verdict(policy, case).await,
            None => Err(format!("the bundle has no policy {:?}", case.expect.policy)),
        };
        out.push(judge(case, verdict));
    }
    out
}

async fn verdict(loaded: &LoadedPolicy<'_>, case: &Case) -> Result<Verdict, String> {
    let plugin = match &loaded.runs {
        Runs::Plugin(plugin) => plugin,
        Runs::AdmissionPolicy(bundled) => {
            return Ok(offline_verdict(bundled, case, case.cluster.clone()).await)
        }
    };
    let manifest = &loaded.policy.manifest;
    let settings = case
        .expect
        .settings
        .clone()
        .or_else(|| manifest.settings.clone())
        .unwrap_or_else(|| serde_json::json!({}));
    manifest
        .check_settings(&settings)
        .map_err(|e| format!("settings: {e}"))?;
    let covered = match (&manifest.rules, attributes(&case.review["request"])) {
        (None, _) => true,
        (Some(rules), Some(a)) => rules.iter().any(|r| r.matches(&a)),
        (Some(_), None) => false,
    };
    if !covered {
        return Ok(Verdict {
            allowed: true,
            note: " (its rules do not cover the request)",
            ..Verdict::default()
        });
    }
    let limits = Limits {
        timeout: manifest
            .timeout_ms
            .map_or(DEFAULT_TIMEOUT, Duration::from_millis),
        memory_bytes: (manifest.memory_mib.unwrap_or(DEFAULT_MEMORY_MIB) << 20) as usize,
        fuel: manifest.fuel,
    };
    let reader = case.cluster.clone();
    let answer = call_offline(plugin, &case.review, settings.to_string(), limits, reader).await;
    Ok(match answer {
        Ok(answer) => Verdict {
            allowed: answer["response"]["allowed"].as_bool().unwrap_or(false),
            message: answer["response"]["status"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            ..Verdict::default()
        },
        Err(e) => Verdict {
            allowed: manifest.failure_policy == Some(FailurePolicy::Ignore),
            message: format!(
                "failed calling admission plugin \"{}\": {e:#}",
                manifest.name
            ),
            note: " (the policy failed; its failurePolicy decides)",
            ..Verdict::default()
        },
    })
}

/// Whether `verdict` is what `case` expects.
pub(crate) fn judge(case: &Case, verdict: Result<Verdict, String>) -> Outcome {
    let outcome = |passed, detail| Outcome {
        case: case.name.clone(),
        policy: case.expect.policy.clone(),
        passed,
        detail,
    };
    let v = match verdict {
        Ok(v) => v,
        Err(e) => return outcome(false, e),
    };
    let seen = match v.allowed {
        true => format!("allowed{}", v.note),
        false => format!("denied{}: {}", v.note, v.message),
    };
    if v.allowed != case.expect.allowed {
        let expected = if case.expect.allowed {
            "allowed"
        } else {
            "denied"
        };
        return outcome(false, format!("expected {expected}, got {seen}"));
    }
    if let Some(m) = case
        .expect
        .message
        .as_ref()
        .filter(|m| !v.message.contains(m.as_str()))
    {
        return outcome(
            false,
            format!("expected a message containing {m:?}, got {seen}"),
        );
    }
    match (&case.expect.object, &v.object) {
        (Some(want), Some(got)) if !contains(got, want) => outcome(
            false,
            format!("expected the object to contain {want}, got {got}"),
        ),
        (Some(_), None) => outcome(false, format!("no mutated object to compare: {seen}")),
        _ => outcome(true, seen),
    }
}

/// Whether `got` has every field of `want` with its value (maps compared
/// key by key, anything else whole).
fn contains(got: &Value, want: &Value) -> bool {
    match (got, want) {
        (Value::Object(got), Value::Object(want)) => want
            .iter()
            .all(|(k, w)| got.get(k).is_some_and(|g| contains(g, w))),
        _ => got == want,
    }
}
