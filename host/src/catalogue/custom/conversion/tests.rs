//! The converter in isolation: None, a Webhook on a loopback HTTPS server,
//! and the `sandbox-convert-widget` plugin (incl. one that traps or loops).

use super::test_server::{self, HookServer};
use super::*;
use crate::wasm::EmptyReader;
use crate::wasm::PluginRuntime;
use serde_json::json;
use std::sync::Arc;

fn crd(conversion: Value, annotations: Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com", "annotations": annotations},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets"},
            "scope": "Namespaced",
            "versions": [
                {"name": "v1", "served": true, "storage": true},
                {"name": "v2", "served": true, "storage": false},
            ],
            "conversion": conversion,
        }
    })
}

fn widget(version: &str, name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": format!("example.com/{version}"),
        "kind": "Widget",
        "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"),
                     "resourceVersion": "7", "labels": {"app": "w"}},
        "spec": spec,
    })
}

fn webhook_crd(client_config: Value, review_versions: Value) -> Value {
    crd(
        json!({"strategy": "Webhook", "webhook": {
            "clientConfig": client_config, "conversionReviewVersions": review_versions}}),
        json!({}),
    )
}

async fn hook_converter(hook: &HookServer) -> Converter {
    let client = json!({"url": hook.url, "caBundle": hook.ca_bundle});
    Converter::from_crd(
        &webhook_crd(client, json!(["v1"])),
        &ConversionSetup::default(),
    )
    .unwrap()
}

