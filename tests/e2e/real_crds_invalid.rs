//! Invalid objects for the real CRDs of tests/e2e/fixtures/crds/, and
//! kube-apiserver 1.33's exact answers: 422 Invalid with the message and
//! causes its structural-schema validation (kube-openapi, converted by
//! apiextensions-apiserver's validation.go), its list-type checks and its CEL
//! `x-kubernetes-validations` produce; plus the defaults the schemas declare.
//!
//! These need the schema validation engine (types, formats, enums, patterns,
//! bounds, required, list types, defaulting, CEL): register this file in
//! tests/e2e/main.rs (`mod real_crds_invalid;`) once it is merged.
//!
//! Wording (k8s.io/apimachinery field errors, kube 1.33):
//! `<path>: Required value`; `<path>: Unsupported value: <v>: supported
//! values: "a", "b"`; `<path>: Invalid value: "<json type>": <path> in body
//! must be of type <type>: "<json type>"`; `<path>: Invalid value: <v>:
//! <path> in body should match '<pattern>'`; `<path>: Too many: <n>: must
//! have at most <max> items`; CEL rules: `<path>: Invalid value: "<schema
//! type>": <rule message>`; list-map duplicates: `<path>[i]: Duplicate
//! value: map[string]interface {}{"<key>":"<value>"}`.

use serde_json::{json, Value};

use crate::real_crds::{
    with_crd, APPLICATIONS, CERTIFICATE, CERTIFICATES, HTTP_ROUTES, PROMETHEUS_RULES,
    SERVICE_MONITORS,
};
use crate::support::Server;

/// One expected cause: (reason, message, field).
type Cause<'a> = (&'a str, &'a str, &'a str);

