//! End-to-end tests: real protobuf bodies built with k8s-pb (zero values set
//! the way Go's marshaller sends non-pointer fields), decoded and compared
//! with the JSON kubectl would have sent for the same object.

use std::collections::BTreeMap;

use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::authentication::v1 as authn;
use k8s_pb::api::authorization::v1 as authz;
use k8s_pb::api::core::v1 as core;
use k8s_pb::api::policy::v1 as policy;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
use k8s_pb::apimachinery::pkg::util::intstr::IntOrString;
use prost::Message;
use serde_json::{json, Value};

use super::{decode_object, is_protobuf};
use crate::catalogue::Catalogue;

fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The protobuf body client-go sends: magic + runtime.Unknown.
fn body<M: Message>(api_version: &str, kind: &str, object: &M) -> Vec<u8> {
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: s(api_version),
            kind: s(kind),
        }),
        raw: Some(object.encode_to_vec()),
        content_encoding: s(""),
        content_type: s(""),
    };
    let mut out = b"k8s\x00".to_vec();
    out.extend(unknown.encode_to_vec());
    out
}

fn decode(body: &[u8]) -> Result<Value, String> {
    decode_object(body, Catalogue::builtin().schemas())
}

/// ObjectMeta with every non-pointer field at Go's zero value.
fn go_meta(name: &str, labels: BTreeMap<String, String>) -> meta::ObjectMeta {
    meta::ObjectMeta {
        name: s(name),
        generate_name: s(""),
        namespace: s(""),
        self_link: s(""),
        uid: s(""),
        resource_version: s(""),
        generation: Some(0),
        creation_timestamp: Some(meta::Time::default()),
        labels,
        ..Default::default()
    }
}

fn go_container(name: &str, image: &str) -> core::Container {
    core::Container {
        name: s(name),
        image: s(image),
        working_dir: s(""),
        resources: Some(core::ResourceRequirements::default()),
        termination_message_path: s(""),
        termination_message_policy: s(""),
        image_pull_policy: s(""),
        stdin: Some(false),
        stdin_once: Some(false),
        tty: Some(false),
        ..Default::default()
    }
}

fn go_pod_spec(containers: Vec<core::Container>) -> core::PodSpec {
    core::PodSpec {
        containers,
        restart_policy: s(""),
        dns_policy: s(""),
        service_account_name: s(""),
        service_account: s(""),
        node_name: s(""),
        host_network: Some(false),
        host_pid: Some(false),
        host_ipc: Some(false),
        hostname: s(""),
        subdomain: s(""),
        scheduler_name: s(""),
        priority_class_name: s(""),
        ..Default::default()
    }
}

/// `kubectl create deployment web --image=nginx --replicas=2`.
fn kubectl_deployment() -> apps::Deployment {
    let l = labels(&[("app", "web")]);
    apps::Deployment {
        metadata: Some(go_meta("web", l.clone())),
        spec: Some(apps::DeploymentSpec {
            replicas: Some(2),
            selector: Some(meta::LabelSelector {
                match_labels: l.clone(),
                ..Default::default()
            }),
            template: Some(core::PodTemplateSpec {
                metadata: Some(go_meta("", l)),
                spec: Some(go_pod_spec(vec![go_container("nginx", "nginx")])),
            }),
            strategy: Some(apps::DeploymentStrategy {
                r#type: s(""),
                rolling_update: None,
            }),
            min_ready_seconds: Some(0),
            paused: Some(false),
            ..Default::default()
        }),
        status: Some(apps::DeploymentStatus {
            observed_generation: Some(0),
            replicas: Some(0),
            updated_replicas: Some(0),
            ready_replicas: Some(0),
            available_replicas: Some(0),
            unavailable_replicas: Some(0),
            ..Default::default()
        }),
    }
}

#[test]
fn media_type_detection() {
    assert!(is_protobuf("application/vnd.kubernetes.protobuf"));
    assert!(is_protobuf(
        "application/vnd.kubernetes.protobuf; charset=utf-8"
    ));
    assert!(!is_protobuf("application/json"));
    assert!(!is_protobuf("application/vnd.kubernetes.protobuf+json"));
}

