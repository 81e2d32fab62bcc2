from capstan_plugin import Level, run_admission, testing

from require_labels import review


def configmap(labels):
    return {"metadata": {"name": "settings", "namespace": "ns", "labels": labels}}


def setup_function():
    testing.reset()
    testing.set_config({"labels": ["team", "tier"]})


def test_missing_labels_are_forbidden_in_config_order():
    r = review(testing.request("CREATE", "apps/v1", "deployments", "Deployment", "ns",
                               {"metadata": {"name": "web", "labels": {"tier": "front"}}}))
    assert not r.allowed
    assert r.code == 403
    assert r.status["reason"] == "Forbidden"
    assert r.message == 'deployments.apps "web" is forbidden: missing required label(s): team'
    assert r.status["details"] == {"name": "web", "group": "apps", "kind": "deployments"}
    assert testing.logs() == [(Level.INFO, 'rejecting web: missing ["team"]')]


def test_all_missing_labels_are_named():
    r = review(testing.request("UPDATE", "v1", "configmaps", "ConfigMap", "ns", configmap({})))
    assert r.message == 'configmaps "settings" is forbidden: missing required label(s): team, tier'


def test_a_labelled_object_is_allowed():
    r = review(testing.request("CREATE", "v1", "configmaps", "ConfigMap", "ns",
                               configmap({"team": "a", "tier": "b"})))
    assert r.allowed and r.status is None and testing.logs() == []


def test_deletes_and_subresources_are_not_checked():
    assert review(testing.request("DELETE", "v1", "configmaps", "ConfigMap", "ns", configmap({}))).allowed
    assert review(testing.request("UPDATE", "v1", "pods", "Pod", "ns", configmap({}), sub_resource="status")).allowed


def test_no_configuration_requires_nothing():
    testing.set_config_text("")
    assert review(testing.request("CREATE", "v1", "configmaps", "ConfigMap", "ns", configmap({}))).allowed


def test_the_wire_form_carries_the_uid():
    text = run_admission(review, testing.review_text(
        testing.request("CREATE", "v1", "configmaps", "ConfigMap", "ns", configmap({}))))
    assert '"uid": "test-uid"' in text and '"allowed": false' in text
