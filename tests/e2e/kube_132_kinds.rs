//! The kinds kube-apiserver 1.32 serves that Capstan added later:
//! HorizontalPodAutoscaler (autoscaling/v2, and v1 converted as kube does),
//! the CSI storage kinds, RuntimeClass, flowcontrol (with kube's bootstrap
//! configuration), ValidatingAdmissionPolicy and its bindings, core
//! `bindings`; created, listed and printed with kube's columns.

use crate::support::{eventually, stdout, Server};
use serde_json::Value;
use std::time::Duration;

const OBJECTS: &str = r#"
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 5
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: csi.example.com}
spec: {podInfoOnMount: true}
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: node-1}
spec:
  drivers: [{name: csi.example.com, nodeID: node-1}]
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: fast-zone-a, namespace: default}
storageClassName: fast
capacity: 10Gi
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: va-1}
spec:
  attacher: csi.example.com
  nodeName: node-1
  source: {persistentVolumeName: pv-1}
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: gvisor}
handler: runsc
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replicas-limit}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
  validations:
  - expression: "object.spec.replicas <= 5"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: replicas-limit}
spec:
  policyName: replicas-limit
  validationActions: [Deny]
  paramRef: {name: limits, namespace: default, parameterNotFoundAction: Deny}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: batch}
spec:
  type: Limited
  limited:
    limitResponse:
      type: Queue
      queuing: {queues: 16}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: batch-jobs}
spec:
  priorityLevelConfiguration: {name: batch}
  distinguisherMethod: {type: ByUser}
  rules:
  - subjects: [{kind: Group, group: {name: batch-users}}]
    resourceRules: [{verbs: ["*"], apiGroups: ["*"], resources: ["*"], namespaces: ["*"]}]
"#;

/// The header cells of a kubectl table.
fn header(table: &str) -> Vec<String> {
    let first = table.lines().next().unwrap_or_default();
    first.split_whitespace().map(String::from).collect()
}

/// The row of `name` in a kubectl table, split on whitespace.
fn row(table: &str, name: &str) -> Vec<String> {
    let line = table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no row {name} in:\n{table}"));
    line.split_whitespace().map(String::from).collect()
}

#[test]
fn new_kinds_are_stored_listed_and_printed_with_kubes_columns() {
    let s = Server::start();
    s.ok_stdin(&["apply", "-f", "-"], OBJECTS);
    let cases: [(&str, &str, &[&str]); 10] = [
        (
            "hpa",
            "web",
            &[
                "NAME",
                "REFERENCE",
                "TARGETS",
                "MINPODS",
                "MAXPODS",
                "REPLICAS",
                "AGE",
            ],
        ),
        (
            "csidrivers",
            "csi.example.com",
            &[
                "NAME",
                "ATTACHREQUIRED",
                "PODINFOONMOUNT",
                "STORAGECAPACITY",
                "TOKENREQUESTS",
                "REQUIRESREPUBLISH",
                "MODES",
                "AGE",
            ],
        ),
        ("csinodes", "node-1", &["NAME", "DRIVERS", "AGE"]),
        (
            "csistoragecapacities",
            "fast-zone-a",
            // kube has no printer for it: the default NAME, CREATED AT.
            &["NAME", "CREATED", "AT"],
        ),
        (
            "volumeattachments",
            "va-1",
            &["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"],
        ),
        ("runtimeclasses", "gvisor", &["NAME", "HANDLER", "AGE"]),
        (
            "validatingadmissionpolicies",
            "replicas-limit",
            &["NAME", "VALIDATIONS", "PARAMKIND", "AGE"],
        ),
        (
            "validatingadmissionpolicybindings",
            "replicas-limit",
            &["NAME", "POLICYNAME", "PARAMREF", "AGE"],
        ),
        (
            "flowschemas",
            "batch-jobs",
            &[
                "NAME",
                "PRIORITYLEVEL",
                "MATCHINGPRECEDENCE",
                "DISTINGUISHERMETHOD",
                "AGE",
                "MISSINGPL",
            ],
        ),
        (
            "prioritylevelconfigurations",
            "batch",
            &[
                "NAME",
                "TYPE",
                "NOMINALCONCURRENCYSHARES",
                "QUEUES",
                "HANDSIZE",
                "QUEUELENGTHLIMIT",
                "AGE",
            ],
        ),
    ];
    for (resource, name, columns) in cases {
        let table = s.ok(&["get", resource]);
        assert_eq!(header(&table), columns, "{resource}:\n{table}");
        assert!(
            table.lines().any(|l| l.starts_with(name)),
            "{resource}:\n{table}"
        );
    }
    let hpa = s.ok(&["get", "hpa", "web"]);
    assert_eq!(
        &row(&hpa, "web")[1..6],
        ["Deployment/web", "cpu:", "<unknown>/60%", "1", "5"]
    );
    let driver = s.ok(&["get", "csidrivers"]);
    assert_eq!(
        &row(&driver, "csi.example.com")[1..7],
        ["true", "true", "false", "<unset>", "false", "Persistent"]
    );
    assert_eq!(
        &row(
            &s.ok(&["get", "validatingadmissionpolicies"]),
            "replicas-limit"
        )[1..3],
        ["1", "v1/ConfigMap"]
    );
    assert_eq!(
        row(
            &s.ok(&["get", "validatingadmissionpolicybindings"]),
            "replicas-limit"
        )[2],
        "default/limits"
    );
    assert_eq!(
        &row(&s.ok(&["get", "prioritylevelconfigurations"]), "batch")[1..6],
        ["Limited", "30", "16", "8", "50"]
    );
    assert_eq!(
        &row(&s.ok(&["get", "flowschemas"]), "batch-jobs")[1..4],
        ["batch", "1000", "ByUser"]
    );
}

