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

fn san(host: &str) -> Result<SanType> {
    Ok(match host.parse::<std::net::IpAddr>() {
        Ok(ip) => SanType::IpAddress(ip),
        Err(_) => SanType::DnsName(host.to_string().try_into()?),
    })
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

/// Ensures CA, serving and admin certificates exist under `dir`.
/// `extra_hosts` are added to the serving certificate's SANs on creation.
pub fn ensure(dir: &Path, extra_hosts: &[String]) -> Result<PkiPaths> {
    let paths = PkiPaths::in_dir(dir);
    if let Some(parent) = paths.ca_cert.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let ca = Authority::load_or_create(&paths)?;
    if !paths.serving_cert.exists() || !paths.serving_key.exists() {
        let mut hosts = vec![
            "127.0.0.1".to_string(),
            "::1".to_string(),
            "localhost".to_string(),
        ];
        for h in extra_hosts {
            if !hosts.contains(h) {
                hosts.push(h.clone());
            }
        }
        let (cert, key) = ca.serving_cert(&hosts)?;
        std::fs::write(&paths.serving_cert, cert)?;
        write_private(&paths.serving_key, &key)?;
    }
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
}
