//! The `certificates.k8s.io` group's kinds.

pub(crate) mod table;
use super::{KindRules, Printer};

pub(super) struct CertificateSigningRequests;

impl KindRules for CertificateSigningRequests {
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::certificate_signing_request_columns,
            table::certificate_signing_request_row,
        ))
    }
}
