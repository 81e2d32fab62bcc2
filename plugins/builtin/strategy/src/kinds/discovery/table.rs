//! The printers of EndpointSlices (kube's printers.go, wide cells included).

use crate::table::access::{age, list, name, opt_int, text};
use crate::table::columns;
use crate::table::network::list_with_more;
use crate::table::Column;
use chrono::{DateTime, Utc};
use serde_json::Value;

/// EndpointSlices.
pub(crate) fn endpoint_slice_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text("AddressType", "Type of the addresses in the slice."),
        columns::text("Ports", "Ports exposed by the endpoints."),
        columns::text("Endpoints", "Endpoint addresses."),
        columns::AGE,
    ]
}

fn slice_ports(obj: &Value) -> String {
    let ports = list(obj, "/ports");
    let shown = ports
        .iter()
        .map(|p| match opt_int(p, "/port") {
            Some(n) => n.to_string(),
            None => p
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("*")
                .to_string(),
        })
        .collect();
    list_with_more(shown, ports.len(), "<unset>")
}

fn slice_endpoints(obj: &Value) -> String {
    let addrs: Vec<String> = list(obj, "/endpoints")
        .iter()
        .flat_map(|e| list(e, "/addresses").iter())
        .map(|a| a.as_str().unwrap_or("").to_string())
        .collect();
    let total = addrs.len();
    list_with_more(addrs, total, "<unset>")
}

pub(crate) fn endpoint_slice_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    vec![
        name(obj),
        Value::from(text(obj, "/addressType")),
        Value::from(slice_ports(obj)),
        Value::from(slice_endpoints(obj)),
        age(obj, now),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        crate::table::at("2024-01-01T00:10:00Z")
    }

    #[test]
    fn endpoint_slices() {
        let s = json!({"addressType": "IPv4", "ports": [{"port": 80}, {"name": "x"}],
                       "endpoints": [{"addresses": ["10.0.0.1"]}]});
        let cells = endpoint_slice_row(&s, now());
        assert_eq!(
            cells[1..4],
            [json!("IPv4"), json!("80,x"), json!("10.0.0.1")]
        );
        assert_eq!(slice_endpoints(&json!({})), "<unset>");
    }
}
