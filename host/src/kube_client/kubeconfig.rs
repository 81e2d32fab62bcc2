//! Kubeconfig reading for Capstan's own clients: picks the current (or a named) context, then
//! resolves its cluster and user into the bytes the TLS client needs. Inline `*-data`
//! fields win over file references; relative file paths are resolved against the
//! kubeconfig's own directory, as kubectl does.

use anyhow::{anyhow, bail, Context, Result};
use base64::Engine;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Everything a client needs to reach and authenticate to one API server.
#[derive(Debug, Clone)]
pub struct Kubeconfig {
    pub server: url::Url,
    pub ca_pem: Option<Vec<u8>>,
    pub insecure_skip_tls_verify: bool,
    pub tls_server_name: Option<String>,
    pub client_cert_pem: Option<Vec<u8>>,
    pub client_key_pem: Option<Vec<u8>>,
    /// Value of the `Authorization` header (bearer token or basic auth), if any.
    pub authorization: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
struct RawConfig {
    #[serde(default)]
    clusters: Vec<NamedCluster>,
    #[serde(default)]
    users: Vec<NamedUser>,
    #[serde(default)]
    contexts: Vec<NamedContext>,
    #[serde(default)]
    current_context: Option<String>,
}

#[derive(Deserialize)]
struct NamedCluster {
    name: String,
    #[serde(default)]
    cluster: RawCluster,
}

#[derive(Deserialize)]
struct NamedUser {
    name: String,
    #[serde(default)]
    user: RawUser,
}

#[derive(Deserialize)]
struct NamedContext {
    name: String,
    #[serde(default)]
    context: RawContext,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
struct RawCluster {
    server: Option<String>,
    certificate_authority: Option<String>,
    certificate_authority_data: Option<String>,
    #[serde(default)]
    insecure_skip_tls_verify: bool,
    tls_server_name: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
struct RawUser {
    client_certificate: Option<String>,
    client_certificate_data: Option<String>,
    client_key: Option<String>,
    client_key_data: Option<String>,
    token: Option<String>,
    #[serde(rename = "tokenFile")]
    token_file: Option<String>,
    username: Option<String>,
    password: Option<String>,
    exec: Option<serde_json::Value>,
    auth_provider: Option<serde_json::Value>,
}

#[derive(Deserialize, Default)]
struct RawContext {
    cluster: Option<String>,
    user: Option<String>,
}

/// Reads and resolves the kubeconfig at `path` (`context` overrides `current-context`).
pub fn load(path: &Path, context: Option<&str>) -> Result<Kubeconfig> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading kubeconfig {}", path.display()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    parse(&text, base, context).with_context(|| format!("kubeconfig {}", path.display()))
}

/// Resolves kubeconfig `text`; relative file references are taken from `base_dir`.
pub fn parse(text: &str, base_dir: &Path, context: Option<&str>) -> Result<Kubeconfig> {
    let raw: RawConfig = crate::apimachinery::yaml::config_from_str(text)
        .map_err(anyhow::Error::msg)
        .context("parsing YAML")?;
    let ctx = pick_context(&raw, context)?;
    let cluster_name = ctx.cluster.as_deref().unwrap_or_default();
    let cluster = raw
        .clusters
        .iter()
        .find(|c| c.name == cluster_name)
        .map(|c| &c.cluster)
        .ok_or_else(|| anyhow!("cluster {cluster_name:?} not found"))?;
    let user_name = ctx.user.as_deref().unwrap_or_default();
    let user = raw
        .users
        .iter()
        .find(|u| u.name == user_name)
        .map(|u| &u.user);
    let empty = RawUser::default();
    resolve(cluster, user.unwrap_or(&empty), base_dir)
}

fn pick_context<'a>(raw: &'a RawConfig, wanted: Option<&str>) -> Result<&'a RawContext> {
    let name = wanted.or(raw.current_context.as_deref().filter(|n| !n.is_empty()));
    match name {
        Some(name) => raw
            .contexts
            .iter()
            .find(|c| c.name == name)
            .map(|c| &c.context)
            .ok_or_else(|| anyhow!("context {name:?} not found")),
        None if raw.contexts.len() == 1 => Ok(&raw.contexts[0].context),
        None => bail!("current-context is not set; pass --context"),
    }
}

