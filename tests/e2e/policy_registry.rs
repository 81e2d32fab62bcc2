//! Policy bundles in a real OCI registry (CNCF distribution's
//! `docker-registry`, started on a free loopback port with a temporary
//! storage directory): `capstan policy push`, `sign` and `verify` with a
//! cosign key pair made by `generate-key-pair`, `pull` (the digest
//! unchanged); then a server with `--insecure-registry` and a PolicyBundle
//! naming the registry reference and the public key becomes Ready and
//! denies a `:latest` pod; pointed at an unsigned bundle (another tag of the
//! same repository), then at a bundle
//! tampered with in the registry's storage, it is refused with a status
//! naming the bundle, the digest and why, and the chain keeps the good one.

use crate::policy_bundles::build_bundle;
use crate::support::{eventually, stderr, stdout, Server};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);
const PASSWORD: &str = "correct horse";

/// A `docker-registry serve` process, killed on drop.
struct Registry {
    child: Child,
    storage: tempfile::TempDir,
    addr: String,
}

impl Registry {
    fn start() -> Registry {
        let storage = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr = format!("127.0.0.1:{port}");
        let config = storage.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\n\
                 http:\n  addr: {addr}\n",
                storage.path().join("data").display()
            ),
        )
        .unwrap();
        let log = std::fs::File::create(storage.path().join("registry.log")).unwrap();
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config)
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("docker-registry (Debian's docker-registry package) runs");
        let up = eventually(Duration::from_secs(20), || {
            std::net::TcpStream::connect(&addr).is_ok()
        });
        assert!(up, "the registry did not listen on {addr}");
        Registry {
            child,
            storage,
            addr,
        }
    }

    /// The file holding blob `digest` in the registry's storage.
    fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").unwrap();
        self.storage
            .path()
            .join("data/docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn capstan(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_capstan"))
        .arg("policy")
        .args(args)
        .current_dir(cwd)
        .env("COSIGN_PASSWORD", PASSWORD)
        .env("DOCKER_CONFIG", cwd.join("no-docker-config"))
        .output()
        .unwrap()
}