/// A webhook that moves `spec.size` to `spec.replicas` (and back), then lets
/// `tweak` change each converted object.
fn converting(tweak: fn(&mut Value)) -> impl Fn(&Value) -> String + Send + Sync {
    move |review| {
        let desired = review["request"]["desiredAPIVersion"].clone();
        let objects = review["request"]["objects"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let converted: Vec<Value> = objects
            .into_iter()
            .map(|mut o| {
                o["apiVersion"] = desired.clone();
                if let Some(size) = o["spec"].as_object_mut().and_then(|s| s.remove("size")) {
                    o["spec"]["replicas"] = size;
                }
                tweak(&mut o);
                o
            })
            .collect();
        json!({"apiVersion": review["apiVersion"], "kind": "ConversionReview",
               "response": {"uid": review["request"]["uid"], "convertedObjects": converted,
                            "result": {"status": "Success"}}})
        .to_string()
    }
}

fn failure_of(result: ApiResult<Vec<Value>>) -> (u16, &'static str, String) {
    let e = result.expect_err("the conversion should fail");
    (e.code, e.reason, e.message)
}

#[tokio::test]
async fn none_rewrites_only_the_api_version() {
    let none = crd(json!({"strategy": "None"}), json!({}));
    let converter = Converter::from_crd(&none, &ConversionSetup::default()).unwrap();
    let objects = vec![
        widget("v1", "a", json!({"size": 2})),
        widget("v2", "b", json!({})),
    ];
    let out = converter
        .convert(objects.clone(), "example.com/v2")
        .await
        .unwrap();
    let mut expected = objects[0].clone();
    expected["apiVersion"] = json!("example.com/v2");
    assert_eq!(out, vec![expected, objects[1].clone()]);
}

#[tokio::test]
async fn versions_outside_the_crd_are_refused_as_kube_does() {
    let none = crd(json!({"strategy": "None"}), json!({}));
    let converter = Converter::from_crd(&none, &ConversionSetup::default()).unwrap();
    let to_v3 = converter.convert(vec![widget("v1", "a", json!({}))], "example.com/v3");
    assert_eq!(
        failure_of(to_v3.await),
        (
            500,
            "",
            "request to convert CR to an invalid group/version: example.com/v3".into()
        )
    );
    let from_v9 = vec![widget("v1", "a", json!({})), widget("v9", "b", json!({}))];
    let (_, _, message) = failure_of(converter.convert(from_v9, "example.com/v2").await);
    assert_eq!(
        message,
        "request to convert CR list failed, list index 1 has invalid group/version: example.com/v9"
    );
}

#[tokio::test]
async fn a_webhook_gets_only_the_objects_to_convert_and_may_change_only_labels() {
    let hook = test_server::start(converting(|o| {
        o["metadata"]["labels"] = json!({"converted": "yes"});
        o["metadata"]["generation"] = json!(42);
        o["metadata"]["resourceVersion"] = json!("1");
    }))
    .await;
    let converter = hook_converter(&hook).await;
    let objects = vec![
        widget("v1", "a", json!({"size": 3})),
        widget("v2", "b", json!({"replicas": 1})),
        json!({"apiVersion": "example.com/v1", "kind": "Widget"}),
    ];
    let out = converter
        .convert(objects.clone(), "example.com/v2")
        .await
        .unwrap();
    assert_eq!(out[0]["spec"], json!({"replicas": 3}));
    assert_eq!(out[0]["apiVersion"], "example.com/v2");
    assert_eq!(out[0]["metadata"]["labels"], json!({"converted": "yes"}));
    assert_eq!(out[0]["metadata"]["resourceVersion"], "7");
    assert!(out[0]["metadata"].get("generation").is_none());
    assert_eq!(out[1], objects[1]);
    assert_eq!(
        out[2],
        json!({"apiVersion": "example.com/v2", "kind": "Widget"})
    );
    let received = hook.received();
    assert_eq!(received.len(), 1, "one review for the whole batch");
    assert_eq!(received[0]["apiVersion"], "apiextensions.k8s.io/v1");
    assert_eq!(
        received[0]["request"]["desiredAPIVersion"],
        "example.com/v2"
    );
    assert_eq!(received[0]["request"]["objects"], json!([objects[0]]));
    let nothing_to_do = converter.convert(vec![objects[1].clone()], "example.com/v2");
    assert_eq!(nothing_to_do.await.unwrap(), vec![objects[1].clone()]);
    assert_eq!(
        hook.received().len(),
        1,
        "objects in the desired version are not sent"
    );
}

#[tokio::test]
async fn v1beta1_reviews_when_listed_first_and_services_resolve_through_the_configuration() {
    let hook = test_server::start(|review| {
        let mut answer = converting(|_| {})(review);
        answer = answer.replace(&review["request"]["uid"].to_string(), "\"other\"");
        answer
    })
    .await;
    let service = json!({"service": {"namespace": "hooks", "name": "widgets", "path": "/convert"},
                         "caBundle": hook.ca_bundle});
    let base = hook.url.trim_end_matches("/convert").to_string();
    let setup = ConversionSetup {
        webhook_services: [("hooks/widgets".to_string(), base)].into(),
        ..Default::default()
    };
    let crd = webhook_crd(service, json!(["v1beta2", "v1beta1", "v1"]));
    let converter = Converter::from_crd(&crd, &setup).unwrap();
    let out = converter
        .convert(
            vec![widget("v1", "a", json!({"size": 5}))],
            "example.com/v2",
        )
        .await
        .unwrap();
    assert_eq!(out[0]["spec"], json!({"replicas": 5}));
    assert_eq!(
        hook.received()[0]["apiVersion"],
        "apiextensions.k8s.io/v1beta1"
    );
}

/// Each bad answer and the error kube-apiserver gives for it.
#[tokio::test]
async fn bad_webhook_answers_fail_with_kube_wording() {
    let prefix = "conversion webhook for example.com/v1, Kind=Widget";
    type Answer = Box<dyn Fn(&Value) -> String + Send + Sync>;
    let failed: Answer = Box::new(|r| {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
               "response": {"uid": r["request"]["uid"],
                            "result": {"status": "Failure", "message": "size too big"}}})
        .to_string()
    });
    let other_uid: Answer = Box::new(|_| {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
               "response": {"uid": "not-it", "result": {"status": "Success"}}})
        .to_string()
    });
    let wrong_kind: Answer =
        Box::new(|r| converting(|_| {})(r).replace("\"ConversionReview\"", "\"AdmissionReview\""));
    let empty: Answer = Box::new(|_| String::new());
    let none: Answer = Box::new(|r| {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
               "response": {"uid": r["request"]["uid"], "result": {"status": "Success"},
                            "convertedObjects": []}})
        .to_string()
    });
    let cases: Vec<(Answer, String)> = vec![
        (failed, format!("{prefix} failed: size too big")),
        (other_uid, format!("{prefix} failed: expected response.uid=")),
        (
            wrong_kind,
            format!("{prefix} failed: expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got apiextensions.k8s.io/v1, Kind=AdmissionReview"),
        ),
        (
            empty,
            format!("{prefix} failed: 0-length response with status code: 200 and content type: application/json"),
        ),
        (none, format!("{prefix} returned 0 objects, expected 1")),
        (
            Box::new(converting(|o| o["metadata"]["name"] = json!("b"))),
            format!("{prefix} returned invalid object: must have the same name: a != b"),
        ),
        (
            Box::new(converting(|o| o["apiVersion"] = json!("example.com/v1"))),
            format!("{prefix} returned invalid object at index 0: invalid groupVersion (expected example.com/v2, received example.com/v1)"),
        ),
        (
            Box::new(converting(|o| o["metadata"]["labels"] = json!({"bad key": "x"}))),
            format!("{prefix} returned invalid metadata: metadata.labels: Invalid value: \"bad key\": name part must consist of"),
        ),
        (
            Box::new(converting(|o| o["metadata"]["annotations"] = json!({"a": 1}))),
            format!("{prefix} returned invalid metadata: metadata.annotations[a] must be a string, but is int64 in converted object"),
        ),
    ];
    for (answer, expected) in cases {
        let hook = test_server::start(answer).await;
        let converter = hook_converter(&hook).await;
        let result = converter.convert(vec![widget("v1", "a", json!({}))], "example.com/v2");
        let (code, reason, message) = failure_of(result.await);
        assert_eq!((code, reason), (500, ""), "{message}");
        assert!(
            message.starts_with(&expected),
            "{message}\n  expected: {expected}"
        );
    }
}

