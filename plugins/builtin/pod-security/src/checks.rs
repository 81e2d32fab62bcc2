//! The Pod Security Standards checks (baseline and restricted) over a pod
//! spec, each giving kube's reason and detail text, in kube's order.

use std::collections::BTreeSet;

use capstan_plugin_sdk::{object, Value};

/// One failed check: reason ("privileged") and detail (`container "a" must not ...`).
pub type Violation = (&'static str, String);

/// The capabilities baseline allows to be added.
const BASELINE_CAPS: [&str; 13] = [
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];
/// Sysctls baseline allows.
const SAFE_SYSCTLS: [&str; 10] = [
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
];
/// Volume sources restricted allows.
const RESTRICTED_VOLUMES: [&str; 8] = [
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

/// Every violation of `level` ("baseline" or "restricted").
pub fn evaluate(spec: &Value, restricted: bool) -> Vec<Violation> {
    let mut out = Vec::new();
    if !restricted {
        out.extend(capabilities_baseline(spec));
    }
    out.extend(host_namespaces(spec));
    out.extend(host_path_volumes(spec));
    out.extend(host_ports(spec));
    out.extend(privileged(spec));
    out.extend(proc_mount(spec));
    if !restricted {
        out.extend(seccomp_baseline(spec));
    }
    out.extend(sysctls(spec));
    if restricted {
        out.extend(allow_privilege_escalation(spec));
        out.extend(capabilities_restricted(spec));
        out.extend(restricted_volumes(spec));
        out.extend(run_as_non_root(spec));
        out.extend(run_as_user(spec));
        out.extend(seccomp_restricted(spec));
    }
    out
}

fn containers(spec: &Value) -> Vec<&Value> {
    object::pod_containers(spec)
        .into_iter()
        .map(|(_, _, c)| c)
        .collect()
}

fn name(c: &Value) -> &str {
    object::get_str(c, &["name"]).unwrap_or("")
}

fn quoted<S: AsRef<str>>(items: &[S]) -> String {
    items
        .iter()
        .map(|s| format!("\"{}\"", s.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `container "a"` or `containers "a", "b"` (kube's pluralisation).
fn which(noun: &str, names: &[&str]) -> String {
    let plural = if names.len() == 1 { "" } else { "s" };
    format!("{noun}{plural} {}", quoted(names))
}

fn failing(spec: &Value, bad: impl Fn(&Value) -> bool) -> Vec<&str> {
    containers(spec)
        .into_iter()
        .filter(|c| bad(c))
        .map(name)
        .collect()
}

fn ctx<'a>(c: &'a Value, path: &[&str]) -> Option<&'a Value> {
    let mut full = vec!["securityContext"];
    full.extend_from_slice(path);
    object::get(c, &full)
}

fn host_namespaces(spec: &Value) -> Option<Violation> {
    let set: Vec<String> = ["hostNetwork", "hostPID", "hostIPC"]
        .iter()
        .filter(|f| spec.get(**f).and_then(Value::as_bool) == Some(true))
        .map(|f| format!("{f}=true"))
        .collect();
    (!set.is_empty()).then(|| ("host namespaces", set.join(", ")))
}

fn privileged(spec: &Value) -> Option<Violation> {
    let bad = failing(spec, |c| {
        ctx(c, &["privileged"]).and_then(Value::as_bool) == Some(true)
    });
    (!bad.is_empty()).then(|| {
        (
            "privileged",
            format!(
                "{} must not set securityContext.privileged=true",
                which("container", &bad)
            ),
        )
    })
}

fn added_caps(c: &Value) -> Vec<&str> {
    ctx(c, &["capabilities", "add"])
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// (containers, capabilities) adding something outside `allowed`.
fn disallowed_caps(spec: &Value, allowed: &[&str]) -> Option<String> {
    let mut names = Vec::new();
    let mut caps = BTreeSet::new();
    for c in containers(spec) {
        let bad: Vec<&str> = added_caps(c)
            .into_iter()
            .filter(|cap| !allowed.contains(cap))
            .collect();
        if !bad.is_empty() {
            names.push(name(c));
            caps.extend(bad);
        }
    }
    let caps: Vec<&str> = caps.into_iter().collect();
    (!names.is_empty()).then(|| {
        format!(
            "{} must not include {} in securityContext.capabilities.add",
            which("container", &names),
            quoted(&caps)
        )
    })
}

fn capabilities_baseline(spec: &Value) -> Option<Violation> {
    disallowed_caps(spec, &BASELINE_CAPS).map(|d| ("non-default capabilities", d))
}

fn capabilities_restricted(spec: &Value) -> Option<Violation> {
    let no_drop_all = failing(spec, |c| {
        !ctx(c, &["capabilities", "drop"])
            .and_then(Value::as_array)
            .is_some_and(|d| d.iter().any(|v| v.as_str() == Some("ALL")))
    });
    let mut details = Vec::new();
    if !no_drop_all.is_empty() {
        details.push(format!(
            "{} must set securityContext.capabilities.drop=[\"ALL\"]",
            which("container", &no_drop_all)
        ));
    }
    details.extend(disallowed_caps(spec, &["NET_BIND_SERVICE"]));
    (!details.is_empty()).then(|| ("unrestricted capabilities", details.join("; ")))
}

fn volumes_with<'a>(spec: &'a Value, source: &str) -> Vec<&'a str> {
    object::array(spec, &["volumes"])
        .iter()
        .filter(|v| v.get(source).is_some())
        .map(name)
        .collect()
}

fn host_path_volumes(spec: &Value) -> Option<Violation> {
    let bad = volumes_with(spec, "hostPath");
    (!bad.is_empty()).then(|| ("hostPath volumes", which("volume", &bad)))
}

fn host_ports(spec: &Value) -> Option<Violation> {
    let mut names = Vec::new();
    let mut ports = BTreeSet::new();
    for c in containers(spec) {
        let used: Vec<i64> = object::array(c, &["ports"])
            .iter()
            .filter_map(|p| p.get("hostPort").and_then(Value::as_i64))
            .filter(|p| *p != 0)
            .collect();
        if !used.is_empty() {
            names.push(name(c));
            ports.extend(used);
        }
    }
    let ports: Vec<String> = ports.iter().map(i64::to_string).collect();
    let (verb, noun) = if names.len() == 1 {
        ("uses", "hostPort")
    } else {
        ("use", "hostPorts")
    };
    (!names.is_empty()).then(|| {
        (
            "hostPort",
            format!(
                "{} {verb} {noun} {}",
                which("container", &names),
                ports.join(", ")
            ),
        )
    })
}

fn proc_mount(spec: &Value) -> Option<Violation> {
    let bad = failing(spec, |c| {
        ctx(c, &["procMount"])
            .and_then(Value::as_str)
            .is_some_and(|m| m != "Default")
    });
    (!bad.is_empty()).then(|| {
        (
            "procMount",
            format!(
                "{} must not set securityContext.procMount to \"Unmasked\"",
                which("container", &bad)
            ),
        )
    })
}

fn seccomp_type(v: &Value) -> Option<&str> {
    object::get_str(v, &["securityContext", "seccompProfile", "type"])
}

fn seccomp_baseline(spec: &Value) -> Option<Violation> {
    let mut details = Vec::new();
    if seccomp_type(spec) == Some("Unconfined") {
        details.push(
            "pod must not set securityContext.seccompProfile.type to \"Unconfined\"".to_string(),
        );
    }
    let bad = failing(spec, |c| seccomp_type(c) == Some("Unconfined"));
    if !bad.is_empty() {
        details.push(format!(
            "{} must not set securityContext.seccompProfile.type to \"Unconfined\"",
            which("container", &bad)
        ));
    }
    (!details.is_empty()).then(|| ("seccompProfile", details.join("; ")))
}

fn sysctls(spec: &Value) -> Option<Violation> {
    let bad: Vec<&str> = object::array(spec, &["securityContext", "sysctls"])
        .iter()
        .map(name)
        .filter(|n| !SAFE_SYSCTLS.contains(n))
        .collect();
    (!bad.is_empty()).then(|| ("forbidden sysctls", bad.join(", ")))
}

fn allow_privilege_escalation(spec: &Value) -> Option<Violation> {
    let bad = failing(spec, |c| {
        ctx(c, &["allowPrivilegeEscalation"]).and_then(Value::as_bool) != Some(false)
    });
    (!bad.is_empty()).then(|| {
        (
            "allowPrivilegeEscalation != false",
            format!(
                "{} must set securityContext.allowPrivilegeEscalation=false",
                which("container", &bad)
            ),
        )
    })
}

fn restricted_volumes(spec: &Value) -> Option<Violation> {
    let mut names = Vec::new();
    let mut kinds = BTreeSet::new();
    for v in object::array(spec, &["volumes"]) {
        let bad: Vec<&str> = v
            .as_object()
            .map(|m| {
                m.keys()
                    .map(String::as_str)
                    .filter(|k| *k != "name" && !RESTRICTED_VOLUMES.contains(k))
                    .collect()
            })
            .unwrap_or_default();
        if !bad.is_empty() {
            names.push(name(v));
            kinds.extend(bad);
        }
    }
    let kinds: Vec<&str> = kinds.into_iter().collect();
    let (verb, noun) = if names.len() == 1 {
        ("uses", "type")
    } else {
        ("use", "types")
    };
    (!names.is_empty()).then(|| {
        (
            "restricted volume types",
            format!(
                "{} {verb} restricted volume {noun} {}",
                which("volume", &names),
                quoted(&kinds)
            ),
        )
    })
}

fn run_as_non_root(spec: &Value) -> Option<Violation> {
    let flag =
        |v: &Value| object::get(v, &["securityContext", "runAsNonRoot"]).and_then(Value::as_bool);
    let pod = flag(spec);
    let mut details = Vec::new();
    if pod == Some(false) {
        details.push("pod must not set securityContext.runAsNonRoot=false".to_string());
    }
    let explicit_false = failing(spec, |c| flag(c) == Some(false));
    if !explicit_false.is_empty() {
        details.push(format!(
            "{} must not set securityContext.runAsNonRoot=false",
            which("container", &explicit_false)
        ));
    }
    let unset = failing(spec, |c| flag(c).is_none());
    if pod.is_none() && !unset.is_empty() {
        details.push(format!(
            "pod or {} must set securityContext.runAsNonRoot=true",
            which("container", &unset)
        ));
    }
    (!details.is_empty()).then(|| ("runAsNonRoot != true", details.join("; ")))
}

fn run_as_user(spec: &Value) -> Option<Violation> {
    let zero = |v: &Value| {
        object::get(v, &["securityContext", "runAsUser"]).and_then(Value::as_i64) == Some(0)
    };
    let mut details = Vec::new();
    if zero(spec) {
        details.push("pod must not set runAsUser=0".to_string());
    }
    let bad = failing(spec, zero);
    if !bad.is_empty() {
        details.push(format!(
            "{} must not set runAsUser=0",
            which("container", &bad)
        ));
    }
    (!details.is_empty()).then(|| ("runAsUser=0", details.join("; ")))
}

fn seccomp_restricted(spec: &Value) -> Option<Violation> {
    let ok = |t: Option<&str>| matches!(t, Some("RuntimeDefault" | "Localhost"));
    let pod = seccomp_type(spec);
    let mut details = Vec::new();
    if pod.is_some() && !ok(pod) {
        details.push(format!(
            "pod must not set securityContext.seccompProfile.type to \"{}\"",
            pod.unwrap_or("")
        ));
    }
    let bad_set: Vec<&Value> = containers(spec)
        .into_iter()
        .filter(|c| seccomp_type(c).is_some_and(|t| !ok(Some(t))))
        .collect();
    for c in &bad_set {
        details.push(format!(
            "container \"{}\" must not set securityContext.seccompProfile.type to \"{}\"",
            name(c),
            seccomp_type(c).unwrap_or("")
        ));
    }
    let unset = failing(spec, |c| seccomp_type(c).is_none());
    if !ok(pod) && pod.is_none() && !unset.is_empty() {
        details.push(format!(
            "pod or {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"",
            which("container", &unset)
        ));
    }
    (!details.is_empty()).then(|| ("seccompProfile", details.join("; ")))
}
