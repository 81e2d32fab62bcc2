"""A user's flow through the official Python `kubernetes` client.

Usage: client_flow.py KUBECONFIG. Exits non-zero (with the failing assertion) on any mismatch.
"""
import sys

from kubernetes import client, config, watch
from kubernetes.client.exceptions import ApiException

config.load_kube_config(sys.argv[1])
core = client.CoreV1Api()
apps = client.AppsV1Api()

names = [n.metadata.name for n in core.list_namespace().items]
assert {"default", "kube-system", "kube-public", "kube-node-lease"} <= set(names), names

cm = core.create_namespaced_config_map(
    "default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py"), data={"a": "1"})
)
assert cm.metadata.uid and int(cm.metadata.resource_version) > 0

try:
    core.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py")))
    raise AssertionError("duplicate create succeeded")
except ApiException as e:
    assert e.status == 409 and "already exists" in e.body, e.body

stale = core.read_namespaced_config_map("py", "default")
cm.data["b"] = "2"
replaced = core.replace_namespaced_config_map("py", "default", cm)
assert replaced.data == {"a": "1", "b": "2"}
try:
    stale.data = {"lost": "update"}
    core.replace_namespaced_config_map("py", "default", stale)
    raise AssertionError("stale update succeeded")
except ApiException as e:
    assert e.status == 409, e.status

patched = core.patch_namespaced_config_map("py", "default", {"metadata": {"labels": {"team": "a"}}})
assert patched.metadata.labels == {"team": "a"}
assert [c.metadata.name for c in core.list_namespaced_config_map("default", label_selector="team=a").items] == ["py"]

dep = apps.create_namespaced_deployment(
    "default",
    client.V1Deployment(
        metadata=client.V1ObjectMeta(name="web"),
        spec=client.V1DeploymentSpec(
            selector=client.V1LabelSelector(match_labels={"app": "web"}),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels={"app": "web"}),
                spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx")]),
            ),
        ),
    ),
)
assert dep.spec.replicas == 1 and dep.metadata.generation == 1
scale = apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": 4}})
assert scale.spec.replicas == 4
assert apps.read_namespaced_deployment("web", "default").metadata.generation == 2

rv = core.list_namespaced_config_map("default").metadata.resource_version
core.delete_namespaced_config_map("py", "default")
seen = [
    (ev["type"], ev["object"].metadata.name)
    for ev in watch.Watch().stream(
        core.list_namespaced_config_map, "default", resource_version=rv, timeout_seconds=1
    )
]
assert seen == [("DELETED", "py")], seen

try:
    core.read_namespaced_config_map("py", "default")
    raise AssertionError("deleted object still readable")
except ApiException as e:
    assert e.status == 404, e.status
print("ok")
