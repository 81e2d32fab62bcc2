//! Real operators' CRDs, stored as published (tests/e2e/fixtures/crds/, see
//! its README): each installs with client-side and server-side apply,
//! becomes Established, and serves an object written as the project's own
//! docs show one: created, read back, listed with the CRD's printer columns,
//! patched and deleted.

use serde_json::json;

use crate::support::{stderr, stdout as stdout_of, Server};

/// The path of a fixture CRD file.
pub(crate) fn fixture(file: &str) -> String {
    format!(
        "{}/../tests/e2e/fixtures/crds/{file}",
        env!("CARGO_MANIFEST_DIR")
    )
}

pub(crate) const CERTIFICATES: (&str, &str) = (
    "cert-manager.io_certificates.yaml",
    "certificates.cert-manager.io",
);
pub(crate) const SERVICE_MONITORS: (&str, &str) = (
    "monitoring.coreos.com_servicemonitors.yaml",
    "servicemonitors.monitoring.coreos.com",
);
pub(crate) const PROMETHEUS_RULES: (&str, &str) = (
    "monitoring.coreos.com_prometheusrules.yaml",
    "prometheusrules.monitoring.coreos.com",
);
pub(crate) const APPLICATIONS: (&str, &str) = ("application-crd.yaml", "applications.argoproj.io");
pub(crate) const HTTP_ROUTES: (&str, &str) = (
    "gateway.networking.k8s.io_httproutes.yaml",
    "httproutes.gateway.networking.k8s.io",
);

/// A fresh server with the fixture's CRD installed.
pub(crate) fn with_crd(fixture_crd: (&str, &str)) -> Server {
    let s = Server::start();
    install(&s, fixture_crd);
    s
}

/// Applies the fixture's CRD client-side, then again server-side (taking
/// the fields over), and waits until it is Established.
pub(crate) fn install(s: &Server, (file, crd): (&str, &str)) {
    let path = fixture(file);
    let created = s.ok(&["apply", "-f", &path]);
    assert_eq!(
        created.trim(),
        format!("customresourcedefinition.apiextensions.k8s.io/{crd} created")
    );
    let applied = s.ok(&["apply", "--server-side", "-f", &path]);
    assert_eq!(
        applied.trim(),
        format!("customresourcedefinition.apiextensions.k8s.io/{crd} serverside-applied")
    );
    s.ok(&[
        "wait",
        "--for=condition=established",
        "--timeout=30s",
        &format!("crd/{crd}"),
    ]);
}

/// The column names of a `kubectl get` table.
fn header(table: &str) -> Vec<String> {
    let first = table.lines().next().unwrap_or_default();
    first.split_whitespace().map(str::to_string).collect()
}

/// The table row of `name` (empty when absent).
fn row<'a>(table: &'a str, name: &str) -> &'a str {
    table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_default()
}

/// A Certificate as cert-manager's "Creating Certificate Resources" page shows one.
pub(crate) const CERTIFICATE: &str = r#"apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: example-com
  namespace: default
spec:
  secretName: example-com-tls
  duration: 2160h # 90d
  renewBefore: 360h # 15d
  subject:
    organizations:
      - jetstack
  isCA: false
  privateKey:
    algorithm: RSA
    encoding: PKCS1
    size: 2048
  usages:
    - server auth
    - client auth
  dnsNames:
    - example.com
    - www.example.com
  issuerRef:
    name: ca-issuer
    kind: Issuer
    group: cert-manager.io
"#;

