//! Service address allocation: a cluster IP from the service range and node
//! ports from 30000-32767 for services that need them, unique among the
//! services that exist (kube-apiserver's service REST allocators).

use super::{decode, Registry};
use crate::apimachinery::status::{ApiError, ApiResult, Cause};
use crate::catalogue::ResourceInfo;
use rand::Rng;
use serde_json::{json, Value};
use std::collections::HashSet;

/// The service CIDR 10.96.0.0/12, as kubeadm clusters use.
const SERVICE_BASE: u32 = u32::from_be_bytes([10, 96, 0, 0]);
const SERVICE_SIZE: u32 = 1 << 20;
const NODE_PORTS: std::ops::RangeInclusive<i64> = 30000..=32767;

struct InUse {
    ips: HashSet<String>,
    node_ports: HashSet<i64>,
}

impl Registry {
    async fn services_in_use(&self, services: &ResourceInfo) -> ApiResult<InUse> {
        let kvs = self
            .read_all(services, &super::keys::prefix(services, None))
            .await?;
        let mut used = InUse {
            ips: HashSet::new(),
            node_ports: HashSet::new(),
        };
        for kv in &kvs {
            let svc = decode(kv)?;
            if let Some(ip) = svc.pointer("/spec/clusterIP").and_then(Value::as_str) {
                used.ips.insert(ip.to_string());
            }
            for p in svc
                .pointer("/spec/ports")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(n) = p.get("nodePort").and_then(Value::as_i64) {
                    used.node_ports.insert(n);
                }
            }
        }
        Ok(used)
    }

    /// Fills in `spec.clusterIP(s)` and node ports of a new Service.
    pub async fn allocate_service(
        &self,
        services: &ResourceInfo,
        svc: &mut Value,
    ) -> ApiResult<()> {
        let kind = svc
            .pointer("/spec/type")
            .and_then(Value::as_str)
            .unwrap_or("ClusterIP")
            .to_string();
        if kind == "ExternalName" {
            return Ok(());
        }
        let used = self.services_in_use(services).await?;
        let requested = svc
            .pointer("/spec/clusterIP")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let name = svc
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if requested.is_empty() {
            let ip = free_ip(&used.ips).ok_or_else(|| {
                ApiError::internal("failed to allocate a serviceIP: range is full")
            })?;
            svc["spec"]["clusterIP"] = json!(ip);
            svc["spec"]["clusterIPs"] = json!([ip]);
        } else if requested != "None" && used.ips.contains(&requested) {
            let cause = Cause::invalid(
                "spec.clusterIPs",
                &requested,
                &format!("failed to allocate IP {requested}: provided IP is already allocated"),
            );
            return Err(ApiError::invalid("", "Service", &name, vec![cause]));
        } else {
            svc["spec"]["clusterIPs"] = json!([requested]);
        }
        svc["spec"]["ipFamilies"] = json!(["IPv4"]);
        default_field(svc, "ipFamilyPolicy", "SingleStack");
        default_field(svc, "internalTrafficPolicy", "Cluster");
        if kind == "NodePort" || kind == "LoadBalancer" {
            default_field(svc, "externalTrafficPolicy", "Cluster");
        }
        assign_node_ports(svc, used.node_ports);
        Ok(())
    }

    /// An updated Service's node ports and health-check node port that its
    /// new type needs and it does not have yet (a ClusterIP Service made a
    /// NodePort one).
    pub async fn allocate_service_update(
        &self,
        services: &ResourceInfo,
        svc: &mut Value,
    ) -> ApiResult<()> {
        if node_ports_wanted(svc).is_empty() {
            return Ok(());
        }
        let used = self.services_in_use(services).await?;
        assign_node_ports(svc, used.node_ports);
        Ok(())
    }
}

/// `spec.<field>` set to `value` unless the client chose one.
fn default_field(svc: &mut Value, field: &str, value: &str) {
    let spec = &mut svc["spec"];
    if spec.get(field).is_none_or(Value::is_null) {
        spec[field] = json!(value);
    }
}

/// Where a Service needs a node port it lacks: each port's index (`Some`)
/// and the health-check port (`None`) of a LoadBalancer with the Local
/// external traffic policy.
fn node_ports_wanted(svc: &Value) -> Vec<Option<usize>> {
    let spec = &svc["spec"];
    let kind = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP");
    let balancer = kind == "LoadBalancer";
    let per_port = kind == "NodePort"
        || (balancer && spec.get("allocateLoadBalancerNodePorts") != Some(&json!(false)));
    let mut wanted = Vec::new();
    if per_port {
        let ports = spec.get("ports").and_then(Value::as_array);
        for (i, p) in ports.into_iter().flatten().enumerate() {
            if p.get("nodePort").and_then(Value::as_i64).unwrap_or(0) == 0 {
                wanted.push(Some(i));
            }
        }
    }
    let local = spec.get("externalTrafficPolicy") == Some(&json!("Local"));
    let health = spec.get("healthCheckNodePort").and_then(Value::as_i64);
    if balancer && local && health.unwrap_or(0) == 0 {
        wanted.push(None);
    }
    wanted
}

fn free_ip(used: &HashSet<String>) -> Option<String> {
    let mut rng = rand::thread_rng();
    for _ in 0..10_000 {
        // Skip the network address and .1 (kept for the `kubernetes` service).
        let offset = rng.gen_range(2..SERVICE_SIZE - 1);
        let ip = std::net::Ipv4Addr::from(SERVICE_BASE + offset).to_string();
        if !used.contains(&ip) {
            return Some(ip);
        }
    }
    None
}

fn assign_node_ports(svc: &mut Value, mut used: HashSet<i64>) {
    let mut rng = rand::thread_rng();
    for at in node_ports_wanted(svc) {
        let Some(n) = (0..10_000)
            .map(|_| rng.gen_range(NODE_PORTS))
            .find(|n| used.insert(*n))
        else {
            continue;
        };
        match at {
            Some(i) => svc["spec"]["ports"][i]["nodePort"] = json!(n),
            None => svc["spec"]["healthCheckNodePort"] = json!(n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_ports_follow_the_type_and_policies() {
        let mut lb = json!({"spec": {"type": "LoadBalancer", "externalTrafficPolicy": "Local",
            "allocateLoadBalancerNodePorts": false, "ports": [{"port": 80}]}});
        assign_node_ports(&mut lb, HashSet::new());
        assert!(lb["spec"]["ports"][0].get("nodePort").is_none());
        assert!(NODE_PORTS.contains(&lb["spec"]["healthCheckNodePort"].as_i64().unwrap_or(0)));
        let mut np = json!({"spec": {"type": "NodePort", "ports": [{"port": 80}, {"port": 81, "nodePort": 30001}]}});
        assign_node_ports(&mut np, HashSet::from([30001]));
        let first = np["spec"]["ports"][0]["nodePort"].as_i64().unwrap_or(0);
        assert!(NODE_PORTS.contains(&first) && first != 30001);
        assert_eq!(np["spec"]["ports"][1]["nodePort"], 30001);
        assert!(np["spec"].get("healthCheckNodePort").is_none());
    }

    #[test]
    fn a_chosen_policy_is_kept() {
        let mut svc = json!({"spec": {"ipFamilyPolicy": "PreferDualStack"}});
        default_field(&mut svc, "ipFamilyPolicy", "SingleStack");
        default_field(&mut svc, "internalTrafficPolicy", "Cluster");
        assert_eq!(svc["spec"]["ipFamilyPolicy"], "PreferDualStack");
        assert_eq!(svc["spec"]["internalTrafficPolicy"], "Cluster");
    }
}
