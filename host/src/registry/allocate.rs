//! Service address allocation: a cluster IP from the service range and node
//! ports from 30000-32767 for services that need them, unique among the
//! services that exist (kube-apiserver's service REST allocators).

use super::{decode, Registry};
use crate::catalogue::ResourceInfo;
use crate::status::{ApiError, ApiResult, Cause};
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
        svc["spec"]["ipFamilyPolicy"] = json!("SingleStack");
        svc["spec"]["internalTrafficPolicy"] = json!("Cluster");
        if kind == "NodePort" || kind == "LoadBalancer" {
            assign_node_ports(svc, used.node_ports);
            svc["spec"]["externalTrafficPolicy"] = json!("Cluster");
        }
        Ok(())
    }
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
    let Some(ports) = svc.pointer_mut("/spec/ports").and_then(Value::as_array_mut) else {
        return;
    };
    for p in ports {
        if p.get("nodePort").and_then(Value::as_i64).is_some() {
            continue;
        }
        for _ in 0..10_000 {
            let n = rng.gen_range(NODE_PORTS);
            if used.insert(n) {
                p["nodePort"] = json!(n);
                break;
            }
        }
    }
}
