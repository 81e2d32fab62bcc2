//! Custom resources served once their CRD is Established: every verb, the
//! CRD's printer columns, selectable fields, short names and categories,
//! the status and scale subresources at the CRD's paths, versions, and the
//! cleanup when the CRD goes.

use serde_json::json;

use std::time::Duration;

use crate::support::{eventually, stderr, Server};

/// A namespaced CRD with status and scale subresources, printer columns
/// (one only in `-o wide`), a short name, category `all`, a selectable
/// field and a second served version (conversion None).
const WIDGETS: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd], categories: [all]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            description: What the widget should be.
            properties:
              replicas: {type: integer, description: How many widgets.}
              color: {type: string}
          status:
            type: object
            properties:
              replicas: {type: integer}
              selector: {type: string}
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas, labelSelectorPath: .status.selector}
    selectableFields:
    - jsonPath: .spec.color
    additionalPrinterColumns:
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Color, type: string, jsonPath: .spec.color, priority: 1}
  - name: v1beta1
    served: true
    storage: false
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
";

fn widget(name: &str, color: &str, replicas: i64) -> String {
    format!(
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {{name: {name}, labels: {{color: {color}}}}}\nspec: {{replicas: {replicas}, color: {color}}}\n"
    )
}

fn with_widgets() -> Server {
    let s = Server::start();
    s.ok_stdin(&["apply", "-f", "-"], WIDGETS);
    s.ok(&[
        "wait",
        "--for=condition=established",
        "--timeout=30s",
        "crd/widgets.example.com",
    ]);
    s
}

#[test]
fn custom_resources_are_served_with_the_crds_columns_selectors_and_names() {
    let s = with_widgets();
    s.ok_stdin(&["apply", "-f", "-"], &widget("red-one", "red", 1));
    s.ok_stdin(&["create", "-f", "-"], &widget("blue-one", "blue", 2));
    let table = s.ok(&["get", "wd"]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "REPLICAS"], "{table}");
    assert!(table.contains("blue-one   2"), "{table}");
    let wide = s.ok(&["get", "widgets", "-o", "wide"]);
    assert!(wide.lines().next().unwrap().contains("COLOR"), "{wide}");
    let blue = s.ok(&[
        "get",
        "widgets",
        "--field-selector",
        "spec.color=blue",
        "-o",
        "name",
    ]);
    assert_eq!(blue.trim(), "widget.example.com/blue-one");
    let red = s.ok(&["get", "widgets", "-l", "color=red", "-o", "name"]);
    assert_eq!(red.trim(), "widget.example.com/red-one");
    let refused = s.fails(&["get", "widgets", "--field-selector", "spec.size=L"]);
    assert!(
        refused.contains("field label not supported: spec.size"),
        "{refused}"
    );
    let all = s.ok(&["get", "all"]);
    assert!(all.contains("widget.example.com/red-one"), "{all}");
    let resources = s.ok(&["api-resources", "--api-group=example.com"]);
    assert!(
        resources.contains("widgets") && resources.contains("wd"),
        "{resources}"
    );
    let explained = s.ok(&["explain", "widget.spec.replicas"]);
    assert!(explained.contains("How many widgets."), "{explained}");
    // kubectl 1.27 explains and applies through OpenAPI v2.
    let v2 = ["explain", "widget.spec", "--output=plaintext-openapiv2"];
    let old = s.kubectl_release("1.27", &v2, None);
    assert!(old.status.success(), "{}", stderr(&old));
    let text = crate::support::stdout(&old);
    assert!(text.contains("What the widget should be."), "{text}");
    let applied = s.kubectl_release(
        "1.27",
        &["apply", "-f", "-"],
        Some(&widget("red-one", "red", 5)),
    );
    assert!(applied.status.success(), "{}", stderr(&applied));
    s.ok(&["delete", "widget", "red-one"]);
    let gone = s.fails(&["get", "widget", "red-one"]);
    assert!(
        gone.contains(r#"widgets.example.com "red-one" not found"#),
        "{gone}"
    );
}

