//! The entries kube records, checked against what kube-apiserver 1.32
//! recorded for the same writes (tests/golden).

use serde_json::{json, Value};

use super::{record, Tracking};
use crate::catalogue::Catalogue;

fn track(
    cat: &Catalogue,
    plural: (&str, &str),
    live: Option<&Value>,
    new: &Value,
    manager: &str,
    subresource: &str,
) -> Option<Value> {
    let (group, plural) = plural;
    let res = cat
        .lookup(group, "v1", plural)
        .expect("a built-in resource");
    let who = Tracking {
        manager,
        subresource,
        schemas: cat.schemas(),
    };
    record(res, live, new, new, &who)
}

fn fields(entries: &Value, at: usize) -> &Value {
    &entries[at]["fieldsV1"]
}

#[test]
fn a_create_owns_every_field_it_sets_with_kubes_dots() {
    let cat = Catalogue::builtin();
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "default", "labels": {"a": "b"}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "a"}},
                "spec": {"containers": [{"name": "c", "image": "busybox", "resources": {}}],
                         "securityContext": {}}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}}},
        "status": {"replicas": 3}});
    let entries =
        track(&cat, ("apps", "deployments"), None, &deployment, "curl", "").expect("an entry");
    assert_eq!(entries[0]["manager"], "curl");
    assert_eq!(entries[0]["operation"], "Update");
    assert_eq!(entries[0]["apiVersion"], "apps/v1");
    assert_eq!(
        fields(&entries, 0),
        &json!({
            "f:metadata": {"f:labels": {".": {}, "f:a": {}}},
            "f:spec": {
                "f:replicas": {},
                "f:selector": {},
                "f:strategy": {"f:rollingUpdate": {".": {}, "f:maxSurge": {}}, "f:type": {}},
                "f:template": {
                    "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                    "f:spec": {
                        "f:containers": {"k:{\"name\":\"c\"}": {
                            ".": {}, "f:image": {}, "f:name": {}, "f:resources": {}}},
                        "f:securityContext": {}
                    }
                }
            }
        }),
        "status is the status subresource's; selector is atomic; zero-valued structs are no news"
    );
}

#[test]
fn lists_keyed_by_several_fields_and_zero_values_left_out() {
    let cat = Catalogue::builtin();
    // As kube's defaulting leaves it: targetPort (an IntOrString struct,
    // present in Go's encoding even when zero) is the port.
    let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
        "spec": {"ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}], "selector": {"app": "a"},
                 "sessionAffinity": ""}});
    let entries = track(&cat, ("", "services"), None, &svc, "m", "").expect("an entry");
    assert_eq!(
        fields(&entries, 0),
        &json!({"f:spec": {"f:ports": {".": {}, "k:{\"port\":80,\"protocol\":\"TCP\"}": {
            ".": {}, "f:port": {}, "f:protocol": {}, "f:targetPort": {}}}, "f:selector": {}}})
    );
}

#[test]
fn an_update_takes_over_changed_fields_and_merges_its_own_entry() {
    let cat = Catalogue::builtin();
    let cm = |data: Value| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "uid": "u"}, "data": data})
    };
    let created = cm(json!({"a": "1", "b": "2"}));
    let mut live = created.clone();
    live["metadata"]["managedFields"] =
        track(&cat, ("", "configmaps"), None, &created, "first", "").expect("an entry");
    let mut new = cm(json!({"a": "1", "b": "3", "c": "4"}));
    new["metadata"]["managedFields"] = live["metadata"]["managedFields"].clone();
    let entries =
        track(&cat, ("", "configmaps"), Some(&live), &new, "second", "").expect("entries");
    assert_eq!(entries.as_array().map(Vec::len), Some(2));
    assert_eq!(entries[0]["manager"], "first");
    assert_eq!(
        fields(&entries, 0),
        &json!({"f:data": {".": {}, "f:a": {}}})
    );
    assert_eq!(entries[1]["manager"], "second");
    assert_eq!(
        fields(&entries, 1),
        &json!({"f:data": {"f:b": {}, "f:c": {}}})
    );

    let mut live2 = new.clone();
    live2["metadata"]["managedFields"] = entries;
    let mut again = cm(json!({"a": "1", "b": "3", "c": "4", "d": "5"}));
    again["metadata"]["managedFields"] = live2["metadata"]["managedFields"].clone();
    let entries =
        track(&cat, ("", "configmaps"), Some(&live2), &again, "second", "").expect("entries");
    assert_eq!(
        entries.as_array().map(Vec::len),
        Some(2),
        "one entry per manager"
    );
    assert_eq!(
        fields(&entries, 1),
        &json!({"f:data": {"f:b": {}, "f:c": {}, "f:d": {}}})
    );
}

