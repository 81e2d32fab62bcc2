//! One API server to send the golden requests to: Capstan (its admin
//! client certificate) or the real kube-apiserver (a bearer token), both
//! through curl, as the other end-to-end tests talk HTTPS.

use super::request::Request;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where a server is and how to authenticate to it.
pub struct Endpoint {
    base: String,
    auth: Vec<String>,
    scratch: PathBuf,
}

/// A server's answer: status code and body (JSON, or the text as a string).
pub struct Answer {
    pub code: u16,
    pub body: Value,
}

impl Endpoint {
    /// Capstan, as a test's `Server` started it.
    pub fn capstan(server: &crate::support::Server) -> Endpoint {
        let pki = |f: &str| server.pki(f).display().to_string();
        let auth = ["--cacert", &pki("ca.crt"), "--cert", &pki("admin.crt")];
        let mut auth: Vec<String> = auth.iter().map(|s| s.to_string()).collect();
        auth.extend(["--key".into(), pki("admin.key")]);
        Endpoint {
            base: server.url(""),
            auth,
            scratch: server.dir.path().to_path_buf(),
        }
    }

    /// The reference server of `../shared/kube-oracle` (its PKI and token).
    pub fn kube(url: &str, ca: &Path, token: &str, scratch: &Path) -> Endpoint {
        let auth = vec![
            "--cacert".into(),
            ca.display().to_string(),
            "-H".into(),
            format!("Authorization: Bearer {token}"),
        ];
        Endpoint {
            base: url.trim_end_matches('/').to_string(),
            auth,
            scratch: scratch.to_path_buf(),
        }
    }

    /// Sends `request`; a transport failure panics (the server is gone).
    pub fn send(&self, request: &Request) -> Answer {
        let body_file = self.scratch.join("golden-body");
        let mut cmd = Command::new("curl");
        cmd.args(["-sS", "-X", &request.method, "-w", "\n%{http_code}"]);
        cmd.args(&self.auth);
        cmd.args(["-H", &format!("Accept: {}", request.accept())]);
        if let Some(body) = request.body_bytes() {
            std::fs::write(&body_file, body).expect("write the request body");
            cmd.args(["-H", &format!("Content-Type: {}", request.content_type())]);
            cmd.arg("--data-binary")
                .arg(format!("@{}", body_file.display()));
        }
        cmd.arg(format!("{}{}", self.base, request.path));
        let out = cmd.output().expect("run curl");
        assert!(
            out.status.success(),
            "curl {}: {}",
            request.path,
            String::from_utf8_lossy(&out.stderr)
        );
        parse(&out.stdout)
    }
}

/// curl's output: the body, a newline, the status code.
fn parse(stdout: &[u8]) -> Answer {
    let text = String::from_utf8_lossy(stdout);
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
    let body = serde_json::from_str(body).unwrap_or_else(|_| Value::String(body.to_string()));
    Answer {
        code: code.trim().parse().unwrap_or(0),
        body,
    }
}