fn resolve(c: &RawCluster, u: &RawUser, base: &Path) -> Result<Kubeconfig> {
    let server = c
        .server
        .as_deref()
        .ok_or_else(|| anyhow!("cluster has no server"))?;
    let server = url::Url::parse(server).with_context(|| format!("server URL {server:?}"))?;
    if u.exec.is_some() || u.auth_provider.is_some() {
        tracing::warn!(
            "kubeconfig user uses exec/auth-provider credentials, which capstan-bench does not run"
        );
    }
    Ok(Kubeconfig {
        server,
        ca_pem: data_or_file(
            &c.certificate_authority_data,
            &c.certificate_authority,
            base,
        )
        .context("certificate-authority")?,
        insecure_skip_tls_verify: c.insecure_skip_tls_verify,
        tls_server_name: c.tls_server_name.clone(),
        client_cert_pem: data_or_file(&u.client_certificate_data, &u.client_certificate, base)
            .context("client-certificate")?,
        client_key_pem: data_or_file(&u.client_key_data, &u.client_key, base)
            .context("client-key")?,
        authorization: authorization(u, base)?,
    })
}

fn data_or_file(
    data: &Option<String>,
    file: &Option<String>,
    base: &Path,
) -> Result<Option<Vec<u8>>> {
    if let Some(data) = data.as_deref().filter(|d| !d.is_empty()) {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .context("invalid base64 in *-data field")?;
        return Ok(Some(bytes));
    }
    match file.as_deref().filter(|f| !f.is_empty()) {
        Some(file) => {
            let path = resolve_path(base, file);
            let bytes =
                std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            Ok(Some(bytes))
        }
        None => Ok(None),
    }
}

fn authorization(u: &RawUser, base: &Path) -> Result<Option<String>> {
    if let Some(token) = u.token.as_deref().filter(|t| !t.is_empty()) {
        return Ok(Some(format!("Bearer {}", token.trim())));
    }
    if let Some(file) = u.token_file.as_deref().filter(|f| !f.is_empty()) {
        let path = resolve_path(base, file);
        let token = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        return Ok(Some(format!("Bearer {}", token.trim())));
    }
    if let (Some(name), Some(password)) = (&u.username, &u.password) {
        let pair = base64::engine::general_purpose::STANDARD.encode(format!("{name}:{password}"));
        return Ok(Some(format!("Basic {pair}")));
    }
    Ok(None)
}

