//! The printers of the core group's kinds (kube's printers.go, wide cells included): Pods (READY,
//! the STATUS reason logic of init containers, waiting / terminated reasons, Terminating,
//! SchedulingGated, ..., RESTARTS with the time of the last restart, as kube's `printPod`),
//! PodTemplates, ReplicationControllers, Services, Endpoints, ConfigMaps, Secrets, ServiceAccounts,
//! ResourceQuotas, Nodes, Namespaces, Events (also events.k8s.io's), ComponentStatuses,
//! PersistentVolumes and claims.

use crate::table::access::{
    age, flag, format_label_map, int, list, map, map_len, name, non_empty, opt_int, or_none,
    quantity, since, text, time,
};
use crate::table::columns;
use crate::table::network::{list_with_more, load_balancer_addresses};
use crate::table::workloads::{replica_counts, with_template, TEMPLATE_CONTAINERS};
use crate::table::Column;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use std::collections::BTreeSet;

#[derive(Default)]
struct Restarts {
    count: i64,
    last: Option<DateTime<Utc>>,
}

impl Restarts {
    /// Adds a container status' restart count and last termination time.
    fn add(&mut self, status: &Value) {
        self.count += int(status, "/restartCount");
        let finished = time(status, "/lastState/terminated/finishedAt");
        if finished > self.last {
            self.last = finished;
        }
    }
}

struct Summary {
    ready: i64,
    total: i64,
    reason: String,
    restarts: Restarts,
}

fn is_restartable(spec: Option<&Value>) -> bool {
    spec.is_some_and(|c| text(c, "/restartPolicy") == "Always")
}

fn has_condition(pod: &Value, kind: &str) -> Option<&'static str> {
    let cond = list(pod, "/status/conditions")
        .iter()
        .find(|c| text(c, "/type") == kind)?;
    Some(if text(cond, "/status") == "True" {
        "True"
    } else {
        "False"
    })
}

fn initial_reason(pod: &Value) -> String {
    let mut reason = non_empty(pod, "/status/reason")
        .unwrap_or(text(pod, "/status/phase"))
        .to_string();
    let gated = list(pod, "/status/conditions")
        .iter()
        .any(|c| text(c, "/type") == "PodScheduled" && text(c, "/reason") == "SchedulingGated");
    if gated {
        reason = "SchedulingGated".to_string();
    }
    reason
}

fn exit_reason(terminated: &Value, prefix: &str) -> String {
    if let Some(r) = non_empty(terminated, "/reason") {
        return format!("{prefix}{r}");
    }
    let signal = int(terminated, "/signal");
    if signal != 0 {
        format!("{prefix}Signal:{signal}")
    } else {
        format!("{prefix}ExitCode:{}", int(terminated, "/exitCode"))
    }
}

/// Walks init container statuses; returns true while still initializing.
fn scan_init(pod: &Value, s: &mut Summary, restartable: &mut Restarts) -> bool {
    let specs = list(pod, "/spec/initContainers");
    for (i, c) in list(pod, "/status/initContainerStatuses")
        .iter()
        .enumerate()
    {
        let spec = specs.iter().find(|x| text(x, "/name") == text(c, "/name"));
        s.restarts.add(c);
        if is_restartable(spec) {
            restartable.add(c);
        }
        let terminated = c.pointer("/state/terminated");
        if terminated.is_some_and(|t| int(t, "/exitCode") == 0) {
            continue;
        }
        if is_restartable(spec) && c.pointer("/started").and_then(Value::as_bool) == Some(true) {
            s.ready += i64::from(flag(c, "/ready"));
            continue;
        }
        let waiting = non_empty(c, "/state/waiting/reason").filter(|r| *r != "PodInitializing");
        s.reason = match (terminated, waiting) {
            (Some(t), _) => exit_reason(t, "Init:"),
            (None, Some(w)) => format!("Init:{w}"),
            (None, None) => format!("Init:{i}/{}", specs.len()),
        };
        return true;
    }
    false
}

/// Walks regular container statuses (last to first, like kube).
fn scan_containers(pod: &Value, s: &mut Summary) {
    let mut has_running = false;
    for c in list(pod, "/status/containerStatuses").iter().rev() {
        s.restarts.add(c);
        let terminated = c.pointer("/state/terminated");
        if let Some(w) = non_empty(c, "/state/waiting/reason") {
            s.reason = w.to_string();
        } else if let Some(t) = terminated {
            s.reason = exit_reason(t, "");
        } else if flag(c, "/ready") && c.pointer("/state/running").is_some() {
            has_running = true;
            s.ready += 1;
        }
    }
    if s.reason == "Completed" && has_running {
        let ready = has_condition(pod, "Ready") == Some("True");
        s.reason = if ready { "Running" } else { "NotReady" }.to_string();
    }
}