/// POSTs `object` to `collection` and checks kube's 422: the Status
/// message, its details (kind, group, name) and causes; nothing is created.
fn rejected(s: &Server, collection: &str, object: &Value, message: &str, causes: &[Cause<'_>]) {
    let (code, status, _) = s.request(
        "POST",
        collection,
        "application/json",
        Some(&object.to_string()),
    );
    assert_eq!(code, 422, "{status}");
    assert_eq!(status["kind"], "Status", "{status}");
    assert_eq!(status["reason"], "Invalid", "{status}");
    assert_eq!(status["message"], message, "{status}");
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    assert_eq!(status["details"]["name"], name, "{status}");
    assert_eq!(status["details"]["kind"], kind, "{status}");
    let group = object["apiVersion"]
        .as_str()
        .and_then(|v| v.split_once('/'))
        .map(|(g, _)| g)
        .unwrap_or_default();
    assert_eq!(status["details"]["group"], group, "{status}");
    let expected: Vec<Value> = causes
        .iter()
        .map(|(reason, message, field)| json!({"reason": reason, "message": message, "field": field}))
        .collect();
    assert_eq!(status["details"]["causes"], json!(expected), "{status}");
    let (code, _) = s.get_json(&format!("{collection}/{name}"));
    assert_eq!(code, 404, "an invalid {kind} was stored");
}

// ---------------------------------------------------------------- Certificate

const CERTS: &str = "/apis/cert-manager.io/v1/namespaces/default/certificates";

fn certificate() -> Value {
    json!({
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": {"name": "example-com", "namespace": "default"},
        "spec": {
            "secretName": "example-com-tls",
            "duration": "2160h",
            "renewBefore": "360h",
            "subject": {"organizations": ["jetstack"]},
            "isCA": false,
            "privateKey": {"algorithm": "RSA", "encoding": "PKCS1", "size": 2048},
            "usages": ["server auth", "client auth"],
            "dnsNames": ["example.com", "www.example.com"],
            "issuerRef": {"name": "ca-issuer", "kind": "Issuer", "group": "cert-manager.io"}
        }
    })
}

#[test]
fn certificate_without_secret_name_is_rejected_as_kube_does() {
    let s = with_crd(CERTIFICATES);
    let mut cert = certificate();
    if let Some(spec) = cert["spec"].as_object_mut() {
        spec.remove("secretName");
    }
    rejected(
        &s,
        CERTS,
        &cert,
        r#"Certificate.cert-manager.io "example-com" is invalid: spec.secretName: Required value"#,
        &[("FieldValueRequired", "Required value", "spec.secretName")],
    );
    // kubectl shows the same causes in its own words.
    let without = CERTIFICATE.replace("  secretName: example-com-tls\n", "");
    let out = s.kubectl_stdin(&["create", "-f", "-"], Some(&without));
    let err = crate::support::stderr(&out);
    assert!(
        err.contains(
            r#"The Certificate "example-com" is invalid: spec.secretName: Required value"#
        ),
        "{err}"
    );
}

#[test]
fn certificate_enum_type_and_item_enum_violations_are_rejected_as_kube_does() {
    let s = with_crd(CERTIFICATES);
    let mut dsa = certificate();
    dsa["spec"]["privateKey"]["algorithm"] = json!("DSA");
    let unsupported = r#"Unsupported value: "DSA": supported values: "RSA", "ECDSA", "Ed25519""#;
    rejected(
        &s,
        CERTS,
        &dsa,
        &format!(
            r#"Certificate.cert-manager.io "example-com" is invalid: spec.privateKey.algorithm: {unsupported}"#
        ),
        &[(
            "FieldValueNotSupported",
            unsupported,
            "spec.privateKey.algorithm",
        )],
    );

    let mut yes = certificate();
    yes["spec"]["isCA"] = json!("yes");
    let typed = r#"Invalid value: "string": spec.isCA in body must be of type boolean: "string""#;
    rejected(
        &s,
        CERTS,
        &yes,
        &format!(r#"Certificate.cert-manager.io "example-com" is invalid: spec.isCA: {typed}"#),
        &[("FieldValueTypeInvalid", typed, "spec.isCA")],
    );

    let mut usage = certificate();
    usage["spec"]["usages"] = json!(["server auth", "digital-signature"]);
    let usages = concat!(
        r#"Unsupported value: "digital-signature": supported values: "signing", "digital signature", "#,
        r#""content commitment", "key encipherment", "key agreement", "data encipherment", "#,
        r#""cert sign", "crl sign", "encipher only", "decipher only", "any", "server auth", "#,
        r#""client auth", "code signing", "email protection", "s/mime", "ipsec end system", "#,
        r#""ipsec tunnel", "ipsec user", "timestamping", "ocsp signing", "microsoft sgc", "netscape sgc""#
    );
    rejected(
        &s,
        CERTS,
        &usage,
        &format!(
            r#"Certificate.cert-manager.io "example-com" is invalid: spec.usages[1]: {usages}"#
        ),
        &[("FieldValueNotSupported", usages, "spec.usages[1]")],
    );
}

#[test]
fn certificate_updates_and_status_are_validated_too() {
    let s = with_crd(CERTIFICATES);
    s.ok_stdin(&["create", "-f", "-"], CERTIFICATE);
    let drop_issuer = r#"[{"op":"remove","path":"/spec/issuerRef"}]"#;
    let err = s.fails(&[
        "patch",
        "certificate",
        "example-com",
        "--type=json",
        "-p",
        drop_issuer,
    ]);
    assert!(
        err.contains(r#"The Certificate "example-com" is invalid: spec.issuerRef: Required value"#),
        "{err}"
    );
    let yes = r#"{"status":{"conditions":[{"type":"Ready","status":"Yes"}]}}"#;
    let err = s.fails(&[
        "patch",
        "certificate",
        "example-com",
        "--subresource=status",
        "--type=merge",
        "-p",
        yes,
    ]);
    assert!(
        err.contains(concat!(
            r#"The Certificate "example-com" is invalid: status.conditions[0].status: "#,
            r#"Unsupported value: "Yes": supported values: "True", "False", "Unknown""#
        )),
        "{err}"
    );
    let cert = s.json(&["get", "certificate", "example-com"]);
    assert_eq!(cert["spec"]["issuerRef"]["name"], "ca-issuer");
    assert_eq!(cert["metadata"]["generation"], 1);
    assert!(
        cert.get("status")
            .is_none_or(|st| st.get("conditions").is_none()),
        "{cert}"
    );
}

// ------------------------------------------------------------- ServiceMonitor

const SMONS: &str = "/apis/monitoring.coreos.com/v1/namespaces/default/servicemonitors";

/// The Prometheus Operator duration pattern (interval, scrapeTimeout, for...).
const DURATION: &str =
    "^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$";

fn service_monitor() -> Value {
    json!({
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {"name": "example-app", "labels": {"team": "frontend"}},
        "spec": {
            "selector": {"matchLabels": {"app": "example-app"}},
            "endpoints": [{"port": "web"}]
        }
    })
}

#[test]
fn service_monitor_required_pattern_enum_and_type_violations_are_rejected_as_kube_does() {
    let s = with_crd(SERVICE_MONITORS);
    let prefix = r#"ServiceMonitor.monitoring.coreos.com "example-app" is invalid: "#;

    let mut no_selector = service_monitor();
    if let Some(spec) = no_selector["spec"].as_object_mut() {
        spec.remove("selector");
    }
    rejected(
        &s,
        SMONS,
        &no_selector,
        &format!("{prefix}spec.selector: Required value"),
        &[("FieldValueRequired", "Required value", "spec.selector")],
    );

    let mut no_spec = service_monitor();
    if let Some(object) = no_spec.as_object_mut() {
        object.remove("spec");
    }
    rejected(
        &s,
        SMONS,
        &no_spec,
        &format!("{prefix}spec: Required value"),
        &[("FieldValueRequired", "Required value", "spec")],
    );

    let mut slow = service_monitor();
    slow["spec"]["endpoints"][0]["interval"] = json!("30 seconds");
    let pattern = format!(
        r#"Invalid value: "30 seconds": spec.endpoints[0].interval in body should match '{DURATION}'"#
    );
    rejected(
        &s,
        SMONS,
        &slow,
        &format!("{prefix}spec.endpoints[0].interval: {pattern}"),
        &[("FieldValueInvalid", &pattern, "spec.endpoints[0].interval")],
    );

    let mut ftp = service_monitor();
    ftp["spec"]["endpoints"][0]["scheme"] = json!("ftp");
    let scheme = r#"Unsupported value: "ftp": supported values: "http", "https""#;
    rejected(
        &s,
        SMONS,
        &ftp,
        &format!("{prefix}spec.endpoints[0].scheme: {scheme}"),
        &[("FieldValueNotSupported", scheme, "spec.endpoints[0].scheme")],
    );

    let mut limit = service_monitor();
    limit["spec"]["sampleLimit"] = json!("1000");
    let typed =
        r#"Invalid value: "string": spec.sampleLimit in body must be of type integer: "string""#;
    rejected(
        &s,
        SMONS,
        &limit,
        &format!("{prefix}spec.sampleLimit: {typed}"),
        &[("FieldValueTypeInvalid", typed, "spec.sampleLimit")],
    );
}

#[test]
fn service_monitor_relabeling_action_defaults_to_replace() {
    let s = with_crd(SERVICE_MONITORS);
    let mut smon = service_monitor();
    smon["spec"]["endpoints"][0]["relabelings"] =
        json!([{"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node"}]);
    let (code, created, _) = s.request("POST", SMONS, "application/json", Some(&smon.to_string()));
    assert_eq!(code, 201, "{created}");
    assert_eq!(
        created["spec"]["endpoints"][0]["relabelings"][0]["action"], "replace",
        "{created}"
    );
}

// ------------------------------------------------------------- PrometheusRule

const RULES: &str = "/apis/monitoring.coreos.com/v1/namespaces/default/prometheusrules";

fn prometheus_rule(groups: Value) -> Value {
    json!({
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": "prometheus-example-rules", "labels": {"role": "alert-rules"}},
        "spec": {"groups": groups}
    })
}

#[test]
fn prometheus_rule_group_violations_are_rejected_as_kube_does() {
    let s = with_crd(PROMETHEUS_RULES);
    let prefix = r#"PrometheusRule.monitoring.coreos.com "prometheus-example-rules" is invalid: "#;

    let twice = prometheus_rule(json!([
        {"name": "example", "rules": [{"alert": "A", "expr": "vector(1)"}]},
        {"name": "example", "rules": [{"alert": "B", "expr": "vector(2)"}]}
    ]));
    let duplicate = r#"Duplicate value: map[string]interface {}{"name":"example"}"#;
    rejected(
        &s,
        RULES,
        &twice,
        &format!("{prefix}spec.groups[1]: {duplicate}"),
        &[("FieldValueDuplicate", duplicate, "spec.groups[1]")],
    );

    let unnamed = prometheus_rule(json!([{"rules": [{"alert": "A", "expr": "vector(1)"}]}]));
    rejected(
        &s,
        RULES,
        &unnamed,
        &format!("{prefix}spec.groups[0].name: Required value"),
        &[(
            "FieldValueRequired",
            "Required value",
            "spec.groups[0].name",
        )],
    );

    let empty = prometheus_rule(json!([{"name": "", "rules": [{"alert": "A", "expr": "1"}]}]));
    let short = r#"Invalid value: "": spec.groups[0].name in body should be at least 1 chars long"#;
    rejected(
        &s,
        RULES,
        &empty,
        &format!("{prefix}spec.groups[0].name: {short}"),
        &[("FieldValueInvalid", short, "spec.groups[0].name")],
    );

    let no_expr = prometheus_rule(json!([{"name": "example", "rules": [{"alert": "A"}]}]));
    rejected(
        &s,
        RULES,
        &no_expr,
        &format!("{prefix}spec.groups[0].rules[0].expr: Required value"),
        &[(
            "FieldValueRequired",
            "Required value",
            "spec.groups[0].rules[0].expr",
        )],
    );

    let wordy = prometheus_rule(json!([{"name": "example",
        "rules": [{"alert": "A", "expr": "vector(1)", "for": "5 minutes"}]}]));
    let pattern = format!(
        r#"Invalid value: "5 minutes": spec.groups[0].rules[0].for in body should match '{DURATION}'"#
    );
    rejected(
        &s,
        RULES,
        &wordy,
        &format!("{prefix}spec.groups[0].rules[0].for: {pattern}"),
        &[("FieldValueInvalid", &pattern, "spec.groups[0].rules[0].for")],
    );
}

// ------------------------------------------------------------------ HTTPRoute

const ROUTES: &str = "/apis/gateway.networking.k8s.io/v1beta1/namespaces/default/httproutes";

fn http_route(name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "gateway.networking.k8s.io/v1beta1",
        "kind": "HTTPRoute",
        "metadata": {"name": name},
        "spec": spec
    })
}

fn route_prefix(name: &str) -> String {
    format!(r#"HTTPRoute.gateway.networking.k8s.io "{name}" is invalid: "#)
}

#[test]
fn http_route_with_more_than_sixteen_rules_is_rejected_as_kube_does() {
    let s = with_crd(HTTP_ROUTES);
    let rules: Vec<Value> = (0..17)
        .map(|i| {
            json!({"matches": [{"path": {"type": "PathPrefix", "value": format!("/app{i}")}}],
                        "backendRefs": [{"name": format!("app{i}"), "port": 8080}]})
        })
        .collect();
    let route = http_route(
        "too-many-rules",
        json!({"parentRefs": [{"name": "example-gateway"}], "rules": rules}),
    );
    let too_many = "Too many: 17: must have at most 16 items";
    rejected(
        &s,
        ROUTES,
        &route,
        &format!("{}spec.rules: {too_many}", route_prefix("too-many-rules")),
        &[("FieldValueTooMany", too_many, "spec.rules")],
    );
    let manifest = serde_json::to_string(&route).unwrap_or_default();
    let out = s.kubectl_stdin(&["create", "-f", "-"], Some(&manifest));
    let err = crate::support::stderr(&out);
    assert!(
        err.contains(&format!(
            r#"The HTTPRoute "too-many-rules" is invalid: spec.rules: {too_many}"#
        )),
        "{err}"
    );
}

#[test]
fn http_route_cel_rules_are_enforced_with_their_messages() {
    let s = with_crd(HTTP_ROUTES);
    let gateway = json!([{"name": "example-gateway"}]);

    // A rule-level rule: a redirect filter and backendRefs together.
    let both = http_route(
        "redirect-and-backend",
        json!({"parentRefs": gateway, "rules": [{
            "filters": [{"type": "RequestRedirect",
                         "requestRedirect": {"scheme": "https", "statusCode": 301}}],
            "backendRefs": [{"name": "foo-svc", "port": 8080}]
        }]}),
    );
    let message = "RequestRedirect filter must not be used together with backendRefs";
    let invalid = format!(r#"Invalid value: "object": {message}"#);
    rejected(
        &s,
        ROUTES,
        &both,
        &format!(
            "{}spec.rules[0]: {invalid}",
            route_prefix("redirect-and-backend")
        ),
        &[("FieldValueInvalid", &invalid, "spec.rules[0]")],
    );

    // A rule on the path match.
    let relative = http_route(
        "relative-path",
        json!({"parentRefs": gateway, "rules": [{
            "matches": [{"path": {"type": "PathPrefix", "value": "login"}}],
            "backendRefs": [{"name": "foo-svc", "port": 8080}]
        }]}),
    );
    let invalid = concat!(
        r#"Invalid value: "object": value must be an absolute path and start with '/' "#,
        r#"when type one of ['Exact', 'PathPrefix']"#
    );
    rejected(
        &s,
        ROUTES,
        &relative,
        &format!(
            "{}spec.rules[0].matches[0].path: {invalid}",
            route_prefix("relative-path")
        ),
        &[(
            "FieldValueInvalid",
            invalid,
            "spec.rules[0].matches[0].path",
        )],
    );

    // A list-level rule on parentRefs (needs the defaulted group and kind).
    let half_sectioned = http_route(
        "half-sectioned",
        json!({"parentRefs": [{"name": "example-gateway"},
                              {"name": "example-gateway", "sectionName": "https"}],
               "rules": [{"backendRefs": [{"name": "foo-svc", "port": 8080}]}]}),
    );
    let invalid = concat!(
        r#"Invalid value: "array": sectionName must be specified when parentRefs "#,
        "includes 2 or more references to the same parent"
    );
    rejected(
        &s,
        ROUTES,
        &half_sectioned,
        &format!(
            "{}spec.parentRefs: {invalid}",
            route_prefix("half-sectioned")
        ),
        &[("FieldValueInvalid", invalid, "spec.parentRefs")],
    );

    // A backendRef rule that holds only with the defaults (group "", kind Service).
    let portless = http_route(
        "portless",
        json!({"parentRefs": gateway, "rules": [{"backendRefs": [{"name": "foo-svc"}]}]}),
    );
    let invalid = r#"Invalid value: "object": Must have port for Service reference"#;
    rejected(
        &s,
        ROUTES,
        &portless,
        &format!(
            "{}spec.rules[0].backendRefs[0]: {invalid}",
            route_prefix("portless")
        ),
        &[("FieldValueInvalid", invalid, "spec.rules[0].backendRefs[0]")],
    );
}

#[test]
fn http_route_pattern_bound_and_integer_enum_violations_are_rejected_as_kube_does() {
    let s = with_crd(HTTP_ROUTES);
    let gateway = json!([{"name": "example-gateway"}]);
    let backend = json!([{"backendRefs": [{"name": "foo-svc", "port": 8080}]}]);

    let upper = http_route(
        "upper-host",
        json!({"parentRefs": gateway, "hostnames": ["Foo.Example.com"], "rules": backend}),
    );
    let pattern = concat!(
        r#"Invalid value: "Foo.Example.com": spec.hostnames[0] in body should match "#,
        r#"'^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'"#
    );
    rejected(
        &s,
        ROUTES,
        &upper,
        &format!("{}spec.hostnames[0]: {pattern}", route_prefix("upper-host")),
        &[("FieldValueInvalid", pattern, "spec.hostnames[0]")],
    );

    let big_port = http_route(
        "big-port",
        json!({"parentRefs": gateway,
               "rules": [{"backendRefs": [{"name": "foo-svc", "port": 70000}]}]}),
    );
    let bound = concat!(
        "Invalid value: 70000: spec.rules[0].backendRefs[0].port in body ",
        "should be less than or equal to 65535"
    );
    rejected(
        &s,
        ROUTES,
        &big_port,
        &format!(
            "{}spec.rules[0].backendRefs[0].port: {bound}",
            route_prefix("big-port")
        ),
        &[(
            "FieldValueInvalid",
            bound,
            "spec.rules[0].backendRefs[0].port",
        )],
    );

    let temporary = http_route(
        "temporary-redirect",
        json!({"parentRefs": gateway, "rules": [{
            "filters": [{"type": "RequestRedirect", "requestRedirect": {"statusCode": 307}}]
        }]}),
    );
    let unsupported = r#"Unsupported value: 307: supported values: "301", "302""#;
    rejected(
        &s,
        ROUTES,
        &temporary,
        &format!(
            "{}spec.rules[0].filters[0].requestRedirect.statusCode: {unsupported}",
            route_prefix("temporary-redirect")
        ),
        &[(
            "FieldValueNotSupported",
            unsupported,
            "spec.rules[0].filters[0].requestRedirect.statusCode",
        )],
    );
}

#[test]
fn http_route_defaults_are_filled_in_as_the_crd_declares() {
    let s = with_crd(HTTP_ROUTES);
    let route = http_route(
        "defaults",
        json!({"parentRefs": [{"name": "example-gateway"}],
               "rules": [{"backendRefs": [{"name": "foo-svc", "port": 8080}]}]}),
    );
    let (code, created, _) =
        s.request("POST", ROUTES, "application/json", Some(&route.to_string()));
    assert_eq!(code, 201, "{created}");
    assert_eq!(
        created["spec"]["parentRefs"][0],
        json!({"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "example-gateway"})
    );
    assert_eq!(
        created["spec"]["rules"][0]["backendRefs"][0],
        json!({"group": "", "kind": "Service", "name": "foo-svc", "port": 8080, "weight": 1})
    );
    assert_eq!(
        created["spec"]["rules"][0]["matches"],
        json!([{"path": {"type": "PathPrefix", "value": "/"}}])
    );
}

// ------------------------------------------------------------ Argo CD Application

const APPS: &str = "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications";

fn application(spec: Value) -> Value {
    json!({
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "guestbook", "namespace": "argocd"},
        "spec": spec
    })
}

#[test]
fn application_required_type_and_pattern_violations_are_rejected_as_kube_does() {
    let s = with_crd(APPLICATIONS);
    s.ok(&["create", "namespace", "argocd"]);
    let prefix = r#"Application.argoproj.io "guestbook" is invalid: "#;
    let destination = json!({"server": "https://kubernetes.default.svc", "namespace": "guestbook"});
    let source = json!({"repoURL": "https://github.com/argoproj/argocd-example-apps.git",
                        "targetRevision": "HEAD", "path": "guestbook"});

    let no_project = application(json!({"source": source, "destination": destination}));
    rejected(
        &s,
        APPS,
        &no_project,
        &format!("{prefix}spec.project: Required value"),
        &[("FieldValueRequired", "Required value", "spec.project")],
    );

    let no_repo = application(json!({"project": "default", "destination": destination,
                                     "source": {"path": "guestbook"}}));
    rejected(
        &s,
        APPS,
        &no_repo,
        &format!("{prefix}spec.source.repoURL: Required value"),
        &[(
            "FieldValueRequired",
            "Required value",
            "spec.source.repoURL",
        )],
    );

    let wordy = application(json!({"project": "default", "source": source,
                                   "destination": destination, "revisionHistoryLimit": "ten"}));
    let typed = concat!(
        r#"Invalid value: "string": spec.revisionHistoryLimit in body must be of type "#,
        r#"integer: "string""#
    );
    rejected(
        &s,
        APPS,
        &wordy,
        &format!("{prefix}spec.revisionHistoryLimit: {typed}"),
        &[("FieldValueTypeInvalid", typed, "spec.revisionHistoryLimit")],
    );

    let root = application(json!({"project": "default", "destination": destination,
        "sourceHydrator": {
            "drySource": {"repoURL": "https://github.com/argoproj/argocd-example-apps.git",
                          "targetRevision": "HEAD", "path": "guestbook"},
            "syncSource": {"targetBranch": "environments/dev", "path": "."}}}));
    let pattern = concat!(
        r#"Invalid value: ".": spec.sourceHydrator.syncSource.path in body should "#,
        r#"match '^.{2,}|[^./]$'"#
    );
    rejected(
        &s,
        APPS,
        &root,
        &format!("{prefix}spec.sourceHydrator.syncSource.path: {pattern}"),
        &[(
            "FieldValueInvalid",
            pattern,
            "spec.sourceHydrator.syncSource.path",
        )],
    );
}
