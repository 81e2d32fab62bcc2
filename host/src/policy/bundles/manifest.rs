//! The bundle manifest: the bundle's name and version, and per policy the
//! plugin manifest (`admission/manifest.rs`: name, world, phases, default
//! rules, failurePolicy, limits, settings schema and default settings) plus
//! `module`, the component it runs. In a source folder (`bundle.yaml` or
//! `bundle.json`) `module` is a `.wasm` file; in a built bundle (the OCI
//! config blob) it is the digest of the component's layer. A policy may
//! instead be a ValidatingAdmissionPolicy (`{name, admissionPolicy}`, a
//! YAML file or its layer's digest; `admission_policies.rs`).

use crate::admission::manifest::PluginManifest;
use crate::wasm::PluginKind;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::MAX_POLICIES;

/// A bundle's manifest.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BundleManifest {
    pub name: String,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub policies: Vec<BundlePolicy>,
}

/// One policy: a plugin manifest and the component it names, or a
/// ValidatingAdmissionPolicy (its manifest made from its name).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(try_from = "Map<String, Value>", into = "Map<String, Value>")]
pub struct BundlePolicy {
    /// The `.wasm` or `.yaml` file (source folder) or the layer's digest
    /// (built bundle).
    pub module: String,
    pub manifest: PluginManifest,
    pub kind: PolicyKind,
}

/// What a policy's layer holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyKind {
    Component,
    /// A ValidatingAdmissionPolicy and its bindings.
    AdmissionPolicy,
}

const ADMISSION_POLICY: &str = "admissionPolicy";

impl TryFrom<Map<String, Value>> for BundlePolicy {
    type Error = String;

    /// `module` taken out, the rest read (strictly) as a plugin manifest;
    /// or `{name, admissionPolicy}`.
    fn try_from(mut map: Map<String, Value>) -> Result<Self, String> {
        if let Some(file) = map.remove(ADMISSION_POLICY) {
            return admission_policy(map, file);
        }
        let module = match map.remove("module") {
            Some(Value::String(m)) => m,
            Some(other) => return Err(format!("module must be a string, got {other}")),
            None => return Err("missing field `module` (or `admissionPolicy`)".into()),
        };
        let manifest: PluginManifest =
            serde_json::from_value(Value::Object(map)).map_err(|e| e.to_string())?;
        Ok(BundlePolicy {
            module,
            manifest,
            kind: PolicyKind::Component,
        })
    }
}

/// `{name, admissionPolicy}`: a validating policy of the admission world.
fn admission_policy(map: Map<String, Value>, file: Value) -> Result<BundlePolicy, String> {
    let Value::String(module) = file else {
        return Err(format!("{ADMISSION_POLICY} must be a string, got {file}"));
    };
    if let Some(other) = map.keys().find(|k| *k != "name") {
        return Err(format!(
            "unknown field `{other}` (a policy with {ADMISSION_POLICY} has only a name)"
        ));
    }
    let name = map.get("name").cloned().unwrap_or_default();
    let manifest = json!({"name": name, "world": "admission", "phases": ["validating"]});
    let manifest: PluginManifest = serde_json::from_value(manifest).map_err(|e| e.to_string())?;
    Ok(BundlePolicy {
        module,
        manifest,
        kind: PolicyKind::AdmissionPolicy,
    })
}

impl From<BundlePolicy> for Map<String, Value> {
    fn from(policy: BundlePolicy) -> Self {
        if policy.kind == PolicyKind::AdmissionPolicy {
            let mut out = Map::new();
            out.insert("name".into(), Value::String(policy.manifest.name));
            out.insert(ADMISSION_POLICY.into(), Value::String(policy.module));
            return out;
        }
        let mut map = match serde_json::to_value(&policy.manifest) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        let mut out = Map::new();
        if let Some(name) = map.shift_remove("name") {
            out.insert("name".into(), name);
        }
        out.insert("module".into(), Value::String(policy.module));
        out.extend(map);
        out
    }
}

impl BundleManifest {
    /// Reads a source manifest: YAML (`bundle.yaml`) or JSON.
    pub fn parse(text: &str) -> Result<BundleManifest, String> {
        let manifest: BundleManifest =
            crate::apimachinery::yaml::config_from_str(text).map_err(|e| e.to_string())?;
        manifest.check()?;
        Ok(manifest)
    }

    /// Reads the config blob of a built bundle (JSON).
    pub fn from_json(bytes: &[u8]) -> Result<BundleManifest, String> {
        let manifest: BundleManifest = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        manifest.check()?;
        Ok(manifest)
    }

    /// The policy named `name`.
    pub fn policy(&self, name: &str) -> Option<&BundlePolicy> {
        self.policies.iter().find(|p| p.manifest.name == name)
    }

    /// Names, counts, and each policy's own checks.
    fn check(&self) -> Result<(), String> {
        check_name("name", &self.name)?;
        if self.version.is_empty() || self.version.len() > 128 {
            return Err("version must be 1 to 128 characters".into());
        }
        match self.policies.len() {
            0 => return Err("a bundle must hold at least one policy".into()),
            n if n > MAX_POLICIES => {
                return Err(format!(
                    "a bundle holds at most {MAX_POLICIES} policies, this one {n}"
                ))
            }
            _ => {}
        }
        for (i, policy) in self.policies.iter().enumerate() {
            let name = &policy.manifest.name;
            check_policy(policy).map_err(|e| format!("policies[{i}] ({name}): {e}"))?;
            if self.policies[..i].iter().any(|p| &p.manifest.name == name) {
                return Err(format!("policies[{i}]: the name {name:?} is used twice"));
            }
        }
        Ok(())
    }
}

