//! Pods and pod specs (also the templates of workloads): containers, their
//! names, images, ports and pull policies, and the pod's restart policy, as
//! `ValidatePodSpec` words them. Update rules live in `pod_update`.

use std::collections::HashSet;

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use super::pod_spec;
use super::pod_update;
use crate::common::{self, int, list, text, PROTOCOLS};
use kube_rules::gofmt;

/// The names of the pod's valid volumes.
type Volumes = HashSet<String>;

const RESTART_POLICIES: [&str; 3] = ["Always", "OnFailure", "Never"];
const PULL_POLICIES: [&str; 3] = ["Always", "IfNotPresent", "Never"];
const MESSAGE_POLICIES: [&str; 2] = ["File", "FallbackToLogsOnError"];
const DNS_POLICIES: [&str; 4] = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];

/// A pod write: its spec, and on update the fields that may not change.
pub fn validate(pod: &Value, old: Option<&Value>) -> Vec<Cause> {
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    let mut causes = validate_spec(spec, "spec");
    if let Some(old) = old {
        let old_spec = old.get("spec").unwrap_or(&Value::Null);
        causes.extend(pod_update::validate(spec, old_spec));
    }
    causes
}

/// A PodSpec found at field path `at` ("spec", "spec.template.spec").
pub fn validate_spec(spec: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let volumes = pod_spec::volumes(spec, at, &mut causes);
    regular_containers(spec, at, &volumes, &mut causes);
    init_containers(spec, at, &volumes, &mut causes);
    let field = format!("{at}.restartPolicy");
    one_of(
        spec.get("restartPolicy"),
        &field,
        &RESTART_POLICIES,
        &mut causes,
    );
    let field = format!("{at}.dnsPolicy");
    one_of(spec.get("dnsPolicy"), &field, &DNS_POLICIES, &mut causes);
    pod_spec::pod_level(spec, at, &mut causes);
    causes
}

/// An enumerated string field: "" is missing, anything else must be listed.
/// Absent is accepted (the server defaults it).
pub fn one_of(value: Option<&Value>, field: &str, allowed: &[&str], causes: &mut Vec<Cause>) {
    match value.and_then(Value::as_str) {
        None => {}
        Some("") => causes.push(common::required(field, "")),
        Some(v) if !allowed.contains(&v) => causes.push(common::not_supported(field, v, allowed)),
        Some(_) => {}
    }
}

fn regular_containers(spec: &Value, at: &str, volumes: &Volumes, causes: &mut Vec<Cause>) {
    let containers = list(spec, "containers");
    let field = format!("{at}.containers");
    if containers.is_empty() {
        causes.push(common::required(&field, ""));
        return;
    }
    let mut names = HashSet::new();
    for (i, container) in containers.iter().enumerate() {
        let path = format!("{field}[{i}]");
        container_common(container, &path, volumes, causes);
        let name = text(container, "name");
        if !names.insert(name) {
            causes.push(common::duplicate(
                &format!("{path}.name"),
                &gofmt::quote(name),
            ));
        }
        pod_spec::probes(container, &path, causes);
    }
    host_port_conflicts(containers, &field, causes);
}

/// Init containers: names unique across init and regular containers; host
/// ports checked one container at a time (kube reports them at index 0).
fn init_containers(spec: &Value, at: &str, volumes: &Volumes, causes: &mut Vec<Cause>) {
    let mut names: HashSet<&str> = list(spec, "containers")
        .iter()
        .map(|c| text(c, "name"))
        .collect();
    let field = format!("{at}.initContainers");
    for (i, container) in list(spec, "initContainers").iter().enumerate() {
        let path = format!("{field}[{i}]");
        container_common(container, &path, volumes, causes);
        let name = text(container, "name");
        if names.contains(name) {
            causes.push(common::duplicate(
                &format!("{path}.name"),
                &gofmt::quote(name),
            ));
        } else if !name.is_empty() {
            names.insert(name);
        }
        host_port_conflicts(std::slice::from_ref(container), &field, causes);
    }
}

/// What every container kind must satisfy (`validateContainerCommon`).
fn container_common(container: &Value, path: &str, volumes: &Volumes, causes: &mut Vec<Cause>) {
    let name = text(container, "name");
    let name_field = format!("{path}.name");
    if name.is_empty() {
        causes.push(common::required(&name_field, ""));
    } else {
        common::invalid_each(causes, &name_field, name, kube_rules::dns1123_label(name));
    }
    if text(container, "image").is_empty() {
        causes.push(common::required(&format!("{path}.image"), ""));
    }
    let field = format!("{path}.terminationMessagePolicy");
    one_of(
        container.get("terminationMessagePolicy"),
        &field,
        &MESSAGE_POLICIES,
        causes,
    );
    container_ports(list(container, "ports"), &format!("{path}.ports"), causes);
    let before = pod_spec::Stage::BeforePullPolicy;
    pod_spec::container_extras(container, path, volumes, before, causes);
    let field = format!("{path}.imagePullPolicy");
    one_of(
        container.get("imagePullPolicy"),
        &field,
        &PULL_POLICIES,
        causes,
    );
    let after = pod_spec::Stage::AfterPullPolicy;
    pod_spec::container_extras(container, path, volumes, after, causes);
}

