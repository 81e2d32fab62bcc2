//! The server's certificates: a CA, a serving certificate and an admin client
//! certificate (group system:masters), created on first start in the data
//! directory and reused afterwards.

use anyhow::{Context, Result};
use rcgen::{
    BasicConstraints, Certificate, CertificateParams, DistinguishedName, DnType,
    ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose, SanType,
};
use std::path::{Path, PathBuf};

const CA_COMMON_NAME: &str = "capstan-ca";

/// Paths of the PEM files in a data directory.
#[derive(Clone, Debug)]
pub struct PkiPaths {
    pub ca_cert: PathBuf,
    pub ca_key: PathBuf,
    pub serving_cert: PathBuf,
    pub serving_key: PathBuf,
    /// The serving certificate's host names and addresses, one per line.
    pub serving_hosts: PathBuf,
    pub admin_cert: PathBuf,
    pub admin_key: PathBuf,
}

impl PkiPaths {
    pub fn in_dir(dir: &Path) -> Self {
        let pki = dir.join("pki");
        PkiPaths {
            ca_cert: pki.join("ca.crt"),
            ca_key: pki.join("ca.key"),
            serving_cert: pki.join("serving.crt"),
            serving_key: pki.join("serving.key"),
            serving_hosts: pki.join("serving.hosts"),
            admin_cert: pki.join("admin.crt"),
            admin_key: pki.join("admin.key"),
        }
    }
}

/// The CA, able to sign further certificates.
pub struct Authority {
    key: KeyPair,
    cert: Certificate,
}

fn ca_params() -> Result<CertificateParams> {
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, CA_COMMON_NAME);
    params.distinguished_name = dn;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    Ok(params)
}

impl Authority {
    /// Loads the CA from `paths`, creating it when absent.
    pub fn load_or_create(paths: &PkiPaths) -> Result<Self> {
        let params = ca_params()?;
        if paths.ca_key.exists() && paths.ca_cert.exists() {
            let pem = std::fs::read_to_string(&paths.ca_key).context("reading CA key")?;
            let key = KeyPair::from_pem(&pem).context("parsing CA key")?;
            // Re-deriving the certificate from the same name and key gives an issuer
            // that signs exactly as the stored CA certificate verifies.
            let cert = params.self_signed(&key)?;
            return Ok(Authority { key, cert });
        }
        let key = KeyPair::generate()?;
        let cert = params.self_signed(&key)?;
        write_private(&paths.ca_key, &key.serialize_pem())?;
        std::fs::write(&paths.ca_cert, cert.pem())?;
        Ok(Authority { key, cert })
    }

    /// Signs a client certificate for `user` in `groups`; returns (cert PEM, key PEM).
    pub fn client_cert(&self, user: &str, groups: &[String]) -> Result<(String, String)> {
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        let mut dn = DistinguishedName::new();
        for g in groups {
            dn.push(DnType::OrganizationName, g.as_str());
        }
        dn.push(DnType::CommonName, user);
        params.distinguished_name = dn;
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let key = KeyPair::generate()?;
        let cert = params.signed_by(&key, &self.cert, &self.key)?;
        Ok((cert.pem(), key.serialize_pem()))
    }

    /// Signs a serving certificate for the given DNS names and IP addresses.
    pub fn serving_cert(&self, hosts: &[String]) -> Result<(String, String)> {
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, "capstan");
        params.distinguished_name = dn;
        params.subject_alt_names = hosts.iter().map(|h| san(h)).collect::<Result<_>>()?;
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let key = KeyPair::generate()?;
        let cert = params.signed_by(&key, &self.cert, &self.key)?;
        Ok((cert.pem(), key.serialize_pem()))
    }
}

/// The public key of a certificate request, as rcgen signs for it.
struct RequestedKey<'a>(&'a crate::certificates::request::Request);

impl rcgen::PublicKeyData for RequestedKey<'_> {
    fn der_bytes(&self) -> &[u8] {
        &self.0.public_key
    }

    fn algorithm(&self) -> &rcgen::SignatureAlgorithm {
        use crate::certificates::request::KeyKind;
        match self.0.key {
            KeyKind::EcdsaP256 => &rcgen::PKCS_ECDSA_P256_SHA256,
            KeyKind::EcdsaP384 => &rcgen::PKCS_ECDSA_P384_SHA384,
            KeyKind::Rsa => &rcgen::PKCS_RSA_SHA256,
            KeyKind::Ed25519 => &rcgen::PKCS_ED25519,
        }
    }
}

/// How a requested client certificate is issued.
pub struct ClientIssue {
    /// From now; the certificate is also valid from five minutes before
    /// (kube's signer backdates so clocks a little behind accept it).
    pub lifetime: std::time::Duration,
    pub key_encipherment: bool,
}

impl Authority {
    /// Signs a client certificate for a certificate request: its subject
    /// (common name and first organization: rcgen keeps one per attribute)
    /// and key, client auth usage.
    pub fn sign_request(
        &self,
        req: &crate::certificates::request::Request,
        issue: &ClientIssue,
    ) -> Result<String> {
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        let mut dn = DistinguishedName::new();
        if let Some(org) = req.organizations.first() {
            dn.push(DnType::OrganizationName, org.as_str());
        }
        dn.push(DnType::CommonName, req.common_name.as_str());
        params.distinguished_name = dn;
        let now = std::time::SystemTime::now();
        params.not_before = (now - std::time::Duration::from_secs(300)).into();
        params.not_after = (now + issue.lifetime).into();
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        if issue.key_encipherment {
            params.key_usages.push(KeyUsagePurpose::KeyEncipherment);
        }
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let cert = params.signed_by(&RequestedKey(req), &self.cert, &self.key)?;
        Ok(cert.pem())
    }
}