fn summarize(pod: &Value) -> Summary {
    let restartable_inits = list(pod, "/spec/initContainers")
        .iter()
        .filter(|c| is_restartable(Some(c)))
        .count();
    let mut s = Summary {
        ready: 0,
        total: (list(pod, "/spec/containers").len() + restartable_inits) as i64,
        reason: initial_reason(pod),
        restarts: Restarts::default(),
    };
    let mut restartable = Restarts::default();
    let initializing = scan_init(pod, &mut s, &mut restartable);
    if !initializing || has_condition(pod, "Initialized") == Some("True") {
        s.restarts = restartable;
        scan_containers(pod, &mut s);
    }
    apply_deletion(pod, &mut s);
    s
}

fn apply_deletion(pod: &Value, s: &mut Summary) {
    if pod
        .pointer("/metadata/deletionTimestamp")
        .is_none_or(Value::is_null)
    {
        return;
    }
    let phase = text(pod, "/status/phase");
    if text(pod, "/status/reason") == "NodeLost" {
        s.reason = "Unknown".to_string();
    } else if phase != "Succeeded" && phase != "Failed" {
        s.reason = "Terminating".to_string();
    }
}

fn restarts_cell(r: &Restarts, now: DateTime<Utc>) -> String {
    match r.last {
        Some(last) if r.count != 0 => format!("{} ({} ago)", r.count, since(Some(last), now)),
        _ => r.count.to_string(),
    }
}

fn readiness_gates(pod: &Value) -> String {
    let gates = list(pod, "/spec/readinessGates");
    if gates.is_empty() {
        return "<none>".to_string();
    }
    let satisfied = gates
        .iter()
        .filter(|g| has_condition(pod, text(g, "/conditionType")) == Some("True"))
        .count();
    format!("{satisfied}/{}", gates.len())
}

fn wide_cells(pod: &Value) -> Vec<Value> {
    let ip = non_empty(pod, "/status/podIPs/0/ip").unwrap_or(text(pod, "/status/podIP"));
    vec![
        Value::from(or_none(ip)),
        Value::from(or_none(text(pod, "/spec/nodeName"))),
        Value::from(or_none(text(pod, "/status/nominatedNodeName"))),
        Value::from(readiness_gates(pod)),
    ]
}

/// All cells of a pod row (wide columns included).
pub(crate) fn pod_row(pod: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let s = summarize(pod);
    let mut cells = vec![
        name(pod),
        Value::from(format!("{}/{}", s.ready, s.total)),
        Value::from(s.reason.clone()),
        Value::from(restarts_cell(&s.restarts, now)),
        age(pod, now),
    ];
    cells.extend(wide_cells(pod));
    cells
}

/// The row conditions kube attaches to finished pods.
pub(crate) fn pod_row_conditions(pod: &Value) -> Option<Value> {
    let (reason, message) = match text(pod, "/status/phase") {
        "Succeeded" => ("Succeeded", "The pod has completed successfully."),
        "Failed" => ("Failed", "The pod failed."),
        _ => return None,
    };
    Some(serde_json::json!([{
        "type": "Completed",
        "status": "True",
        "reason": reason,
        "message": message,
    }]))
}

/// Endpoints.
pub(crate) fn endpoints_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text("Endpoints", "Ready endpoint addresses."),
        columns::AGE,
    ]
}

/// ResourceQuotas.
pub(crate) fn resource_quota_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::AGE,
        columns::text(
            "Request",
            "Request represents a minimum amount of cpu/memory that a container may consume.",
        ),
        columns::text(
            "Limit",
            "Limits control the maximum amount of cpu/memory that a container may use \
                 independent of contention on the node.",
        ),
    ]
}

/// ConfigMaps.
pub(crate) fn config_map_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text("Data", "Number of data entries."),
        columns::AGE,
    ]
}

/// ServiceAccounts.
pub(crate) fn service_account_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text("Secrets", "Number of secrets."),
        columns::AGE,
    ]
}

/// Secrets.
pub(crate) fn secret_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text("Type", "Type of the secret."),
        columns::text("Data", "Number of data entries."),
        columns::AGE,
    ]
}

/// Namespaces.
pub(crate) fn namespace_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text("Status", "The status of the namespace"),
        columns::AGE,
    ]
}

/// ComponentStatuses.
pub(crate) fn component_status_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text("Status", "Status of the component conditions"),
        columns::text("Message", "Message of the component conditions"),
        columns::text("Error", "Error of the component conditions"),
    ]
}

/// PodTemplates.
pub(crate) fn pod_template_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text("Containers", columns::CONTAINERS_DESC),
        columns::text("Images", columns::IMAGES_DESC),
        columns::text("Pod Labels", "The labels for the pod template."),
    ]
}

pub(crate) fn persistent_volume_claim_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text("Status", "Phase of the claim."),
        columns::text("Volume", "The volume bound to this claim."),
        columns::text("Capacity", "Capacity of the bound volume."),
        columns::text("Access Modes", "Access modes of the bound volume."),
        columns::text("StorageClass", "StorageClass of the pvc"),
        columns::text("VolumeAttributesClass", "VolumeAttributesClass of the pvc"),
        columns::AGE,
        columns::wide("VolumeMode", "Filesystem or Block."),
    ]
}

