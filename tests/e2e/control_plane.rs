//! The whole control plane on Capstan: the unmodified kube-controller-manager
//! and kube-scheduler v1.32 (built by `../shared/kube-oracle/`), three
//! simulated nodes, and workloads run to their end through kubectl, on the
//! embedded store and on etcd with two replicas. Both binaries' error and
//! warning lines are checked against those kube-apiserver also causes.
//!
//! Runs when `CAPSTAN_KUBE_BIN_DIR` names a directory holding
//! `kube-controller-manager` and `kube-scheduler`; elsewhere each test
//! prints why it is skipped and passes (CI has no Go build).

use crate::etcd::Etcd;
use crate::simulated_nodes::Simulator;
use crate::support::{eventually, free_port, Server};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Error and warning lines the two binaries print against kube-apiserver
/// 1.32 too, in the same set-up (no requestheader CA, no Flexvolume
/// directory, informers' jittered resync periods, no metrics server for the
/// HorizontalPodAutoscaler; while a namespace is deleted, its controllers'
/// creates refused and the namespace controller's streaming lists refused,
/// as its role grants no `watch`), each seen in both logs side by side; and
/// a quota's status written by the server's charging and the quota
/// controller at once, the conflict kube-apiserver's quota admission and
/// kube-controller-manager have too (the side-by-side scenario had no
/// quota). `\"` in a logged value is compared as `"`.
const KUBE_ALSO: [&str; 8] = [
    "Operation cannot be fulfilled on resourcequotas",
    "because it is being terminated",
    "User \"system:serviceaccount:kube-system:namespace-controller\" cannot watch resource",
    "extension-apiserver-authentication::requestheader-client-ca-file",
    "Flexvolume plugin directory at /usr/libexec/kubernetes/kubelet-plugins/volume/exec/ does not exist",
    "and the informer has already started. Changing it to",
    "pods.metrics.k8s.io is forbidden: User \"system:serviceaccount:kube-system:horizontal-pod-autoscaler\" cannot watch resource \"pods\" in API group \"metrics.k8s.io\"",
    "unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)",
];

fn kube_bins(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("CAPSTAN_KUBE_BIN_DIR").map(PathBuf::from);
    let usable = dir.filter(|d| {
        ["kube-controller-manager", "kube-scheduler"]
            .iter()
            .all(|b| d.join(b).is_file())
    });
    if usable.is_none() {
        eprintln!(
            "SKIPPED {test}: set CAPSTAN_KUBE_BIN_DIR to a directory with kube-controller-manager \
             and kube-scheduler v1.32 (../shared/kube-oracle/build.sh makes them)"
        );
    }
    usable
}

/// A kube binary run against Capstan, killed when dropped; its log kept.
struct Component {
    child: Child,
    log: PathBuf,
}

impl Component {
    fn start(bin: &Path, args: &[String], log: PathBuf) -> Component {
        let file = std::fs::File::create(&log).expect("component log");
        let child = Command::new(bin)
            .args(args)
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", bin.display()));
        Component { child, log }
    }