#[test]
fn defaults_are_kubes() {
    let s = Server::start();
    s.ok_stdin(&["apply", "-f", "-"], OBJECTS);
    let driver = s.json(&["get", "csidriver", "csi.example.com", "-o", "json"]);
    assert_eq!(
        driver["spec"],
        serde_json::json!({"attachRequired": true, "podInfoOnMount": true,
            "volumeLifecycleModes": ["Persistent"], "storageCapacity": false,
            "fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": false,
            "seLinuxMount": false})
    );
    let policy = s.json(&[
        "get",
        "validatingadmissionpolicy",
        "replicas-limit",
        "-o",
        "json",
    ]);
    assert_eq!(policy["spec"]["failurePolicy"], "Fail");
    assert_eq!(
        policy["spec"]["matchConstraints"]["matchPolicy"],
        "Equivalent"
    );
    assert_eq!(
        policy["spec"]["matchConstraints"]["objectSelector"],
        serde_json::json!({})
    );
    assert_eq!(policy["metadata"]["generation"], 1);
    let va = s.json(&["get", "volumeattachment", "va-1", "-o", "json"]);
    assert_eq!(va["status"], serde_json::json!({"attached": false}));
}

#[test]
fn an_hpa_written_in_v1_reads_in_v2_and_back() {
    let s = Server::start();
    let v1 = r#"{"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "api", "namespace": "default"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"},
                 "maxReplicas": 4, "targetCPUUtilizationPercentage": 70}}"#;
    s.ok_stdin(&["create", "-f", "-"], v1);
    let path = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/api";
    let (code, v2) = s.get_json(path);
    assert_eq!(code, 200, "{v2}");
    assert_eq!(v2["apiVersion"], "autoscaling/v2");
    assert_eq!(v2["spec"]["minReplicas"], 1);
    assert_eq!(
        v2["spec"]["metrics"],
        serde_json::json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 70}}}])
    );
    let patch = r#"{"spec": {"metrics": [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}},
        {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "200Mi"}}}]}}"#;
    s.ok(&[
        "patch",
        "hpa.v2.autoscaling",
        "api",
        "--type=merge",
        "-p",
        patch,
    ]);
    let (_, v1) =
        s.get_json("/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/api");
    assert_eq!(v1["apiVersion"], "autoscaling/v1");
    assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 70);
    let others = v1["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/metrics"]
        .as_str()
        .unwrap_or_default();
    let others: Value = serde_json::from_str(others).unwrap_or(Value::Null);
    assert_eq!(
        others,
        serde_json::json!([{"type": "Resource", "resource": {"name": "memory", "targetAverageValue": "200Mi"}}])
    );
    assert_eq!(
        v1["status"],
        serde_json::json!({"currentReplicas": 0, "desiredReplicas": 0})
    );
    let (_, v2) = s.get_json(path);
    assert!(v2["metadata"].get("annotations").is_none(), "{v2}");
    assert_eq!(v2["spec"]["metrics"][1]["resource"]["name"], "memory");
    let (_, list) = s.get_json("/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers");
    assert_eq!(list["kind"], "HorizontalPodAutoscalerList", "{list}");
    assert_eq!(
        list["items"][0]["spec"]["targetCPUUtilizationPercentage"], 70,
        "{list}"
    );
    let watch = s.curl(&[&s.url(
        "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers?watch=1&timeoutSeconds=1",
    )]);
    let first = stdout(&watch);
    let event: Value =
        serde_json::from_str(first.lines().next().unwrap_or_default()).unwrap_or(Value::Null);
    assert_eq!(event["object"]["apiVersion"], "autoscaling/v1", "{first}");
    assert_eq!(
        event["object"]["spec"]["targetCPUUtilizationPercentage"], 70,
        "{first}"
    );
}

