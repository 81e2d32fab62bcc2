//! The puller against a hostile registry (`tests/e2e/hostile_registry.rs`):
//! every answer bounded, every redirect by the rules, a trickle cut by the
//! deadline, and a well-behaved registry (token auth, a blob on another
//! host) still pulled.

#[path = "../../../../../tests/e2e/hostile_registry.rs"]
mod hostile;

use super::transport::{Http, Redirects, MAX_SHOWN};
use super::{parse_reference, Access, Registry};
use crate::cosign::digest;
use crate::policy::bundles::{ARTIFACT_TYPE, COMPONENT_MEDIA_TYPE, CONFIG_MEDIA_TYPE};
use hostile::{HostileRegistry, Reply, Seen};
use std::time::{Duration, Instant};

const HUGE: u64 = 64 << 20;

fn registry(addrs: &[&HostileRegistry]) -> Registry {
    Registry::new(Access {
        insecure: addrs.iter().map(|r| r.addr.clone()).collect(),
        docker_config: false,
    })
}

async fn pull_error(fake: &HostileRegistry, within: Duration) -> String {
    let reference = parse_reference(&format!("{}/p:v1", fake.addr)).unwrap();
    let pulled = registry(&[fake]).pull_within(&reference, within).await;
    pulled.map(|_| ()).expect_err("the pull should fail")
}

#[tokio::test]
async fn a_huge_manifest_is_refused_past_the_bound_whether_declared_or_not() {
    for declared in [true, false] {
        let fake = HostileRegistry::start("127.0.0.1", move |_| Reply::Huge {
            status: 200,
            len: HUGE,
            declared,
        });
        let e = pull_error(&fake, Duration::from_secs(60)).await;
        assert!(e.contains("is more than 1048576 bytes"), "{e}");
    }
}

#[tokio::test]
async fn a_huge_error_body_becomes_a_short_message() {
    let fake = HostileRegistry::start("127.0.0.1", |_| Reply::Huge {
        status: 500,
        len: HUGE,
        declared: false,
    });
    let e = pull_error(&fake, Duration::from_secs(60)).await;
    assert!(e.contains("HTTP 500: xxxx"), "{e}");
    assert!(e.len() < 2 * MAX_SHOWN + 200, "{} bytes: {e}", e.len());
    let envelope = r#"{"errors":[{"code":"UNAUTHORIZED","message":"go away"}]}"#;
    let fake = HostileRegistry::start("127.0.0.1", move |_| Reply::status(403, envelope));
    let e = pull_error(&fake, Duration::from_secs(60)).await;
    assert!(e.contains("HTTP 403: UNAUTHORIZED: go away"), "{e}");
}