#[test]
fn cert_manager_certificate_is_served_with_its_columns_names_and_status() {
    let s = with_crd(CERTIFICATES);
    let out = s.ok_stdin(&["create", "-f", "-"], CERTIFICATE);
    assert_eq!(
        out.trim(),
        "certificate.cert-manager.io/example-com created"
    );
    let cert = s.json(&["get", "certificate", "example-com"]);
    assert_eq!(cert["spec"]["secretName"], "example-com-tls");
    assert_eq!(cert["spec"]["privateKey"]["size"], 2048);
    assert_eq!(
        cert["spec"]["usages"],
        json!(["server auth", "client auth"])
    );
    assert_eq!(cert["metadata"]["generation"], 1);

    let table = s.ok(&["get", "certificates"]);
    assert_eq!(
        header(&table),
        ["NAME", "READY", "SECRET", "AGE"],
        "{table}"
    );
    assert!(
        row(&table, "example-com").contains("example-com-tls"),
        "{table}"
    );
    let wide = s.ok(&["get", "cert", "-o", "wide"]);
    assert_eq!(
        header(&wide),
        ["NAME", "READY", "SECRET", "ISSUER", "STATUS", "AGE"],
        "{wide}"
    );
    assert!(row(&wide, "example-com").contains("ca-issuer"), "{wide}");
    // The short names and the CRD's category find it too.
    for how in ["certs", "cert-manager"] {
        let names = s.ok(&["get", how, "-o", "name"]);
        assert_eq!(names.trim(), "certificate.cert-manager.io/example-com");
    }

    // Status comes through its subresource; READY reads the Ready condition.
    let ready = r#"{"status":{"conditions":[{"type":"Ready","status":"True","reason":"Ready","message":"Certificate is up to date and has not expired","lastTransitionTime":"2024-01-01T00:00:00Z"}]}}"#;
    s.ok(&[
        "patch",
        "certificate",
        "example-com",
        "--subresource=status",
        "--type=merge",
        "-p",
        ready,
    ]);
    let wide = s.ok(&["get", "certificates", "-o", "wide"]);
    let line = row(&wide, "example-com");
    assert!(
        line.contains("True") && line.contains("Certificate is up to date and has not expired"),
        "{wide}"
    );

    let more = r#"{"spec":{"dnsNames":["example.com","www.example.com","api.example.com"]}}"#;
    s.ok(&[
        "patch",
        "certificate",
        "example-com",
        "--type=merge",
        "-p",
        more,
    ]);
    let cert = s.json(&["get", "certificate", "example-com"]);
    assert_eq!(cert["spec"]["dnsNames"][2], "api.example.com");
    assert_eq!(cert["metadata"]["generation"], 2);
    assert_eq!(cert["status"]["conditions"][0]["status"], "True");

    // With a status subresource, a create's status is dropped.
    let with_status = CERTIFICATE.replace("example-com\n", "other-com\n")
        + "status:\n  conditions:\n  - {type: Ready, status: \"True\"}\n";
    s.ok_stdin(&["create", "-f", "-"], &with_status);
    let other = s.json(&["get", "certificate", "other-com"]);
    assert!(other.get("status").is_none(), "{other}");

    s.ok(&["delete", "certificate", "example-com"]);
    let gone = s.fails(&["get", "certificate", "example-com"]);
    assert!(
        gone.contains(r#"certificates.cert-manager.io "example-com" not found"#),
        "{gone}"
    );
}

#[test]
fn certificate_unknown_field_is_a_strict_decoding_error() {
    let s = with_crd(CERTIFICATES);
    let typo = CERTIFICATE.replace(
        "  isCA: false\n",
        "  isCA: false\n  commonname: example.com\n",
    );
    let out = s.kubectl_stdin(&["create", "-f", "-"], Some(&typo));
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(concat!(
            r#"Error from server (BadRequest): error when creating "STDIN": "#,
            r#"Certificate in version "v1" cannot be handled as a Certificate: "#,
            r#"strict decoding error: unknown field "spec.commonname""#
        )),
        "{err}"
    );
}

/// A ServiceMonitor as the Prometheus Operator's getting-started guide shows one.
pub(crate) const SERVICE_MONITOR: &str = r#"apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: example-app
  labels:
    team: frontend
spec:
  selector:
    matchLabels:
      app: example-app
  endpoints:
  - port: web
"#;

