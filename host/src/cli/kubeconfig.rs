//! Kubeconfig files: the admin kubeconfig written into the data directory,
//! and `capstan kubeconfig` for any other user.

use anyhow::{Context, Result};
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
pub fn write_admin(
    path: &Path,
    server_url: &str,
    pki: &crate::certificates::pki::PkiPaths,
) -> Result<()> {
    let ca = std::fs::read_to_string(&pki.ca_cert)?;
    let cert = std::fs::read_to_string(&pki.admin_cert)?;
    let key = std::fs::read_to_string(&pki.admin_key)?;
    let text = render(server_url, &ca, "capstan-admin", &cert, &key);
    std::fs::write(path, text)?;
    Ok(())
}

/// The name of the admin kubeconfig in a data directory.
pub const ADMIN_FILE: &str = "admin.kubeconfig";

/// A kubeconfig for `args.user` (groups = `args.groups`) with a new client
/// certificate from the data directory's CA, reaching the server that last
/// ran with that directory.
pub fn for_user(args: &crate::cli::KubeconfigArgs) -> Result<String> {
    let admin = args.data_dir.join(ADMIN_FILE);
    let text = std::fs::read_to_string(&admin).with_context(|| {
        format!(
            "reading {} (has `capstan serve` run with this data directory?)",
            admin.display()
        )
    })?;
    let server = server_url(&text).context("the admin kubeconfig names no server")?;
    let paths = crate::certificates::pki::PkiPaths::in_dir(&args.data_dir);
    let ca = crate::certificates::pki::Authority::load_or_create(&paths)?;
    let (cert, key) = ca.client_cert(&args.user, &args.groups)?;
    let ca_pem = std::fs::read_to_string(&paths.ca_cert)?;
    Ok(render(&server, &ca_pem, &args.user, &cert, &key))
}

/// The `server:` of the first cluster of a kubeconfig.
fn server_url(kubeconfig: &str) -> Option<String> {
    let doc: serde_json::Value = crate::apimachinery::yaml::config_from_str(kubeconfig).ok()?;
    let server = doc.get("clusters")?.get(0)?.get("cluster")?.get("server")?;
    server.as_str().map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_is_read_back_from_a_rendered_kubeconfig() {
        let text = render("https://127.0.0.1:6443", "ca", "bob", "cert", "key");
        assert_eq!(server_url(&text).as_deref(), Some("https://127.0.0.1:6443"));
        assert_eq!(server_url("nope: 1"), None);
    }
}