#[tokio::test]
async fn a_list_names_the_index_kube_names() {
    let hook = test_server::start(converting(|o| {
        if o["metadata"]["name"] == "b" {
            o["kind"] = json!("Gadget");
        }
    }))
    .await;
    let converter = hook_converter(&hook).await;
    let objects = vec![widget("v1", "a", json!({})), widget("v1", "b", json!({}))];
    let (_, _, message) = failure_of(converter.convert(objects, "example.com/v2").await);
    assert_eq!(
        message,
        "conversion webhook for example.com/v1, Kind=Widget returned invalid converted object at index 2: invalid kind (expected Widget, received Gadget)"
    );
}

#[tokio::test]
async fn an_unreachable_webhook_fails_the_conversion() {
    let client = json!({"url": "https://127.0.0.1:1/convert", "caBundle": ""});
    let crd = webhook_crd(client, json!(["v1"]));
    let converter = Converter::from_crd(&crd, &ConversionSetup::default()).unwrap();
    let result = converter.convert(vec![widget("v1", "a", json!({}))], "example.com/v2");
    let (code, _, message) = failure_of(result.await);
    assert_eq!(code, 500);
    assert!(
        message.starts_with("conversion webhook for example.com/v1, Kind=Widget failed: Post \"https://127.0.0.1:1/convert\": "),
        "{message}"
    );
}

/// The sandbox converter, configured as `widgets` with a deadline short
/// enough for the looping case, long enough for a trap on a loaded machine.
/// Each test loads its own: a plugin runtime belongs to the test's tokio
/// runtime (its deadlines tick there).
fn plugin_setup() -> ConversionSetup {
    let config = crate::config::parse_file(
        "conversion:\n- name: widgets\n  module: builtin:sandbox-convert-widget\n  timeoutMs: 2000\n",
    )
    .unwrap();
    let runtime = PluginRuntime::new(None).unwrap();
    ConversionSetup::load(
        &config.conversion,
        &config.webhook_services,
        &runtime,
        Arc::new(EmptyReader),
    )
    .unwrap()
}

fn plugin_converter() -> Converter {
    let annotated = crd(
        json!({"strategy": "None"}),
        json!({PLUGIN_ANNOTATION: "widgets"}),
    );
    Converter::from_crd(&annotated, &plugin_setup()).unwrap()
}

#[tokio::test]
async fn a_plugin_converts_both_ways_and_may_relabel() {
    let converter = plugin_converter();
    let up = converter.convert(
        vec![widget("v1", "a", json!({"size": 4}))],
        "example.com/v2",
    );
    let up = up.await.unwrap();
    assert_eq!(
        (&up[0]["apiVersion"], &up[0]["spec"]),
        (&json!("example.com/v2"), &json!({"replicas": 4}))
    );
    let down = converter.convert(up, "example.com/v1").await.unwrap();
    assert_eq!(down[0], widget("v1", "a", json!({"size": 4})));
    let relabel = converter.convert(vec![widget("v1", "relabel", json!({}))], "example.com/v2");
    let relabel = relabel.await.unwrap();
    assert_eq!(
        relabel[0]["metadata"]["labels"],
        json!({"converted": "yes"})
    );
    assert_eq!(relabel[0]["metadata"]["uid"], "uid-relabel");
}