#[test]
fn prometheus_operator_service_monitor_is_served_applied_and_patched() {
    let s = with_crd(SERVICE_MONITORS);
    let out = s.ok_stdin(&["apply", "--server-side", "-f", "-"], SERVICE_MONITOR);
    assert_eq!(
        out.trim(),
        "servicemonitor.monitoring.coreos.com/example-app serverside-applied"
    );
    let smon = s.json(&["get", "servicemonitor", "example-app"]);
    assert_eq!(smon["spec"]["endpoints"], json!([{"port": "web"}]));
    assert_eq!(
        smon["spec"]["selector"]["matchLabels"],
        json!({"app": "example-app"})
    );

    // No additionalPrinterColumns: the default NAME and AGE.
    let table = s.ok(&["get", "smon"]);
    assert_eq!(header(&table), ["NAME", "AGE"], "{table}");
    assert!(!row(&table, "example-app").is_empty(), "{table}");
    let labelled = s.ok(&[
        "get",
        "servicemonitors",
        "-l",
        "team=frontend",
        "-o",
        "name",
    ]);
    assert_eq!(
        labelled.trim(),
        "servicemonitor.monitoring.coreos.com/example-app"
    );

    let interval = r#"[{"op":"add","path":"/spec/endpoints/0/interval","value":"30s"},{"op":"add","path":"/spec/endpoints/0/path","value":"/metrics"}]"#;
    s.ok(&[
        "patch",
        "servicemonitor",
        "example-app",
        "--type=json",
        "-p",
        interval,
    ]);
    let smon = s.json(&["get", "servicemonitor", "example-app"]);
    assert_eq!(
        smon["spec"]["endpoints"][0],
        json!({"port": "web", "interval": "30s", "path": "/metrics"})
    );
    assert_eq!(smon["metadata"]["generation"], 2);

    s.ok(&["delete", "servicemonitor", "example-app"]);
    let gone = s.fails(&["get", "smon", "example-app"]);
    assert!(
        gone.contains(r#"servicemonitors.monitoring.coreos.com "example-app" not found"#),
        "{gone}"
    );
}

/// A PrometheusRule as the Prometheus Operator's alerting guide shows one.
pub(crate) const PROMETHEUS_RULE: &str = r#"apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  creationTimestamp: null
  labels:
    prometheus: example
    role: alert-rules
  name: prometheus-example-rules
spec:
  groups:
  - name: ./example.rules
    rules:
    - alert: ExampleAlert
      expr: vector(1)
"#;

#[test]
fn prometheus_operator_prometheus_rule_is_served_and_patched() {
    let s = with_crd(PROMETHEUS_RULES);
    let out = s.ok_stdin(&["apply", "--server-side", "-f", "-"], PROMETHEUS_RULE);
    assert_eq!(
        out.trim(),
        "prometheusrule.monitoring.coreos.com/prometheus-example-rules serverside-applied"
    );
    let table = s.ok(&["get", "promrule"]);
    assert_eq!(header(&table), ["NAME", "AGE"], "{table}");
    assert!(
        !row(&table, "prometheus-example-rules").is_empty(),
        "{table}"
    );
    let rule = s.json(&["get", "prometheusrule", "prometheus-example-rules"]);
    assert_eq!(rule["spec"]["groups"][0]["rules"][0]["expr"], "vector(1)");
    assert_eq!(rule["metadata"]["labels"]["role"], "alert-rules");

    let add = r#"[{"op":"add","path":"/spec/groups/0/rules/-","value":{"alert":"AlwaysFiring","expr":"1","for":"5m","labels":{"severity":"none"}}}]"#;
    s.ok(&[
        "patch",
        "prometheusrule",
        "prometheus-example-rules",
        "--type=json",
        "-p",
        add,
    ]);
    let rule = s.json(&["get", "prometheusrule", "prometheus-example-rules"]);
    assert_eq!(
        rule["spec"]["groups"][0]["rules"][1]["alert"],
        "AlwaysFiring"
    );
    assert_eq!(rule["spec"]["groups"][0]["rules"][1]["for"], "5m");
    assert_eq!(rule["metadata"]["generation"], 2);

    s.ok(&["delete", "prometheusrule", "prometheus-example-rules"]);
    let (code, list) =
        s.get_json("/apis/monitoring.coreos.com/v1/namespaces/default/prometheusrules");
    assert_eq!(code, 200);
    assert_eq!(list["items"], json!([]));
}

#[test]
fn prometheus_rule_groups_merge_by_name_under_server_side_apply() {
    let s = with_crd(PROMETHEUS_RULES);
    s.ok_stdin(&["apply", "--server-side", "-f", "-"], PROMETHEUS_RULE);
    // spec.groups is a list-map keyed by name: another manager's group is
    // merged in beside the first, not over it, and is no conflict.
    let other = r#"apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: prometheus-example-rules
spec:
  groups:
  - name: ./recording.rules
    interval: 1m
    rules:
    - record: job:up:sum
      expr: sum by (job) (up)
"#;
    s.ok_stdin(
        &[
            "apply",
            "--server-side",
            "--field-manager=recorder",
            "-f",
            "-",
        ],
        other,
    );
    let rule = s.json(&["get", "prometheusrule", "prometheus-example-rules"]);
    let names: Vec<&str> = rule["spec"]["groups"]
        .as_array()
        .map(|g| g.iter().filter_map(|x| x["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["./example.rules", "./recording.rules"], "{rule}");
}

/// An HTTPRoute as the Gateway API's "HTTP routing" guide shows one.
pub(crate) const HTTP_ROUTE: &str = r#"apiVersion: gateway.networking.k8s.io/v1beta1
kind: HTTPRoute
metadata:
  name: foo-route
spec:
  parentRefs:
  - name: example-gateway
  hostnames:
  - "foo.example.com"
  rules:
  - matches:
    - path:
        type: PathPrefix
        value: /login
    backendRefs:
    - name: foo-svc
      port: 8080
"#;

#[test]
fn gateway_api_http_route_is_served_at_its_served_version_only() {
    let s = with_crd(HTTP_ROUTES);
    let out = s.ok_stdin(&["create", "-f", "-"], HTTP_ROUTE);
    assert_eq!(
        out.trim(),
        "httproute.gateway.networking.k8s.io/foo-route created"
    );
    let route = s.json(&["get", "httproute", "foo-route"]);
    assert_eq!(route["apiVersion"], "gateway.networking.k8s.io/v1beta1");
    // The CRD's defaults fill in what the manifest leaves out.
    assert_eq!(
        route["spec"]["rules"][0]["backendRefs"][0],
        json!({"group": "", "kind": "Service", "name": "foo-svc", "port": 8080, "weight": 1})
    );

    let table = s.ok(&["get", "httproutes"]);
    assert_eq!(header(&table), ["NAME", "HOSTNAMES", "AGE"], "{table}");
    assert!(
        row(&table, "foo-route").contains(r#"["foo.example.com"]"#),
        "{table}"
    );
    let hosts = r#"{"spec":{"hostnames":["foo.example.com","bar.example.com"]}}"#;
    s.ok(&[
        "patch",
        "httproute",
        "foo-route",
        "--type=merge",
        "-p",
        hosts,
    ]);
    let table = s.ok(&["get", "httproutes"]);
    assert!(
        row(&table, "foo-route").contains(r#"["foo.example.com","bar.example.com"]"#),
        "{table}"
    );
    let route = s.json(&["get", "httproute", "foo-route"]);
    assert_eq!(route["metadata"]["generation"], 2);

    // The manifest's own `status` (empty names, null storedVersions) is
    // not taken: the server fills it in.
    let crd_status = s.ok(&[
        "get",
        "crd",
        "httproutes.gateway.networking.k8s.io",
        "-o",
        "jsonpath={.status.storedVersions} {.status.acceptedNames.kind}",
    ]);
    assert_eq!(crd_status, r#"["v1beta1"] HTTPRoute"#);
    let explained = s.ok(&["explain", "httproutes.spec.rules"]);
    assert!(
        explained.contains("Rules are a list of HTTP matchers, filters and actions."),
        "{explained}"
    );
    let dry = s.ok_stdin(
        &["create", "--dry-run=server", "-f", "-"],
        &HTTP_ROUTE.replace("foo-route", "bar-route"),
    );
    assert_eq!(
        dry.trim(),
        "httproute.gateway.networking.k8s.io/bar-route created (server dry run)"
    );
    let (code, _) = s.get_json(
        "/apis/gateway.networking.k8s.io/v1beta1/namespaces/default/httproutes/bar-route",
    );
    assert_eq!(code, 404);

    // v1alpha2 is in the CRD but not served.
    let (code, _) =
        s.get_json("/apis/gateway.networking.k8s.io/v1alpha2/namespaces/default/httproutes");
    assert_eq!(code, 404);
    let (code, list) =
        s.get_json("/apis/gateway.networking.k8s.io/v1beta1/namespaces/default/httproutes");
    assert_eq!(code, 200);
    assert_eq!(list["kind"], "HTTPRouteList");
    let resources = s.ok(&["api-resources", "--api-group=gateway.networking.k8s.io"]);
    assert!(
        resources.contains("gateway.networking.k8s.io/v1beta1"),
        "{resources}"
    );

    s.ok(&["delete", "httproute", "foo-route"]);
    let gone = s.fails(&["get", "httproute", "foo-route"]);
    assert!(
        gone.contains(r#"httproutes.gateway.networking.k8s.io "foo-route" not found"#),
        "{gone}"
    );
}

/// An Application as Argo CD's "Declarative Setup" page shows one.
pub(crate) const APPLICATION: &str = r#"apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: guestbook
  namespace: argocd
spec:
  project: default
  source:
    repoURL: https://github.com/argoproj/argocd-example-apps.git
    targetRevision: HEAD
    path: guestbook
  destination:
    server: https://kubernetes.default.svc
    namespace: guestbook
"#;

#[test]
fn argo_cd_application_status_lives_in_the_main_resource() {
    let s = with_crd(APPLICATIONS);
    s.ok(&["create", "namespace", "argocd"]);
    let out = s.ok_stdin(&["apply", "-f", "-"], APPLICATION);
    assert_eq!(out.trim(), "application.argoproj.io/guestbook created");
    // Re-applied without targetRevision and with a sync policy: the
    // client-side three-way merge drops the one and adds the other.
    let changed = APPLICATION.replace("    targetRevision: HEAD\n", "")
        + "  syncPolicy:\n    automated:\n      prune: true\n      selfHeal: true\n";
    let out = s.ok_stdin(&["apply", "-f", "-"], &changed);
    assert_eq!(out.trim(), "application.argoproj.io/guestbook configured");
    let app = s.json(&["get", "application", "guestbook", "-n", "argocd"]);
    assert!(
        app["spec"]["source"].get("targetRevision").is_none(),
        "{app}"
    );
    assert_eq!(app["spec"]["syncPolicy"]["automated"]["selfHeal"], true);
    s.ok_stdin(&["apply", "-f", "-"], APPLICATION);
    let app = s.json(&["get", "application", "guestbook", "-n", "argocd"]);
    assert_eq!(app["spec"]["source"]["targetRevision"], "HEAD");
    assert!(app["spec"].get("syncPolicy").is_none(), "{app}");
    assert_eq!(app["metadata"]["generation"], 3);

    let table = s.ok(&["get", "apps", "-n", "argocd"]);
    let first = table.lines().next().unwrap_or_default();
    assert_eq!(
        header(&table),
        ["NAME", "SYNC", "STATUS", "HEALTH", "STATUS"],
        "{table}"
    );
    assert!(
        first.contains("SYNC STATUS") && first.contains("HEALTH STATUS"),
        "{table}"
    );

    // (The CRD's columns do not include Age, so kube shows none.)
    // No status subresource: status is written with the object, and the
    // change counts as a new generation.
    let status = r#"{"status":{"sync":{"status":"Synced","revision":"4f3b2c1"},"health":{"status":"Healthy"}}}"#;
    s.ok(&[
        "patch",
        "app",
        "guestbook",
        "-n",
        "argocd",
        "--type=merge",
        "-p",
        status,
    ]);
    let wide = s.ok(&["get", "app", "-n", "argocd", "-o", "wide"]);
    let line = row(&wide, "guestbook");
    for cell in ["Synced", "Healthy", "4f3b2c1", "default"] {
        assert!(line.contains(cell), "{cell}: {wide}");
    }
    assert!(header(&wide).contains(&"REVISION".to_string()), "{wide}");
    let app = s.json(&["get", "app", "guestbook", "-n", "argocd"]);
    assert_eq!(app["metadata"]["generation"], 4);
    let refused = s.kubectl(&[
        "patch",
        "app",
        "guestbook",
        "-n",
        "argocd",
        "--subresource=status",
        "--type=merge",
        "-p",
        status,
    ]);
    assert!(!refused.status.success(), "{}", stdout_of(&refused));

    s.ok(&["delete", "app", "guestbook", "-n", "argocd"]);
    let gone = s.fails(&["get", "app", "guestbook", "-n", "argocd"]);
    assert!(
        gone.contains(r#"applications.argoproj.io "guestbook" not found"#),
        "{gone}"
    );
}

#[test]
fn python_client_reads_the_large_crds_and_serves_their_objects() {
    let s = with_crd(CERTIFICATES);
    install(&s, HTTP_ROUTES);
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/e2e/python/real_crds.py"
    );
    let out = std::process::Command::new("python3")
        .arg(script)
        .arg(s.kubeconfig())
        .env("PYTHONPATH", crate::python_client::python_path())
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "python client failed:\n{}\n{}",
        stdout_of(&out),
        stderr(&out)
    );
    assert_eq!(stdout_of(&out).trim(), "ok");
}