#[test]
fn generation_follows_spec_and_status_and_scale_are_subresources() {
    let s = with_widgets();
    s.ok_stdin(&["apply", "-f", "-"], &widget("w", "red", 1));
    let read = |path: &str| s.ok(&["get", "widget", "w", "-o", &format!("jsonpath={path}")]);
    assert_eq!(read("{.metadata.generation}"), "1");
    s.ok(&["scale", "widget", "w", "--replicas=3"]);
    assert_eq!(read("{.spec.replicas} {.metadata.generation}"), "3 2");
    let status = r#"{"status":{"replicas":3,"selector":"color=red"}}"#;
    s.ok(&[
        "patch",
        "widget",
        "w",
        "--subresource=status",
        "--type=merge",
        "-p",
        status,
    ]);
    assert_eq!(read("{.status.replicas} {.metadata.generation}"), "3 2");
    // A write to the main resource cannot change status.
    let sneaky = r#"{"status":{"replicas":9},"spec":{"color":"green"}}"#;
    s.ok(&["patch", "widget", "w", "--type=merge", "-p", sneaky]);
    assert_eq!(
        read("{.status.replicas} {.spec.color} {.metadata.generation}"),
        "3 green 3"
    );
    // Status sent with a create is dropped before validation (a subresource).
    let with_status = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "s"},
                             "spec": {"replicas": 1}, "status": {"replicas": "many"}});
    let (code, created, _) = s.request(
        "POST",
        "/apis/example.com/v1/namespaces/default/widgets",
        "application/json",
        Some(&with_status.to_string()),
    );
    assert_eq!(code, 201, "{created}");
    assert!(created.get("status").is_none(), "{created}");
    // Custom resources have no strategic merge patch (kube's 415).
    let (code, status, _) = s.request(
        "PATCH",
        "/apis/example.com/v1/namespaces/default/widgets/w",
        "application/strategic-merge-patch+json",
        Some(r#"{"spec":{"color":"blue"}}"#),
    );
    assert_eq!(code, 415);
    assert_eq!(
        status["message"],
        "the body of the request was in an unknown format - accepted media types include: \
         application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    );
    let (code, scale) = s.get_json("/apis/example.com/v1/namespaces/default/widgets/w/scale");
    assert_eq!(code, 200);
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(scale["spec"], json!({"replicas": 3}));
    assert_eq!(
        scale["status"],
        json!({"replicas": 3, "selector": "color=red"})
    );
}

#[test]
fn each_served_version_shows_objects_in_its_own_api_version() {
    let s = with_widgets();
    s.ok_stdin(&["apply", "-f", "-"], &widget("w", "red", 1));
    let beta = "/apis/example.com/v1beta1/namespaces/default/widgets";
    let (code, list) = s.get_json(beta);
    assert_eq!(code, 200);
    assert_eq!(list["kind"], "WidgetList");
    assert_eq!(list["items"][0]["apiVersion"], "example.com/v1beta1");
    let body = json!({"apiVersion": "example.com/v1beta1", "kind": "Widget",
                      "metadata": {"name": "b"}, "spec": {"replicas": 2, "extra": "kept"}});
    let (code, created, _) = s.request("POST", beta, "application/json", Some(&body.to_string()));
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["apiVersion"], "example.com/v1beta1");
    let v1 = s.json(&["get", "widget", "b"]);
    assert_eq!(v1["apiVersion"], "example.com/v1");
    assert_eq!(v1["spec"]["replicas"], 2);
}

#[test]
fn deleting_the_crd_deletes_its_objects_and_stops_serving_them() {
    let s = with_widgets();
    s.ok_stdin(&["apply", "-f", "-"], &widget("w", "red", 1));
    // Each served group-version has its local APIService, as kube registers it.
    let registered =
        || s.get_json("/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.example.com");
    assert!(eventually(Duration::from_secs(10), || registered().0 == 200));
    let (_, service) = registered();
    assert_eq!(service["spec"]["groupPriorityMinimum"], 1000);
    assert_eq!(service["status"]["conditions"][0]["reason"], "Local");
    s.ok(&["delete", "crd", "widgets.example.com", "--timeout=30s"]);
    assert!(eventually(Duration::from_secs(10), || registered().0 == 404));
    let out = s.kubectl(&["get", "widgets"]);
    assert!(!out.status.success());
    let why = stderr(&out);
    assert!(
        why.contains("could not find the requested resource")
            || why.contains("the server doesn't have a resource type"),
        "{why}"
    );
    // The same CRD again starts empty: the old objects went with it.
    let s2 = &s;
    s2.ok_stdin(&["apply", "-f", "-"], WIDGETS);
    s2.ok(&[
        "wait",
        "--for=condition=established",
        "--timeout=30s",
        "crd/widgets.example.com",
    ]);
    let (code, list) = s2.get_json("/apis/example.com/v1/widgets");
    assert_eq!(code, 200);
    assert_eq!(list["items"], json!([]));
}

