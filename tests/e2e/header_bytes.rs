//! Impersonate-* and Authorization headers carrying non-ASCII bytes (sent
//! raw by curl): read as kube-apiserver reads them when they are UTF-8,
//! refused when they are not, never skipped (a skipped Impersonate-User
//! would run the request as the impersonator itself; a skipped bearer token
//! as system:anonymous).

use crate::support::{stdout, Server};
use serde_json::Value;
use std::process::Command;

const PODS: &str = "/api/v1/namespaces/default/pods";

/// The status code and Status body of a GET of `path` with `headers` (raw
/// bytes, one header per line), as the admin or, without `admin`, with no
/// client certificate.
fn get_with(s: &Server, admin: bool, headers: &[u8], path: &str) -> (u16, Value) {
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), headers).expect("write headers");
    let header_arg = format!("@{}", file.path().display());
    let args = ["-H", header_arg.as_str(), "-w", "\n%{http_code}"];
    let out = if admin {
        s.curl(&[&args[..], &[s.url(path).as_str()]].concat())
    } else {
        Command::new("curl")
            .args(["-sS", "--cacert"])
            .arg(s.pki("ca.crt"))
            .args(args)
            .arg(s.url(path))
            .output()
            .expect("curl")
    };
    let text = stdout(&out);
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
    let status = serde_json::from_str(body).unwrap_or(Value::String(body.to_string()));
    (code.trim().parse().unwrap_or(0), status)
}

fn code_and_reason(answer: &(u16, Value)) -> (u16, &str) {
    (answer.0, answer.1["reason"].as_str().unwrap_or_default())
}

#[test]
fn impersonating_a_non_ascii_user_acts_as_that_user_or_fails_never_as_the_impersonator() {
    let s = Server::start();
    // UTF-8 "josé": kube impersonates josé, who may not list pods.
    let utf8 = get_with(&s, true, "Impersonate-User: josé\n".as_bytes(), PODS);
    assert_eq!(code_and_reason(&utf8), (403, "Forbidden"), "{}", utf8.1);
    assert_eq!(
        utf8.1["message"],
        r#"pods is forbidden: User "josé" cannot list resource "pods" in API group "" in the namespace "default""#
    );
    // Latin-1 "jos\xe9" names no one: 400, not the admin's own rights.
    let latin1 = get_with(&s, true, b"Impersonate-User: jos\xe9\n", PODS);
    assert_eq!(
        code_and_reason(&latin1),
        (400, "BadRequest"),
        "{}",
        latin1.1
    );
    assert_eq!(
        latin1.1["message"],
        "invalid Impersonate-User header: the value is not valid UTF-8"
    );
    let group = get_with(
        &s,
        true,
        b"Impersonate-User: jane\nImpersonate-Group: \xff\n",
        PODS,
    );
    assert_eq!(code_and_reason(&group), (400, "BadRequest"), "{}", group.1);
    // A group without a user is kube's 500, readable or not.
    let no_user = get_with(&s, true, b"Impersonate-Group: \xe9\n", PODS);
    assert_eq!(
        code_and_reason(&no_user),
        (500, "InternalError"),
        "{}",
        no_user.1
    );
}

#[test]
fn a_non_ascii_bearer_token_is_401_not_anonymous() {
    let s = Server::start();
    let anonymous = get_with(&s, false, b"X-Nothing: 1\n", PODS);
    assert_eq!(
        code_and_reason(&anonymous),
        (403, "Forbidden"),
        "{}",
        anonymous.1
    );
    for header in [
        &b"Authorization: Bearer t\xf6ken\n"[..],
        "Authorization: Bearer tökén\n".as_bytes(),
    ] {
        let answer = get_with(&s, false, header, PODS);
        assert_eq!(
            code_and_reason(&answer),
            (401, "Unauthorized"),
            "{}",
            answer.1
        );
    }
}