#[test]
fn flowcontrol_bootstrap_configuration_is_there_after_start() {
    let s = Server::start();
    let schemas = s.ok(&["get", "flowschemas"]);
    for name in [
        "exempt",
        "probes",
        "system-leader-election",
        "kube-scheduler",
        "catch-all",
    ] {
        assert!(
            schemas.lines().any(|l| l.starts_with(name)),
            "{name}:\n{schemas}"
        );
    }
    assert_eq!(&row(&schemas, "exempt")[1..4], ["exempt", "1", "<none>"]);
    let levels = s.ok(&["get", "prioritylevelconfigurations"]);
    assert_eq!(&row(&levels, "exempt")[1..3], ["Exempt", "<none>"]);
    assert_eq!(row(&levels, "workload-low")[1], "Limited");
    let catch_all = s.json(&["get", "flowschema", "catch-all", "-o", "json"]);
    assert_eq!(
        catch_all["metadata"]["annotations"]["apf.kubernetes.io/autoupdate-spec"],
        "true"
    );
    assert_eq!(catch_all["spec"]["matchingPrecedence"], 10000);
}

/// A FlowSchema whose priority level does not exist (yet).
const ORPHAN_FLOW_SCHEMA: &str = r#"
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: orphan}
spec:
  priorityLevelConfiguration: {name: later}
  matchingPrecedence: 5000
  rules:
  - subjects: [{kind: Group, group: {name: nobody}}]
    nonResourceRules: [{verbs: ["get"], nonResourceURLs: ["/orphan"]}]
"#;

const LATER_LEVEL: &str = r#"
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: later}
spec:
  type: Limited
  limited: {nominalConcurrencyShares: 5, limitResponse: {type: Reject}}
"#;

/// Waits until `kubectl get flowschemas` shows each named FlowSchema's
/// MISSINGPL cell as wanted.
fn missing_pl_becomes(s: &Server, want: &[(&str, &str)]) {
    let settled = eventually(Duration::from_secs(10), || {
        let table = s.ok(&["get", "flowschemas"]);
        want.iter()
            .all(|(name, cell)| row(&table, name)[5] == *cell)
    });
    assert!(settled, "{want:?}:\n{}", s.ok(&["get", "flowschemas"]));
}

