"""Custom resources through the official Python `kubernetes` client: a CRD
created with ApiextensionsV1Api, then CustomObjectsApi's verbs, status and
scale subresources, and a watch.

Usage: custom_objects.py KUBECONFIG. Exits non-zero on any mismatch.
"""
import sys
import time

from kubernetes import client, config, watch
from kubernetes.client.exceptions import ApiException

config.load_kube_config(sys.argv[1])
ext = client.ApiextensionsV1Api()
custom = client.CustomObjectsApi()

schema = client.V1JSONSchemaProps(
    type="object",
    properties={
        "spec": client.V1JSONSchemaProps(
            type="object",
            properties={"replicas": client.V1JSONSchemaProps(type="integer")},
        ),
        "status": client.V1JSONSchemaProps(
            type="object",
            properties={"replicas": client.V1JSONSchemaProps(type="integer")},
        ),
    },
)
ext.create_custom_resource_definition(
    client.V1CustomResourceDefinition(
        metadata=client.V1ObjectMeta(name="gadgets.py.example.com"),
        spec=client.V1CustomResourceDefinitionSpec(
            group="py.example.com",
            scope="Namespaced",
            names=client.V1CustomResourceDefinitionNames(
                plural="gadgets", singular="gadget", kind="Gadget"
            ),
            versions=[
                client.V1CustomResourceDefinitionVersion(
                    name="v1",
                    served=True,
                    storage=True,
                    schema=client.V1CustomResourceValidation(open_apiv3_schema=schema),
                    subresources=client.V1CustomResourceSubresources(
                        status={},
                        scale=client.V1CustomResourceSubresourceScale(
                            spec_replicas_path=".spec.replicas",
                            status_replicas_path=".status.replicas",
                        ),
                    ),
                )
            ],
        ),
    )
)


def established():
    crd = ext.read_custom_resource_definition("gadgets.py.example.com")
    return any(c.type == "Established" and c.status == "True" for c in crd.status.conditions or [])


deadline = time.time() + 30
while not established():
    assert time.time() < deadline, "CRD never Established"
    time.sleep(0.1)

args = ("py.example.com", "v1", "default", "gadgets")
rv = custom.list_namespaced_custom_object(*args)["metadata"]["resourceVersion"]
g = custom.create_namespaced_custom_object(
    *args, {"apiVersion": "py.example.com/v1", "kind": "Gadget",
            "metadata": {"name": "g1", "labels": {"tier": "a"}}, "spec": {"replicas": 1}}
)
assert g["metadata"]["generation"] == 1, g
assert custom.get_namespaced_custom_object(*args, "g1")["spec"] == {"replicas": 1}
listed = custom.list_namespaced_custom_object(*args, label_selector="tier=a")
assert [i["metadata"]["name"] for i in listed["items"]] == ["g1"], listed

custom.patch_namespaced_custom_object(*args, "g1", {"spec": {"replicas": 2}})
custom.patch_namespaced_custom_object_status(*args, "g1", {"status": {"replicas": 2}})
scale = custom.get_namespaced_custom_object_scale(*args, "g1")
assert scale["spec"]["replicas"] == 2 and scale["status"]["replicas"] == 2, scale
custom.patch_namespaced_custom_object_scale(*args, "g1", {"spec": {"replicas": 5}})
g = custom.get_namespaced_custom_object(*args, "g1")
assert g["spec"]["replicas"] == 5 and g["metadata"]["generation"] == 3, g

custom.delete_namespaced_custom_object(*args, "g1")
seen = [
    (ev["type"], ev["object"]["metadata"]["name"])
    for ev in watch.Watch().stream(
        custom.list_namespaced_custom_object, *args, resource_version=rv, timeout_seconds=1
    )
]
assert [t for t, _ in seen] == ["ADDED", "MODIFIED", "MODIFIED", "MODIFIED", "DELETED"], seen

try:
    custom.get_namespaced_custom_object(*args, "g1")
    raise AssertionError("deleted object still readable")
except ApiException as e:
    assert e.status == 404, e.status
print("ok")
