//! kube's ResourceLocation for node, service and pod proxies.

use super::{Call, Target};
use crate::apimachinery::status::{ApiError, ApiResult};
use serde_json::Value;

/// kube's SplitSchemeNamePort: `name`, `name:port` or `scheme:name:port`.
pub fn split_scheme_name_port(id: &str) -> Option<(&str, &str, &str)> {
    let parts: Vec<&str> = id.split(':').collect();
    let (scheme, name, port) = match parts.as_slice() {
        [name] => ("", *name, ""),
        [name, port] => ("", *name, *port),
        [scheme, name, port] => (*scheme, *name, *port),
        _ => return None,
    };
    (!name.is_empty() && matches!(scheme, "" | "http" | "https")).then_some((scheme, name, port))
}

fn lookup<'a>(call: &Call<'a>, plural: &str) -> ApiResult<&'a crate::catalogue::ResourceInfo> {
    call.state
        .catalogue
        .builtin()
        .lookup("", "v1", plural)
        .ok_or_else(|| ApiError::internal(format!("{plural} are not served")))
}

/// kube-apiserver's default --kubelet-preferred-address-types.
const ADDRESS_TYPES: [&str; 5] = [
    "Hostname",
    "InternalDNS",
    "InternalIP",
    "ExternalDNS",
    "ExternalIP",
];

/// The node's preferred address, or kube's error naming the known ones.
pub fn preferred_address(node: &Value) -> Result<String, String> {
    let addresses = node
        .pointer("/status/addresses")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for kind in ADDRESS_TYPES {
        if let Some(a) = addresses.iter().find(|a| a["type"] == kind) {
            return Ok(a["address"].as_str().unwrap_or_default().to_string());
        }
    }
    let known: Vec<String> = addresses
        .iter()
        .map(|a| {
            format!(
                "{{{} {}}}",
                a["type"].as_str().unwrap_or_default(),
                a["address"].as_str().unwrap_or_default()
            )
        })
        .collect();
    Err(format!(
        "no preferred addresses found; known addresses: [{}]",
        known.join(" ")
    ))
}

/// The node's kubelet port (status.daemonEndpoints), 10250 by default.
pub fn kubelet_port(node: &Value) -> u16 {
    node.pointer("/status/daemonEndpoints/kubeletEndpoint/Port")
        .and_then(Value::as_u64)
        .and_then(|p| u16::try_from(p).ok())
        .filter(|p| *p > 0)
        .unwrap_or(10250)
}

/// kube's IsProxyableIP: no loopback or link-local targets.
fn proxyable(host: &str) -> bool {
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => !ip.is_loopback() && !ip.is_link_local(),
        Ok(std::net::IpAddr::V6(ip)) => !ip.is_loopback() && (ip.segments()[0] & 0xffc0) != 0xfe80,
        Err(_) => host != "localhost",
    }
}

pub async fn node(call: &Call<'_>) -> ApiResult<Target> {
    let id = call.name();
    let invalid = || ApiError::bad_request(format!("invalid node request {id:?}"));
    let (scheme, name, port) = split_scheme_name_port(id).ok_or_else(invalid)?;
    let obj = call
        .state
        .registry
        .get(lookup(call, "nodes")?, None, name)
        .await?;
    let host = preferred_address(&obj).map_err(ApiError::unknown)?;
    if !proxyable(&host) {
        return Err(ApiError::bad_request("address not allowed"));
    }
    let port = match port {
        "" => kubelet_port(&obj),
        p => p.parse().map_err(|_| invalid())?,
    };
    let scheme = if scheme.is_empty() { "https" } else { scheme };
    Ok(Target {
        scheme: scheme.to_string(),
        host,
        port,
    })
}

/// Go's IsGlobalUnicast: any unicast address but loopback, link-local,
/// unspecified and broadcast (private ranges included).
fn global_unicast(ip: std::net::IpAddr) -> bool {
    match ip {
        std::net::IpAddr::V4(ip) => {
            !(ip.is_loopback()
                || ip.is_link_local()
                || ip.is_unspecified()
                || ip.is_multicast()
                || ip.is_broadcast())
        }
        std::net::IpAddr::V6(ip) => {
            let link_local = (ip.segments()[0] & 0xffc0) == 0xfe80;
            !(ip.is_loopback() || link_local || ip.is_unspecified() || ip.is_multicast())
        }
    }
}

/// A port as Go's dialer reads it: a number, or a service name it knows.
fn port_number(port: &str, scheme: &str) -> Option<u16> {
    match port {
        "" if scheme == "https" => Some(443),
        "" | "http" => Some(80),
        "https" => Some(443),
        p => p.parse().ok(),
    }
}

/// The pod's port when the request names none: its first container port.
fn first_container_port(pod: &Value) -> String {
    let containers = pod.pointer("/spec/containers").and_then(Value::as_array);
    containers
        .into_iter()
        .flatten()
        .find_map(|c| c.pointer("/ports/0/containerPort").and_then(Value::as_i64))
        .map(|p| p.to_string())
        .unwrap_or_default()
}

