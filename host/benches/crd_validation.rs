//! What a custom resource's schema costs per request, in process and side by
//! side in one run, on a Gateway API HTTPRoute-like schema (written inline:
//! parentRefs, hostnames, rules with matches, filters and backendRefs;
//! patterns, enums, bounds, defaults) and a realistic route (2 parents, 2
//! hostnames, 4 rules of 2 matches and 2 backends): (a) `CompiledSchema::
//! validate`, (b) prune + apply_defaults (the decode of every write and
//! read), (c) the CEL `x-kubernetes-validations` with 1 and with 10 rules
//! (Gateway API's own kind of rules), and (d) compiling the schema and the
//! rules, which Capstan does once per CRD version: printed next to the
//! per-request figures to show what compiling per request would cost.
//! `cargo bench -p capstan --bench crd_validation`.

// A benchmark: a failed assumption fails the run, so unwrapping is fine here
// (the server itself never unwraps; see the workspace lints).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use capstan::catalogue::custom::schema::CompiledSchema;
use kube_cel::ValidationRules;
use serde_json::{json, Value};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Timed calls per figure.
const CALLS: usize = 5000;
/// Timed compiles per figure (each is far slower than a request).
const COMPILES: usize = 300;

/// The HTTPRoute-like schema without its CEL rules.
fn base_schema() -> Value {
    let name = json!({"type": "string", "minLength": 1, "maxLength": 253,
        "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"});
    let group = json!({"type": "string", "maxLength": 253, "default": "",
        "pattern": "^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"});
    let kind = |default: &str| {
        json!({"type": "string", "minLength": 1, "maxLength": 63,
        "default": default, "pattern": "^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$"})
    };
    let port = json!({"type": "integer", "format": "int32", "minimum": 1, "maximum": 65535});
    let parent_ref = json!({"type": "object", "required": ["name"], "properties": {
        "group": {"type": "string", "maxLength": 253, "default": "gateway.networking.k8s.io"},
        "kind": kind("Gateway"), "namespace": name, "name": name,
        "sectionName": {"type": "string", "minLength": 1, "maxLength": 253,
            "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"},
        "port": port}});
    let path = json!({"type": "object", "default": {"type": "PathPrefix", "value": "/"}, "properties": {
        "type": {"type": "string", "default": "PathPrefix",
            "enum": ["Exact", "PathPrefix", "RegularExpression"]},
        "value": {"type": "string", "maxLength": 1024, "default": "/"}}});
    let header = json!({"type": "object", "required": ["name", "value"], "properties": {
        "type": {"type": "string", "default": "Exact", "enum": ["Exact", "RegularExpression"]},
        "name": {"type": "string", "minLength": 1, "maxLength": 256,
            "pattern": "^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$"},
        "value": {"type": "string", "minLength": 1, "maxLength": 4096}}});
    let matches = json!({"type": "array", "maxItems": 64,
        "default": [{"path": {"type": "PathPrefix", "value": "/"}}],
        "items": {"type": "object", "properties": {
            "path": path,
            "headers": {"type": "array", "maxItems": 16, "items": header,
                "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]},
            "method": {"type": "string", "enum": ["GET", "HEAD", "POST", "PUT", "DELETE",
                "CONNECT", "OPTIONS", "TRACE", "PATCH"]}}}});
    let filter = json!({"type": "object", "required": ["type"], "properties": {
        "type": {"type": "string", "enum": ["RequestHeaderModifier", "ResponseHeaderModifier",
            "RequestMirror", "RequestRedirect", "URLRewrite", "ExtensionRef"]},
        "requestHeaderModifier": {"type": "object", "properties": {
            "set": {"type": "array", "maxItems": 16, "items": header,
                "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]},
            "remove": {"type": "array", "maxItems": 16, "items": {"type": "string"},
                "x-kubernetes-list-type": "set"}}},
        "requestRedirect": {"type": "object", "properties": {
            "scheme": {"type": "string", "enum": ["http", "https"]},
            "statusCode": {"type": "integer", "default": 302, "enum": [301, 302]}}}}});
    let backend_ref = json!({"type": "object", "required": ["name"], "properties": {
        "group": group, "kind": kind("Service"), "name": name, "namespace": name, "port": port,
        "weight": {"type": "integer", "format": "int32", "default": 1, "minimum": 0,
            "maximum": 1000000}}});
    let rule = json!({"type": "object", "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 253},
        "matches": matches,
        "filters": {"type": "array", "maxItems": 16, "items": filter},
        "backendRefs": {"type": "array", "maxItems": 16, "items": backend_ref},
        "timeouts": {"type": "object", "properties": {
            "request": {"type": "string", "pattern": "^([0-9]{1,5}(h|m|s|ms)){1,4}$"}}}}});
    json!({"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
        "spec": {"type": "object", "properties": {
            "parentRefs": {"type": "array", "maxItems": 32, "items": parent_ref},
            "hostnames": {"type": "array", "maxItems": 16, "items": {"type": "string",
                "minLength": 1, "maxLength": 253,
                "pattern": "^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"}},
            "rules": {"type": "array", "maxItems": 16,
                "default": [{"matches": [{"path": {"type": "PathPrefix", "value": "/"}}]}],
                "items": rule}}},
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}})
}