pub(crate) fn persistent_volume_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text("Capacity", "Storage capacity of the volume."),
        columns::text("Access Modes", "Ways the volume can be mounted."),
        columns::text(
            "Reclaim Policy",
            "What happens to the volume when released.",
        ),
        columns::text("Status", "Phase of the volume."),
        columns::text("Claim", "The claim bound to this volume."),
        columns::text("StorageClass", "StorageClass of the pv"),
        columns::text("VolumeAttributesClass", "VolumeAttributesClass of the pv"),
        columns::text("Reason", "Reason for a failed phase."),
        columns::AGE,
        columns::wide("VolumeMode", "Filesystem or Block."),
    ]
}

pub(crate) fn service_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text("Type", "How the service is exposed."),
        columns::text("Cluster-IP", "The cluster IP of the service."),
        columns::text("External-IP", "External addresses of the service."),
        columns::text("Port(s)", "Ports exposed by the service."),
        columns::AGE,
        columns::wide("Selector", "Label selector of the pods behind the service."),
    ]
}

pub(crate) fn event_columns() -> Vec<Column> {
    let mut name = columns::NAME;
    name.priority = 1;
    vec![
        columns::text("Last Seen", "Time since the event was last observed."),
        columns::text("Type", "Type of this event (Normal, Warning)."),
        columns::text(
            "Reason",
            "Short, machine understandable reason for the event.",
        ),
        columns::text("Object", "The object this event is about."),
        columns::wide("Subobject", "Field path of the involved object."),
        columns::wide("Source", "Component (and host) reporting the event."),
        columns::text("Message", "Human-readable description of the event."),
        columns::wide("First Seen", "Time since the event was first observed."),
        columns::wide("Count", "Number of times this event has occurred."),
        name,
    ]
}

pub(crate) fn node_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text("Status", "The status of the node"),
        columns::text("Roles", "The roles of the node"),
        columns::AGE,
        columns::text("Version", "Kubelet version reported by the node."),
        columns::wide("Internal-IP", "The node's first InternalIP address."),
        columns::wide("External-IP", "The node's first ExternalIP address."),
        columns::wide("OS-Image", "OS image reported by the node."),
        columns::wide("Kernel-Version", "Kernel version reported by the node."),
        columns::wide(
            "Container-Runtime",
            "Container runtime version reported by the node.",
        ),
    ]
}

pub(crate) fn pod_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text(
            "Ready",
            "The aggregate readiness state of this pod for accepting traffic.",
        ),
        columns::text(
            "Status",
            "The aggregate status of the containers in this pod.",
        ),
        columns::text(
            "Restarts",
            "The number of times the containers in this pod have been restarted and when \
             the last container in this pod has restarted.",
        ),
        columns::AGE,
        columns::wide("IP", "IP address allocated to the pod."),
        columns::wide("Node", "The node the pod is scheduled to."),
        columns::wide(
            "Nominated Node",
            "The node the scheduler nominated for preemption.",
        ),
        columns::wide(
            "Readiness Gates",
            "Readiness gates that are satisfied / declared.",
        ),
    ]
}

pub(crate) fn replication_controller_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let mut cells = with_template(replica_counts(obj, now), obj, TEMPLATE_CONTAINERS);
    cells.push(Value::from(format_label_map(obj, "/spec/selector")));
    cells
}

pub(crate) fn pod_template_row(obj: &Value, _now: DateTime<Utc>) -> Vec<Value> {
    let cells = with_template(vec![name(obj)], obj, "/template/spec/containers");
    let mut cells = cells;
    cells.push(Value::from(format_label_map(
        obj,
        "/template/metadata/labels",
    )));
    cells
}

fn service_external_ip(svc: &Value) -> String {
    let external: Vec<&str> = list(svc, "/spec/externalIPs")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    match text(svc, "/spec/type") {
        "ClusterIP" | "" | "NodePort" => or_none(&external.join(",")),
        "LoadBalancer" => {
            let lb = load_balancer_addresses(svc);
            let mut all: Vec<&str> = lb.split(',').filter(|s| !s.is_empty()).collect();
            all.extend(external);
            match all.is_empty() {
                true => "<pending>".to_string(),
                false => all.join(","),
            }
        }
        "ExternalName" => text(svc, "/spec/externalName").to_string(),
        _ => "<unknown>".to_string(),
    }
}

/// `80/TCP`, or `80:30080/TCP` when a node port is allocated.
fn service_ports(svc: &Value) -> String {
    let pieces: Vec<String> = list(svc, "/spec/ports")
        .iter()
        .map(|p| {
            let proto = non_empty(p, "/protocol").unwrap_or("TCP");
            match int(p, "/nodePort") {
                np if np > 0 => format!("{}:{np}/{proto}", int(p, "/port")),
                _ => format!("{}/{proto}", int(p, "/port")),
            }
        })
        .collect();
    or_none(&pieces.join(","))
}

