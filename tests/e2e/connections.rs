//! Connections and overload: clients that connect and send nothing (or
//! half a request) are closed after the header timeout without holding up
//! anyone else; idle connections are closed; requests beyond the in-flight
//! limits get 429 with a Status and Retry-After; oversized headers and
//! HTTP/2 bodies get a Status, not a bare error or a stream reset.

use crate::support::{eventually, stdout, Server};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

const CLOSE_BOUND: Duration = Duration::from_secs(30);

/// `openssl s_client` connected to the server (no client certificate),
/// having sent `text` and keeping its input open.
fn tls_client(s: &Server, text: &str) -> Child {
    let mut child = Command::new("openssl")
        .args(["s_client", "-quiet", "-connect"])
        .arg(format!("127.0.0.1:{}", s.port))
        .arg("-CAfile")
        .arg(s.pki("ca.crt"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start openssl s_client");
    if let Some(input) = child.stdin.as_mut() {
        input.write_all(text.as_bytes()).expect("write to s_client");
    }
    child
}

/// Whether the server closed the client's connection (s_client exits then).
fn closed_by_server(child: &mut Child) -> bool {
    eventually(CLOSE_BOUND, || matches!(child.try_wait(), Ok(Some(_))))
}

/// curl as the holder of `token`, without the admin certificate.
fn curl_as(s: &Server, token: &str, args: &[&str]) -> Output {
    Command::new("curl")
        .args(["-sS", "--cacert"])
        .arg(s.pki("ca.crt"))
        .args(["-H", &format!("Authorization: Bearer {token}")])
        .args(args)
        .output()
        .expect("run curl")
}

/// (status code, body, response headers) of a curl run with `-D - -w`.
fn answer(out: &Output) -> (u16, Value, String) {
    let text = stdout(out);
    let (rest, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
    let (headers, body) = rest.split_once("\r\n\r\n").unwrap_or(("", rest));
    let body = serde_json::from_str(body).unwrap_or(Value::String(body.to_string()));
    (
        code.trim().parse().unwrap_or(0),
        body,
        headers.to_lowercase(),
    )
}

/// A token of a service account bound to cluster-admin: a user outside
/// system:masters, whom the in-flight limits apply to.
fn limited_user_token(s: &Server) -> String {
    s.ok(&["create", "serviceaccount", "loader"]);
    s.ok(&[
        "create",
        "clusterrolebinding",
        "loader",
        "--clusterrole=cluster-admin",
        "--serviceaccount=default:loader",
    ]);
    s.ok(&["create", "token", "loader"]).trim().to_string()
}

#[test]
fn silent_and_half_sent_connections_are_closed_without_blocking_others() {
    let s = Server::start_with(&["--read-header-timeout", "2s", "--idle-timeout", "3s"]);
    let mut tcp = std::net::TcpStream::connect(("127.0.0.1", s.port)).expect("connect");
    let mut silent = tls_client(&s, "");
    let mut half = tls_client(&s, "GET /readyz HTTP/1.1\r\nHost: capstan\r\nX-Slow: 1\r\n");
    let mut served = tls_client(&s, "GET /readyz HTTP/1.1\r\nHost: capstan\r\n\r\n");

    // Others are served while those wait.
    assert!(s.ok(&["get", "namespaces"]).contains("default"));

    tcp.set_read_timeout(Some(CLOSE_BOUND))
        .expect("read timeout");
    let mut buf = [0u8; 16];
    assert_eq!(
        tcp.read(&mut buf).ok(),
        Some(0),
        "raw TCP without a handshake stays open"
    );
    assert!(
        closed_by_server(&mut silent),
        "TLS without a request stays open"
    );
    assert!(closed_by_server(&mut half), "half-sent headers stay open");
    assert!(
        closed_by_server(&mut served),
        "an idle connection stays open"
    );
    let mut answered = String::new();
    if let Some(mut out) = served.stdout.take() {
        let _ = out.read_to_string(&mut answered);
    }
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
    assert!(s.ok(&["get", "namespaces"]).contains("default"));
}

#[test]
fn requests_beyond_the_inflight_limits_get_429_while_probes_and_watches_go_on() {
    // The two limits alone, as kube without API Priority and Fairness (with
    // it, a request beyond its level's seats waits in a queue first).
    let s = Server::start_with(&[
        "--enable-priority-and-fairness=false",
        "--max-requests-inflight",
        "1",
        "--max-mutating-requests-inflight",
        "1",
    ]);
    let token = limited_user_token(&s);
    let create = |name: &str| {
        let body =
            format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"}}}}"#);
        let args = [
            "-D",
            "-",
            "-w",
            "\n%{http_code}",
            "-X",
            "POST",
            "-H",
            "Content-Type: application/json",
            "--data-binary",
            &body,
            &s.url("/api/v1/namespaces/default/configmaps"),
        ];
        answer(&curl_as(&s, &token, &args))
    };
    // A create whose body never finishes holds the only mutating slot.
    let stalled = format!(
        "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: capstan\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{{"
    );
    let mut holder = tls_client(&s, &stalled);
    let mut refused = (0, Value::Null, String::new());
    let mut attempt = 0;
    assert!(
        eventually(CLOSE_BOUND, || {
            // A new name each time: an attempt that beat the holder to the
            // slot creates its object, and a retry must not be a 409.
            attempt += 1;
            refused = create(&format!("shed-{attempt}"));
            if refused.0 == 201 {
                // The slot was free: the holder may have been refused
                // while an attempt held it. Start it again, give it a head start.
                let _ = holder.kill();
                let _ = holder.wait();
                holder = tls_client(&s, &stalled);
                std::thread::sleep(Duration::from_millis(300));
            }
            refused.0 == 429
        }),
        "never refused: {refused:?}"
    );
    let (_, status, headers) = &refused;
    assert_eq!(status["kind"], "Status", "{status}");
    assert_eq!(status["reason"], "TooManyRequests");
    assert_eq!(status["code"], 429);
    assert_eq!(
        status["message"],
        "Too many requests, please try again later."
    );
    assert_eq!(status["details"]["retryAfterSeconds"], 1);
    assert!(headers.contains("retry-after: 1"), "{headers}");

    // Reads have their own pool; probes and system:masters are never refused.
    let (code, _, _) = answer(&curl_as(
        &s,
        &token,
        &[
            "-D",
            "-",
            "-w",
            "\n%{http_code}",
            &s.url("/api/v1/namespaces/default/configmaps"),
        ],
    ));
    assert_eq!(code, 200);
    let (code, _, _) = answer(&curl_as(
        &s,
        &token,
        &["-D", "-", "-w", "\n%{http_code}", &s.url("/readyz")],
    ));
    assert_eq!(code, 200);

    // A watch is not counted: with it open, the one read slot is still free.
    let mut watch = Command::new("curl")
        .args(["-sS", "-N", "--cacert"])
        .arg(s.pki("ca.crt"))
        .args(["-H", &format!("Authorization: Bearer {token}")])
        .arg(s.url("/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=60"))
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the watch");
    s.ok(&["create", "configmap", "by-admin"]);
    // The watch starts with what exists (kube-root-ca.crt), then the new one.
    let mut event = String::new();
    if let Some(out) = watch.stdout.take() {
        let mut lines = BufReader::new(out);
        for _ in 0..10 {
            event.clear();
            if lines.read_line(&mut event).unwrap_or(0) == 0 || event.contains("by-admin") {
                break;
            }
        }
    }
    assert!(event.contains("by-admin"), "{event}");
    let (code, _, _) = answer(&curl_as(
        &s,
        &token,
        &[
            "-D",
            "-",
            "-w",
            "\n%{http_code}",
            &s.url("/api/v1/namespaces/default/configmaps/by-admin"),
        ],
    ));
    assert_eq!(code, 200);
    let _ = watch.kill();
    let _ = watch.wait();

    // Once the holder goes, the slot is free again.
    let _ = holder.kill();
    let _ = holder.wait();
    let mut created = (0, Value::Null, String::new());
    assert!(
        eventually(CLOSE_BOUND, || {
            created = create("after");
            created.0 == 201
        }),
        "{created:?}"
    );
}

#[test]
fn more_than_100_headers_get_431_with_a_status() {
    let s = Server::start();
    let headers: Vec<String> = (0..101).map(|i| format!("X-Extra-{i}: v")).collect();
    for version in ["--http1.1", "--http2"] {
        let mut args = vec![version, "-w", "\n%{http_code}"];
        for h in &headers {
            args.extend(["-H", h.as_str()]);
        }
        let url = s.url("/api/v1/namespaces");
        args.push(&url);
        let out = s.curl(&args);
        let text = stdout(&out);
        let (body, code) = text.rsplit_once('\n').unwrap_or(("", ""));
        assert_eq!(code, "431", "{version}: {text}");
        let status: Value = serde_json::from_str(body).unwrap_or_default();
        assert_eq!(status["kind"], "Status", "{version}: {body}");
        assert_eq!(status["code"], 431);
    }
    let fine: Vec<String> = (0..50).map(|i| format!("X-Extra-{i}: v")).collect();
    let mut args = vec!["-o", "/dev/null", "-w", "%{http_code}"];
    for h in &fine {
        args.extend(["-H", h.as_str()]);
    }
    let url = s.url("/api/v1/namespaces");
    args.push(&url);
    assert_eq!(stdout(&s.curl(&args)), "200");
}

#[test]
fn an_http2_body_over_the_limit_gets_413_not_a_reset() {
    let s = Server::start();
    let big = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"big"}},"data":{{"k":"{}"}}}}"#,
        "x".repeat(4 * 1024 * 1024)
    );
    let file = s.dir.path().join("big.json");
    std::fs::write(&file, big).expect("write body");
    let data = format!("@{}", file.display());
    let url = s.url("/api/v1/namespaces/default/configmaps");
    let out = s.curl(&[
        "--http2",
        "-X",
        "POST",
        "-H",
        "Content-Type: application/json",
        "--data-binary",
        &data,
        "-w",
        "\n%{http_code} %{http_version}",
        &url,
    ]);
    assert!(out.status.success(), "curl failed: {out:?}");
    let text = stdout(&out);
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", ""));
    assert_eq!(code, "413 2", "{text}");
    let status: Value = serde_json::from_str(body).unwrap_or_default();
    assert_eq!(status["reason"], "RequestEntityTooLarge", "{body}");
    assert!(s.fails(&["get", "configmap", "big"]).contains("NotFound"));
}

