//! The format: a build read back, tampering and bounds refused with the
//! digest named, a component of another world refused.

use super::*;
use crate::wasm::{embedded, PluginRuntime};
use std::path::Path;

/// A source folder with two policies, their components taken from built-ins.
pub(crate) fn source(dir: &Path, second: &str, second_world: &str) {
    let wasm = |name| embedded::builtin(name).unwrap();
    std::fs::write(dir.join("a.wasm"), wasm("always-pull-images")).unwrap();
    std::fs::write(dir.join("b.wasm"), wasm(second)).unwrap();
    let manifest = format!(
        r#"
name: test-bundle
version: 1.0.0
policies:
  - name: first
    module: a.wasm
    world: admission
    phases: [mutating]
    rules: [{{operations: [CREATE], apiGroups: [""], apiVersions: ["*"], resources: [pods]}}]
  - name: second
    module: b.wasm
    world: {second_world}
    phases: [validating]
    settingsSchema: {{type: object, properties: {{n: {{type: integer}}}}}}
    settings: {{n: 1}}
"#
    );
    std::fs::write(dir.join("bundle.yaml"), manifest).unwrap();
}

fn built(out_name: &str) -> (tempfile::TempDir, std::path::PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    source(dir.path(), "deny-service-external-ips", "admission");
    let out = dir.path().join(out_name);
    let b = build(dir.path(), None, &out).unwrap();
    (dir, out, b.manifest_digest)
}

#[test]
fn a_built_bundle_loads_back_as_a_directory_and_as_a_tarball() {
    let (dir, layout, digest) = built("layout");
    let bundle = load(&layout).unwrap();
    assert_eq!(bundle.manifest_digest, digest);
    assert_eq!(bundle.manifest.name, "test-bundle");
    let names: Vec<&str> = bundle
        .manifest
        .policies
        .iter()
        .map(|p| p.manifest.name.as_str())
        .collect();
    assert_eq!(names, ["first", "second"]);
    let first = &bundle.manifest.policies[0];
    let bytes = embedded::builtin("always-pull-images").unwrap();
    assert_eq!(first.module, crate::cosign::digest(bytes));
    assert_eq!(bundle.component(&first.module), bytes);
    assert_eq!(
        bundle.manifest.policies[1].manifest.settings,
        Some(serde_json::json!({"n": 1}))
    );
    let artifact = bundle
        .image_manifest
        .artifact_type()
        .as_ref()
        .unwrap()
        .to_string();
    assert_eq!(artifact, ARTIFACT_TYPE);
    // The same inputs, built again (as a tarball this time), give the same digest.
    let tar = dir.path().join("bundle.tar");
    assert_eq!(
        build(dir.path(), None, &tar).unwrap().manifest_digest,
        digest
    );
    let from_tar = load(&tar).unwrap();
    assert_eq!(from_tar.manifest, bundle.manifest);
    assert_eq!(from_tar.components, bundle.components);
}

#[test]
fn a_tampered_blob_is_refused_naming_its_digest() {
    let (_dir, layout, _) = built("layout");
    let bundle = load(&layout).unwrap();
    let layer = bundle.manifest.policies[1].module.clone();
    let path = layout.join(layout::blob_path(&layer));
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let e = load(&layout).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!(
            "bundle {}: blob {layer}: its content's digest is sha256:",
            layout.display()
        )),
        "{e}"
    );
    assert!(e.contains("(tampered with or corrupt)"), "{e}");
}

#[test]
fn bounds_and_shape_are_checked_before_reading() {
    let (_dir, layout, digest) = built("layout");
    let index_path = layout.join("index.json");
    let index = std::fs::read_to_string(&index_path).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&index).unwrap();
    v["manifests"][0]["size"] = serde_json::json!(MAX_JSON_BYTES + 1);
    std::fs::write(&index_path, v.to_string()).unwrap();
    let e = load(&layout).unwrap_err().to_string();
    assert!(
        e.contains(&format!(
            "blob {digest}: its size {} is more than the bound {MAX_JSON_BYTES}",
            MAX_JSON_BYTES + 1
        )),
        "{e}"
    );
    v["manifests"] = serde_json::json!([]);
    std::fs::write(&index_path, v.to_string()).unwrap();
    let e = load(&layout).unwrap_err().to_string();
    assert!(
        e.contains("index.json must list exactly one bundle manifest, it lists 0"),
        "{e}"
    );
    std::fs::write(
        layout.join("oci-layout"),
        r#"{"imageLayoutVersion": "2.0.0"}"#,
    )
    .unwrap();
    assert!(load(&layout)
        .unwrap_err()
        .to_string()
        .contains("imageLayoutVersion \"2.0.0\""));
}

#[test]
fn another_artifact_is_not_a_bundle() {
    let (_dir, layout, digest) = built("layout");
    // Rewrite the manifest with another artifactType, and the index to name it.
    let bytes = std::fs::read(layout.join(layout::blob_path(&digest))).unwrap();
    let old_len = bytes.len();
    let text = String::from_utf8(bytes)
        .unwrap()
        .replace(ARTIFACT_TYPE, "application/vnd.example+json");
    let new_digest = crate::cosign::digest(text.as_bytes());
    std::fs::write(layout.join(layout::blob_path(&new_digest)), &text).unwrap();
    let index = std::fs::read_to_string(layout.join("index.json")).unwrap();
    let index = index.replace(&digest, &new_digest).replace(
        &format!("\"size\":{old_len}"),
        &format!("\"size\":{}", text.len()),
    );
    std::fs::write(layout.join("index.json"), index).unwrap();
    let e = load(&layout).unwrap_err().to_string();
    assert!(
        e.contains(&format!(
            "manifest {new_digest}: artifactType is Some(\"application/vnd.example+json\")"
        )),
        "{e}"
    );
}

#[test]
fn a_component_of_another_world_is_refused_naming_the_policy_and_layer() {
    let dir = tempfile::tempdir().unwrap();
    source(dir.path(), "always-allow", "admission");
    let out = dir.path().join("b.tar");
    build(dir.path(), None, &out).unwrap();
    let bundle = load(&out).unwrap();
    let layer = crate::cosign::digest(embedded::builtin("always-allow").unwrap());
    let runtime = PluginRuntime::new(None).unwrap();
    let e = match components::load_all(&runtime, &bundle) {
        Ok(_) => panic!("an authorizer loaded as an admission policy"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains(&format!("policy second (layer {layer})")), "{e}");
    assert!(
        e.contains("implements the authorizer world, not the admission world"),
        "{e}"
    );
}

#[test]
fn a_core_module_or_a_missing_file_is_refused_at_build() {
    let dir = tempfile::tempdir().unwrap();
    source(dir.path(), "deny-service-external-ips", "admission");
    std::fs::write(dir.path().join("b.wasm"), b"\0asm\x01\0\0\0").unwrap();
    let e = format!(
        "{:#}",
        build(dir.path(), None, &dir.path().join("o"))
            .err()
            .unwrap()
    );
    assert!(
        e.contains("policy second: module") && e.contains("core WebAssembly module"),
        "{e}"
    );
    std::fs::remove_file(dir.path().join("b.wasm")).unwrap();
    assert!(build(dir.path(), None, &dir.path().join("o")).is_err());
}
