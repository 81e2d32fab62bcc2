//! CertificateSigningRequests (certificates.k8s.io/v1): kube's strategy
//! (who asked, what each write may change, condition timestamps) and
//! validation, and the parsing of the requests the signer signs.

pub mod pki;

pub mod request;
pub mod rules;

/// The signer Capstan runs: client certificates for this API server.
pub const KUBE_APISERVER_CLIENT: &str = "kubernetes.io/kube-apiserver-client";