fn check_policy(policy: &BundlePolicy) -> Result<(), String> {
    check_name("name", &policy.manifest.name)?;
    if policy.module.is_empty() {
        return Err("module must not be empty".into());
    }
    if policy.manifest.world != PluginKind::Admission {
        return Err(format!(
            "a bundle holds admission policies, not plugins of the {} world",
            policy.manifest.world.world()
        ));
    }
    let text = serde_json::to_string(&policy.manifest).map_err(|e| e.to_string())?;
    PluginManifest::parse(&text).map(|_| ())
}

/// A DNS-1123 label, as kube's object names of that kind.
fn check_name(field: &str, name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    match ok {
        true => Ok(()),
        false => Err(format!(
            "{field} {name:?} must be a DNS-1123 label (lowercase letters, digits and '-', at most 63 characters)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = r#"
name: baseline
version: 0.1.0
policies:
  - name: disallow-latest-tag
    module: disallow_latest_tag.wasm
    world: admission
    phases: [validating]
    rules:
      - {operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}
    failurePolicy: Fail
    timeoutMs: 100
"#;

    #[test]
    fn a_source_manifest_round_trips_through_json() {
        let m = BundleManifest::parse(SOURCE).unwrap();
        let p = &m.policies[0];
        assert_eq!(p.module, "disallow_latest_tag.wasm");
        assert_eq!(p.manifest.name, "disallow-latest-tag");
        assert_eq!(p.manifest.timeout_ms, Some(100));
        let json = serde_json::to_vec(&m).unwrap();
        let text = String::from_utf8(json.clone()).unwrap();
        assert!(
            text.contains(r#"{"name":"disallow-latest-tag","module":"disallow_latest_tag.wasm","world":"admission""#),
            "{text}"
        );
        assert_eq!(BundleManifest::from_json(&json).unwrap(), m);
    }

    #[test]
    fn an_admission_policy_is_named_and_its_file_or_layer() {
        let text =
            format!("{SOURCE}  - name: replica-limit\n    admissionPolicy: replica-limit.yaml\n");
        let m = BundleManifest::parse(&text).unwrap();
        let p = &m.policies[1];
        assert_eq!(
            (p.kind, p.module.as_str()),
            (PolicyKind::AdmissionPolicy, "replica-limit.yaml")
        );
        assert_eq!(
            p.manifest.phases,
            [crate::admission::config::Phase::Validating]
        );
        let json = serde_json::to_vec(&m).unwrap();
        let text = String::from_utf8(json.clone()).unwrap();
        assert!(
            text.contains(r#"{"name":"replica-limit","admissionPolicy":"replica-limit.yaml"}"#),
            "{text}"
        );
        assert_eq!(BundleManifest::from_json(&json).unwrap(), m);
        let extra = text_with("    admissionPolicy: p.yaml\n    timeoutMs: 5\n");
        let err = BundleManifest::parse(&extra).unwrap_err();
        assert!(err.contains("unknown field `timeoutMs`"), "{err}");
    }

    fn text_with(policy_lines: &str) -> String {
        format!("{SOURCE}  - name: extra\n{policy_lines}")
    }

    #[test]
    fn bad_manifests_name_the_policy_and_the_problem() {
        let cases = [
            (SOURCE.replace("timeoutMs", "timeoutMS"), "unknown field `timeoutMS`"),
            (
                SOURCE.replace("    module: disallow_latest_tag.wasm\n", ""),
                "missing field `module`",
            ),
            (
                SOURCE.replace("world: admission", "world: authorizer"),
                "policies[0] (disallow-latest-tag): a bundle holds admission policies, not plugins of the authorizer world",
            ),
            (
                SOURCE.replace("CREATE, UPDATE", "CRATE"),
                "policies[0] (disallow-latest-tag): rules[0]: unsupported operation \"CRATE\"",
            ),
            (SOURCE.replace("name: baseline", "name: Baseline"), "DNS-1123"),
            (
                SOURCE.replace("policies:\n", "policies: []\nx:\n"),
                "unknown field `x`",
            ),
        ];
        for (text, expected) in cases {
            let e = BundleManifest::parse(&text).unwrap_err();
            assert!(e.contains(expected), "{expected:?} not in {e:?}");
        }
        let twice = format!("{SOURCE}{}", &SOURCE[SOURCE.find("  - name").unwrap()..]);
        let e = BundleManifest::parse(&twice).unwrap_err();
        assert!(
            e.contains("the name \"disallow-latest-tag\" is used twice"),
            "{e}"
        );
    }

    #[test]
    fn the_policy_count_is_bounded() {
        let one = &SOURCE[SOURCE.find("  - name").unwrap()..];
        let many: String = (0..=MAX_POLICIES)
            .map(|i| one.replace("disallow-latest-tag", &format!("p{i}")))
            .collect();
        let text = format!("name: b\nversion: '1'\npolicies:\n{many}");
        let e = BundleManifest::parse(&text).unwrap_err();
        assert!(
            e.contains(&format!("at most {MAX_POLICIES} policies")),
            "{e}"
        );
    }
}