#[test]
fn a_request_that_outlives_the_request_timeout_gets_504_and_frees_its_slot() {
    let s = Server::start_with(&[
        "--request-timeout",
        "2s",
        "--max-mutating-requests-inflight",
        "1",
    ]);
    let token = limited_user_token(&s);
    // A create whose body never finishes: once the timeout passes it is
    // answered with kube's 504, and its in-flight slot is free again.
    let stalled = format!(
        "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: capstan\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{{"
    );
    let mut stalled = tls_client(&s, &stalled);
    let mut answer_text = String::new();
    if let Some(out) = stalled.stdout.take() {
        let mut lines = BufReader::new(out);
        while lines.read_line(&mut answer_text).unwrap_or(0) > 0 {
            if answer_text.contains("\"code\":504") {
                break;
            }
        }
    }
    assert!(answer_text.starts_with("HTTP/1.1 504"), "{answer_text}");
    assert!(
        answer_text.contains("request did not complete within requested timeout"),
        "{answer_text}"
    );
    let _ = stalled.kill();
    let _ = stalled.wait();
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"after-timeout"}}"#;
    let (code, created, _) = answer(&curl_as(
        &s,
        &token,
        &[
            "-D",
            "-",
            "-w",
            "\n%{http_code}",
            "-X",
            "POST",
            "-H",
            "Content-Type: application/json",
            "--data-binary",
            body,
            &s.url("/api/v1/namespaces/default/configmaps"),
        ],
    ));
    assert_eq!(code, 201, "{created}");
    // A watch is long-running: the timeout does not apply to it.
    let watch = curl_as(
        &s,
        &token,
        &[&s.url("/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=4")],
    );
    assert!(
        stdout(&watch).contains("after-timeout"),
        "{}",
        stdout(&watch)
    );
    assert!(
        watch.status.success(),
        "the watch ran its 4 s, past the 2 s timeout"
    );
}
