//! The `certificates.k8s.io` group's kinds.

use super::{KindRules, Printer};
use crate::table::{columns, config as rows};

pub(super) struct CertificateSigningRequests;

impl KindRules for CertificateSigningRequests {
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            columns::certificate_signing_request,
            rows::certificate_signing_request_row,
        ))
    }
}
