//! PolicyBundles whose source is hostile, against the real binary: a
//! registry that answers a huge manifest, a huge error, a trickle or a
//! redirect to another host (`hostile_registry.rs`), and paths that lead to
//! a secret, a FIFO or out of the allowed directories. Each gets a
//! bounded, clear condition without the server's memory growing, a
//! well-behaved PolicyBundle loads and enforces meanwhile, a deleted one
//! stops enforcing at once, and no byte of a secret file appears in any
//! PolicyBundle or in the log.

use crate::hostile_registry::{HostileRegistry, Reply};
use crate::policy_bundle_api::{apply, wait_ready};
use crate::policy_bundles::build_baseline;
use crate::support::{eventually, stderr, Server};
use std::time::Duration;

const HUGE: u64 = 256 << 20;
const SECRET: &str = "SECRET-7f3a9c";

fn policy_bundle(name: &str, bundle: &str) -> String {
    format!(
        "apiVersion: policies.capstan.dev/v1alpha1\nkind: PolicyBundle\nmetadata:\n  name: {name}\n\
         spec:\n  bundle: {bundle}\n  policies: [disallow-latest-tag]\n"
    )
}

/// Whether `kubectl run <pod> --image=nginx:latest` is allowed.
fn latest_allowed(s: &Server, pod: &str) -> bool {
    s.kubectl(&["run", pod, "--image=nginx:latest"])
        .status
        .success()
}

/// The baseline bundle copied to `<data-dir>/bundles/baseline.tar`.
fn with_baseline(s: &Server) {
    let build = tempfile::tempdir().unwrap();
    let (_, tar) = build_baseline(build.path());
    let bundles = s.dir.path().join("bundles");
    std::fs::create_dir_all(&bundles).unwrap();
    std::fs::copy(&tar, bundles.join("baseline.tar")).unwrap();
}

#[test]
fn hostile_registries_get_bounded_conditions_and_hold_up_no_other_bundle() {
    let elsewhere = HostileRegistry::start("127.0.0.2", |_| Reply::ok(b"{}"));
    let target = format!("http://{}/v2/redirect/manifests/v1", elsewhere.addr);
    let fake = HostileRegistry::start("127.0.0.1", move |seen| {
        match seen.path.split('/').nth(2).unwrap_or_default() {
            "huge" => Reply::Huge {
                status: 200,
                len: HUGE,
                declared: false,
            },
            "error" => Reply::Huge {
                status: 500,
                len: HUGE,
                declared: false,
            },
            "trickle" => Reply::Trickle {
                len: 100_000,
                every: Duration::from_secs(1),
            },
            "redirect" => Reply::Redirect(target.clone()),
            _ => Reply::status(404, ""),
        }
    });
    let s = Server::start_with(&[
        "--insecure-registry",
        &fake.addr,
        "--insecure-registry",
        &elsewhere.addr,
        "--policy-bundle-fetch-timeout",
        "30s",
    ]);
    with_baseline(&s);
    let rss_before = s.rss_mib();
    // Named to come first: a load in turn would wait for them.
    for repo in ["trickle", "huge", "error", "redirect"] {
        let bundle = format!("registry://{}/{repo}:v1", fake.addr);
        apply(&s, &policy_bundle(&format!("a-{repo}"), &bundle));
    }
    apply(&s, &policy_bundle("baseline", "baseline.tar"));

    // The baseline loads and enforces while the trickle still hangs.
    let (status, _, message) = wait_ready(&s, "baseline");
    assert_eq!(status, "True", "{message}");
    let trickle = s.json(&["get", "pb", "a-trickle", "-o", "json"]);
    assert!(trickle["status"].is_null(), "{trickle}");
    assert!(
        !latest_allowed(&s, "denied"),
        "the baseline does not enforce"
    );

    let refused = |name: &str, says: &str| {
        let (status, _, message) = wait_ready(&s, name);
        assert_eq!(status, "False", "{message}");
        assert!(message.contains(says), "{name}: {message}");
        assert!(message.len() < 2200, "{name}: {} bytes", message.len());
    };
    refused("a-huge", "is more than 1048576 bytes");
    refused("a-error", "HTTP 500: xxx");
    refused("a-redirect", "redirected to another host");
    assert!(elsewhere.seen().is_empty(), "{:?}", elsewhere.seen());

    // A deletion takes effect at once, whatever the trickle is doing.
    s.ok(&["delete", "pb", "baseline"]);
    assert!(
        eventually(Duration::from_secs(5), || latest_allowed(&s, "allowed")),
        "the deleted PolicyBundle still denies"
    );

    // Then the trickle's deadline: a clear condition.
    let (status, reason, message) = wait_ready(&s, "a-trickle");
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "Timeout"),
        "{message}"
    );
    assert!(
        message.contains("not fetched and read within 30s"),
        "{message}"
    );

    let grown = s.rss_mib().saturating_sub(rss_before);
    eprintln!("VmRSS: {rss_before} MiB before, grown by {grown} MiB");
    assert!(grown < 200, "the server grew by {grown} MiB");
    let log = s.log();
    let longest = log.lines().map(str::len).max().unwrap_or(0);
    assert!(longest < 16 << 10, "a log line of {longest} bytes");
    assert!(
        eventually(Duration::from_secs(5), || s
            .curl(&["-s", &s.url("/readyz")])
            .stdout
            .starts_with(b"ok")),
        "/readyz"
    );
}