#[test]
fn missingpl_follows_the_priority_levels_flow_schemas_name() {
    let s = Server::start();
    s.ok_stdin(&["create", "-f", "-"], ORPHAN_FLOW_SCHEMA);
    let table = s.ok(&["get", "flowschemas"]);
    assert_eq!(header(&table).last().map(String::as_str), Some("MISSINGPL"));
    missing_pl_becomes(
        &s,
        &[
            ("exempt", "False"),
            ("catch-all", "False"),
            ("orphan", "True"),
        ],
    );
    let orphan = s.json(&[
        "get",
        "flowschema",
        "orphan",
        "-o",
        "json",
        "--show-managed-fields",
    ]);
    let condition = &orphan["status"]["conditions"][0];
    assert_eq!(condition["reason"], "NotFound", "{orphan}");
    assert_eq!(
        condition["message"],
        "This FlowSchema references the PriorityLevelConfiguration object named \"later\" but there is no such object"
    );
    let consumer = orphan["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["manager"] == "api-priority-and-fairness-config-consumer-v1");
    let consumer = consumer.unwrap_or_else(|| panic!("{orphan}"));
    assert_eq!(
        (&consumer["operation"], &consumer["subresource"]),
        (&Value::from("Apply"), &Value::from("status"))
    );
    s.ok_stdin(&["create", "-f", "-"], LATER_LEVEL);
    missing_pl_becomes(&s, &[("orphan", "False")]);
    s.ok(&["delete", "prioritylevelconfiguration", "later"]);
    missing_pl_becomes(&s, &[("orphan", "True"), ("exempt", "False")]);
}

#[test]
fn a_policy_with_a_bad_field_is_refused_with_kubes_message() {
    let s = Server::start();
    let bad = r#"{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "bad"},
        "spec": {"failurePolicy": "Sometimes",
                 "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                     "operations": ["CREATE"], "resources": ["pods"]}]},
                 "validations": [{"expression": "true"}]}}"#;
    let out = s.kubectl_stdin(&["create", "-f", "-"], Some(bad));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(r#"The ValidatingAdmissionPolicy "bad" is invalid: spec.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore""#),
        "{err}"
    );
    let body = bad.replace("bad", "bad2");
    let (code, status) = post(
        &s,
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
        &body,
    );
    assert_eq!(
        (code, status["reason"].as_str()),
        (422, Some("Invalid")),
        "{status}"
    );
}

fn post(s: &Server, path: &str, body: &str) -> (u16, Value) {
    let (code, value, _) = s.request("POST", path, "application/json", Some(body));
    (code, value)
}

#[test]
fn a_binding_posted_to_bindings_assigns_the_pod() {
    let s = Server::start();
    s.ok(&["run", "web", "--image=nginx", "--restart=Never"]);
    let binding = r#"{"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "web"},
                      "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}}"#;
    let (code, status) = post(&s, "/api/v1/namespaces/default/bindings", binding);
    assert_eq!(
        (code, status["status"].as_str()),
        (201, Some("Success")),
        "{status}"
    );
    let node = s.ok(&["get", "pod", "web", "-o", "jsonpath={.spec.nodeName}"]);
    assert_eq!(node, "node-1");
    let (code, status) = post(&s, "/api/v1/namespaces/default/bindings", binding);
    assert_eq!(code, 409, "{status}");
}

#[test]
fn discovery_lists_the_new_group_versions_in_kubes_order() {
    let s = Server::start();
    let (_, groups) = s.get_json("/apis");
    let names: Vec<&str> = groups["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|g| g["name"].as_str())
        .collect();
    let at = |name: &str| names.iter().position(|n| *n == name).unwrap_or(usize::MAX);
    assert!(
        at("authorization.k8s.io") < at("autoscaling") && at("autoscaling") < at("batch"),
        "{names:?}"
    );
    assert!(
        at("coordination.k8s.io") < at("node.k8s.io") && at("node.k8s.io") < at("discovery.k8s.io"),
        "{names:?}"
    );
    let flowcontrol = at("flowcontrol.apiserver.k8s.io");
    assert_eq!(flowcontrol, at("discovery.k8s.io") + 1, "{names:?}");
    let autoscaling = &groups["groups"][at("autoscaling")];
    assert_eq!(autoscaling["preferredVersion"]["version"], "v2");
    assert_eq!(autoscaling["versions"][1]["version"], "v1");
    let resources = s.ok(&["api-resources", "--api-group=autoscaling"]);
    assert_eq!(
        row(&resources, "horizontalpodautoscalers"),
        [
            "horizontalpodautoscalers",
            "hpa",
            "autoscaling/v2",
            "true",
            "HorizontalPodAutoscaler"
        ]
    );
    let services = s.json(&["get", "apiservices", "v2.autoscaling", "-o", "json"]);
    assert_eq!(services["spec"]["versionPriority"], 30);
    let (code, _) = s.get_json("/openapi/v3/apis/flowcontrol.apiserver.k8s.io/v1");
    assert_eq!(code, 200);
}
