use super::*;

fn v2_hpa() -> Value {
    json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "default", "annotations": {"team": "a"}},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1, "maxReplicas": 5,
            "metrics": [
                {"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 60}}},
                {"type": "Resource", "resource": {"name": "memory",
                    "target": {"type": "AverageValue", "averageValue": "100Mi"}}}
            ],
            "behavior": {"scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15}]}}
        },
        "status": {"desiredReplicas": 0}
    })
}

#[test]
fn v2_to_v1_keeps_cpu_as_the_target_and_the_rest_in_annotations() {
    let v1 = convert(v2_hpa(), "v1").unwrap();
    assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 60);
    assert!(v1["spec"].get("metrics").is_none());
    let annotations = &v1["metadata"]["annotations"];
    assert_eq!(
        annotations[METRICS],
        r#"[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"100Mi"}}]"#
    );
    assert_eq!(
        annotations[BEHAVIOR],
        r#"{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15}]},"ScaleDown":null}"#
    );
    assert_eq!(annotations["team"], "a");
    assert_eq!(
        v1["status"],
        json!({"currentReplicas": 0, "desiredReplicas": 0})
    );
}

#[test]
fn v1_and_back_is_the_same_v2_object() {
    let v1 = convert(v2_hpa(), "v1").unwrap();
    assert_eq!(v1["apiVersion"], "autoscaling/v1");
    let back = convert(v1, "v2").unwrap();
    let mut want = v2_hpa();
    // Resource metrics other than cpu come first, then the cpu target, as kube orders them.
    let metrics = want["spec"]["metrics"].as_array_mut().unwrap();
    metrics.reverse();
    assert_eq!(back, want);
}

#[test]
fn v1_without_target_gets_kubes_cpu_default() {
    let v1 = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
                    "metadata": {"name": "web"},
                    "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"},
                             "maxReplicas": 3}});
    let v2 = convert(v1, "v2").unwrap();
    assert_eq!(
        v2["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}])
    );
    assert!(v2["metadata"].get("annotations").is_none());
    assert_eq!(v2["status"], json!({"desiredReplicas": 0}));
}

#[test]
fn pods_metric_from_a_v1_annotation() {
    let v1 = json!({"apiVersion": "autoscaling/v1", "metadata": {"name": "w", "annotations": {
        METRICS: r#"[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10"}}]"#,
        "autoscaling.alpha.kubernetes.io/behavior": r#"{"scaleDown":{"selectPolicy":"Min"}}"#}},
        "spec": {"maxReplicas": 3, "targetCPUUtilizationPercentage": 50}});
    let v2 = convert(v1, "v2").unwrap();
    assert_eq!(
        v2["spec"]["metrics"][0],
        json!({"type": "Pods", "pods": {"metric": {"name": "qps"},
               "target": {"type": "AverageValue", "averageValue": "10"}}})
    );
    assert_eq!(
        v2["spec"]["metrics"][1]["resource"]["target"]["averageUtilization"],
        50
    );
    assert_eq!(
        v2["spec"]["behavior"],
        json!({"scaleDown": {"selectPolicy": "Min"}})
    );
    assert!(v2["metadata"].get("annotations").is_none());
}

#[test]
fn unknown_versions_are_refused() {
    assert!(convert(json!({"apiVersion": "autoscaling/v2"}), "v2beta2").is_err());
}