pub(crate) fn service_row(svc: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let cluster_ip = non_empty(svc, "/spec/clusterIPs/0").or(non_empty(svc, "/spec/clusterIP"));
    vec![
        name(svc),
        Value::from(non_empty(svc, "/spec/type").unwrap_or("ClusterIP")),
        Value::from(cluster_ip.unwrap_or("<none>")),
        Value::from(service_external_ip(svc)),
        Value::from(service_ports(svc)),
        age(svc, now),
        Value::from(format_label_map(svc, "/spec/selector")),
    ]
}

fn host_port(ip: &str, port: i64) -> String {
    if ip.contains(':') {
        format!("[{ip}]:{port}")
    } else {
        format!("{ip}:{port}")
    }
}

/// kube's `formatEndpoints` with all ports.
fn format_endpoints(obj: &Value) -> String {
    let subsets = list(obj, "/subsets");
    if subsets.is_empty() {
        return "<none>".to_string();
    }
    let mut shown = Vec::new();
    let mut total = 0;
    for ss in subsets {
        let addrs = list(ss, "/addresses");
        let ports = list(ss, "/ports");
        if ports.is_empty() {
            total += addrs.len();
            shown.extend(addrs.iter().map(|a| text(a, "/ip").to_string()));
            continue;
        }
        for port in ports {
            total += addrs.len();
            let p = int(port, "/port");
            shown.extend(addrs.iter().map(|a| host_port(text(a, "/ip"), p)));
        }
    }
    list_with_more(shown, total, "")
}

pub(crate) fn endpoints_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    vec![name(obj), Value::from(format_endpoints(obj)), age(obj, now)]
}

pub(crate) fn config_map_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let entries = map_len(obj, "/data") + map_len(obj, "/binaryData");
    vec![name(obj), Value::from(entries), age(obj, now)]
}

pub(crate) fn secret_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    vec![
        name(obj),
        Value::from(text(obj, "/type")),
        Value::from(map_len(obj, "/data")),
        age(obj, now),
    ]
}

pub(crate) fn service_account_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let secrets = list(obj, "/secrets").len() as i64;
    vec![name(obj), Value::from(secrets), age(obj, now)]
}

fn quantity_text(m: Option<&Map<String, Value>>, key: &str) -> String {
    match m.and_then(|m| m.get(key)) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "0".to_string(),
    }
}

/// REQUEST and LIMIT cells: `res: used/hard` pairs sorted by resource name.
fn quota_usage(obj: &Value) -> (String, String) {
    let hard = map(obj, "/status/hard");
    let used = map(obj, "/status/used");
    let mut names: Vec<&String> = hard.map(|h| h.keys().collect()).unwrap_or_default();
    names.sort();
    let (mut request, mut limit) = (Vec::new(), Vec::new());
    for res in names {
        let entry = format!(
            "{res}: {}/{}",
            quantity_text(used, res),
            quantity_text(hard, res)
        );
        let is_limit = res
            .split_once('.')
            .is_some_and(|(head, _)| head == "limits");
        if is_limit {
            limit.push(entry);
        } else {
            request.push(entry);
        }
    }
    (request.join(", "), limit.join(", "))
}

pub(crate) fn resource_quota_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let (request, limit) = quota_usage(obj);
    vec![
        name(obj),
        age(obj, now),
        Value::from(request),
        Value::from(limit),
    ]
}

const ROLE_PREFIX: &str = "node-role.kubernetes.io/";
const ROLE_LABEL: &str = "kubernetes.io/role";

fn node_status(node: &Value) -> String {
    let ready = list(node, "/status/conditions")
        .iter()
        .rev()
        .find(|c| text(c, "/type") == "Ready");
    let mut status = vec![match ready {
        Some(c) if text(c, "/status") == "True" => "Ready",
        Some(_) => "NotReady",
        None => "Unknown",
    }];
    if flag(node, "/spec/unschedulable") {
        status.push("SchedulingDisabled");
    }
    status.join(",")
}

fn node_roles(node: &Value) -> String {
    let mut roles = BTreeSet::new();
    for (k, v) in map(node, "/metadata/labels").into_iter().flatten() {
        let v = v.as_str().unwrap_or("");
        match k.strip_prefix(ROLE_PREFIX) {
            Some(role) if !role.is_empty() => {
                roles.insert(role.to_string());
            }
            _ if k == ROLE_LABEL && !v.is_empty() => {
                roles.insert(v.to_string());
            }
            _ => {}
        }
    }
    let joined = roles.into_iter().collect::<Vec<_>>().join(",");
    if joined.is_empty() {
        "<none>".to_string()
    } else {
        joined
    }
}

