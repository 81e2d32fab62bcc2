use super::*;
use serde_json::json;

/// The 400 message kube gives for `body` written to `plural`, or None.
fn refused(group: &str, plural: &str, body: &str) -> Option<String> {
    let cat = Catalogue::builtin();
    let res = cat.lookup(group, "v1", plural).unwrap();
    let mut obj: Value = serde_json::from_str(body).unwrap();
    check(&cat, res, &mut obj)
        .err()
        .map(|e| bad_request_message(&res.kind, &res.version, &e))
}

fn checked(group: &str, plural: &str, body: &str) -> Value {
    let cat = Catalogue::builtin();
    let res = cat.lookup(group, "v1", plural).unwrap();
    let mut obj: Value = serde_json::from_str(body).unwrap();
    check(&cat, res, &mut obj).unwrap();
    obj
}

#[test]
fn configmap_data_must_be_a_string_map() {
    assert_eq!(
        refused(
            "",
            "configmaps",
            r#"{"metadata":{"name":"c"},"data":[1,2]}"#
        )
        .as_deref(),
        Some(
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot \
             unmarshal array into Go struct field ConfigMap.data of type map[string]string"
        )
    );
    assert_eq!(
        refused("", "configmaps", r#"{"data":{"k":5}}"#).as_deref(),
        Some(
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot \
             unmarshal number into Go struct field ConfigMap.data of type string"
        )
    );
}

#[test]
fn replicas_must_be_an_int32() {
    let message = |replicas: &str| {
        let body =
            format!(r#"{{"spec":{{"selector":{{"matchLabels":{{}}}},"replicas":{replicas}}}}}"#);
        refused("apps", "deployments", &body).map(|m| {
            m.strip_prefix("Deployment in version \"v1\" cannot be handled as a Deployment: ")
                .unwrap()
                .to_string()
        })
    };
    let expect = |what: &str| {
        format!("json: cannot unmarshal {what} into Go struct field DeploymentSpec.spec.replicas of type int32")
    };
    assert_eq!(message("\"3\""), Some(expect("string")));
    assert_eq!(message("1.5"), Some(expect("number 1.5")));
    assert_eq!(message("2147483648"), Some(expect("number 2147483648")));
    assert_eq!(message("2147483647"), None);
    assert_eq!(message("-2147483648"), None);
    assert_eq!(message("null"), None);
}

#[test]
fn minus_zero_is_stored_as_zero() {
    let d = checked("apps", "deployments", r#"{"spec":{"replicas":-0}}"#);
    assert_eq!(d["spec"]["replicas"].to_string(), "0");
    let pod = checked(
        "",
        "pods",
        r#"{"spec":{"containers":[{"name":"c","ports":[{"containerPort":80}],
            "livenessProbe":{"httpGet":{"port":-0}}}]}}"#,
    );
    let port = &pod["spec"]["containers"][0]["livenessProbe"]["httpGet"]["port"];
    assert_eq!(port.to_string(), "0");
}