/// `x-kubernetes-validations` on a custom resource: kube's messages and
/// field paths, transition rules only on update.
const LIMITS: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: limits.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: limits, singular: limit, kind: Limit}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - {rule: 'self.replicas <= self.maxReplicas', message: must be at most maxReplicas}
            properties:
              replicas: {type: integer}
              maxReplicas: {type: integer}
              owner:
                type: string
                x-kubernetes-validations:
                - {rule: 'self == oldSelf', message: owner is immutable}
";

#[test]
fn cel_rules_refuse_objects_with_kubes_messages() {
    let s = Server::start();
    s.ok_stdin(&["apply", "-f", "-"], LIMITS);
    s.ok(&[
        "wait",
        "--for=condition=established",
        "--timeout=30s",
        "crd/limits.example.com",
    ]);
    let limit = |replicas: i64, owner: &str| {
        format!("apiVersion: example.com/v1\nkind: Limit\nmetadata: {{name: l}}\nspec: {{replicas: {replicas}, maxReplicas: 3, owner: {owner}}}\n")
    };
    let out = s.kubectl_stdin(&["create", "-f", "-"], Some(&limit(5, "a")));
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(
            r#"The Limit "l" is invalid: spec: Invalid value: "object": must be at most maxReplicas"#
        ),
        "{}",
        stderr(&out)
    );
    s.ok_stdin(&["create", "-f", "-"], &limit(2, "a"));
    let out = s.kubectl_stdin(&["apply", "-f", "-"], Some(&limit(2, "b")));
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(r#"spec.owner: Invalid value: "string": owner is immutable"#),
        "{}",
        stderr(&out)
    );
    s.ok_stdin(&["apply", "-f", "-"], &limit(3, "a"));
}

/// Two versions whose shapes differ, converted in process by the sandbox's
/// `convert-widget` plugin (v1 `spec.size` ↔ v2 `spec.replicas`), named on
/// the CRD and listed under `conversion:` in the configuration.
const CONVERTED: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  annotations: {conversion.capstan.dev/plugin: widgets}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  conversion: {strategy: None}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
  - name: v2
    served: true
    storage: false
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
";

#[test]
fn a_wasm_converter_moves_objects_between_versions_and_its_failures_are_kubes() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("capstan.yaml");
    let text = "conversion:\n- name: widgets\n  module: builtin:sandbox-convert-widget\n  timeoutMs: 2000\n";
    std::fs::write(&config, text).unwrap();
    let s = Server::start_with(&["--config", config.to_str().unwrap()]);
    s.ok_stdin(&["apply", "-f", "-"], CONVERTED);
    s.ok(&[
        "wait",
        "--for=condition=established",
        "--timeout=30s",
        "crd/widgets.example.com",
    ]);
    let v2 = "/apis/example.com/v2/namespaces/default/widgets";
    let body = json!({"apiVersion": "example.com/v2", "kind": "Widget",
                      "metadata": {"name": "w"}, "spec": {"replicas": 4}});
    let (code, created, _) = s.request("POST", v2, "application/json", Some(&body.to_string()));
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["spec"], json!({"replicas": 4}));
    let (_, v1) = s.get_json("/apis/example.com/v1/namespaces/default/widgets/w");
    assert_eq!(
        (v1["apiVersion"].as_str(), &v1["spec"]),
        (Some("example.com/v1"), &json!({"size": 4}))
    );
    let (_, list) = s.get_json(v2);
    assert_eq!(list["items"][0]["spec"], json!({"replicas": 4}));
    // A converter that traps fails that conversion; the server keeps serving.
    let trap = json!({"apiVersion": "example.com/v2", "kind": "Widget",
                      "metadata": {"name": "trap"}, "spec": {"replicas": 1}});
    let (code, status, _) = s.request("POST", v2, "application/json", Some(&trap.to_string()));
    assert_eq!(code, 500, "{status}");
    let message = status["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("conversion webhook for example.com/v2, Kind=Widget failed"),
        "{message}"
    );
    assert_eq!(
        s.get_json("/apis/example.com/v2/namespaces/default/widgets/w")
            .0,
        200
    );
}