#[test]
fn deployment_from_kubectl_create() {
    let got = decode(&body("apps/v1", "Deployment", &kubectl_deployment())).unwrap();
    // What `kubectl create deployment ... -o json` shows, minus the
    // `creationTimestamp: null` entries (null and absent mean the same).
    let want = json!({
        "kind": "Deployment", "apiVersion": "apps/v1",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx", "resources": {}}]}
            },
            "strategy": {}
        },
        "status": {}
    });
    assert_eq!(got, want);
    let keys: Vec<&String> = got.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["kind", "apiVersion", "metadata", "spec", "status"]);
}

#[test]
fn explicit_zero_replicas_is_kept() {
    let mut d = kubectl_deployment();
    if let Some(spec) = d.spec.as_mut() {
        spec.replicas = Some(0);
    }
    let got = decode(&body("apps/v1", "Deployment", &d)).unwrap();
    assert_eq!(got["spec"]["replicas"], json!(0));
    assert!(got["status"].get("replicas").is_none());
}

#[test]
fn unknown_fields_are_skipped() {
    let mut raw = kubectl_deployment().encode_to_vec();
    raw.extend([0xb8, 0x3e, 0x01]); // field 999, varint 1
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: s("apps/v1"),
            kind: s("Deployment"),
        }),
        raw: Some(raw),
        ..Default::default()
    };
    let mut b = b"k8s\x00".to_vec();
    b.extend(unknown.encode_to_vec());
    assert_eq!(decode(&b).unwrap()["spec"]["replicas"], json!(2));
}

#[test]
fn secret_and_configmap_bytes_become_base64() {
    let secret = core::Secret {
        metadata: Some(go_meta("creds", BTreeMap::new())),
        data: [
            ("k".to_string(), b"v".to_vec()),
            ("bin".to_string(), vec![0, 255, 1]),
        ]
        .into(),
        r#type: s("Opaque"),
        ..Default::default()
    };
    let got = decode(&body("v1", "Secret", &secret)).unwrap();
    let want = json!({
        "kind": "Secret", "apiVersion": "v1",
        "metadata": {"name": "creds"},
        "data": {"bin": "AP8B", "k": "dg=="},
        "type": "Opaque"
    });
    assert_eq!(got, want);

    let cm = core::ConfigMap {
        metadata: Some(go_meta("cfg", BTreeMap::new())),
        data: labels(&[("a", "1"), ("empty", "")]),
        binary_data: [("b".to_string(), b"hi".to_vec())].into(),
        ..Default::default()
    };
    let got = decode(&body("v1", "ConfigMap", &cm)).unwrap();
    assert_eq!(got["data"], json!({"a": "1", "empty": ""}));
    assert_eq!(got["binaryData"], json!({"b": "aGk="}));
}

fn go_service(target: IntOrString) -> core::Service {
    let l = labels(&[("app", "web")]);
    core::Service {
        metadata: Some(go_meta("web", l.clone())),
        spec: Some(core::ServiceSpec {
            ports: vec![core::ServicePort {
                name: s("80-8080"),
                protocol: s("TCP"),
                port: Some(80),
                target_port: Some(target),
                node_port: Some(0),
                ..Default::default()
            }],
            selector: l,
            cluster_ip: s(""),
            r#type: s("ClusterIP"),
            session_affinity: s(""),
            load_balancer_ip: s(""),
            external_name: s(""),
            external_traffic_policy: s(""),
            health_check_node_port: Some(0),
            publish_not_ready_addresses: Some(false),
            ..Default::default()
        }),
        status: Some(core::ServiceStatus {
            load_balancer: Some(core::LoadBalancerStatus::default()),
            conditions: vec![],
        }),
    }
}