#[tokio::test]
async fn a_trickle_is_cut_by_the_pull_deadline() {
    let fake = HostileRegistry::start("127.0.0.1", |_| Reply::Trickle {
        len: 1000,
        every: Duration::from_millis(500),
    });
    let started = Instant::now();
    let e = pull_error(&fake, Duration::from_secs(2)).await;
    assert!(e.contains("the pull did not finish within 2s"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[tokio::test]
async fn manifests_and_tokens_do_not_follow_a_redirect_to_another_host() {
    let elsewhere = HostileRegistry::start("127.0.0.2", |_| Reply::ok(b"{}"));
    let target = format!("http://{}/v2/p/manifests/v1", elsewhere.addr);
    let fake = HostileRegistry::start("127.0.0.1", move |_| Reply::Redirect(target.clone()));
    let reference = parse_reference(&format!("{}/p:v1", fake.addr)).unwrap();
    let e = registry(&[&fake, &elsewhere])
        .pull(&reference)
        .await
        .map(|_| ())
        .unwrap_err();
    assert!(e.contains("redirected to another host"), "{e}");
    assert!(elsewhere.seen().is_empty(), "{:?}", elsewhere.seen());
}

#[tokio::test]
async fn redirects_are_few_and_never_downgrade_to_plain_http() {
    let fake = HostileRegistry::start("127.0.0.1", |s: &Seen| {
        Reply::Redirect(format!("{}x", s.path))
    });
    let e = redirected_get(&fake).await;
    assert!(e.contains("more than 3 redirects"), "{e}");
    assert_eq!(fake.seen().len(), 4);
    let plain = HostileRegistry::start("127.0.0.2", |_| Reply::ok(b"x"));
    let to_plain = format!("http://{}/blob", plain.addr);
    let fake = HostileRegistry::start("127.0.0.1", move |_| Reply::Redirect(to_plain.clone()));
    let e = redirected_get(&fake).await;
    assert!(e.contains("which is not HTTPS"), "{e}");
    assert!(plain.seen().is_empty());
}

/// The error of a GET from `fake` (plain HTTP allowed) that may follow redirects anywhere.
async fn redirected_get(fake: &HostileRegistry) -> String {
    let http = Http {
        insecure: vec![fake.addr.clone()],
    };
    let url = url::Url::parse(&format!("http://{}/a", fake.addr)).unwrap();
    http.get(&url, "*/*", None, Redirects::AnyHost)
        .await
        .err()
        .unwrap()
}

/// A bundle's manifest, config and one layer.
fn bundle() -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let (config, layer) = (b"{}".to_vec(), b"\0asm component".to_vec());
    let descriptor = |media: &str, bytes: &[u8]| serde_json::json!({"mediaType": media, "digest": digest(bytes), "size": bytes.len()});
    let manifest = serde_json::json!({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "artifactType": ARTIFACT_TYPE,
        "config": descriptor(CONFIG_MEDIA_TYPE, &config),
        "layers": [descriptor(COMPONENT_MEDIA_TYPE, &layer)],
    });
    (serde_json::to_vec(&manifest).unwrap(), config, layer)
}

#[tokio::test]
async fn a_registry_with_token_auth_and_blobs_on_another_host_is_pulled() {
    let (manifest, config, layer) = bundle();
    let (config_digest, layer_digest) = (digest(&config), digest(&layer));
    let layer_path = crate::policy::bundles::layout::blob_path(&layer_digest);
    let storage = HostileRegistry::start("127.0.0.2", move |_| Reply::ok(&layer));
    let storage_url = format!("http://{}/bucket/blob?signature=s", storage.addr);
    let tokens = HostileRegistry::start("127.0.0.3", |_| Reply::ok(br#"{"token":"t0k3n"}"#));
    let challenge = format!(
        "Bearer realm=\"http://{}/token\",service=\"fake\"",
        tokens.addr
    );
    let fake = HostileRegistry::start("127.0.0.1", move |s: &Seen| {
        if s.authorization.as_deref() != Some("Bearer t0k3n") {
            let headers = vec![("WWW-Authenticate".into(), challenge.clone())];
            return Reply::Bytes {
                status: 401,
                headers,
                body: Vec::new(),
            };
        }
        match s.path.as_str() {
            "/v2/p/manifests/v1" => Reply::ok(&manifest),
            p if p == format!("/v2/p/blobs/{config_digest}") => Reply::ok(&config),
            p if p == format!("/v2/p/blobs/{layer_digest}") => Reply::Redirect(storage_url.clone()),
            _ => Reply::status(
                404,
                r#"{"errors":[{"code":"MANIFEST_UNKNOWN","message":"no"}]}"#,
            ),
        }
    });
    let reference = parse_reference(&format!("{}/p:v1", fake.addr)).unwrap();
    let (pulled, files) = registry(&[&fake, &storage]).pull(&reference).await.unwrap();
    assert!(pulled.starts_with("sha256:"));
    assert!(files.contains_key(&layer_path));
    let token = &tokens.seen()[0].path;
    assert!(
        token.contains("scope=repository%3Ap%3Apull") && token.contains("service=fake"),
        "{token}"
    );
    // The storage backend got the download, without the registry's token.
    let fetched = storage.seen();
    assert_eq!(fetched.len(), 1);
    assert_eq!(fetched[0].authorization, None);
}

#[tokio::test]
async fn a_blob_longer_than_its_descriptor_or_a_huge_token_is_refused() {
    let (manifest, config, _) = bundle();
    let fake = HostileRegistry::start("127.0.0.1", move |s: &Seen| match s.path.as_str() {
        "/v2/p/manifests/v1" => Reply::ok(&manifest),
        p if p.ends_with(&digest(&config)) => Reply::ok(&config),
        _ => Reply::Huge {
            status: 200,
            len: HUGE,
            declared: false,
        },
    });
    let e = pull_error(&fake, Duration::from_secs(60)).await;
    assert!(e.contains("is more than 14 bytes"), "{e}");
    let tokens = HostileRegistry::start("127.0.0.3", |_| Reply::Huge {
        status: 200,
        len: HUGE,
        declared: false,
    });
    let challenge = format!("Bearer realm=\"http://{}/token\"", tokens.addr);
    let fake = HostileRegistry::start("127.0.0.1", move |_| Reply::Bytes {
        status: 401,
        headers: vec![("WWW-Authenticate".into(), challenge.clone())],
        body: Vec::new(),
    });
    let e = pull_error(&fake, Duration::from_secs(60)).await;
    assert!(e.contains("is more than 65536 bytes"), "{e}");
}
