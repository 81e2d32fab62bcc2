//! Policy bundles with the real binary: the Rust policies of policies/
//! built for wasm32-wasip2 (once per run), the baseline and multi-tenancy
//! bundles built by `capstan policy build` into an OCI image layout and a
//! tarball (the same digest), `inspect`, and `test` on each bundle's
//! fixtures (all pass); a wrong expectation fails the run with the case
//! named, and a tampered bundle is refused naming the blob.

use crate::support::{stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const POLICIES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../policies");

/// The components of every bundle's policies, built once per run.
fn components() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let target = concat!(env!("CARGO_TARGET_TMPDIR"), "/policies-wasm");
        let build = Command::new(env!("CARGO"))
            .args(["build", "--release", "--target", "wasm32-wasip2"])
            .args(["--manifest-path", &format!("{POLICIES}/Cargo.toml")])
            .args(["--target-dir", target])
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .output()
            .unwrap();
        assert!(build.status.success(), "{}", stderr(&build));
        PathBuf::from(format!("{target}/wasm32-wasip2/release"))
    })
}

fn capstan(args: &[&str], cache: &Path) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_capstan"));
    cmd.arg("policy").args(args);
    if args[0] != "build" {
        cmd.arg("--plugin-cache-dir").arg(cache);
    }
    cmd.output().unwrap()
}