fn ok(args: &[&str], cwd: &Path) -> String {
    let out = capstan(args, cwd);
    assert!(
        out.status.success(),
        "capstan policy {args:?}:\n{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

fn fails(args: &[&str], cwd: &Path) -> String {
    let out = capstan(args, cwd);
    assert!(
        !out.status.success(),
        "capstan policy {args:?} succeeded: {}",
        stdout(&out)
    );
    stderr(&out)
}

fn digest_of(printed: &str) -> String {
    printed
        .lines()
        .find_map(|l| l.strip_prefix("digest: "))
        .unwrap_or_else(|| panic!("no digest in {printed}"))
        .to_string()
}

/// The digest of the first layer of the layout's bundle.
fn first_layer(layout: &str) -> String {
    let read = |p: String| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
    };
    let index = read(format!("{layout}/index.json"));
    let manifest = index["manifests"][0]["digest"]
        .as_str()
        .unwrap()
        .replace(':', "/");
    let manifest = read(format!("{layout}/blobs/{manifest}"));
    manifest["layers"][0]["digest"]
        .as_str()
        .unwrap()
        .to_string()
}

fn policy_bundle(bundle: &str, public_key: &str) -> String {
    let key: String = public_key
        .lines()
        .map(|l| format!("        {l}\n"))
        .collect();
    format!(
        "apiVersion: policies.capstan.dev/v1alpha1\nkind: PolicyBundle\nmetadata:\n  name: signed\n\
         spec:\n  bundle: {bundle}\n  policies: [disallow-latest-tag]\n  verification:\n    publicKeys:\n      - |\n{key}"
    )
}

/// The Ready condition once it reflects the current generation.
fn ready(s: &Server) -> (String, String, String, serde_json::Value) {
    let mut last = None;
    let seen = eventually(WAIT, || {
        let pb = s.json(&["get", "policybundle", "signed", "-o", "json"]);
        let generation = pb["metadata"]["generation"].clone();
        let found = pb["status"]["conditions"].as_array().and_then(|cs| {
            cs.iter()
                .find(|c| c["type"] == "Ready" && c["observedGeneration"] == generation)
                .cloned()
        });
        last = found.map(|c| {
            let text = |k: &str| c[k].as_str().unwrap_or_default().to_string();
            (
                text("status"),
                text("reason"),
                text("message"),
                pb["status"].clone(),
            )
        });
        last.is_some()
    });
    assert!(seen, "no status: {}", s.log());
    last.unwrap()
}

fn run_latest(s: &Server, pod: &str) -> (bool, String) {
    let out = s.kubectl(&["run", pod, "--image=nginx:latest"]);
    (out.status.success(), stderr(&out))
}

const DENIAL: &str = "policy signed/disallow-latest-tag: pods \"p\" is forbidden";

#[test]
fn signed_bundles_from_a_registry_are_verified_pinned_and_enforced() {
    let registry = Registry::start();
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let (_, baseline) = build_bundle(dir, "baseline", 4);
    let (tenancy_layout, tenancy) = build_bundle(dir, "multi-tenancy", 3);
    let r = &registry.addr;
    let good = format!("{r}/policies/baseline:v1");
    let unsigned = format!("{r}/policies/baseline:unsigned");
    let tampered = format!("{r}/policies/tampered:v1");

    // A cosign key pair, a push, a signature, a verification, a pull.
    let made = ok(&["generate-key-pair"], dir);
    assert!(made.contains("Private key written to cosign.key"), "{made}");
    let key = std::fs::read_to_string(dir.join("cosign.key")).unwrap();
    assert!(key.starts_with("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----"));
    let pushed = digest_of(&ok(&["push", &baseline, &good, "--insecure"], dir));
    let e = fails(&["verify", "--key", "cosign.pub", &good, "--insecure"], dir);
    assert!(
        e.contains(&pushed) && e.contains("no signature found"),
        "{e}"
    );
    let signed = ok(&["sign", "--key", "cosign.key", &good, "--insecure"], dir);
    assert!(signed.contains(&pushed), "{signed}");
    let verified = ok(&["verify", "--key", "cosign.pub", &good, "--insecure"], dir);
    assert!(
        verified.contains(&format!("\"docker-manifest-digest\":\"{pushed}\"")),
        "{verified}"
    );
    let pulled = digest_of(&ok(&["pull", &good, "-o", "pulled.tar", "--insecure"], dir));
    assert_eq!(pulled, pushed, "the registry's digest is the bundle's");
    ok(&["verify", "--key", "cosign.pub", "pulled.tar"], dir);
    // inspect and test take the reference as they take a file.
    let inspected = ok(&["inspect", &good, "--insecure"], dir);
    assert!(
        inspected.contains("bundle: baseline 0.1.0")
            && inspected.contains(&format!("source: {good}")),
        "{inspected}"
    );
    let fixtures = format!(
        "{}/../policies/baseline/fixtures",
        env!("CARGO_MANIFEST_DIR")
    );
    let tested = ok(&["test", &good, &fixtures, "--insecure"], dir);
    assert!(tested.contains(", 0 failed"), "{tested}");
    // Another key does not verify it.
    std::fs::create_dir(dir.join("other")).unwrap();
    ok(&["generate-key-pair"], &dir.join("other"));
    let e = fails(&["verify", "--key", "other/cosign.pub", "pulled.tar"], dir);
    assert!(e.contains("does not verify with any key"), "{e}");

    // The unsigned and tampered bundles.
    ok(&["push", &tenancy, &unsigned, "--insecure"], dir);
    let tenancy_digest = digest_of(&ok(&["push", &tenancy, &tampered, "--insecure"], dir));
    ok(
        &["sign", "--key", "cosign.key", &tampered, "--insecure"],
        dir,
    );

    let mut s = Server::start_with(&["--insecure-registry", r]);
    let public = std::fs::read_to_string(dir.join("cosign.pub")).unwrap();
    s.ok_stdin(
        &["apply", "-f", "-"],
        &policy_bundle(&format!("registry://{good}"), &public),
    );
    let (status, reason, message, st) = ready(&s);
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("True", "PoliciesInEffect"),
        "{message}"
    );
    assert_eq!(st["digest"], pushed.as_str());
    let condition = |st: &serde_json::Value, kind: &str| {
        st["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == kind)
            .cloned()
            .unwrap()
    };
    assert_eq!(condition(&st, "Pulled")["status"], "True");
    assert_eq!(condition(&st, "Verified")["reason"], "SignatureVerified");
    let (created, err) = run_latest(&s, "p");
    assert!(!created && err.contains(DENIAL), "{err}");

    // Unsigned: refused, the signed bundle stays in effect.
    let patch = |bundle: &str| {
        let p = format!(r#"{{"spec":{{"bundle":"registry://{bundle}"}}}}"#);
        s.ok(&["patch", "pb", "signed", "--type=merge", "-p", &p]);
    };
    patch(&unsigned);
    let (status, reason, message, st) = ready(&s);
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "Unsigned"),
        "{message}"
    );
    assert!(
        message.contains(&unsigned)
            && message.contains(&tenancy_digest)
            && message.contains("no signature found")
            && message.contains(&format!("the previous bundle ({pushed}) stays in effect")),
        "{message}"
    );
    assert_eq!(condition(&st, "Verified")["status"], "False");
    assert!(run_latest(&s, "p").1.contains(DENIAL));

    // Tampered in the registry's storage: the pull refuses it.
    let layer = first_layer(&tenancy_layout);
    let file = registry.blob_file(&layer);
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[200] ^= 0xff;
    std::fs::write(&file, bytes).unwrap();
    let e = fails(&["pull", &tampered, "-o", "t.tar", "--insecure"], dir);
    assert!(e.contains(&layer), "{e}");
    patch(&tampered);
    let (status, reason, message, _) = ready(&s);
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "PullFailed"),
        "{message}"
    );
    assert!(
        message.contains(&tampered)
            && message.contains(&tenancy_digest)
            && message.contains(&layer)
            && message.contains("stays in effect"),
        "{message}"
    );
    assert!(run_latest(&s, "p").1.contains(DENIAL));

    // Back to the signed tag, which then moves to another bundle: a
    // restart loads the pinned digest, not the tag's new one.
    patch(&good);
    let (status, _, message, st) = ready(&s);
    assert_eq!(
        (status.as_str(), &st["digest"]),
        ("True", &serde_json::json!(pushed)),
        "{message}"
    );
    ok(&["push", &baseline_moved(dir), &good, "--insecure"], dir);
    s.restart(false);
    assert!(
        eventually(WAIT, || run_latest(&s, "p").1.contains(DENIAL)),
        "{}",
        s.log()
    );
    let st = s.json(&["get", "pb", "signed", "-o", "json"])["status"].clone();
    assert_eq!(st["digest"], pushed.as_str());
    let pulled = condition(&st, "Pulled")["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(pulled.contains(&format!("{pushed} pinned")), "{pulled}");
}