#[test]
fn service_with_int_or_string_target_port() {
    let int_port = IntOrString {
        r#type: Some(0),
        int_val: Some(8080),
        str_val: s(""),
    };
    let got = decode(&body("v1", "Service", &go_service(int_port))).unwrap();
    let want = json!({
        "kind": "Service", "apiVersion": "v1",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "ports": [{"name": "80-8080", "protocol": "TCP", "port": 80, "targetPort": 8080}],
            "selector": {"app": "web"},
            "type": "ClusterIP"
        },
        "status": {"loadBalancer": {}}
    });
    assert_eq!(got, want);

    let named = IntOrString {
        r#type: Some(1),
        int_val: Some(0),
        str_val: s("http"),
    };
    let got = decode(&body("v1", "Service", &go_service(named))).unwrap();
    assert_eq!(got["spec"]["ports"][0]["targetPort"], json!("http"));
}

fn go_pdb(min_available: IntOrString) -> policy::PodDisruptionBudget {
    policy::PodDisruptionBudget {
        metadata: Some(go_meta("my-pdb", BTreeMap::new())),
        spec: Some(policy::PodDisruptionBudgetSpec {
            min_available: Some(min_available),
            selector: Some(meta::LabelSelector {
                match_labels: labels(&[("app", "rails")]),
                ..Default::default()
            }),
            ..Default::default()
        }),
        status: Some(policy::PodDisruptionBudgetStatus {
            observed_generation: Some(0),
            disruptions_allowed: Some(0),
            current_healthy: Some(0),
            desired_healthy: Some(0),
            expected_pods: Some(0),
            ..Default::default()
        }),
    }
}

#[test]
fn pdb_min_available_as_int_and_percent() {
    let one = IntOrString {
        r#type: Some(0),
        int_val: Some(1),
        str_val: s(""),
    };
    let got = decode(&body("policy/v1", "PodDisruptionBudget", &go_pdb(one))).unwrap();
    let want = json!({
        "kind": "PodDisruptionBudget", "apiVersion": "policy/v1",
        "metadata": {"name": "my-pdb"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "rails"}}},
        // these four have no omitempty in Go, so JSON carries the zeros
        "status": {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}
    });
    assert_eq!(got, want);

    let half = IntOrString {
        r#type: Some(1),
        int_val: Some(0),
        str_val: s("50%"),
    };
    let got = decode(&body("policy/v1", "PodDisruptionBudget", &go_pdb(half))).unwrap();
    assert_eq!(got["spec"]["minAvailable"], json!("50%"));
}

#[test]
fn token_request_from_kubectl_create_token() {
    let tr = authn::TokenRequest {
        metadata: Some(go_meta("", BTreeMap::new())),
        spec: Some(authn::TokenRequestSpec {
            audiences: vec![],
            expiration_seconds: Some(3600),
            bound_object_ref: Some(authn::BoundObjectReference {
                kind: s("Pod"),
                api_version: s("v1"),
                name: s("p"),
                u_id: s("1234"),
            }),
        }),
        status: Some(authn::TokenRequestStatus {
            token: s(""),
            expiration_timestamp: Some(meta::Time::default()),
        }),
    };
    let got = decode(&body("authentication.k8s.io/v1", "TokenRequest", &tr)).unwrap();
    let want = json!({
        "kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
        "metadata": {},
        "spec": {
            "expirationSeconds": 3600,
            "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p", "uid": "1234"}
        },
        "status": {"token": ""}
    });
    assert_eq!(got, want);
}

#[test]
fn self_subject_access_review_from_auth_can_i() {
    let review = authz::SelfSubjectAccessReview {
        metadata: Some(go_meta("", BTreeMap::new())),
        spec: Some(authz::SelfSubjectAccessReviewSpec {
            resource_attributes: Some(authz::ResourceAttributes {
                namespace: s("default"),
                verb: s("create"),
                group: s(""),
                version: s(""),
                resource: s("pods"),
                subresource: s(""),
                name: s(""),
                ..Default::default()
            }),
            non_resource_attributes: None,
        }),
        status: Some(authz::SubjectAccessReviewStatus {
            allowed: Some(false),
            denied: Some(false),
            reason: s(""),
            evaluation_error: s(""),
        }),
    };
    let got = decode(&body(
        "authorization.k8s.io/v1",
        "SelfSubjectAccessReview",
        &review,
    ))
    .unwrap();
    let want = json!({
        "kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
        "metadata": {},
        "spec": {"resourceAttributes": {"namespace": "default", "verb": "create", "resource": "pods"}},
        "status": {"allowed": false}
    });
    assert_eq!(got, want);
}