fn ok(args: &[&str], cache: &Path) -> String {
    let out = capstan(args, cache);
    assert!(
        out.status.success(),
        "capstan policy {args:?}:\n{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

/// Builds policies/<name> into `dir` as a layout and a tarball (the same
/// digest), checking it holds `policies` policies; returns their paths.
pub(crate) fn build_bundle(dir: &Path, name: &str, policies: usize) -> (String, String) {
    let modules = components().display().to_string();
    let layout = dir.join(name).display().to_string();
    let tar = dir.join(format!("{name}.tar")).display().to_string();
    let source = format!("{POLICIES}/{name}");
    let mut digests = Vec::new();
    for out in [&layout, &tar] {
        let printed = ok(
            &["build", &source, "--modules-dir", &modules, "-o", out],
            dir,
        );
        assert!(
            printed.contains(&format!("built bundle {name} 0.1.0 ({policies} policies)")),
            "{printed}"
        );
        let digest = printed
            .lines()
            .find_map(|l| l.strip_prefix("digest: "))
            .unwrap();
        digests.push(digest.to_string());
    }
    assert_eq!(
        digests[0], digests[1],
        "the layout and the tarball are the same artifact"
    );
    (layout, tar)
}

/// Builds the baseline bundle into `dir` as a layout and a tarball; returns their paths.
pub(crate) fn build_baseline(dir: &Path) -> (String, String) {
    build_bundle(dir, "baseline", 4)
}

/// Whether `policy test`'s output has an allowed and a denied case of `policy`.
fn verdicts_seen(tested: &str, policy: &str) -> (bool, bool) {
    let seen = |verdict: &str| {
        tested
            .lines()
            .any(|l| l.contains(&format!("[{policy}]: {verdict}")))
    };
    (seen("allowed"), seen("denied"))
}

#[test]
fn baseline_bundle_builds_inspects_and_passes_its_fixtures() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let (layout, tar) = build_baseline(dir.path());
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{layout}/index.json")).unwrap())
            .unwrap();
    assert_eq!(
        index["manifests"][0]["artifactType"],
        "application/vnd.capstan.policy.bundle.v1+json"
    );

    let inspected = ok(&["inspect", &tar], &cache);
    for expected in [
        "bundle: baseline 0.1.0",
        "  disallow-latest-tag:\n    world: admission (capstan:plugin@0.1.0)\n    phases: validating",
        "  require-resources:",
        "  disallow-host-namespaces-and-paths:",
        "  allowed-registries:",
        "rules: CREATE,UPDATE pods; CREATE,UPDATE deployments.apps,replicasets.apps,statefulsets.apps,daemonsets.apps; CREATE,UPDATE jobs.batch,cronjobs.batch",
        "settings: {\"registries\":[\"registry.k8s.io\"]}",
    ] {
        assert!(inspected.contains(expected), "{expected:?} not in:\n{inspected}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["inspect", "--json", &layout], &cache)).unwrap();
    assert_eq!(json["manifest"]["policies"].as_array().unwrap().len(), 4);

    let fixtures = format!("{POLICIES}/baseline/fixtures");
    let tested = ok(&["test", &tar, &fixtures], &cache);
    assert!(!tested.contains("FAIL"), "{tested}");
    assert!(tested.contains("PASS latest-tag-pod [disallow-latest-tag]: denied: pods \"web\" is forbidden: container \"web\" uses image \"nginx:latest\""), "{tested}");
    assert!(
        tested.contains(
            "PASS configmap [allowed-registries]: allowed (its rules do not cover the request)"
        ),
        "{tested}"
    );
    for policy in [
        "disallow-latest-tag",
        "require-resources",
        "disallow-host-namespaces-and-paths",
        "allowed-registries",
    ] {
        assert_eq!(
            verdicts_seen(&tested, policy),
            (true, true),
            "{policy} needs an allow and a deny case:\n{tested}"
        );
    }
    assert!(tested.contains("16 cases, 16 passed, 0 failed"), "{tested}");
}

#[test]
fn multi_tenancy_bundle_builds_inspects_and_passes_its_fixtures() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let (layout, tar) = build_bundle(dir.path(), "multi-tenancy", 3);

    let inspected = ok(&["inspect", &layout], &cache);
    for expected in [
        "bundle: multi-tenancy 0.1.0",
        "  unique-ingress-host:\n    world: admission (capstan:plugin@0.1.0)\n    phases: validating",
        "rules: CREATE,UPDATE ingresses.networking.k8s.io",
        "  require-namespace-labels:",
        "rules: CREATE,UPDATE namespaces",
        "settings: {\"labels\":[\"team\"]}",
        "  require-quota:",
        "rules: CREATE pods; CREATE deployments.apps,replicasets.apps,statefulsets.apps,daemonsets.apps; CREATE jobs.batch,cronjobs.batch",
        "settings: {\"exemptNamespaces\":[\"kube-system\",\"kube-public\",\"kube-node-lease\"]}",
    ] {
        assert!(inspected.contains(expected), "{expected:?} not in:\n{inspected}");
    }

    let fixtures = format!("{POLICIES}/multi-tenancy/fixtures");
    let tested = ok(&["test", &tar, &fixtures], &cache);
    assert!(!tested.contains("FAIL"), "{tested}");
    for expected in [
        "PASS namespace-unlabelled [require-namespace-labels]: denied: namespaces \"scratch\" is forbidden: missing required label \"team\"",
        "PASS pod-without-quota [require-quota]: denied: pods \"web\" is forbidden: namespace \"team-b\" has no ResourceQuota",
        "PASS pod-in-kube-system [require-quota]: allowed",
        // A case's .cluster.yaml is what the policy's reads find: without
        // one, no host is taken and no quota exists.
        "PASS ingress-new-host [unique-ingress-host]: allowed",
        "PASS ingress-host-taken [unique-ingress-host]: denied: ingresses.networking.k8s.io \"shop\" is forbidden: host \"shop.example.com\" is already used by ingress team-a/storefront",
        "PASS pod-with-quota [require-quota]: allowed",
    ] {
        assert!(tested.contains(expected), "{expected:?} not in:\n{tested}");
    }
    for policy in [
        "require-namespace-labels",
        "require-quota",
        "unique-ingress-host",
    ] {
        assert_eq!(
            verdicts_seen(&tested, policy),
            (true, true),
            "{policy} needs an allow and a deny case:\n{tested}"
        );
    }
    assert!(tested.contains("14 cases, 14 passed, 0 failed"), "{tested}");
}

#[test]
fn a_wrong_expectation_fails_naming_the_case_and_a_tampered_bundle_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let (layout, _) = build_baseline(dir.path());
    let fixtures = dir.path().join("fixtures");
    std::fs::create_dir(&fixtures).unwrap();
    let review = format!("{POLICIES}/baseline/fixtures/latest-tag-pod.json");
    std::fs::copy(&review, fixtures.join("latest-ok.json")).unwrap();
    std::fs::write(
        fixtures.join("latest-ok.expect.yaml"),
        "policy: disallow-latest-tag\nallowed: true\n",
    )
    .unwrap();
    std::fs::copy(&review, fixtures.join("wrong-message.json")).unwrap();
    std::fs::write(
        fixtures.join("wrong-message.expect.yaml"),
        "policy: disallow-latest-tag\nallowed: false\nmessage: no such words\n",
    )
    .unwrap();
    let out = capstan(&["test", &layout, &fixtures.display().to_string()], &cache);
    assert!(!out.status.success());
    let printed = stdout(&out);
    assert!(
        printed.contains("FAIL latest-ok [disallow-latest-tag]: expected allowed, got denied: pods \"web\" is forbidden"),
        "{printed}"
    );
    assert!(
        printed.contains("FAIL wrong-message [disallow-latest-tag]: expected a message containing \"no such words\", got denied"),
        "{printed}"
    );
    assert!(
        stderr(&out).contains("2 of 2 cases failed"),
        "{}",
        stderr(&out)
    );

    // One byte of a component changed: refused, naming the bundle and the blob.
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["inspect", "--json", &layout], &cache)).unwrap();
    let layer = json["manifest"]["policies"][0]["module"]
        .as_str()
        .unwrap()
        .to_string();
    let blob = format!("{layout}/blobs/{}", layer.replacen(':', "/", 1));
    let mut bytes = std::fs::read(&blob).unwrap();
    bytes[100] ^= 0xff;
    std::fs::write(&blob, bytes).unwrap();
    let out = capstan(&["inspect", &layout], &cache);
    assert!(!out.status.success());
    let e = stderr(&out);
    assert!(
        e.contains(&format!(
            "bundle {layout}: blob {layer}: its content's digest is sha256:"
        )),
        "{e}"
    );
    assert!(e.contains("(tampered with or corrupt)"), "{e}");
}