/// The multi-tenancy bundle again (another digest than the baseline's).
fn baseline_moved(dir: &Path) -> String {
    dir.join("multi-tenancy.tar").display().to_string()
}

/// `--policy-verification-key`: every bundle, on disk too, must be signed
/// by the server's key; a bundle signed in its layout afterwards is picked
/// up by the retry; a key that is not PEM is a 422 naming the field.
#[test]
fn the_servers_key_is_required_of_bundles_on_disk_too() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let (_, baseline) = build_bundle(dir, "baseline", 4);
    ok(&["generate-key-pair"], dir);
    let key = dir.join("cosign.pub").display().to_string();
    let s = Server::start_with(&["--policy-verification-key", &key]);
    let bundles = s.dir.path().join("bundles");
    std::fs::create_dir_all(&bundles).unwrap();
    let copy = bundles.join("baseline.tar");
    std::fs::copy(&baseline, &copy).unwrap();
    s.ok_stdin(
        &["apply", "-f", "-"],
        "apiVersion: policies.capstan.dev/v1alpha1\nkind: PolicyBundle\nmetadata:\n  name: signed\n\
         spec:\n  bundle: baseline.tar\n  policies: [disallow-latest-tag]\n",
    );
    let (status, reason, message, _) = ready(&s);
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "Unsigned"),
        "{message}"
    );
    assert!(
        message.contains("bundle baseline.tar (sha256:") && message.contains("no signature found"),
        "{message}"
    );
    assert!(
        run_latest(&s, "free").0,
        "an unsigned bundle's policies run"
    );

    ok(
        &["sign", "--key", "cosign.key", &copy.display().to_string()],
        dir,
    );
    let turned = eventually(WAIT, || ready(&s).0 == "True");
    assert!(turned, "the signed bundle never became Ready: {}", s.log());
    let (created, err) = run_latest(&s, "p");
    assert!(!created && err.contains(DENIAL), "{err}");
}