fn node_address(node: &Value, kind: &str) -> String {
    list(node, "/status/addresses")
        .iter()
        .find(|a| text(a, "/type") == kind)
        .map_or("<none>".to_string(), |a| text(a, "/address").to_string())
}

fn or_unknown(node: &Value, pointer: &str) -> Value {
    Value::from(non_empty(node, pointer).unwrap_or("<unknown>"))
}

pub(crate) fn node_row(node: &Value, now: DateTime<Utc>) -> Vec<Value> {
    vec![
        name(node),
        Value::from(node_status(node)),
        Value::from(node_roles(node)),
        age(node, now),
        Value::from(text(node, "/status/nodeInfo/kubeletVersion")),
        Value::from(node_address(node, "InternalIP")),
        Value::from(node_address(node, "ExternalIP")),
        or_unknown(node, "/status/nodeInfo/osImage"),
        or_unknown(node, "/status/nodeInfo/kernelVersion"),
        or_unknown(node, "/status/nodeInfo/containerRuntimeVersion"),
    ]
}

pub(crate) fn namespace_row(ns: &Value, now: DateTime<Utc>) -> Vec<Value> {
    vec![
        name(ns),
        Value::from(text(ns, "/status/phase")),
        age(ns, now),
    ]
}

/// Reads a core/v1 field, falling back to its events.k8s.io/v1 spelling.
fn either<'a>(ev: &'a Value, core: &str, v1: &str) -> &'a str {
    non_empty(ev, core).unwrap_or_else(|| text(ev, v1))
}

fn event_times(ev: &Value, now: DateTime<Utc>) -> (String, String, i64) {
    let first_ts = time(ev, "/firstTimestamp").or_else(|| time(ev, "/deprecatedFirstTimestamp"));
    let first = match first_ts {
        Some(t) => since(Some(t), now),
        None => since(time(ev, "/eventTime"), now),
    };
    let last_ts = time(ev, "/lastTimestamp").or_else(|| time(ev, "/deprecatedLastTimestamp"));
    let mut last = last_ts.map_or_else(|| first.clone(), |t| since(Some(t), now));
    let mut count = opt_int(ev, "/count").unwrap_or_else(|| int(ev, "/deprecatedCount"));
    if ev.pointer("/series").is_some_and(Value::is_object) {
        last = since(time(ev, "/series/lastObservedTime"), now);
        count = int(ev, "/series/count");
    } else if count == 0 {
        count = 1;
    }
    (first, last, count)
}

fn event_target(ev: &Value) -> String {
    let kind = either(ev, "/involvedObject/kind", "/regarding/kind").to_lowercase();
    match either(ev, "/involvedObject/name", "/regarding/name") {
        "" => kind,
        n => format!("{kind}/{n}"),
    }
}

fn event_source(ev: &Value) -> String {
    let component = non_empty(ev, "/source/component")
        .or_else(|| non_empty(ev, "/deprecatedSource/component"))
        .unwrap_or_else(|| either(ev, "/reportingComponent", "/reportingController"));
    let host = non_empty(ev, "/source/host")
        .or_else(|| non_empty(ev, "/deprecatedSource/host"))
        .unwrap_or_else(|| text(ev, "/reportingInstance"));
    match host {
        "" => component.to_string(),
        h => format!("{component}, {h}"),
    }
}

pub(crate) fn event_row(ev: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let (first, last, count) = event_times(ev, now);
    let field_path = either(ev, "/involvedObject/fieldPath", "/regarding/fieldPath");
    vec![
        Value::from(last),
        Value::from(text(ev, "/type")),
        Value::from(text(ev, "/reason")),
        Value::from(event_target(ev)),
        Value::from(field_path),
        Value::from(event_source(ev)),
        Value::from(either(ev, "/message", "/note").trim()),
        Value::from(first),
        Value::from(count),
        name(ev),
    ]
}

/// kube's printComponentStatus: the Healthy condition's status, message and error.
pub(crate) fn component_status_row(obj: &Value, _now: DateTime<Utc>) -> Vec<Value> {
    let healthy = list(obj, "/conditions")
        .iter()
        .find(|c| text(c, "/type") == "Healthy");
    let (status, message, error) = match healthy {
        Some(c) => (
            if text(c, "/status") == "True" {
                "Healthy"
            } else {
                "Unhealthy"
            },
            text(c, "/message"),
            text(c, "/error"),
        ),
        None => ("Unknown", "", ""),
    };
    vec![
        name(obj),
        Value::from(status),
        Value::from(message),
        Value::from(error),
    ]
}

const BETA_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";

/// kube's `GetAccessModesAsString`: RWO, ROX, RWX, RWOP in that order.
fn access_modes(obj: &Value, pointer: &str) -> String {
    let modes: Vec<&str> = list(obj, pointer)
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let known = [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ];
    let shown: Vec<&str> = known
        .iter()
        .filter(|(mode, _)| modes.contains(mode))
        .map(|(_, short)| *short)
        .collect();
    shown.join(",")
}

