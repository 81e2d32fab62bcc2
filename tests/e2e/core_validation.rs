//! kube's validation of the core kinds without rules elsewhere (Endpoints,
//! LimitRanges, ResourceQuotas, volumes and claims, PodTemplates, Nodes,
//! Events, EndpointSlices, Leases): `kubectl create` of an invalid object
//! is refused with kube-apiserver's message and nothing is stored.

use crate::support::{stderr, Server};

fn refused(s: &Server, manifest: &str) -> String {
    let out = s.kubectl_stdin(&["create", "-f", "-"], Some(manifest));
    assert!(!out.status.success(), "created: {manifest}");
    stderr(&out)
}

#[test]
fn invalid_core_objects_get_kubes_messages_and_are_not_stored() {
    let s = Server::start();
    let cases = [
        (
            "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {accessModes: [Bogus], resources: {requests: {}}}\n",
            r#"The PersistentVolumeClaim "c" is invalid: 
* spec.accessModes: Unsupported value: "Bogus": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"
* spec.resources[storage]: Required value"#,
        ),
        (
            "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv}\nspec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce]}\n",
            r#"The PersistentVolume "pv" is invalid: spec: Required value: must specify a volume type"#,
        ),
        (
            "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec: {hard: {pods: \"-1\"}}\n",
            r#"The ResourceQuota "q" is invalid: spec.hard[pods]: Invalid value: "-1": must be greater than or equal to 0"#,
        ),
        (
            "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: l}\nspec: {leaseDurationSeconds: 0}\n",
            r#"The Lease "l" is invalid: spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"#,
        ),
        (
            "apiVersion: v1\nkind: Endpoints\nmetadata: {name: e}\nsubsets: [{addresses: [{ip: 127.0.0.1}]}]\n",
            r#"The Endpoints "e" is invalid: subsets[0].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)"#,
        ),
        (
            "apiVersion: events.k8s.io/v1\nkind: Event\nmetadata: {name: ev}\neventTime: \"2024-01-01T00:00:00.000000Z\"\nreportingController: c\nreportingInstance: i\naction: a\nreason: r\ntype: Sideways\n",
            r#"The Event "ev" is invalid: type: Invalid value: "": has invalid value: Sideways"#,
        ),
    ];
    for (manifest, message) in cases {
        let err = refused(&s, manifest);
        assert!(err.contains(message), "want {message}\ngot {err}");
    }
    let stored = s.ok(&[
        "get",
        "pvc,pv,quota,leases,endpoints,events.events.k8s.io",
        "-o",
        "name",
    ]);
    assert!(
        !stored.contains("/c\n") && !stored.contains("/pv") && !stored.contains("/q"),
        "{stored}"
    );
}

#[test]
fn updates_keep_what_kube_keeps_fixed() {
    let s = Server::start();
    s.ok_stdin(
        &["apply", "-f", "-"],
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}, storageClassName: a}\n---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec: {hard: {pods: \"1\"}, scopes: [BestEffort]}\n",
    );
    let err = s.fails(&[
        "patch",
        "pvc",
        "c",
        "--type=merge",
        "-p",
        r#"{"spec":{"storageClassName":"b"}}"#,
    ]);
    assert!(err.contains("spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"), "{err}");
    let err = s.fails(&[
        "patch",
        "quota",
        "q",
        "--type=merge",
        "-p",
        r#"{"spec":{"scopes":["NotBestEffort"]}}"#,
    ]);
    assert!(err.contains(r#"spec.scopes: Invalid value: []core.ResourceQuotaScope{"NotBestEffort"}: field is immutable"#), "{err}");
    let class = s.ok(&["get", "pvc", "c", "-o", "jsonpath={.spec.storageClassName}"]);
    assert_eq!(class, "a");
    // What may change still does.
    s.ok(&["label", "pvc", "c", "tier=gold"]);
}

#[test]
fn invalid_pod_specs_get_kubes_messages() {
    let s = Server::start();
    let pod = |name: &str, container: &str, extra: &str| {
        format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  containers: [{{name: c, image: nginx, {container}}}]\n{extra}")
    };
    let cases = [
        (
            pod(
                "limits",
                "resources: {limits: {cpu: \"1\"}, requests: {cpu: \"2\"}}",
                "",
            ),
            r#"spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1"#,
        ),
        (
            pod(
                "mounts",
                "volumeMounts: [{name: data, mountPath: /data}]",
                "",
            ),
            r#"spec.containers[0].volumeMounts[0].name: Not found: "data""#,
        ),
        (
            pod("probes", "readinessProbe: {periodSeconds: 5}", ""),
            "spec.containers[0].readinessProbe: Required value: must specify a handler type",
        ),
        (
            pod(
                "volumes",
                "imagePullPolicy: IfNotPresent",
                "  volumes: [{name: v, emptyDir: {}, configMap: {name: x}}]\n",
            ),
            "spec.volumes[0].configMap: Forbidden: may not specify more than 1 volume type",
        ),
        (
            pod(
                "tolerations",
                "imagePullPolicy: IfNotPresent",
                "  tolerations: [{key: k, operator: Exists, value: v}]\n",
            ),
            r#"spec.tolerations[0].operator: Invalid value: "v": value must be empty when `operator` is 'Exists'"#,
        ),
    ];
    for (manifest, message) in cases {
        let err = refused(&s, &manifest);
        assert!(err.contains(message), "want {message}\ngot {err}");
    }
    assert_eq!(s.ok(&["get", "pods", "-o", "name"]).trim(), "");
}
