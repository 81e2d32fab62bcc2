//! Kubeconfig files: the admin kubeconfig written into the data directory.

use anyhow::Result;
use base64::Engine;
use std::path::Path;

/// A kubeconfig (as YAML text) for `user` with an embedded client certificate.
pub fn render(server_url: &str, ca_pem: &str, user: &str, cert_pem: &str, key_pem: &str) -> String {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s.as_bytes());
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: capstan\n  cluster:\n    server: {server_url}\n    certificate-authority-data: {ca}\nusers:\n- name: {user}\n  user:\n    client-certificate-data: {cert}\n    client-key-data: {key}\ncontexts:\n- name: {user}@capstan\n  context:\n    cluster: capstan\n    user: {user}\ncurrent-context: {user}@capstan\npreferences: {{}}\n",
        ca = b64(ca_pem),
        cert = b64(cert_pem),
        key = b64(key_pem),
    )
}

/// Writes `<data-dir>/admin.kubeconfig` for the admin certificate.
pub fn write_admin(path: &Path, server_url: &str, pki: &crate::pki::PkiPaths) -> Result<()> {
    let ca = std::fs::read_to_string(&pki.ca_cert)?;
    let cert = std::fs::read_to_string(&pki.admin_cert)?;
    let key = std::fs::read_to_string(&pki.admin_key)?;
    let text = render(server_url, &ca, "capstan-admin", &cert, &key);
    std::fs::write(path, text)?;
    Ok(())
}
