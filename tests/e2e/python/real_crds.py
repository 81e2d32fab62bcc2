"""Real operators' CRDs through the official Python `kubernetes` client: the
cert-manager Certificate and Gateway API HTTPRoute CRDs (installed by the
test beforehand) read back as typed models, then objects created, read,
listed, patched and deleted with CustomObjectsApi.

Usage: real_crds.py KUBECONFIG. Exits non-zero on any mismatch.
"""
import sys

from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

config.load_kube_config(sys.argv[1])
ext = client.ApiextensionsV1Api()
custom = client.CustomObjectsApi()

# The large CRDs deserialize into the client's models, CEL rules included.
routes = ext.read_custom_resource_definition("httproutes.gateway.networking.k8s.io")
served = [v for v in routes.spec.versions if v.served]
assert [v.name for v in served] == ["v1beta1"], [v.name for v in served]
rules = served[0].schema.open_apiv3_schema.properties["spec"].properties["rules"]
assert rules.max_items == 16, rules.max_items
# `items` is JSONSchemaPropsOrArray, which the client leaves as a plain dict.
messages = [r["message"] for r in rules.items["x-kubernetes-validations"]]
assert "RequestRedirect filter must not be used together with backendRefs" in messages, messages
assert any(c.type == "Established" and c.status == "True" for c in routes.status.conditions)

certificate = {
    "apiVersion": "cert-manager.io/v1",
    "kind": "Certificate",
    "metadata": {"name": "example-com"},
    "spec": {
        "secretName": "example-com-tls",
        "dnsNames": ["example.com", "www.example.com"],
        "issuerRef": {"name": "ca-issuer", "kind": "Issuer"},
    },
}
created = custom.create_namespaced_custom_object(
    "cert-manager.io", "v1", "default", "certificates", certificate
)
assert created["metadata"]["generation"] == 1, created
got = custom.get_namespaced_custom_object(
    "cert-manager.io", "v1", "default", "certificates", "example-com"
)
assert got["spec"]["dnsNames"] == ["example.com", "www.example.com"], got

route = {
    "apiVersion": "gateway.networking.k8s.io/v1beta1",
    "kind": "HTTPRoute",
    "metadata": {"name": "foo-route", "labels": {"app": "foo"}},
    "spec": {
        "parentRefs": [{"name": "example-gateway"}],
        "hostnames": ["foo.example.com"],
        "rules": [
            {
                "matches": [{"path": {"type": "PathPrefix", "value": "/login"}}],
                "backendRefs": [{"name": "foo-svc", "port": 8080}],
            }
        ],
    },
}
custom.create_namespaced_custom_object(
    "gateway.networking.k8s.io", "v1beta1", "default", "httproutes", route
)
listed = custom.list_namespaced_custom_object(
    "gateway.networking.k8s.io", "v1beta1", "default", "httproutes", label_selector="app=foo"
)
assert listed["kind"] == "HTTPRouteList", listed["kind"]
assert [i["metadata"]["name"] for i in listed["items"]] == ["foo-route"], listed
everywhere = custom.list_cluster_custom_object("cert-manager.io", "v1", "certificates")
assert [i["metadata"]["name"] for i in everywhere["items"]] == ["example-com"], everywhere

patched = custom.patch_namespaced_custom_object(
    "gateway.networking.k8s.io", "v1beta1", "default", "httproutes", "foo-route",
    {"spec": {"hostnames": ["foo.example.com", "bar.example.com"]}},
)
assert patched["spec"]["hostnames"] == ["foo.example.com", "bar.example.com"], patched
assert patched["metadata"]["generation"] == 2, patched

custom.delete_namespaced_custom_object(
    "cert-manager.io", "v1", "default", "certificates", "example-com"
)
try:
    custom.get_namespaced_custom_object(
        "cert-manager.io", "v1", "default", "certificates", "example-com"
    )
    raise AssertionError("deleted Certificate still served")
except ApiException as e:
    assert e.status == 404, e.status

print("ok")