#[test]
fn subject_access_review_extra_is_a_map_of_lists() {
    let review = authz::SubjectAccessReview {
        spec: Some(authz::SubjectAccessReviewSpec {
            user: s("alice"),
            extra: [(
                "scopes".to_string(),
                authz::ExtraValue {
                    items: vec!["a".into(), "b".into()],
                },
            )]
            .into(),
            non_resource_attributes: Some(authz::NonResourceAttributes {
                path: s("/healthz"),
                verb: s("get"),
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let got = decode(&body(
        "authorization.k8s.io/v1",
        "SubjectAccessReview",
        &review,
    ))
    .unwrap();
    assert_eq!(got["spec"]["extra"], json!({"scopes": ["a", "b"]}));
    assert_eq!(
        got["spec"]["nonResourceAttributes"],
        json!({"path": "/healthz", "verb": "get"})
    );
}

#[test]
fn namespace_from_kubectl_create() {
    let ns = core::Namespace {
        metadata: Some(go_meta("foo", BTreeMap::new())),
        spec: Some(core::NamespaceSpec::default()),
        status: Some(core::NamespaceStatus {
            phase: s(""),
            conditions: vec![],
        }),
    };
    let got = decode(&body("v1", "Namespace", &ns)).unwrap();
    let want = json!({"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "foo"}, "spec": {}, "status": {}});
    assert_eq!(got, want);
}

#[test]
fn pod_acronym_fields_times_and_quantities() {
    let mut container = go_container("c", "busybox");
    container.resources = Some(core::ResourceRequirements {
        limits: [(
            "cpu".to_string(),
            k8s_pb::apimachinery::pkg::api::resource::Quantity { string: s("100m") },
        )]
        .into(),
        ..Default::default()
    });
    container.ports = vec![core::ContainerPort {
        name: s(""),
        host_port: Some(0),
        container_port: Some(0),
        protocol: s("TCP"),
        host_ip: s(""),
    }];
    let mut spec = go_pod_spec(vec![container]);
    spec.host_ipc = Some(true);
    spec.termination_grace_period_seconds = Some(0);
    let mut metadata = go_meta("p", BTreeMap::new());
    metadata.creation_timestamp = Some(meta::Time {
        seconds: Some(1_700_000_000),
        nanos: Some(0),
    });
    let pod = core::Pod {
        metadata: Some(metadata),
        spec: Some(spec),
        status: None,
    };
    let got = decode(&body("v1", "Pod", &pod)).unwrap();
    assert_eq!(
        got["metadata"]["creationTimestamp"],
        json!("2023-11-14T22:13:20Z")
    );
    assert_eq!(got["spec"]["hostIPC"], json!(true));
    assert_eq!(got["spec"]["terminationGracePeriodSeconds"], json!(0));
    let c = &got["spec"]["containers"][0];
    assert_eq!(c["resources"], json!({"limits": {"cpu": "100m"}}));
    // containerPort has no omitempty in Go; hostPort does.
    assert_eq!(c["ports"], json!([{"containerPort": 0, "protocol": "TCP"}]));
    assert!(got.get("status").is_none());
}

#[test]
fn delete_options_with_zero_grace_period() {
    let opts = meta::DeleteOptions {
        grace_period_seconds: Some(0),
        propagation_policy: s("Foreground"),
        ..Default::default()
    };
    let groups = ["v1", "meta.k8s.io/v1", "apps/v1", "apiextensions.k8s.io/v1"];
    for api_version in groups {
        let got = decode(&body(api_version, "DeleteOptions", &opts)).unwrap();
        let want = json!({"kind": "DeleteOptions", "apiVersion": api_version,
                          "gracePeriodSeconds": 0, "propagationPolicy": "Foreground"});
        assert_eq!(got, want);
    }
}

/// A CustomResourceDefinition as the apiextensions client sends it: the
/// schema's JSONSchemaProps nest, with their unions and booleans.
#[test]
fn custom_resource_definition_with_a_schema() {
    use k8s_pb::apiextensions_apiserver::pkg::apis::apiextensions::v1 as ext;
    let string = ext::JsonSchemaProps {
        r#type: s("string"),
        ..Default::default()
    };
    let spec_props = ext::JsonSchemaProps {
        r#type: s("object"),
        properties: [("size".to_string(), string)].into(),
        x_kubernetes_preserve_unknown_fields: Some(true),
        ..Default::default()
    };
    let crd = ext::CustomResourceDefinition {
        metadata: Some(go_meta("widgets.example.com", BTreeMap::new())),
        spec: Some(ext::CustomResourceDefinitionSpec {
            group: s("example.com"),
            names: Some(ext::CustomResourceDefinitionNames {
                plural: s("widgets"),
                kind: s("Widget"),
                ..Default::default()
            }),
            scope: s("Namespaced"),
            versions: vec![ext::CustomResourceDefinitionVersion {
                name: s("v1"),
                served: Some(true),
                storage: Some(true),
                schema: Some(ext::CustomResourceValidation {
                    open_apiv3_schema: Some(ext::JsonSchemaProps {
                        r#type: s("object"),
                        properties: [("spec".to_string(), spec_props)].into(),
                        ..Default::default()
                    }),
                }),
                ..Default::default()
            }],
            ..Default::default()
        }),
        status: None,
    };
    let api_version = "apiextensions.k8s.io/v1";
    let got = decode(&body(api_version, "CustomResourceDefinition", &crd)).unwrap();
    assert_eq!(got["metadata"]["name"], "widgets.example.com");
    assert_eq!(
        got["spec"]["names"],
        json!({"plural": "widgets", "kind": "Widget"})
    );
    let version = &got["spec"]["versions"][0];
    assert_eq!(
        (&version["served"], &version["storage"]),
        (&json!(true), &json!(true))
    );
    let schema = &version["schema"]["openAPIV3Schema"];
    let want = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                      "properties": {"size": {"type": "string"}}});
    assert_eq!(schema["properties"]["spec"], want);
}

#[test]
fn malformed_bodies_are_errors() {
    let good = body("v1", "Namespace", &core::Namespace::default());
    let err = decode(&good[4..]).unwrap_err();
    assert!(err.contains("magic"), "{err}");

    let err = decode(&good[..good.len() - 1]).unwrap_err();
    assert!(err.contains("truncated"), "{err}");

    let err = decode(&body(
        "example.com/v1",
        "Widget",
        &core::Namespace::default(),
    ))
    .unwrap_err();
    assert!(
        err.contains("Widget") && err.contains("example.com/v1"),
        "{err}"
    );

    let err = decode(b"k8s\x00").unwrap_err();
    assert!(err.contains("no apiVersion or kind"), "{err}");

    // metadata (field 1) sent as a varint instead of a message
    let bad = body(
        "v1",
        "Namespace",
        &meta::Time {
            seconds: Some(5),
            nanos: None,
        },
    );
    let err = decode(&bad).unwrap_err();
    assert!(
        err.contains("expected a message") && err.contains("(at metadata)"),
        "{err}"
    );
}

#[test]
fn nested_raw_extension_and_unknown() {
    let rev = apps::ControllerRevision {
        metadata: Some(go_meta("r", BTreeMap::new())),
        data: Some(k8s_pb::apimachinery::pkg::runtime::RawExtension {
            raw: Some(br#"{"spec":{"x":1}}"#.to_vec()),
        }),
        revision: Some(3),
    };
    let got = decode(&body("apps/v1", "ControllerRevision", &rev)).unwrap();
    assert_eq!(got["data"], json!({"spec": {"x": 1}}));
    assert_eq!(got["revision"], json!(3));

    let nested = body(
        "v1",
        "Namespace",
        &core::Namespace {
            metadata: Some(go_meta("inner", BTreeMap::new())),
            ..Default::default()
        },
    );
    let rev = apps::ControllerRevision {
        data: Some(k8s_pb::apimachinery::pkg::runtime::RawExtension { raw: Some(nested) }),
        ..Default::default()
    };
    let got = decode(&body("apps/v1", "ControllerRevision", &rev)).unwrap();
    assert_eq!(
        got["data"],
        json!({"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "inner"}})
    );
}