/// The beta storage-class annotation wins over `spec.storageClassName`.
fn storage_class(obj: &Value) -> String {
    let annotation = map(obj, "/metadata/annotations")
        .and_then(|a| a.get(BETA_CLASS_ANNOTATION))
        .and_then(Value::as_str);
    annotation
        .unwrap_or_else(|| text(obj, "/spec/storageClassName"))
        .to_string()
}

fn is_deleting(obj: &Value) -> bool {
    obj.pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
}

fn phase(obj: &Value) -> &str {
    if is_deleting(obj) {
        "Terminating"
    } else {
        text(obj, "/status/phase")
    }
}

fn or_unset(obj: &Value, pointer: &str) -> Value {
    let v = obj.pointer(pointer).and_then(Value::as_str);
    Value::from(v.unwrap_or("<unset>"))
}

pub(crate) fn persistent_volume_row(pv: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let claim = match pv.pointer("/spec/claimRef") {
        Some(c) if c.is_object() => format!("{}/{}", text(c, "/namespace"), text(c, "/name")),
        _ => String::new(),
    };
    vec![
        name(pv),
        Value::from(quantity(pv, "/spec/capacity/storage")),
        Value::from(access_modes(pv, "/spec/accessModes")),
        Value::from(text(pv, "/spec/persistentVolumeReclaimPolicy")),
        Value::from(phase(pv)),
        Value::from(claim),
        Value::from(storage_class(pv)),
        or_unset(pv, "/spec/volumeAttributesClassName"),
        Value::from(text(pv, "/status/reason")),
        age(pv, now),
        or_unset(pv, "/spec/volumeMode"),
    ]
}

pub(crate) fn persistent_volume_claim_row(pvc: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let bound = non_empty(pvc, "/spec/volumeName").is_some();
    let (capacity, modes) = match bound {
        true => (
            quantity(pvc, "/status/capacity/storage"),
            access_modes(pvc, "/status/accessModes"),
        ),
        false => (String::new(), String::new()),
    };
    vec![
        name(pvc),
        Value::from(phase(pvc)),
        Value::from(text(pvc, "/spec/volumeName")),
        Value::from(capacity),
        Value::from(modes),
        Value::from(storage_class(pvc)),
        or_unset(pvc, "/spec/volumeAttributesClassName"),
        age(pvc, now),
        or_unset(pvc, "/spec/volumeMode"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        crate::table::at("2024-01-01T12:00:00Z")
    }

    fn running(name: &str, ready: bool, restarts: i64) -> Value {
        json!({"name": name, "ready": ready, "restartCount": restarts,
               "state": {"running": {"startedAt": "2024-01-01T11:00:00Z"}}})
    }

    fn pod(statuses: Value) -> Value {
        json!({
            "metadata": {"name": "web", "creationTimestamp": "2024-01-01T11:00:00Z"},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "n1"},
            "status": {"phase": "Running", "containerStatuses": statuses,
                       "podIPs": [{"ip": "10.1.0.5"}]}
        })
    }

    #[test]
    fn one_of_two_ready() {
        let p = pod(json!([running("a", true, 0), running("b", false, 0)]));
        let cells = pod_row(&p, now());
        assert_eq!(
            cells[..5],
            [
                json!("web"),
                json!("1/2"),
                json!("Running"),
                json!("0"),
                json!("60m")
            ]
        );
        assert_eq!(
            cells[5..],
            [
                json!("10.1.0.5"),
                json!("n1"),
                json!("<none>"),
                json!("<none>")
            ]
        );
    }

    #[test]
    fn crash_loop_and_restart_age() {
        let crashing = json!({"name": "b", "ready": false, "restartCount": 4,
            "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2024-01-01T11:55:00Z"}}});
        let p = pod(json!([running("a", true, 1), crashing]));
        let cells = pod_row(&p, now());
        assert_eq!(cells[2], json!("CrashLoopBackOff"));
        assert_eq!(cells[3], json!("5 (5m ago)"));
    }

    #[test]
    fn init_container_progress() {
        let mut p = pod(json!([]));
        p["spec"]["initContainers"] = json!([{"name": "i1"}, {"name": "i2"}]);
        p["status"]["phase"] = json!("Pending");
        p["status"]["initContainerStatuses"] = json!([
            {"name": "i1", "state": {"terminated": {"exitCode": 0}}},
            {"name": "i2", "state": {"running": {}}}
        ]);
        assert_eq!(pod_row(&p, now())[2], json!("Init:1/2"));
        p["status"]["initContainerStatuses"][1] =
            json!({"name": "i2", "state": {"terminated": {"exitCode": 3}}});
        assert_eq!(pod_row(&p, now())[2], json!("Init:ExitCode:3"));
        p["status"]["initContainerStatuses"][1] =
            json!({"name": "i2", "state": {"waiting": {"reason": "ImagePullBackOff"}}});
        assert_eq!(pod_row(&p, now())[2], json!("Init:ImagePullBackOff"));
    }

    #[test]
    fn terminating_and_completed() {
        let mut p = pod(json!([running("a", true, 0), running("b", true, 0)]));
        p["metadata"]["deletionTimestamp"] = json!("2024-01-01T11:59:00Z");
        assert_eq!(pod_row(&p, now())[2], json!("Terminating"));
        let done =
            json!({"name": "a", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}});
        let mut p = pod(json!([done]));
        p["status"]["phase"] = json!("Succeeded");
        assert_eq!(pod_row(&p, now())[2], json!("Completed"));
        assert_eq!(
            pod_row_conditions(&p).unwrap()[0]["reason"],
            json!("Succeeded")
        );
    }

    #[test]
    fn sidecar_counts_toward_ready_total() {
        let mut p = pod(json!([running("a", true, 0), running("b", true, 0)]));
        p["spec"]["initContainers"] = json!([{"name": "proxy", "restartPolicy": "Always"}]);
        p["status"]["initContainerStatuses"] = json!([
            {"name": "proxy", "ready": true, "started": true, "restartCount": 2,
             "state": {"running": {}}}
        ]);
        let cells = pod_row(&p, now());
        assert_eq!(cells[1], json!("3/3"));
        assert_eq!(cells[3], json!("2"));
    }

    #[test]
    fn scheduling_gated_and_readiness_gates() {
        let mut p = pod(json!([]));
        p["status"] = json!({"phase": "Pending", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"},
            {"type": "example.com/ok", "status": "True"}]});
        p["spec"]["readinessGates"] = json!([{"conditionType": "example.com/ok"},
                                             {"conditionType": "example.com/no"}]);
        let cells = pod_row(&p, now());
        assert_eq!(cells[2], json!("SchedulingGated"));
        assert_eq!(cells[8], json!("1/2"));
    }
}