fn container_ports(ports: &[Value], at: &str, causes: &mut Vec<Cause>) {
    let mut names = HashSet::new();
    for (j, port) in ports.iter().enumerate() {
        let path = format!("{at}[{j}]");
        port_name(port, &path, &mut names, causes);
        let container_port = int(port, "containerPort");
        let field = format!("{path}.containerPort");
        if container_port == 0 {
            causes.push(common::required(&field, ""));
        } else if let Some(msg) = kube_rules::port_num(container_port) {
            causes.push(common::invalid(&field, &container_port.to_string(), &msg));
        }
        let host_port = int(port, "hostPort");
        if let Some(msg) = kube_rules::port_num(host_port).filter(|_| host_port != 0) {
            let field = format!("{path}.hostPort");
            causes.push(common::invalid(&field, &host_port.to_string(), &msg));
        }
        protocol(port, &path, causes);
    }
}

fn port_name<'a>(
    port: &'a Value,
    path: &str,
    seen: &mut HashSet<&'a str>,
    causes: &mut Vec<Cause>,
) {
    let name = text(port, "name");
    if name.is_empty() {
        return;
    }
    let field = format!("{path}.name");
    let errs = kube_rules::port_name(name);
    if !errs.is_empty() {
        common::invalid_each(causes, &field, name, errs);
    } else if !seen.insert(name) {
        causes.push(common::duplicate(&field, &gofmt::quote(name)));
    }
}

/// A port's protocol: TCP, UDP or SCTP (absent means the TCP default).
pub fn protocol(port: &Value, path: &str, causes: &mut Vec<Cause>) {
    one_of(
        port.get("protocol"),
        &format!("{path}.protocol"),
        &PROTOCOLS,
        causes,
    );
}

/// Two ports may not claim the same protocol/hostIP/hostPort.
fn host_port_conflicts(containers: &[Value], at: &str, causes: &mut Vec<Cause>) {
    let mut seen = HashSet::new();
    for (i, container) in containers.iter().enumerate() {
        for (j, port) in list(container, "ports").iter().enumerate() {
            let host_port = int(port, "hostPort");
            if host_port == 0 {
                continue;
            }
            let proto = Some(text(port, "protocol")).filter(|p| !p.is_empty());
            let key = format!(
                "{}/{}/{host_port}",
                proto.unwrap_or("TCP"),
                text(port, "hostIP")
            );
            if !seen.insert(key.clone()) {
                let field = format!("{at}[{i}].ports[{j}].hostPort");
                causes.push(common::duplicate(&field, &gofmt::quote(&key)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::messages;
    use serde_json::json;

    #[test]
    fn containers_are_required() {
        let causes = validate(&json!({"spec": {}}), None);
        assert_eq!(messages(&causes), vec!["spec.containers: Required value"]);
        assert_eq!(causes[0].cause_type, "FieldValueRequired");
    }

    #[test]
    fn container_name_image_and_duplicates() {
        let pod = json!({"spec": {
            "containers": [{"name": "Foo", "image": "nginx"}, {"name": "a"}, {"name": "a", "image": "x"}],
            "initContainers": [{"name": "a", "image": "busybox"}]}});
        let got = messages(&validate(&pod, None));
        assert_eq!(
            got,
            vec![
                "spec.containers[0].name: Invalid value: \"Foo\": a lowercase RFC 1123 label must \
                 consist of lower case alphanumeric characters or '-', and must start and end with \
                 an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for \
                 validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                "spec.containers[1].image: Required value",
                "spec.containers[2].name: Duplicate value: \"a\"",
                "spec.initContainers[0].name: Duplicate value: \"a\"",
            ]
        );
    }

    #[test]
    fn ports_policies_and_restart_policy() {
        let pod = json!({"spec": {"restartPolicy": "Sometimes", "containers": [{
            "name": "web", "image": "nginx", "imagePullPolicy": "Sometimes",
            "ports": [{"containerPort": 70000, "protocol": "HTTP"}, {"hostPort": 99999},
                      {"name": "http", "containerPort": 80}, {"name": "http", "containerPort": 81}]}]}});
        let got = messages(&validate(&pod, None));
        assert_eq!(
            got,
            vec![
                "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
                "spec.containers[0].ports[0].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
                "spec.containers[0].ports[1].containerPort: Required value",
                "spec.containers[0].ports[1].hostPort: Invalid value: 99999: must be between 1 and 65535, inclusive",
                "spec.containers[0].ports[3].name: Duplicate value: \"http\"",
                "spec.containers[0].imagePullPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"IfNotPresent\", \"Never\"",
                "spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"",
            ]
        );
    }

    #[test]
    fn host_ports_may_not_collide() {
        let pod = json!({"spec": {"containers": [
            {"name": "a", "image": "x", "ports": [{"containerPort": 80, "hostPort": 8080}]},
            {"name": "b", "image": "x", "ports": [{"containerPort": 81, "hostPort": 8080, "protocol": "TCP"}]}]}});
        assert_eq!(
            messages(&validate(&pod, None)),
            vec!["spec.containers[1].ports[0].hostPort: Duplicate value: \"TCP//8080\""]
        );
    }

    #[test]
    fn a_valid_pod_has_no_causes() {
        let pod = json!({"spec": {"restartPolicy": "Never", "containers": [{
            "name": "web", "image": "nginx:1.27", "imagePullPolicy": "IfNotPresent",
            "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP"}]}]}});
        assert!(validate(&pod, None).is_empty());
    }
}