#[test]
fn an_object_without_entries_is_not_tracked_on_update() {
    let cat = Catalogue::builtin();
    let live =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "uid": "u"}});
    let new = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "uid": "u"},
        "data": {"a": "1"}});
    assert_eq!(
        track(&cat, ("", "configmaps"), Some(&live), &new, "m", ""),
        None
    );
}

#[test]
fn a_status_write_records_its_subresource_and_only_status() {
    let cat = Catalogue::builtin();
    let pod = |phase: &str| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": "u",
        "managedFields": [{"manager": "m", "operation": "Update", "apiVersion": "v1",
            "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:nodeName": {}}}}]},
        "spec": {"nodeName": "n"}, "status": {"phase": phase}})
    };
    let entries = track(
        &cat,
        ("", "pods"),
        Some(&pod("Pending")),
        &pod("Running"),
        "kubelet",
        "status",
    )
    .expect("entries");
    assert_eq!(entries[1]["subresource"], "status");
    assert_eq!(fields(&entries, 1), &json!({"f:status": {"f:phase": {}}}));
}

#[test]
fn more_than_ten_updaters_are_merged_into_ancient_changes() {
    let cat = Catalogue::builtin();
    let mut live =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {}});
    for i in 0..12 {
        let mut new = live.clone();
        new["data"][format!("k{i}")] = json!("v");
        let entries = track(
            &cat,
            ("", "configmaps"),
            Some(&live),
            &new,
            &format!("m{i:02}"),
            "",
        );
        new["metadata"]["managedFields"] = entries.expect("entries");
        new["metadata"]["uid"] = json!("u");
        live = new;
    }
    let entries = live["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(entries.len(), 10);
    let ancient: Vec<&Value> = entries
        .iter()
        .filter(|e| e["manager"] == "ancient-changes")
        .collect();
    assert_eq!(ancient.len(), 1);
    assert_eq!(
        ancient[0]["fieldsV1"],
        json!({"f:data": {"f:k0": {}, "f:k1": {}, "f:k2": {}}})
    );
}

#[test]
fn a_pointer_template_owns_its_null_creation_timestamp_as_kube_records() {
    let cat = Catalogue::builtin();
    let template = json!({"metadata": {"labels": {"app": "a"}},
                          "spec": {"containers": [{"name": "c", "image": "busybox"}]}});
    let rc = json!({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "r"},
                    "spec": {"template": template}});
    let entries = track(&cat, ("", "replicationcontrollers"), None, &rc, "m", "").unwrap();
    let metadata = &fields(&entries, 0)["f:spec"]["f:template"]["f:metadata"];
    assert_eq!(
        metadata,
        &json!({".": {}, "f:creationTimestamp": {}, "f:labels": {".": {}, "f:app": {}}}),
        "Go encodes the template's zero creationTimestamp as null; the zero RC has no template"
    );
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                            "spec": {"template": template}});
    let res = cat.lookup("apps", "v1", "deployments").unwrap();
    let who = Tracking {
        manager: "m",
        subresource: "",
        schemas: cat.schemas(),
    };
    let entries = record(res, None, &deployment, &deployment, &who).unwrap();
    let metadata = &fields(&entries, 0)["f:spec"]["f:template"]["f:metadata"];
    assert_eq!(
        metadata,
        &json!({"f:labels": {".": {}, "f:app": {}}}),
        "a Deployment's zero value has the (non-pointer) template's null already"
    );
}

#[test]
fn a_csinode_driver_owns_its_null_topology_keys() {
    let cat = Catalogue::builtin();
    let res = cat.lookup("storage.k8s.io", "v1", "csinodes").unwrap();
    let node = json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n"},
                      "spec": {"drivers": [{"name": "d", "nodeID": "n1"}]}});
    let who = Tracking {
        manager: "m",
        subresource: "",
        schemas: cat.schemas(),
    };
    let entries = record(res, None, &node, &node, &who).unwrap();
    let driver = &fields(&entries, 0)["f:spec"]["f:drivers"]["k:{\"name\":\"d\"}"];
    assert_eq!(driver["f:topologyKeys"], json!({}), "{driver}");
}