/// kube's pod ResourceLocation: the pod's first IP, which must be global
/// unicast ("address not allowed" otherwise: a pod that has none yet).
pub async fn pod(call: &Call<'_>) -> ApiResult<Target> {
    let id = call.name();
    let invalid = || ApiError::bad_request(format!("invalid pod request {id:?}"));
    let (scheme, name, port) = split_scheme_name_port(id).ok_or_else(invalid)?;
    let pod = call
        .state
        .registry
        .get(call.res, call.namespace(), name)
        .await?;
    let port = match port {
        "" => first_container_port(&pod),
        p => p.to_string(),
    };
    let ip = pod
        .pointer("/status/podIPs/0/ip")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let allowed = ip.parse().is_ok_and(global_unicast);
    if !allowed {
        return Err(ApiError::bad_request("address not allowed"));
    }
    let scheme = if scheme.is_empty() { "http" } else { scheme };
    let port = port_number(&port, scheme).ok_or_else(invalid)?;
    Ok(Target {
        scheme: scheme.to_string(),
        host: ip.to_string(),
        port,
    })
}

pub async fn service(call: &Call<'_>) -> ApiResult<Target> {
    let id = call.name();
    let (scheme, name, port) = split_scheme_name_port(id)
        .ok_or_else(|| ApiError::bad_request(format!("invalid service request {id:?}")))?;
    let ns = call.namespace();
    let mut port_name = port.to_string();
    if let Ok(number) = port.parse::<i64>() {
        let svc = call
            .state
            .registry
            .get(lookup(call, "services")?, ns, name)
            .await?;
        let ports = svc
            .pointer("/spec/ports")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let found = ports.iter().find(|p| p["port"].as_i64() == Some(number));
        port_name = match found {
            Some(p) => p["name"].as_str().unwrap_or_default().to_string(),
            None => {
                return Err(ApiError::unavailable(format!(
                    "no service port {number} found for service {name:?}"
                )))
            }
        };
    }
    let endpoints = call
        .state
        .registry
        .get(lookup(call, "endpoints")?, ns, name)
        .await?;
    let subsets = endpoints
        .get("subsets")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if subsets.is_empty() {
        return Err(ApiError::unavailable(format!(
            "no endpoints available for service {name:?}"
        )));
    }
    for subset in &subsets {
        let Some(address) = subset.pointer("/addresses/0/ip").and_then(Value::as_str) else {
            continue;
        };
        let ports = subset
            .get("ports")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let matching = ports
            .iter()
            .find(|p| p["name"].as_str().unwrap_or_default() == port_name);
        if let Some(p) = matching.and_then(|p| p["port"].as_u64()) {
            let scheme = if scheme.is_empty() { "http" } else { scheme };
            return Ok(Target {
                scheme: scheme.to_string(),
                host: address.to_string(),
                port: p as u16,
            });
        }
    }
    Err(ApiError::unavailable(format!(
        "no endpoints available for service {id:?}"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_split_as_kube_does() {
        assert_eq!(split_scheme_name_port("web"), Some(("", "web", "")));
        assert_eq!(split_scheme_name_port("web:80"), Some(("", "web", "80")));
        assert_eq!(
            split_scheme_name_port("https:web:443"),
            Some(("https", "web", "443"))
        );
        assert_eq!(split_scheme_name_port("ftp:web:21"), None);
        assert_eq!(split_scheme_name_port(":80"), None);
        assert_eq!(split_scheme_name_port("a:b:c:d"), None);
    }

    #[test]
    fn node_addresses_by_preference() {
        let node = json!({"status": {"addresses": [{"type": "ExternalIP", "address": "1.2.3.4"}, {"type": "InternalIP", "address": "10.0.0.1"}]}});
        assert_eq!(preferred_address(&node).unwrap(), "10.0.0.1");
        assert_eq!(
            preferred_address(&json!({})).unwrap_err(),
            "no preferred addresses found; known addresses: []"
        );
        assert!(!proxyable("127.0.0.1") && !proxyable("169.254.1.1") && proxyable("10.0.0.1"));
    }

    #[test]
    fn pods_are_reached_at_global_unicast_addresses_only() {
        let ok = |ip: &str| global_unicast(ip.parse().unwrap());
        assert!(ok("10.244.1.7") && ok("192.0.2.2") && ok("fd00::2"));
        for bad in [
            "127.0.0.1",
            "169.254.3.3",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
        ] {
            assert!(!ok(bad), "{bad}");
        }
        assert!(!ok("::1") && !ok("fe80::1"));
    }

    #[test]
    fn a_pod_port_is_named_or_the_first_container_port() {
        let pod = json!({"spec": {"containers": [{"name": "a"}, {"name": "b", "ports": [{"containerPort": 8080}, {"containerPort": 9090}]}]}});
        assert_eq!(first_container_port(&pod), "8080");
        assert_eq!(first_container_port(&json!({})), "");
        assert_eq!(port_number("", "http"), Some(80));
        assert_eq!(port_number("", "https"), Some(443));
        assert_eq!(port_number("http", "http"), Some(80));
        assert_eq!(port_number("8080", "http"), Some(8080));
        assert_eq!(port_number("70000", "http"), None);
    }
}