#[tokio::test]
async fn a_plugin_that_renames_traps_or_loops_fails_that_conversion_only() {
    let converter = plugin_converter();
    let prefix = "conversion webhook for example.com/v1, Kind=Widget";
    let cases = [
        (
            "rename",
            format!("{prefix} returned invalid object: must have the same name: rename != renamed"),
        ),
        (
            "trap",
            format!("{prefix} failed: plugin trapped: convert-widget panicked on purpose"),
        ),
        (
            "spin",
            format!("{prefix} failed: plugin timed out after 2000ms"),
        ),
    ];
    for (name, expected) in cases {
        let result = converter.convert(vec![widget("v1", name, json!({}))], "example.com/v2");
        let (code, reason, message) = failure_of(result.await);
        assert_eq!((code, reason), (500, ""));
        assert!(
            message.starts_with(&expected),
            "{message}\n  expected: {expected}"
        );
        let next = converter.convert(
            vec![widget("v1", "ok", json!({"size": 1}))],
            "example.com/v2",
        );
        assert_eq!(
            next.await.unwrap()[0]["spec"],
            json!({"replicas": 1}),
            "after {name}"
        );
    }
}

#[test]
fn crds_that_cannot_be_converted_say_why() {
    let setup = plugin_setup();
    let unknown = crd(
        json!({"strategy": "None"}),
        json!({PLUGIN_ANNOTATION: "gadgets"}),
    );
    let err = Converter::from_crd(&unknown, &setup).err().unwrap();
    assert_eq!(
        err,
        "conversion.capstan.dev/plugin: no converter plugin \"gadgets\" is configured (configured: [widgets])"
    );
    let both = crd(
        json!({"strategy": "Webhook", "webhook": {"clientConfig": {"url": "https://x"}, "conversionReviewVersions": ["v1"]}}),
        json!({PLUGIN_ANNOTATION: "widgets"}),
    );
    assert!(Converter::from_crd(&both, &setup)
        .err()
        .unwrap()
        .contains("needs spec.conversion.strategy None"));
    let odd = crd(json!({"strategy": "Magic"}), json!({}));
    assert_eq!(
        Converter::from_crd(&odd, &setup).err().unwrap(),
        "unknown conversion strategy \"Magic\" for CRD widgets.example.com"
    );
    let unsupported = webhook_crd(json!({"url": "https://x"}), json!(["v2"]));
    assert_eq!(
        Converter::from_crd(&unsupported, &setup).err().unwrap(),
        "no supported conversion review versions"
    );
}

#[test]
fn configuration_entries_are_checked() {
    let parse = |text: &str| {
        crate::config::parse_file(text)
            .map(|c| c.conversion)
            .map_err(|e| e.to_string())
    };
    let entries =
        parse("conversion:\n- {name: w, module: ./w.wasm, fuel: 10, config: {a: 1}}\n").unwrap();
    assert_eq!(
        (entries[0].limits.fuel, entries[0].config.as_str()),
        (Some(10), r#"{"a":1}"#)
    );
    let twice = parse("conversion:\n- {name: w, module: a}\n- {name: w, module: b}\n");
    assert_eq!(
        twice.unwrap_err(),
        "conversion[1] (w): name is listed twice"
    );
    let typo = parse("conversion:\n- {name: w, module: a, timeotMs: 3}\n").unwrap_err();
    assert!(
        typo.starts_with("conversion[0] (w): unknown field `timeotMs`"),
        "{typo}"
    );
}

/// Compiles only while a converter can be shared between requests and its
/// conversion awaited from a handler (Send futures).
#[allow(dead_code)]
fn converters_are_shareable(converter: &Converter) {
    fn shared<T: Send + Sync>(_: &T) {}
    fn sendable<F: std::future::Future + Send>(_: F) {}
    shared(converter);
    sendable(converter.convert(Vec::new(), "example.com/v1"));
}