#[test]
fn bundle_paths_are_confined_special_files_refused_and_contents_never_echoed() {
    let outside = tempfile::tempdir().unwrap();
    let (allowed, forbidden) = (
        outside.path().join("allowed"),
        outside.path().join("forbidden"),
    );
    let secret = format!("root:{SECRET}:19000:0:99999:7:::\n{}\n", "x".repeat(700));
    for dir in [&allowed, &forbidden] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("shadow"), &secret).unwrap();
    }
    let s = Server::start_with(&["--policy-bundle-dir", allowed.to_str().unwrap()]);
    with_baseline(&s);
    let bundles = s.dir.path().join("bundles");
    std::os::unix::fs::symlink(forbidden.join("shadow"), bundles.join("link.tar")).unwrap();
    let fifo = bundles.join("fifo.tar");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());

    // An absolute path outside every allowed directory: 422 on write.
    for path in [
        forbidden.join("shadow").display().to_string(),
        "/proc/self/environ".into(),
    ] {
        let out = s.kubectl_stdin(
            &["apply", "-f", "-"],
            Some(&policy_bundle("outside", &path)),
        );
        let err = stderr(&out);
        assert!(!out.status.success(), "{path} was accepted");
        assert!(
            err.contains("The PolicyBundle \"outside\" is invalid")
                && err.contains("spec.bundle: Invalid value")
                && err.contains("--policy-bundle-dir"),
            "{err}"
        );
    }

    let allowed_secret = allowed.join("shadow").display().to_string();
    apply(&s, &policy_bundle("a-allowed", &allowed_secret));
    apply(&s, &policy_bundle("a-fifo", "fifo.tar"));
    apply(&s, &policy_bundle("a-link", "link.tar"));
    apply(&s, &policy_bundle("baseline", "baseline.tar"));
    let (status, _, message) = wait_ready(&s, "baseline");
    assert_eq!(status, "True", "{message}");
    let refused = |name: &str, reason: &str, says: &[&str]| {
        let (status, got, message) = wait_ready(&s, name);
        assert_eq!(
            (status.as_str(), got.as_str()),
            ("False", reason),
            "{message}"
        );
        for part in says {
            assert!(message.contains(part), "{name}: {message}");
        }
    };
    refused(
        "a-fifo",
        "InvalidBundle",
        &["fifo.tar", "not a regular file"],
    );
    refused(
        "a-link",
        "PathNotAllowed",
        &["link.tar", "symlinks resolved", "--policy-bundle-dir"],
    );
    refused("a-allowed", "InvalidBundle", &["not a tarball"]);

    let all = s.ok(&["get", "pb", "-o", "json"]);
    assert!(!all.contains(SECRET), "{all}");
    assert!(!s.log().contains(SECRET), "the secret is in the log");
}