fn san(host: &str) -> Result<SanType> {
    Ok(match host.parse::<std::net::IpAddr>() {
        Ok(ip) => SanType::IpAddress(ip),
        Err(_) => SanType::DnsName(host.to_string().try_into()?),
    })
}

fn ensure_serving(ca: &Authority, paths: &PkiPaths, extra_hosts: &[String]) -> Result<()> {
    let exists = paths.serving_cert.exists() && paths.serving_key.exists();
    let mut hosts = match std::fs::read_to_string(&paths.serving_hosts) {
        Ok(text) => text.lines().map(str::to_string).collect(),
        Err(_) => vec!["127.0.0.1".into(), "::1".into(), "localhost".into()],
    };
    let missing: Vec<String> = extra_hosts
        .iter()
        .filter(|h| !hosts.contains(h))
        .cloned()
        .collect();
    if exists && missing.is_empty() {
        return Ok(());
    }
    hosts.extend(missing);
    let (cert, key) = ca.serving_cert(&hosts)?;
    write_private(&paths.serving_key, &key)?;
    replace_file(&paths.serving_cert, &cert)?;
    replace_file(&paths.serving_hosts, &(hosts.join("\n") + "\n"))?;
    tracing::info!(hosts = ?hosts, "issued the serving certificate");
    Ok(())
}

/// Writes `path` whole or not at all (a replica may be reading it).
fn replace_file(path: &Path, contents: &str) -> Result<()> {
    let temp = path.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&temp, contents).with_context(|| format!("writing {}", temp.display()))?;
    std::fs::rename(&temp, path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

fn write_private(path: &Path, contents: &str) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("writing {}", path.display()))?;
    f.write_all(contents.as_bytes())?;
    Ok(())
}

/// Ensures CA, serving and admin certificates exist under `dir`. The
/// serving certificate is issued again (keeping its earlier hosts) when
/// `extra_hosts` names a host it does not cover, e.g. a replica's address
/// or a load balancer's name given with `--tls-san`.
pub fn ensure(dir: &Path, extra_hosts: &[String]) -> Result<PkiPaths> {
    let paths = PkiPaths::in_dir(dir);
    if let Some(parent) = paths.ca_cert.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let ca = Authority::load_or_create(&paths)?;
    ensure_serving(&ca, &paths, extra_hosts)?;
    if !paths.admin_cert.exists() || !paths.admin_key.exists() {
        let (cert, key) = ca.client_cert("capstan-admin", &["system:masters".to_string()])?;
        std::fs::write(&paths.admin_cert, cert)?;
        write_private(&paths.admin_key, &key)?;
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_start_reuses_the_ca() {
        let dir = tempfile::tempdir().unwrap();
        let p1 = ensure(dir.path(), &[]).unwrap();
        let ca1 = std::fs::read(&p1.ca_cert).unwrap();
        let admin1 = std::fs::read(&p1.admin_cert).unwrap();
        let p2 = ensure(dir.path(), &[]).unwrap();
        assert_eq!(ca1, std::fs::read(&p2.ca_cert).unwrap());
        assert_eq!(admin1, std::fs::read(&p2.admin_cert).unwrap());
    }

    /// Whether a TLS client trusting the CA accepts the serving certificate for `host`.
    fn serves(paths: &PkiPaths, host: &str) -> bool {
        use rustls::client::danger::ServerCertVerifier;
        use rustls::pki_types::{pem::PemObject, CertificateDer, ServerName, UnixTime};
        let mut roots = rustls::RootCertStore::empty();
        for ca in CertificateDer::pem_file_iter(&paths.ca_cert).unwrap() {
            roots.add(ca.unwrap()).unwrap();
        }
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let verifier =
            rustls::client::WebPkiServerVerifier::builder_with_provider(roots.into(), provider)
                .build()
                .unwrap();
        let cert = CertificateDer::from_pem_file(&paths.serving_cert).unwrap();
        let name = ServerName::try_from(host.to_string()).unwrap();
        verifier
            .verify_server_cert(&cert, &[], &name, &[], UnixTime::now())
            .is_ok()
    }

    #[test]
    fn new_hosts_reissue_the_serving_certificate_keeping_the_old_ones() {
        let dir = tempfile::tempdir().unwrap();
        let first = ensure(dir.path(), &[]).unwrap();
        let cert1 = std::fs::read(&first.serving_cert).unwrap();
        assert!(!serves(&first, "api.example.com"));
        let again = ensure(dir.path(), &["127.0.0.1".into()]).unwrap();
        assert_eq!(
            cert1,
            std::fs::read(&again.serving_cert).unwrap(),
            "covered: kept"
        );
        let more = ensure(dir.path(), &["api.example.com".into(), "10.0.0.7".into()]).unwrap();
        assert_ne!(cert1, std::fs::read(&more.serving_cert).unwrap());
        for host in ["127.0.0.1", "localhost", "api.example.com", "10.0.0.7"] {
            assert!(serves(&more, host), "{host} is served");
        }
        assert!(!serves(&more, "other.example.com"));
    }
}