#[cfg(test)]
mod network_tests {
    use super::*;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        crate::table::at("2024-01-01T00:10:00Z")
    }

    #[test]
    fn node_port_service() {
        let svc = json!({
            "metadata": {"name": "web", "creationTimestamp": "2024-01-01T00:00:00Z"},
            "spec": {"type": "NodePort", "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
                     "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"},
                               {"port": 53, "protocol": "UDP"}],
                     "selector": {"app": "web"}}
        });
        assert_eq!(
            service_row(&svc, now()),
            [
                json!("web"),
                json!("NodePort"),
                json!("10.96.0.10"),
                json!("<none>"),
                json!("80:30080/TCP,53/UDP"),
                json!("10m"),
                json!("app=web")
            ]
        );
    }

    #[test]
    fn load_balancer_and_headless() {
        let lb = json!({"spec": {"type": "LoadBalancer"}, "status": {"loadBalancer": {}}});
        assert_eq!(service_external_ip(&lb), "<pending>");
        let lb = json!({"spec": {"type": "LoadBalancer", "externalIPs": ["5.6.7.8"]},
                        "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}});
        assert_eq!(service_external_ip(&lb), "1.2.3.4,5.6.7.8");
        let headless = json!({"spec": {"clusterIP": "None", "clusterIPs": ["None"]}});
        assert_eq!(service_row(&headless, now())[2], json!("None"));
        assert_eq!(service_row(&headless, now())[4], json!("<none>"));
    }

    #[test]
    fn endpoints_formatting() {
        let ep = json!({"subsets": [{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"},
                                                   {"ip": "fd00::1"}, {"ip": "10.0.0.4"}],
                                     "ports": [{"port": 8080}]}]});
        assert_eq!(
            format_endpoints(&ep),
            "10.0.0.1:8080,10.0.0.2:8080,[fd00::1]:8080 + 1 more..."
        );
        assert_eq!(format_endpoints(&json!({})), "<none>");
    }
}

#[cfg(test)]
mod config_tests {
    use super::*;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        crate::table::at("2024-01-01T00:00:30Z")
    }

    fn meta() -> Value {
        json!({"name": "x", "creationTimestamp": "2024-01-01T00:00:00Z"})
    }

    #[test]
    fn data_counts() {
        let cm = json!({"metadata": meta(), "data": {"a": "1", "b": "2"}, "binaryData": {"c": ""}});
        assert_eq!(
            config_map_row(&cm, now()),
            [json!("x"), json!(3), json!("30s")]
        );
        let sec = json!({"metadata": meta(), "type": "Opaque", "data": {"k": "dg=="}});
        assert_eq!(secret_row(&sec, now())[1..3], [json!("Opaque"), json!(1)]);
        let sa = json!({"metadata": meta()});
        assert_eq!(service_account_row(&sa, now())[1], json!(0));
    }

    #[test]
    fn quota_columns() {
        let q = json!({"status": {
            "hard": {"limits.cpu": "2", "requests.cpu": "1", "pods": "10"},
            "used": {"limits.cpu": "500m", "pods": "3"}}});
        let (request, limit) = quota_usage(&q);
        assert_eq!(request, "pods: 3/10, requests.cpu: 0/1");
        assert_eq!(limit, "limits.cpu: 500m/2");
    }
}

