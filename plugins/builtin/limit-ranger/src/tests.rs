//! Unit tests of the LimitRanger plugin through the SDK's fake host.

use super::*;
use capstan_plugin_sdk::{json, testing};

fn limit_range(name: &str, limits: Value) -> Value {
    json!({"metadata": {"name": name, "namespace": "ns"}, "spec": {"limits": limits}})
}

fn create_pod(pod: &Value) -> (AdmissionResponse, Value) {
    let req = testing::request(Operation::Create, "v1", "pods", "Pod", "ns", pod.clone());
    let r = LimitRanger::review(&req).unwrap();
    let out = testing::apply_patch(pod, &r).unwrap();
    (r, out)
}

fn pod(containers: Value) -> Value {
    json!({"metadata": {"name": "web"}, "spec": {"containers": containers}})
}

#[test]
fn defaults_requests_and_limits_and_annotates() {
    testing::reset();
    testing::put_object(
        "v1",
        "limitranges",
        limit_range(
            "lr",
            json!([{"type": "Container",
            "default": {"cpu": "500m", "memory": "256Mi"}, "defaultRequest": {"cpu": "100m"}}]),
        ),
    );
    let (r, out) = create_pod(&pod(
        json!([{"name": "a", "resources": {"limits": {"memory": "1Gi"}}}]),
    ));
    assert!(r.allowed);
    let res = &out["spec"]["containers"][0]["resources"];
    assert_eq!(res["limits"], json!({"memory": "1Gi", "cpu": "500m"}));
    assert_eq!(res["requests"], json!({"cpu": "100m"}));
    assert_eq!(
        out["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
        "LimitRanger plugin set: cpu request for container a; cpu limit for container a"
    );
}

#[test]
fn no_limit_ranges_means_no_change() {
    testing::reset();
    let (r, _) = create_pod(&pod(json!([{"name": "a"}])));
    assert!(r.allowed && r.patch.is_none());
}

#[test]
fn min_and_max_are_enforced_with_kubes_words() {
    testing::reset();
    testing::put_object(
        "v1",
        "limitranges",
        limit_range(
            "lr",
            json!([{"type": "Container", "min": {"cpu": "100m"}, "max": {"memory": "1Gi"}}]),
        ),
    );
    let (r, _) = create_pod(&pod(json!([{"name": "a", "resources": {
        "requests": {"cpu": "50m"}, "limits": {"memory": "1Gi"}}}])));
    assert_eq!(r.code(), 403);
    assert_eq!(
        r.message(),
        "pods \"web\" is forbidden: minimum cpu usage per Container is 100m, but request is 50m"
    );
    let (r, _) = create_pod(&pod(json!([{"name": "a"}])));
    assert_eq!(
        r.message(),
        "pods \"web\" is forbidden: [minimum cpu usage per Container is 100m.  No request is specified, \
         maximum memory usage per Container is 1Gi.  No limit is specified]"
    );
}

#[test]
fn defaults_are_applied_before_checking() {
    testing::reset();
    testing::put_object(
        "v1",
        "limitranges",
        limit_range(
            "lr",
            json!([{"type": "Container", "max": {"memory": "1Gi"}, "default": {"memory": "512Mi"}}]),
        ),
    );
    let (r, out) = create_pod(&pod(json!([{"name": "a"}])));
    assert!(r.allowed, "{}", r.message());
    assert_eq!(
        out["spec"]["containers"][0]["resources"]["limits"]["memory"],
        "512Mi"
    );
}

#[test]
fn ratio_and_pod_totals() {
    testing::reset();
    testing::put_object(
        "v1",
        "limitranges",
        limit_range(
            "lr",
            json!([{"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}},
                                 {"type": "Pod", "max": {"cpu": "1"}}]),
        ),
    );
    let c = |name: &str, req: &str, lim: &str| json!({"name": name, "resources": {"requests": {"cpu": req}, "limits": {"cpu": lim}}});
    let (r, _) = create_pod(&pod(json!([c("a", "100m", "300m")])));
    assert_eq!(
        r.message(),
        "pods \"web\" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 3.000000"
    );
    let (r, _) = create_pod(&pod(json!([
        c("a", "400m", "600m"),
        c("b", "400m", "600m")
    ])));
    assert_eq!(
        r.message(),
        "pods \"web\" is forbidden: maximum cpu usage per Pod is 1, but limit is 1200m"
    );
}

#[test]
fn claims_are_checked_on_requests() {
    testing::reset();
    testing::put_object(
        "v1",
        "limitranges",
        limit_range(
            "lr",
            json!([{"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "10Gi"}}]),
        ),
    );
    let claim = |size: &str| json!({"metadata": {"name": "data"}, "spec": {"resources": {"requests": {"storage": size}}}});
    let req = testing::request(
        Operation::Create,
        "v1",
        "persistentvolumeclaims",
        "PersistentVolumeClaim",
        "ns",
        claim("20Gi"),
    );
    let r = LimitRanger::review(&req).unwrap();
    assert_eq!(
        r.message(),
        "persistentvolumeclaims \"data\" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi"
    );
    let ok = testing::request(
        Operation::Update,
        "v1",
        "persistentvolumeclaims",
        "PersistentVolumeClaim",
        "ns",
        claim("5Gi"),
    );
    assert!(LimitRanger::review(&ok).unwrap().allowed);
}

#[test]
fn pod_updates_and_store_errors() {
    testing::reset();
    let update = testing::request(Operation::Update, "v1", "pods", "Pod", "ns", pod(json!([])));
    assert!(LimitRanger::review(&update).unwrap().allowed);
    testing::fail_reads(Some("down"));
    let (r, _) = create_pod(&pod(json!([])));
    assert_eq!(
        r.message(),
        "pods \"web\" is forbidden: unable to CREATE /v1, Resource=pods at this time because there was an error enforcing limit ranges"
    );
}
