import pytest

from capstan_plugin import HostError, testing

from unique_ingress_host import API_VERSION, review


def ingress(namespace, name, *hosts):
    return {"apiVersion": API_VERSION, "kind": "Ingress",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"rules": [{"host": h} if h else {} for h in hosts]}}


def create(obj, operation="CREATE"):
    ns = obj["metadata"]["namespace"]
    return review(testing.request(operation, API_VERSION, "ingresses", "Ingress", ns, obj))


def setup_function():
    testing.reset()
    testing.put_object(API_VERSION, "ingresses", ingress("a", "shop", "shop.example.com"))


def test_a_host_used_in_another_namespace_is_forbidden():
    r = create(ingress("b", "shop", "www.example.com", "shop.example.com"))
    assert not r.allowed and r.code == 403
    assert r.message == ('ingresses.networking.k8s.io "shop" is forbidden: '
                         'host "shop.example.com" is already used by ingress a/shop')


def test_the_first_conflict_in_rule_order_is_named():
    testing.put_object(API_VERSION, "ingresses", ingress("c", "www", "www.example.com"))
    r = create(ingress("b", "x", "www.example.com", "shop.example.com"))
    assert r.message.endswith('host "www.example.com" is already used by ingress c/www')


def test_another_host_is_allowed():
    assert create(ingress("b", "blog", "blog.example.com")).allowed


def test_updating_the_ingress_that_holds_the_host_is_allowed():
    assert create(ingress("a", "shop", "shop.example.com"), "UPDATE").allowed


def test_rules_without_host_and_other_resources_are_not_checked():
    assert create(ingress("b", "default-backend", "")).allowed
    cm = {"metadata": {"name": "shop", "namespace": "b"}, "spec": {"rules": [{"host": "shop.example.com"}]}}
    assert review(testing.request("CREATE", "v1", "configmaps", "ConfigMap", "b", cm)).allowed


def test_a_store_that_cannot_answer_is_an_error():
    testing.fail_reads("store unavailable")
    with pytest.raises(HostError, match="store unavailable"):
        create(ingress("b", "shop", "shop.example.com"))