#[cfg(test)]
mod cluster_tests {
    use super::*;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        crate::table::at("2024-01-01T01:00:00Z")
    }

    #[test]
    fn node_cells() {
        let node = json!({
            "metadata": {"name": "n1", "creationTimestamp": "2024-01-01T00:00:00Z",
                         "labels": {"node-role.kubernetes.io/control-plane": "",
                                    "kubernetes.io/role": "master"}},
            "spec": {"unschedulable": true},
            "status": {"conditions": [{"type": "Ready", "status": "True"}],
                       "addresses": [{"type": "InternalIP", "address": "192.168.0.2"}],
                       "nodeInfo": {"kubeletVersion": "v1.33.0", "osImage": "Debian"}}
        });
        assert_eq!(
            node_row(&node, now()),
            [
                json!("n1"),
                json!("Ready,SchedulingDisabled"),
                json!("control-plane,master"),
                json!("60m"),
                json!("v1.33.0"),
                json!("192.168.0.2"),
                json!("<none>"),
                json!("Debian"),
                json!("<unknown>"),
                json!("<unknown>")
            ]
        );
        assert_eq!(node_status(&json!({})), "Unknown");
    }

    #[test]
    fn core_event_cells() {
        let ev = json!({
            "metadata": {"name": "web.17a"},
            "involvedObject": {"kind": "Pod", "name": "web", "fieldPath": "spec.containers{a}"},
            "reason": "Pulled", "type": "Normal", "message": " pulled image \n",
            "source": {"component": "kubelet", "host": "n1"},
            "firstTimestamp": "2024-01-01T00:00:00Z", "lastTimestamp": "2024-01-01T00:59:00Z",
            "count": 3
        });
        assert_eq!(
            event_row(&ev, now()),
            [
                json!("60s"),
                json!("Normal"),
                json!("Pulled"),
                json!("pod/web"),
                json!("spec.containers{a}"),
                json!("kubelet, n1"),
                json!("pulled image"),
                json!("60m"),
                json!(3),
                json!("web.17a")
            ]
        );
    }

    #[test]
    fn events_v1_and_series() {
        let ev = json!({
            "metadata": {"name": "e"},
            "regarding": {"kind": "Node", "name": "n1"},
            "note": "boom", "reportingController": "ctrl", "reportingInstance": "i1",
            "eventTime": "2024-01-01T00:30:00.000000Z",
            "series": {"count": 7, "lastObservedTime": "2024-01-01T00:57:00.500000Z"}
        });
        let cells = event_row(&ev, now());
        assert_eq!(cells[0], json!("2m59s"));
        assert_eq!(cells[3], json!("node/n1"));
        assert_eq!(cells[5], json!("ctrl, i1"));
        assert_eq!(cells[6], json!("boom"));
        assert_eq!(cells[7], json!("30m"));
        assert_eq!(cells[8], json!(7));
        let bare = json!({"involvedObject": {"kind": "Pod"}});
        assert_eq!(event_row(&bare, now())[0], json!("<unknown>"));
        assert_eq!(event_row(&bare, now())[8], json!(1));
    }
}

#[cfg(test)]
mod storage_tests {
    use super::*;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        crate::table::at("2024-01-03T00:00:00Z")
    }

    #[test]
    fn bound_volume_and_claim() {
        let pv = json!({
            "metadata": {"name": "pv1", "creationTimestamp": "2024-01-01T00:00:00Z"},
            "spec": {"capacity": {"storage": "10Gi"},
                     "accessModes": ["ReadWriteMany", "ReadWriteOnce"],
                     "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "fast",
                     "claimRef": {"namespace": "ns", "name": "data"}, "volumeMode": "Filesystem"},
            "status": {"phase": "Bound"}
        });
        assert_eq!(
            persistent_volume_row(&pv, now()),
            [
                json!("pv1"),
                json!("10Gi"),
                json!("RWO,RWX"),
                json!("Retain"),
                json!("Bound"),
                json!("ns/data"),
                json!("fast"),
                json!("<unset>"),
                json!(""),
                json!("2d"),
                json!("Filesystem")
            ]
        );
        let pvc = json!({"metadata": {"name": "data"}, "spec": {"volumeName": "pv1"},
            "status": {"phase": "Bound", "capacity": {"storage": "10Gi"},
                       "accessModes": ["ReadWriteOnce"]}});
        assert_eq!(
            persistent_volume_claim_row(&pvc, now())[1..5],
            [json!("Bound"), json!("pv1"), json!("10Gi"), json!("RWO")]
        );
        let pending = json!({"spec": {}, "status": {"phase": "Pending"}});
        assert_eq!(persistent_volume_claim_row(&pending, now())[3], json!(""));
    }
}