fn resolve_path(base: &Path, file: &str) -> PathBuf {
    let path = Path::new(file);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(s: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    fn two_contexts() -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: a\n  cluster:\n    server: https://127.0.0.1:6443\n    certificate-authority-data: {}\n- name: b\n  cluster:\n    server: https://kube.example:8443/prefix\n    insecure-skip-tls-verify: true\n    tls-server-name: api.internal\nusers:\n- name: admin\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\n- name: bot\n  user:\n    token: abc.def\ncontexts:\n- name: one\n  context:\n    cluster: a\n    user: admin\n- name: two\n  context:\n    cluster: b\n    user: bot\n    namespace: team\ncurrent-context: one\n",
            b64("CA PEM"),
            b64("CERT PEM"),
            b64("KEY PEM")
        )
    }

    #[test]
    fn current_context_selects_cluster_and_client_certificate() {
        let kc = parse(&two_contexts(), Path::new("/nonexistent"), None).unwrap();
        assert_eq!(kc.server.as_str(), "https://127.0.0.1:6443/");
        assert_eq!(kc.ca_pem.as_deref(), Some(&b"CA PEM"[..]));
        assert_eq!(kc.client_cert_pem.as_deref(), Some(&b"CERT PEM"[..]));
        assert_eq!(kc.client_key_pem.as_deref(), Some(&b"KEY PEM"[..]));
        assert!(!kc.insecure_skip_tls_verify);
        assert_eq!(kc.authorization, None);
    }

    #[test]
    fn explicit_context_selects_token_user_and_insecure_cluster() {
        let kc = parse(&two_contexts(), Path::new("/nonexistent"), Some("two")).unwrap();
        assert_eq!(kc.server.path(), "/prefix");
        assert!(kc.insecure_skip_tls_verify);
        assert_eq!(kc.tls_server_name.as_deref(), Some("api.internal"));
        assert_eq!(kc.authorization.as_deref(), Some("Bearer abc.def"));
        assert!(kc.ca_pem.is_none() && kc.client_cert_pem.is_none());
    }

    #[test]
    fn file_references_are_relative_to_the_kubeconfig() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ca.crt"), "FILE CA").unwrap();
        std::fs::create_dir(dir.path().join("certs")).unwrap();
        std::fs::write(dir.path().join("certs/tls.crt"), "FILE CERT").unwrap();
        std::fs::write(dir.path().join("certs/tls.key"), "FILE KEY").unwrap();
        let text = "clusters:\n- name: c\n  cluster:\n    server: https://localhost:1\n    certificate-authority: ca.crt\nusers:\n- name: u\n  user:\n    client-certificate: certs/tls.crt\n    client-key: certs/tls.key\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n";
        let path = dir.path().join("config");
        std::fs::write(&path, text).unwrap();
        let kc = load(&path, None).unwrap();
        assert_eq!(kc.ca_pem.as_deref(), Some(&b"FILE CA"[..]));
        assert_eq!(kc.client_cert_pem.as_deref(), Some(&b"FILE CERT"[..]));
        assert_eq!(kc.client_key_pem.as_deref(), Some(&b"FILE KEY"[..]));
    }

    #[test]
    fn token_file_and_basic_auth_become_authorization_headers() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tok"), "s3cret\n").unwrap();
        let text = "clusters:\n- name: c\n  cluster: {server: 'https://h:1'}\nusers:\n- name: u\n  user: {tokenFile: tok}\n- name: p\n  user: {username: ann, password: pw}\ncontexts:\n- name: t\n  context: {cluster: c, user: u}\n- name: b\n  context: {cluster: c, user: p}\n";
        let kc = parse(text, dir.path(), Some("t")).unwrap();
        assert_eq!(kc.authorization.as_deref(), Some("Bearer s3cret"));
        let kc = parse(text, dir.path(), Some("b")).unwrap();
        assert_eq!(kc.authorization, Some(format!("Basic {}", b64("ann:pw"))));
    }

    #[test]
    fn missing_pieces_are_reported_not_panicked() {
        let base = Path::new("/nonexistent");
        let err = parse(&two_contexts(), base, Some("three")).unwrap_err();
        assert!(
            err.to_string().contains("context \"three\" not found"),
            "{err}"
        );
        let no_current = "clusters: []\ncontexts:\n- name: a\n  context: {cluster: c}\n- name: b\n  context: {cluster: c}\n";
        let err = parse(no_current, base, None).unwrap_err();
        assert!(
            err.to_string().contains("current-context is not set"),
            "{err}"
        );
        let bad_b64 = "clusters:\n- name: c\n  cluster: {server: 'https://h:1', certificate-authority-data: '!!!'}\ncontexts:\n- name: a\n  context: {cluster: c}\n";
        let err = format!("{:#}", parse(bad_b64, base, None).unwrap_err());
        assert!(err.contains("base64"), "{err}");
        let missing_file = "clusters:\n- name: c\n  cluster: {server: 'https://h:1', certificate-authority: ca.pem}\ncontexts:\n- name: a\n  context: {cluster: c}\n";
        let err = format!("{:#}", parse(missing_file, base, None).unwrap_err());
        assert!(err.contains("/nonexistent/ca.pem"), "{err}");
    }
}