/// Builds policies/workload-limits (a component and two
/// ValidatingAdmissionPolicies) into `dir`; returns the layout and tarball.
pub(crate) fn build_workload_limits(dir: &Path) -> (String, String) {
    build_bundle(dir, "workload-limits", 3)
}

#[test]
fn a_bundle_ships_admission_policies_beside_components() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let (_, tar) = build_workload_limits(dir.path());
    let inspected = ok(&["inspect", &tar], &cache);
    for expected in [
        "  disallow-latest-tag:\n    world: admission",
        "  replica-limit:\n    admissionPolicy: ValidatingAdmissionPolicy replica-limit (bindings: replica-limit)",
        "    rules: CREATE,UPDATE deployments.apps",
        "admissionPolicy: ValidatingAdmissionPolicy team-label (bindings: team-label-outside-kube-system)",
    ] {
        assert!(inspected.contains(expected), "{expected:?} not in:\n{inspected}");
    }
    let fixtures = format!("{POLICIES}/workload-limits/fixtures");
    let tested = ok(&["test", &tar, &fixtures], &cache);
    assert!(tested.contains("PASS big-deployment [replica-limit]: denied: deployments.apps \"big\" is forbidden: ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit' denied request: replicas must be at most 5, not 6"), "{tested}");
    assert!(tested.contains("6 cases, 6 passed, 0 failed"), "{tested}");

    // A policy file that does not compile is refused at build, named.
    let source = dir.path().join("broken");
    std::fs::create_dir_all(&source).unwrap();
    for file in ["bundle.yaml", "replica-limit.yaml", "team-label.yaml"] {
        let from = format!("{POLICIES}/workload-limits/{file}");
        std::fs::copy(from, source.join(file)).unwrap();
    }
    let policy = std::fs::read_to_string(source.join("replica-limit.yaml")).unwrap();
    let broken = policy.replace("object.spec.replicas <= 5", "object.spec.replicas <=");
    std::fs::write(source.join("replica-limit.yaml"), broken).unwrap();
    let modules = components().display().to_string();
    let out = dir.path().join("broken.tar").display().to_string();
    let built = capstan(
        &[
            "build",
            &source.display().to_string(),
            "--modules-dir",
            &modules,
            "-o",
            &out,
        ],
        dir.path(),
    );
    assert!(!built.status.success());
    let err = stderr(&built);
    assert!(
        err.contains("policy replica-limit") && err.contains("compilation failed"),
        "{err}"
    );
}