/// Ten rules of the kind Gateway API's HTTPRoute carries, with the JSON
/// pointer of the schema node each sits on. (Gateway API's own forms of the
/// last four, `size(self.group) == 0`, `filter(..).size() <= 1`,
/// `exists_one`, are refused by kube-cel's cost estimate, which prices a
/// comparison of ints from `size()` or an accumulator `+ 1` as a traversal
/// of a 3 MiB string; these equivalents pass.)
fn rules() -> Vec<(&'static str, &'static str, &'static str)> {
    const PATH: &str =
        "/properties/spec/properties/rules/items/properties/matches/items/properties/path";
    const RULE: &str = "/properties/spec/properties/rules/items";
    const FILTERS: &str = "/properties/spec/properties/rules/items/properties/filters";
    const BACKEND: &str = "/properties/spec/properties/rules/items/properties/backendRefs/items";
    vec![
        (PATH, "(self.type in ['Exact', 'PathPrefix']) ? self.value.startsWith('/') : true",
            "value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']"),
        (PATH, "(self.type in ['Exact', 'PathPrefix']) ? !self.value.contains('//') : true",
            "must not contain '//' when type one of ['Exact', 'PathPrefix']"),
        (PATH, "(self.type in ['Exact', 'PathPrefix']) ? !self.value.contains('/./') : true",
            "must not contain '/./' when type one of ['Exact', 'PathPrefix']"),
        (PATH, "(self.type in ['Exact', 'PathPrefix']) ? !self.value.contains('/../') : true",
            "must not contain '/../' when type one of ['Exact', 'PathPrefix']"),
        (PATH, "(self.type in ['Exact', 'PathPrefix']) ? !self.value.contains('%2f') && !self.value.contains('%2F') : true",
            "must not contain '%2f' or '%2F' when type one of ['Exact', 'PathPrefix']"),
        (PATH, "(self.type in ['Exact', 'PathPrefix']) ? self.value.matches('^(?:[-A-Za-z0-9/._~!$&()*+,;=:@]|[%][0-9a-fA-F]{2})+$') : true",
            "must only contain valid characters when type one of ['Exact', 'PathPrefix']"),
        (FILTERS, "!(self.exists(f, f.type == 'RequestRedirect') && self.exists(f, f.type == 'URLRewrite'))",
            "May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both"),
        (RULE, "!(has(self.filters) && self.filters.exists(f, f.type == 'RequestRedirect') && has(self.backendRefs))",
            "backendRefs must be unset when a RequestRedirect filter is used"),
        (BACKEND, "(self.group == '' && self.kind == 'Service') ? has(self.port) : true",
            "Must have port for Service reference"),
        ("/properties/spec/properties/parentRefs",
            "self.all(p1, self.all(p2, (p1.name == p2.name && p1.kind == p2.kind && !has(p1.sectionName)) ? !has(p2.sectionName) : true))",
            "sectionName must be specified when parentRefs includes 2 or more references to the same parent"),
    ]
}

/// The schema with its first `n` rules.
fn schema_with(n: usize) -> Value {
    schema_with_rules(rules().into_iter().take(n))
}

fn schema_with_rules(
    rules: impl IntoIterator<Item = (&'static str, &'static str, &'static str)>,
) -> Value {
    let mut schema = base_schema();
    for (at, rule, message) in rules {
        let node = schema.pointer_mut(at).expect("rule's schema node");
        let list = node
            .as_object_mut()
            .expect("object node")
            .entry("x-kubernetes-validations")
            .or_insert_with(|| json!([]));
        if let Value::Array(list) = list {
            list.push(json!({"rule": rule, "message": message}));
        }
    }
    schema
}

/// A realistic route as a client sends it (defaults left out).
fn route() -> Value {
    let backend = |name: &str, weight: u32| json!({"name": name, "port": 8080, "weight": weight});
    let rule = |i: usize| {
        json!({
        "name": format!("rule-{i}"),
        "matches": [
            {"path": {"type": "PathPrefix", "value": format!("/api/v{i}/orders")},
             "headers": [{"name": "x-tenant", "value": "blue"}, {"name": "x-canary", "value": "true"}]},
            {"path": {"type": "Exact", "value": format!("/healthz/{i}")}, "method": "GET"}],
        "filters": [{"type": "RequestHeaderModifier",
            "requestHeaderModifier": {"set": [{"name": "x-route", "value": format!("r{i}")}], "remove": ["x-debug"]}}],
        "backendRefs": [backend("orders-v1", 90), backend("orders-v2", 10)],
        "timeouts": {"request": "10s"}})
    };
    json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
        "metadata": {"name": "orders", "namespace": "shop", "labels": {"app": "orders"},
            "annotations": {"owner": "team-shop"}},
        "spec": {
            "parentRefs": [{"name": "public", "sectionName": "https"}, {"name": "internal"}],
            "hostnames": ["shop.example.com", "*.shop.example.com"],
            "rules": (0..4).map(rule).collect::<Vec<_>>()}})
}

