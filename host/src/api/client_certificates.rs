//! `apiserver_client_certificate_expiration_seconds`, as kube-apiserver
//! observes it: for each request presenting a client certificate, the
//! seconds its certificate has left (the kube-prometheus alerts on soon
//! expiring client certificates read it). The expiry is read from the
//! certificate's DER (`notAfter` of its validity), once per connection.

use std::sync::Mutex;

use crate::telemetry::metrics::{Exposition, Histogram, MetricSource};

/// kube's buckets: from 0 to a year.
const BUCKETS: &[f64] = &[
    0.0, 1800.0, 3600.0, 7200.0, 21600.0, 43200.0, 86400.0, 172800.0, 345600.0, 604800.0,
    2592000.0, 7776000.0, 15552000.0, 31104000.0,
];
const NAME: &str = "apiserver_client_certificate_expiration_seconds";

pub struct Expirations(Mutex<Histogram>);

impl Default for Expirations {
    fn default() -> Self {
        Expirations(Mutex::new(Histogram::new(BUCKETS)))
    }
}

impl Expirations {
    /// A request's certificate expiring at `not_after` (Unix seconds).
    pub fn observe(&self, not_after: i64) {
        let left = not_after - chrono::Utc::now().timestamp();
        if let Ok(mut h) = self.0.lock() {
            h.observe(left.max(0) as f64);
        }
    }
}

impl MetricSource for Expirations {
    fn render(&self, out: &mut Exposition) {
        out.family(NAME, "histogram", "[ALPHA] Distribution of the remaining lifetime on the certificate used to authenticate a request.");
        if let Ok(h) = self.0.lock() {
            h.render(out, NAME, &[]);
        }
    }
}

/// One DER element: its tag and contents, and what follows it.
fn element(der: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = der.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = match first {
        n if n < 0x80 => (usize::from(n), rest),
        n => {
            let count = usize::from(n & 0x7f);
            if count == 0 || count > 4 || rest.len() < count {
                return None;
            }
            let len = rest[..count]
                .iter()
                .fold(0usize, |l, b| (l << 8) | usize::from(*b));
            (len, &rest[count..])
        }
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

/// The certificate's `notAfter`, in Unix seconds.
pub fn not_after(der: &[u8]) -> Option<i64> {
    let (_, certificate, _) = element(der)?;
    let (_, tbs, _) = element(certificate)?;
    let mut rest = tbs;
    // [0] version, when present.
    if rest.first() == Some(&0xa0) {
        rest = element(rest)?.2;
    }
    // serialNumber, signature, issuer, then validity.
    for _ in 0..3 {
        rest = element(rest)?.2;
    }
    let (_, validity, _) = element(rest)?;
    let (_, _, after_not_before) = element(validity)?;
    let (tag, time, _) = element(after_not_before)?;
    let text = std::str::from_utf8(time).ok()?;
    let full = match tag {
        0x17 => {
            // UTCTime: YYMMDDHHMMSSZ, 50–99 meaning 19xx.
            let year: i32 = text.get(..2)?.parse().ok()?;
            let century = if year >= 50 { "19" } else { "20" };
            format!("{century}{text}")
        }
        0x18 => text.to_string(),
        _ => return None,
    };
    let parsed =
        chrono::NaiveDateTime::parse_from_str(full.trim_end_matches('Z'), "%Y%m%d%H%M%S").ok()?;
    Some(parsed.and_utc().timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expiry_of_a_generated_certificate_is_read() {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["example".to_string()]).unwrap();
        params.not_after = rcgen::date_time_ymd(2031, 5, 17);
        let cert = params.self_signed(&key).unwrap();
        let expected = chrono::NaiveDate::from_ymd_opt(2031, 5, 17)
            .unwrap()
            .and_hms_opt(0, 0, 0)
            .unwrap()
            .and_utc()
            .timestamp();
        assert_eq!(not_after(cert.der()), Some(expected));
        assert_eq!(not_after(b"\x30\x03\x01"), None);
    }
}