    /// Whether it says it took its leader Lease.
    fn acquired_lease(&self) -> bool {
        let text = std::fs::read(&self.log).unwrap_or_default();
        String::from_utf8_lossy(&text).contains("successfully acquired lease")
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Its error and warning lines that kube-apiserver would not cause.
    fn unexpected_lines(&self) -> Vec<String> {
        let text = std::fs::read(&self.log).unwrap_or_default();
        String::from_utf8_lossy(&text)
            .lines()
            .filter(|l| l.starts_with('E') || l.starts_with('W'))
            // Quotes inside klog's quoted values are escaped: compared without.
            .filter(|l| {
                !KUBE_ALSO
                    .iter()
                    .any(|known| l.replace('\\', "").contains(known))
            })
            .map(clip)
            .collect()
    }
}

/// A long line's start and end (klog's Go dumps put the cause last).
fn clip(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    if chars.len() <= 600 {
        return line.to_string();
    }
    let start: String = chars[..300].iter().collect();
    let end: String = chars[chars.len() - 300..].iter().collect();
    format!("{start} … {end}")
}

impl Drop for Component {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Both binaries' flags: their client, and their own secure port's
/// delegated authentication and authorization, through `kubeconfig`.
fn client_and_serving(kubeconfig: &Path) -> Vec<String> {
    let kc = kubeconfig.display().to_string();
    vec![
        format!("--kubeconfig={kc}"),
        format!("--authentication-kubeconfig={kc}"),
        format!("--authorization-kubeconfig={kc}"),
        "--bind-address=127.0.0.1".into(),
        format!("--secure-port={}", free_port()),
    ]
}

/// kube-controller-manager as README runs it against `server`'s data
/// directory, through `kubeconfig`.
fn controller_manager(bins: &Path, s: &Server, kubeconfig: &Path, name: &str) -> Component {
    let pki = |f: &str| s.pki(f).display().to_string();
    let mut args = client_and_serving(kubeconfig);
    args.extend([
        "--use-service-account-credentials=true".into(),
        format!("--root-ca-file={}", pki("ca.crt")),
        format!("--cluster-signing-cert-file={}", pki("ca.crt")),
        format!("--cluster-signing-key-file={}", pki("ca.key")),
        format!(
            "--service-account-private-key-file={}",
            pki("service-account.key")
        ),
        "--leader-elect-retry-period=1s".into(),
    ]);
    let log = s.dir.path().join(format!("{name}.log"));
    Component::start(&bins.join("kube-controller-manager"), &args, log)
}

fn scheduler(bins: &Path, s: &Server, kubeconfig: &Path) -> Component {
    let args = client_and_serving(kubeconfig);
    let log = s.dir.path().join("kube-scheduler.log");
    Component::start(&bins.join("kube-scheduler"), &args, log)
}

/// A kubeconfig of `user` that reaches `s` (a replica of the data directory's server).
fn kubeconfig_for(s: &Server, minted_by: &Server, user: &str) -> PathBuf {
    let path = minted_by.user_kubeconfig(user, &[]);
    let text = std::fs::read_to_string(&path).expect("kubeconfig");
    let text = text.replace(&minted_by.url(""), &s.url(""));
    std::fs::write(&path, text).expect("kubeconfig");
    path
}

const WORKLOADS: &str = r#"
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 3
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: postgres:17}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: busybox:1.36}]}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: tick}
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      template:
        spec: {restartPolicy: Never, containers: [{name: t, image: busybox:1.36}]}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 3
  maxReplicas: 5
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}}]
"#;

fn items(s: &Server, args: &[&str]) -> Vec<Value> {
    let list = s.json(args);
    list["items"].as_array().cloned().unwrap_or_default()
}

/// The workloads of the issue, each run to where kube would take it.
fn run_workloads(s: &Server) {
    let ns = ["-n", "cp"];
    let k = |args: &[&str]| s.ok(&[&ns[..], args].concat());
    s.ok(&["create", "namespace", "cp"]);
    k(&[
        "create",
        "deployment",
        "web",
        "--image=nginx:1.27",
        "--replicas=3",
    ]);
    k(&["expose", "deployment", "web", "--port=80"]);
    k(&["rollout", "status", "deployment/web", "--timeout=90s"]);
    k(&["set", "image", "deployment/web", "nginx=nginx:1.28"]);
    k(&["rollout", "status", "deployment/web", "--timeout=90s"]);
    let web = items(s, &["get", "pods", "-n", "cp", "-l", "app=web"]);
    let images: Vec<&str> = web
        .iter()
        .filter(|p| p["metadata"].get("deletionTimestamp").is_none())
        .filter_map(|p| p["spec"]["containers"][0]["image"].as_str())
        .collect();
    assert_eq!(images, ["nginx:1.28"; 3], "the rollout replaced every pod");
    s.ok_stdin(&["apply", "-n", "cp", "-f", "-"], WORKLOADS);
    k(&[
        "create",
        "job",
        "once",
        "--image=busybox:1.36",
        "--",
        "true",
    ]);
    k(&[
        "wait",
        "--for=condition=Complete",
        "job/once",
        "--timeout=90s",
    ]);
    k(&["rollout", "status", "statefulset/db", "--timeout=120s"]);
    k(&["rollout", "status", "daemonset/agent", "--timeout=90s"]);
    let agents = items(s, &["get", "pods", "-n", "cp", "-l", "app=agent"]);
    let mut nodes: Vec<&str> = agents
        .iter()
        .filter_map(|p| p["spec"]["nodeName"].as_str())
        .collect();
    nodes.sort();
    assert_eq!(nodes, ["sim-0", "sim-1", "sim-2"], "one agent per node");
    endpoint_slice_lists_ready_pods(s);
    cron_job_creates_jobs(s);
    garbage_collection(s);
    quota_counts_creates(s);
    let hpa = s.json(&["get", "hpa", "web", "-n", "cp"]);
    assert_eq!(hpa["spec"]["maxReplicas"], 5);
    namespace_deleted_with_everything_in_it(s);
}

