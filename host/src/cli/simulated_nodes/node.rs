//! One simulated Node: its object, its status heartbeat and its Lease, as a
//! kubelet registers and renews them.

use super::api::{Api, JSON, MERGE_PATCH};
use crate::cli::SimulateArgs;
use anyhow::Result;
use http::{Method, StatusCode};
use serde_json::{json, Value};

/// The namespace of the Nodes' Leases.
const LEASE_NAMESPACE: &str = "kube-node-lease";
/// kubelet's `nodeLeaseDurationSeconds`.
const LEASE_DURATION_SECONDS: u64 = 40;
/// What a simulated Node offers the scheduler.
const CAPACITY: [(&str, &str); 4] = [
    ("cpu", "32"),
    ("memory", "256Gi"),
    ("pods", "110"),
    ("ephemeral-storage", "100Gi"),
];
/// The label that marks a Node as simulated.
pub const SIMULATED_LABEL: &str = "node.capstan.dev/simulated";

pub struct SimNode {
    pub name: String,
    /// The node's InternalIP, also the host IP of its pods.
    pub host_ip: String,
    /// The first three octets of its pods' /24.
    pub pod_prefix: String,
    /// When this simulator started reporting it Ready.
    since: String,
}

impl SimNode {
    pub fn new(args: &SimulateArgs, index: u32) -> SimNode {
        let (hi, lo) = (index / 256, index % 256);
        SimNode {
            name: format!("{}{index}", args.name_prefix),
            host_ip: format!("192.168.{hi}.{}", lo + 1),
            pod_prefix: format!("10.{}.{lo}", 244 + hi),
            since: now(),
        }
    }

    /// Creates the Node (kept if it exists), reports it Ready and takes its Lease.
    pub async fn register(&self, api: &Api) -> Result<()> {
        if api.get(&self.path()).await?.is_none() {
            let conflict = [StatusCode::CONFLICT];
            api.send(
                Method::POST,
                "/api/v1/nodes",
                &self.object(),
                JSON,
                &conflict,
            )
            .await?;
        }
        self.heartbeat(api).await?;
        self.renew_lease(api).await
    }

    /// Writes the status a healthy kubelet reports, its heartbeat now.
    pub async fn heartbeat(&self, api: &Api) -> Result<()> {
        let patch = json!({"status": self.status(&now())});
        let path = format!("{}/status", self.path());
        api.send(Method::PATCH, &path, &patch, MERGE_PATCH, &[])
            .await
            .map(drop)
    }

    /// Renews the Node's Lease, creating it (owned by the Node) when missing.
    pub async fn renew_lease(&self, api: &Api) -> Result<()> {
        let path = format!(
            "/apis/coordination.k8s.io/v1/namespaces/{LEASE_NAMESPACE}/leases/{}",
            self.name
        );
        let spec = json!({
            "holderIdentity": self.name,
            "leaseDurationSeconds": LEASE_DURATION_SECONDS,
            "renewTime": now_micro(),
        });
        if api.get(&path).await?.is_some() {
            let patch = json!({"spec": spec});
            return api
                .send(Method::PATCH, &path, &patch, MERGE_PATCH, &[])
                .await
                .map(drop);
        }
        let owner = api.get(&self.path()).await?.unwrap_or_default();
        let lease = json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": self.name,
                "namespace": LEASE_NAMESPACE,
                "ownerReferences": [{
                    "apiVersion": "v1",
                    "kind": "Node",
                    "name": self.name,
                    "uid": owner["metadata"]["uid"],
                }],
            },
            "spec": spec,
        });
        let collection =
            format!("/apis/coordination.k8s.io/v1/namespaces/{LEASE_NAMESPACE}/leases");
        api.send(
            Method::POST,
            &collection,
            &lease,
            JSON,
            &[StatusCode::CONFLICT],
        )
        .await
        .map(drop)
    }

    fn path(&self) -> String {
        format!("/api/v1/nodes/{}", self.name)
    }

    fn object(&self) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": self.name,
                "labels": {
                    "kubernetes.io/hostname": self.name,
                    "kubernetes.io/os": "linux",
                    "kubernetes.io/arch": arch(),
                    SIMULATED_LABEL: "true",
                },
            },
            "spec": {},
            "status": self.status(&self.since),
        })
    }

    fn status(&self, heartbeat: &str) -> Value {
        let capacity: serde_json::Map<String, Value> = CAPACITY
            .iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect();
        let condition = |kind: &str, status: &str, reason: &str, message: &str| {
            json!({
                "type": kind, "status": status,
                "lastHeartbeatTime": heartbeat, "lastTransitionTime": self.since,
                "reason": reason, "message": message,
            })
        };
        json!({
            "capacity": capacity,
            "allocatable": capacity,
            "conditions": [
                condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
            ],
            "addresses": [
                {"type": "InternalIP", "address": self.host_ip},
                {"type": "Hostname", "address": self.name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": digest_hex(&format!("machine/{}", self.name), 32),
                "systemUUID": digest_hex(&format!("system/{}", self.name), 32),
                "bootID": digest_hex(&format!("boot/{}/{}", self.name, self.since), 32),
                "kernelVersion": "simulated",
                "osImage": "Capstan simulated node",
                "containerRuntimeVersion": "simulated://0.1.0",
                "kubeletVersion": "v1.32.0",
                "kubeProxyVersion": "",
                "operatingSystem": "linux",
                "architecture": arch(),
            },
        })
    }
}

/// This machine's architecture as Go names it.
fn arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}

/// Now as a metav1.Time.
pub fn now() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Now as a metav1.MicroTime.
fn now_micro() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}

/// The first `len` hex digits of the SHA-256 of `text`: stable made-up ids.
pub fn digest_hex(text: &str, len: usize) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    hex[..len.min(hex.len())].to_string()
}