/// A schema with kube's value validations, a default and a list-map.
const CHECKED: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: checks.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: checks, singular: check, kind: Check}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, minimum: 1, maximum: 10}
              mode: {type: string, enum: [fast, slow], default: fast}
              name: {type: string, pattern: '^[a-z]+$'}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [port]
                items:
                  type: object
                  required: [port]
                  properties:
                    port: {type: integer}
";

#[test]
fn the_schema_validates_prunes_and_defaults_as_kube() {
    let s = Server::start();
    s.ok_stdin(&["apply", "-f", "-"], CHECKED);
    s.ok(&[
        "wait",
        "--for=condition=established",
        "--timeout=30s",
        "crd/checks.example.com",
    ]);
    let path = "/apis/example.com/v1/namespaces/default/checks";
    let bad = json!({"apiVersion": "example.com/v1", "kind": "Check", "metadata": {"name": "bad"},
        "spec": {"size": "big", "mode": "medium", "name": "A1", "ports": [{"port": 80}, {"port": 80}]}});
    let (code, status, _) = s.request("POST", path, "application/json", Some(&bad.to_string()));
    assert_eq!(code, 422, "{status}");
    let message = status["message"].as_str().unwrap_or_default();
    for expected in [
        r#"spec.size: Invalid value: "string": spec.size in body must be of type integer: "string""#,
        r#"spec.mode: Unsupported value: "medium": supported values: "fast", "slow""#,
        r#"spec.name: Invalid value: "A1": spec.name in body should match '^[a-z]+$'"#,
        r#"spec.ports[1]: Duplicate value: map[string]interface {}{"port":80}"#,
    ] {
        assert!(message.contains(expected), "{expected}\nnot in\n{message}");
    }
    let too_big = json!({"apiVersion": "example.com/v1", "kind": "Check", "metadata": {"name": "big"},
        "spec": {"size": 11}});
    let (code, status, _) = s.request("POST", path, "application/json", Some(&too_big.to_string()));
    assert_eq!(code, 422);
    assert!(
        status["message"].as_str().unwrap_or_default().contains(
            "spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10"
        ),
        "{status}"
    );
    let missing = json!({"apiVersion": "example.com/v1", "kind": "Check", "metadata": {"name": "m"}, "spec": {}});
    let (code, status, _) = s.request("POST", path, "application/json", Some(&missing.to_string()));
    assert_eq!(code, 422);
    assert!(
        status["message"]
            .as_str()
            .unwrap_or_default()
            .contains("spec.size: Required value"),
        "{status}"
    );
    let wrong_kind = json!({"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "k"}, "spec": {"size": 1}});
    let (code, status, _) = s.request(
        "POST",
        path,
        "application/json",
        Some(&wrong_kind.to_string()),
    );
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        r#"Check.example.com "k" is invalid: kind: Invalid value: "Gadget": must be Check"#
    );
    // Unknown fields: refused under Strict with kube's wording, pruned otherwise; defaults filled.
    let extra = json!({"apiVersion": "example.com/v1", "kind": "Check", "metadata": {"name": "ok"},
        "spec": {"size": 2, "colour": "red"}});
    let strict = format!("{path}?fieldValidation=Strict");
    let (code, status, _) = s.request(
        "POST",
        &strict,
        "application/json",
        Some(&extra.to_string()),
    );
    assert_eq!(code, 400);
    assert_eq!(
        status["message"],
        r#"Check in version "v1" cannot be handled as a Check: strict decoding error: unknown field "spec.colour""#
    );
    let (code, created, headers) = s.request(
        "POST",
        &format!("{path}?fieldValidation=Warn"),
        "application/json",
        Some(&extra.to_string()),
    );
    assert_eq!(code, 201, "{created}");
    assert!(
        headers.contains(r#"unknown field \"spec.colour\""#),
        "{headers}"
    );
    assert_eq!(created["spec"], json!({"size": 2, "mode": "fast"}));
}
