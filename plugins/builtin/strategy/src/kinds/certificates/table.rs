//! The printers of CertificateSigningRequests (kube's printers.go, wide cells included).

use crate::table::access::{age, human_duration, list, name, non_empty, text};
use crate::table::columns;
use crate::table::Column;
use chrono::{DateTime, Utc};
use serde_json::Value;

pub(crate) fn certificate_signing_request_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::AGE,
        columns::text("SignerName", "Signer requested for the certificate."),
        columns::text("Requestor", "User that created the request."),
        columns::text("RequestedDuration", "Requested certificate lifetime."),
        columns::text("Condition", "Approval state of the request."),
    ]
}

fn csr_condition(obj: &Value) -> String {
    let has = |kind: &str| {
        list(obj, "/status/conditions")
            .iter()
            .any(|c| text(c, "/type") == kind)
    };
    let mut status = if has("Denied") {
        "Denied"
    } else if has("Approved") {
        "Approved"
    } else {
        "Pending"
    }
    .to_string();
    if has("Failed") {
        status.push_str(",Failed");
    }
    if non_empty(obj, "/status/certificate").is_some() {
        status.push_str(",Issued");
    }
    status
}

pub(crate) fn certificate_signing_request_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let duration = match obj
        .pointer("/spec/expirationSeconds")
        .and_then(Value::as_i64)
    {
        Some(secs) => human_duration(chrono::Duration::seconds(secs)),
        None => "<none>".to_string(),
    };
    vec![
        name(obj),
        age(obj, now),
        Value::from(non_empty(obj, "/spec/signerName").unwrap_or("<none>")),
        Value::from(text(obj, "/spec/username")),
        Value::from(duration),
        Value::from(csr_condition(obj)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::scheduling::table::priority_class_row;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        crate::table::at("2024-01-01T00:00:30Z")
    }

    #[test]
    fn csr_and_priority_class() {
        let csr = json!({"spec": {"signerName": "kubernetes.io/kube-apiserver-client",
                                  "username": "alice", "expirationSeconds": 86400},
                         "status": {"conditions": [{"type": "Approved"}], "certificate": "Zm9v"}});
        let cells = certificate_signing_request_row(&csr, now());
        assert_eq!(
            cells[3..6],
            [json!("alice"), json!("24h"), json!("Approved,Issued")]
        );
        let pc = json!({"value": 1000, "globalDefault": true});
        assert_eq!(
            priority_class_row(&pc, now())[1..3],
            [json!(1000), json!(true)]
        );
    }
}