#[test]
fn metadata_fields_have_their_go_types() {
    let cm = |metadata: &str| refused("", "configmaps", &format!(r#"{{"metadata":{metadata}}}"#));
    let suffix = |m: Option<String>| m.map(|m| m.split(": json: ").nth(1).unwrap().to_string());
    assert_eq!(
        suffix(cm(r#"{"name":5}"#)).as_deref(),
        Some(
            "cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string"
        )
    );
    assert_eq!(
        suffix(cm(r#"{"managedFields":"x"}"#)).as_deref(),
        Some(
            "cannot unmarshal string into Go struct field ObjectMeta.metadata.managedFields \
             of type []v1.ManagedFieldsEntry"
        )
    );
    assert_eq!(
        suffix(cm(r#"{"labels":{"a":true}}"#)).as_deref(),
        Some(
            "cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string"
        )
    );
    assert_eq!(
        suffix(cm(r#"{"ownerReferences":[{"name":"o","controller":"yes"}]}"#)).as_deref(),
        Some(
            "cannot unmarshal string into Go struct field OwnerReference.metadata.ownerReferences.controller \
             of type bool"
        )
    );
    assert_eq!(
        suffix(cm(r#"{"generation":"1"}"#)).as_deref(),
        Some("cannot unmarshal string into Go struct field ObjectMeta.metadata.generation of type int64")
    );
    assert_eq!(
        cm(r#"{"creationTimestamp":5}"#).unwrap(),
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal \
         number into Go value of type string"
    );
}

#[test]
fn role_ref_must_be_a_struct() {
    assert_eq!(
        refused(
            "rbac.authorization.k8s.io",
            "rolebindings",
            r#"{"roleRef":"x"}"#
        )
        .as_deref(),
        Some(
            "RoleBinding in version \"v1\" cannot be handled as a RoleBinding: json: cannot \
             unmarshal string into Go struct field RoleBinding.roleRef of type v1.RoleRef"
        )
    );
}

#[test]
fn secret_data_is_base64_bytes() {
    assert_eq!(
        refused("", "secrets", r#"{"data":[1]}"#).as_deref(),
        Some(
            "Secret in version \"v1\" cannot be handled as a Secret: json: cannot \
             unmarshal array into Go struct field Secret.data of type map[string][]uint8"
        )
    );
    assert_eq!(
        refused("", "secrets", r#"{"data":{"a":"not base64"}}"#).as_deref(),
        Some("Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte 3")
    );
    assert_eq!(
        refused(
            "",
            "secrets",
            r#"{"data":{"a":"YQ=="},"stringData":{"b":"x"}}"#
        ),
        None
    );
}

#[test]
fn paths_skip_indices_and_name_the_innermost_struct() {
    let body = r#"{"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"spec":{"containers":[
        {"name":"c","ports":[{"containerPort":"80"}]}]}}}}"#;
    assert_eq!(
        refused("apps", "deployments", body)
            .unwrap()
            .split(": json: ")
            .nth(1),
        Some(
            "cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.\
             containers.ports.containerPort of type int32"
        )
    );
    let after_nested = r#"{"spec":{"selector":{"matchLabels":{"a":"b"}},"paused":"no"}}"#;
    assert!(refused("apps", "deployments", after_nested)
        .unwrap()
        .ends_with("Go struct field DeploymentSpec.spec.paused of type bool"));
    let first_in_document_order = r#"{"spec":{"paused":"no","replicas":"3"}}"#;
    assert!(refused("apps", "deployments", first_in_document_order)
        .unwrap()
        .ends_with("DeploymentSpec.spec.paused of type bool"));
}

#[test]
fn well_typed_objects_pass() {
    let pod = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"a":"b"},
        "creationTimestamp":"2024-01-01T00:00:00Z","ownerReferences":[{"apiVersion":"v1","kind":"X","name":"x","uid":"u"}],
        "managedFields":[{"manager":"m","fieldsV1":{"f:metadata":{}}}]},
        "spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":80}],
        "resources":{"requests":{"cpu":"100m","memory":1024}},
        "readinessProbe":{"tcpSocket":{"port":"http"}}}],"volumes":[{"name":"v","emptyDir":{}}]}}"#;
    assert_eq!(refused("", "pods", pod), None);
    let revision = r#"{"revision":1,"data":{"anything":[1,"x",{"y":null}]}}"#;
    assert_eq!(refused("apps", "controllerrevisions", revision), None);
    assert_eq!(
        refused("", "pods", r#"{"spec":{"containers":[{"resources":{"limits":{"cpu":[1]}}}]}}"#)
            .unwrap()
            .split(": ")
            .nth(1),
        Some("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    );
}

#[test]
fn scale_is_checked_against_its_own_schema() {
    let cat = Catalogue::builtin();
    let mut scale = json!({"metadata": {"name": "d"}, "spec": {"replicas": "3"}});
    let e = check_schema(cat.schemas(), "io.k8s.api.autoscaling.v1.Scale", &mut scale).unwrap_err();
    assert_eq!(
        e.0,
        "json: cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of type int32"
    );
}

#[test]
fn large_objects_are_checked_in_one_pass() {
    let labels: Map<String, Value> = (0..230_000)
        .map(|i| (format!("key-{i}"), json!("value")))
        .collect();
    let mut cm = json!({"metadata": {"name": "big", "labels": labels}});
    let cat = Catalogue::builtin();
    let res = cat.lookup("", "v1", "configmaps").unwrap();
    assert_eq!(check(&cat, res, &mut cm), Ok(()));
    let mut wrong = json!({"data": vec![1; 1_000_000]});
    assert!(check(&cat, res, &mut wrong).is_err());
    let mut finalizers = json!({"metadata": {"finalizers": vec![""; 1_000_000]}});
    assert_eq!(check(&cat, res, &mut finalizers), Ok(()));
}