fn namespace_deleted_with_everything_in_it(s: &Server) {
    s.ok(&["delete", "namespace", "cp", "--wait=false"]);
    let gone = eventually(Duration::from_secs(120), || {
        !s.kubectl(&["get", "namespace", "cp"]).status.success()
    });
    let left = s.kubectl(&["get", "namespace", "cp", "-o", "json"]);
    let pods = s.kubectl(&["get", "pods", "-n", "cp", "-o", "name"]);
    assert!(
        gone,
        "namespace cp not deleted: {}\npods left: {}",
        crate::support::stdout(&left),
        crate::support::stdout(&pods)
    );
}

/// A ResourceQuota counts what is created while kube-controller-manager
/// leads (kube-apiserver charges it at admission).
fn quota_counts_creates(s: &Server) {
    s.ok(&["create", "quota", "q", "-n", "cp", "--hard=configmaps=20"]);
    let used = || {
        let q = s.json(&["get", "quota", "q", "-n", "cp"]);
        q["status"]["used"]["configmaps"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let counted = |n: usize| eventually(Duration::from_secs(20), || used() == n.to_string());
    let before = items(s, &["get", "configmaps", "-n", "cp"]).len();
    assert!(
        counted(before),
        "quota used {} for {before} ConfigMaps",
        used()
    );
    s.ok(&["create", "configmap", "counted", "-n", "cp"]);
    assert!(counted(before + 1), "quota used {} after a create", used());
}

fn endpoint_slice_lists_ready_pods(s: &Server) {
    let ready_ips = || {
        let web = items(s, &["get", "pods", "-n", "cp", "-l", "app=web"]);
        let mut ips: Vec<String> = web
            .iter()
            .filter(|p| p["metadata"].get("deletionTimestamp").is_none())
            .filter_map(|p| p["status"]["podIP"].as_str().map(str::to_string))
            .collect();
        ips.sort();
        ips
    };
    let sliced = || {
        let slices = items(
            s,
            &[
                "get",
                "endpointslices",
                "-n",
                "cp",
                "-l",
                "kubernetes.io/service-name=web",
            ],
        );
        let mut ips: Vec<String> = slices
            .iter()
            .flat_map(|sl| sl["endpoints"].as_array().cloned().unwrap_or_default())
            .filter(|e| e["conditions"]["ready"] == true)
            .filter_map(|e| e["addresses"][0].as_str().map(str::to_string))
            .collect();
        ips.sort();
        ips
    };
    let same = eventually(Duration::from_secs(30), || {
        let want = ready_ips();
        want.len() == 3 && sliced() == want
    });
    assert!(
        same,
        "EndpointSlice {:?} vs ready pods {:?}",
        sliced(),
        ready_ips()
    );
}

fn cron_job_creates_jobs(s: &Server) {
    let made = eventually(Duration::from_secs(80), || {
        let jobs = items(s, &["get", "jobs", "-n", "cp"]);
        jobs.iter().any(|j| {
            let owner = &j["metadata"]["ownerReferences"][0];
            owner["kind"] == "CronJob" && owner["name"] == "tick"
        })
    });
    assert!(made, "the CronJob created no Job within a minute");
}

fn garbage_collection(s: &Server) {
    let ns = ["-n", "cp"];
    let k = |args: &[&str]| s.ok(&[&ns[..], args].concat());
    for name in ["bg", "orphan"] {
        k(&["create", "deployment", name, "--image=nginx:1.27"]);
        k(&[
            "rollout",
            "status",
            &format!("deployment/{name}"),
            "--timeout=90s",
        ]);
    }
    k(&["delete", "deployment", "bg", "--cascade=background"]);
    k(&["delete", "deployment", "orphan", "--cascade=orphan"]);
    let collected = eventually(Duration::from_secs(30), || {
        items(s, &["get", "replicasets,pods", "-n", "cp", "-l", "app=bg"]).is_empty()
    });
    assert!(
        collected,
        "background deletion left the ReplicaSet or its pods"
    );
    let orphans = items(s, &["get", "replicasets", "-n", "cp", "-l", "app=orphan"]);
    assert_eq!(orphans.len(), 1, "orphan deletion keeps the ReplicaSet");
    assert!(
        orphans[0]["metadata"].get("ownerReferences").is_none(),
        "an orphan has no owner left: {}",
        orphans[0]["metadata"]
    );
}

fn assert_quiet(components: &[&Component]) {
    let noisy: Vec<String> = components
        .iter()
        .flat_map(|c| {
            let name = c
                .log
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string();
            c.unexpected_lines()
                .into_iter()
                .map(move |l| format!("{name}: {l}"))
        })
        .collect();
    assert!(
        noisy.is_empty(),
        "lines kube-apiserver would not cause:\n{}",
        noisy.join("\n")
    );
}

#[test]
fn kube_controller_manager_and_scheduler_run_workloads_on_the_embedded_store() {
    let Some(bins) = kube_bins("control_plane::embedded_store") else {
        return;
    };
    let s = Server::start();
    let kcm_config = kubeconfig_for(&s, &s, "system:kube-controller-manager");
    let kcm = controller_manager(&bins, &s, &kcm_config, "kube-controller-manager");
    let sched = scheduler(&bins, &s, &kubeconfig_for(&s, &s, "system:kube-scheduler"));
    let _nodes = Simulator::start(&s.kubeconfig(), 3, &s.dir.path().join("simulator.log"));
    let deferred = eventually(Duration::from_secs(30), || {
        s.log()
            .contains("kube-controller-manager leads: its work is left to it")
    });
    assert!(
        deferred,
        "Capstan's controllers did not stand down for kube-controller-manager"
    );
    run_workloads(&s);
    assert_quiet(&[&kcm, &sched]);
}

#[test]
fn controllers_elect_their_leaders_across_two_replicas_on_etcd() {
    let Some(bins) = kube_bins("control_plane::two_replicas_on_etcd") else {
        return;
    };
    let etcd = Etcd::start(1);
    let flags = ["--etcd-servers".to_string(), etcd.servers()];
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let a = Server::start_with(&flags);
    let b = a.start_replica(&flags);
    let kcm = "system:kube-controller-manager";
    let first = controller_manager(&bins, &a, &kubeconfig_for(&a, &a, kcm), "kcm-a");
    let second = controller_manager(&bins, &b, &kubeconfig_for(&b, &a, kcm), "kcm-b");
    let sched = scheduler(&bins, &b, &kubeconfig_for(&b, &a, "system:kube-scheduler"));
    let _nodes = Simulator::start(&a.kubeconfig(), 3, &a.dir.path().join("simulator.log"));
    let holder = || {
        let jsonpath = "-o=jsonpath={.spec.holderIdentity}";
        let out = b.kubectl(&[
            "get",
            "lease",
            "-n",
            "kube-system",
            "kube-controller-manager",
            jsonpath,
        ]);
        crate::support::stdout(&out)
    };
    assert!(eventually(Duration::from_secs(30), || !holder().is_empty()));
    run_workloads(&a);
    assert_quiet(&[&first, &second, &sched]);

    // The leader (whichever replica it talks to) goes; the other takes over.
    let leader = holder();
    let (mut gone, standby) = if first.acquired_lease() {
        (first, second)
    } else {
        (second, first)
    };
    assert!(
        gone.acquired_lease(),
        "neither kube-controller-manager says it leads"
    );
    gone.kill();
    let took_over = eventually(Duration::from_secs(60), || standby.acquired_lease());
    assert!(
        took_over,
        "no kube-controller-manager took the lease after {leader} stopped"
    );
    assert_ne!(holder(), leader);
    b.ok(&["create", "namespace", "after"]);
    b.ok(&[
        "create",
        "deployment",
        "late",
        "-n",
        "after",
        "--image=nginx:1.27",
    ]);
    b.ok(&[
        "rollout",
        "status",
        "deployment/late",
        "-n",
        "after",
        "--timeout=90s",
    ]);
    drop(standby);
}
