//! `capstan nodes simulate`: Nodes without kubelets that report Ready, hold
//! their Leases and run the Pods bound to them, seen through kubectl.

use crate::support::{eventually, Server};
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running `capstan nodes simulate`, stopped when dropped.
pub struct Simulator(Child);

impl Simulator {
    pub fn start(kubeconfig: &Path, count: u32, log: &Path) -> Simulator {
        let log = std::fs::File::create(log).expect("simulator log");
        let child = Command::new(env!("CARGO_BIN_EXE_capstan"))
            .args(["nodes", "simulate", "--count", &count.to_string()])
            .args(["--name-prefix", "sim-", "--pod-run-for", "1s"])
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start capstan nodes simulate");
        Simulator(child)
    }
}

impl Drop for Simulator {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

const POD: &str = r#"
apiVersion: v1
kind: Pod
metadata: {name: NAME}
spec:
  nodeName: sim-1
  restartPolicy: POLICY
  initContainers: [{name: setup, image: busybox:1.36}]
  containers: [{name: app, image: nginx:1.27}]
"#;

fn pod(name: &str, policy: &str) -> String {
    POD.replace("NAME", name).replace("POLICY", policy)
}

fn condition(obj: &Value, kind: &str) -> String {
    let conditions = obj["status"]["conditions"].as_array().into_iter().flatten();
    conditions
        .filter(|c| c["type"] == kind)
        .map(|c| c["status"].as_str().unwrap_or_default().to_string())
        .next()
        .unwrap_or_default()
}

#[test]
fn simulated_nodes_report_ready_hold_leases_and_run_their_pods_to_completion() {
    let s = Server::start();
    let _sim = Simulator::start(&s.kubeconfig(), 2, &s.dir.path().join("simulator.log"));
    let ready = || {
        let nodes = s.json(&["get", "nodes", "-l", "node.capstan.dev/simulated=true"]);
        let items = nodes["items"].as_array().cloned().unwrap_or_default();
        items.len() == 2 && items.iter().all(|n| condition(n, "Ready") == "True")
    };
    assert!(
        eventually(Duration::from_secs(30), ready),
        "nodes never Ready"
    );
    let lease = s.json(&["get", "lease", "-n", "kube-node-lease", "sim-0"]);
    assert_eq!(lease["spec"]["holderIdentity"], "sim-0");
    assert_eq!(lease["metadata"]["ownerReferences"][0]["kind"], "Node");

    s.ok_stdin(&["apply", "-f", "-"], &pod("web", "Always"));
    s.ok_stdin(&["apply", "-f", "-"], &pod("task", "Never"));
    s.ok(&["wait", "--for=condition=Ready", "pod/web", "--timeout=30s"]);
    let web = s.json(&["get", "pod", "web"]);
    assert_eq!(web["status"]["phase"], "Running");
    assert!(web["status"]["podIP"]
        .as_str()
        .unwrap_or_default()
        .starts_with("10.244.1."));
    assert_eq!(web["status"]["hostIP"], "192.168.0.2");
    assert_eq!(web["status"]["containerStatuses"][0]["ready"], true);
    assert_eq!(
        web["status"]["initContainerStatuses"][0]["state"]["terminated"]["reason"],
        "Completed"
    );

    s.ok(&[
        "wait",
        "--for=jsonpath={.status.phase}=Succeeded",
        "pod/task",
        "--timeout=30s",
    ]);
    let task = s.json(&["get", "pod", "task"]);
    assert_eq!(condition(&task, "Ready"), "False");
    assert_eq!(
        task["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"],
        0
    );
    assert_eq!(
        s.json(&["get", "pod", "web"])["status"]["phase"],
        "Running",
        "a pod that restarts Always keeps running"
    );
}