/// p50, p99 and mean of `calls` timed runs of `f(i)`.
fn time<F: FnMut(usize)>(calls: usize, mut f: F) -> [Duration; 3] {
    let mut samples: Vec<Duration> = (0..calls)
        .map(|i| {
            let started = Instant::now();
            f(i);
            started.elapsed()
        })
        .collect();
    samples.sort();
    let mean = samples.iter().sum::<Duration>() / calls as u32;
    [samples[calls / 2], samples[calls * 99 / 100], mean]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn row(label: &str, [p50, p99, mean]: [Duration; 3]) {
    println!(
        "| {label} | {:.1} | {:.1} | {:.1} |",
        us(p50),
        us(p99),
        us(mean)
    );
}

fn main() {
    let (one, ten) = (schema_with(1), schema_with(10));
    let schema = CompiledSchema::new(&ten).expect("schema compiles");
    let rules_1 = ValidationRules::compile(&one).expect("1 rule compiles");
    let rules_10 = ValidationRules::compile(&ten).expect("10 rules compile");
    let raw = route();
    let mut decoded = raw.clone();
    assert!(
        schema.prune(&mut decoded).is_empty(),
        "route has unknown fields"
    );
    schema.apply_defaults(&mut decoded);
    assert!(schema.validate(&decoded).is_empty(), "route is invalid");
    assert!(
        rules_10.validate(&decoded, None).is_empty(),
        "route breaks a rule"
    );

    println!(
        "HTTPRoute-like object, {} bytes of JSON; schema {} bytes with 10 rules",
        raw.to_string().len(),
        ten.to_string().len()
    );
    println!("| step | p50 µs | p99 µs | mean µs |\n|---|---|---|---|");
    let validate = time(CALLS, |_| {
        black_box(schema.validate(black_box(&decoded)));
    });
    row("(a) schema validate", validate);
    let mut copies = vec![raw.clone(); CALLS];
    let decode = time(CALLS, |i| {
        black_box(schema.prune(&mut copies[i]));
        schema.apply_defaults(&mut copies[i]);
    });
    row("(b) prune + apply_defaults", decode);
    let cel_1 = time(CALLS, |_| {
        black_box(rules_1.validate(black_box(&decoded), None));
    });
    row("(c) CEL rules, 1 rule", cel_1);
    let cel_10 = time(CALLS, |_| {
        black_box(rules_10.validate(black_box(&decoded), None));
    });
    row("(c) CEL rules, 10 rules", cel_10);
    let cel_10_update = time(CALLS, |_| {
        black_box(rules_10.validate(black_box(&decoded), Some(&decoded)));
    });
    row("(c) CEL rules, 10 rules, update", cel_10_update);
    let compile_schema = time(COMPILES, |_| {
        black_box(CompiledSchema::new(black_box(&ten)).ok());
    });
    row("(d) compile schema (once per CRD version)", compile_schema);
    let compile_rules = time(COMPILES, |_| {
        black_box(ValidationRules::compile(black_box(&ten)).ok());
    });
    row("(d) compile 10 rules (once per CRD version)", compile_rules);

    println!(
        "\n| rule alone (evaluations per object) | p50 µs | p99 µs | mean µs |\n|---|---|---|---|"
    );
    for (i, rule) in rules().into_iter().enumerate() {
        let alone = ValidationRules::compile(&schema_with_rules([rule])).expect("rule compiles");
        let figures = time(CALLS / 5, |_| {
            black_box(alone.validate(black_box(&decoded), None));
        });
        let short: String = rule.1.chars().take(60).collect();
        row(&format!("{} `{short}`", i + 1), figures);
    }

    let per_request = us(validate[0]) + us(decode[0]) + us(cel_10[0]);
    let compile = us(compile_schema[0]) + us(compile_rules[0]);
    println!(
        "\nper create (a + b + c with 10 rules, p50): {per_request:.1} µs; compiling schema and \
         rules per request instead would add {compile:.1} µs ({:.1}× the per-request work)",
        compile / per_request
    );
}
