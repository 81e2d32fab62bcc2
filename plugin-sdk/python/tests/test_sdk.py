import ast
import base64
import json
from pathlib import Path

import pytest

from capstan_plugin import (AdmissionResponse, ConfigError, HostError, JsonPatch, Level,
                            PolicyError, allow, config, deny, diff, forbidden, get_object,
                            list_objects, log, not_found, pointer, run_admission, run_json,
                            testing, watermark)
from capstan_plugin.build import COMPONENTIZE_PY, WIT_PATH, componentize_py_problem, entry_source, stage
from capstan_plugin.host import WitHost


def setup_function():
    testing.reset()


def pod(name="web", ns="ns", **labels):
    return {"metadata": {"name": name, "namespace": ns, "labels": labels}}


def test_forbidden_is_worded_like_kube():
    r = forbidden(testing.request("CREATE", "apps/v1", "deployments", "Deployment", "ns", pod()), "no")
    assert r.to_dict() == {"uid": "", "allowed": False, "status": {
        "status": "Failure", "message": 'deployments.apps "web" is forbidden: no',
        "reason": "Forbidden", "code": 403,
        "details": {"name": "web", "group": "apps", "kind": "deployments"}}}


def test_forbidden_names_generate_name_then_the_request_then_unknown():
    gen = {"metadata": {"generateName": "web-"}}
    assert forbidden(testing.request("CREATE", "v1", "pods", "Pod", "ns", gen), "x").message == \
        'pods "web-" is forbidden: x'
    assert forbidden(testing.request("CREATE", "v1", "pods", "Pod", "ns", {}), "x").message == \
        'pods "Unknown" is forbidden: x'


def test_not_found_and_deny():
    r = not_found("apps", "deployments", "web")
    assert (r.code, r.status["reason"], r.message) == (404, "NotFound", 'deployments.apps "web" not found')
    assert deny(422, "Invalid", "bad").with_cause("FieldValueInvalid", "spec.x", "no").status["details"] == \
        {"causes": [{"reason": "FieldValueInvalid", "message": "no", "field": "spec.x"}]}


def test_patch_warnings_and_audit_annotations_on_the_wire():
    before = {"metadata": {"labels": {"a/b": "1", "gone": "x"}}, "spec": {"list": [1, 2]}}
    after = {"metadata": {"labels": {"a/b": "2", "new": "y"}}, "spec": {"list": [1, 3]}}
    r = allow().with_changes(before, after).with_warning("careful").with_audit_annotation("k", "v")
    wire = r.to_dict()
    ops = json.loads(base64.b64decode(wire["patch"]))
    assert wire["patchType"] == "JSONPatch"
    assert ops == [
        {"op": "remove", "path": "/metadata/labels/gone"},
        {"op": "replace", "path": "/metadata/labels/a~1b", "value": "2"},
        {"op": "add", "path": "/metadata/labels/new", "value": "y"},
        {"op": "replace", "path": "/spec/list/1", "value": 3},
    ]
    assert testing.apply_patch(before, wire) == after
    assert wire["warnings"] == ["careful"] and wire["auditAnnotations"] == {"k": "v"}


def test_json_patch_builder_escapes_pointers():
    p = JsonPatch().add(["metadata", "annotations", "x~y/z"], "1").remove(["spec"])
    assert p.ops == [{"op": "add", "path": "/metadata/annotations/x~0y~1z", "value": "1"},
                     {"op": "remove", "path": "/spec"}]
    assert pointer([]) == "" and diff({"a": True}, {"a": 1}) == [{"op": "replace", "path": "/a", "value": 1}]
    assert allow().with_patch(p).patch_ops == p.ops


def test_run_admission_sets_uid_and_api_version():
    req = testing.request("CREATE", "v1", "pods", "Pod", "ns", pod())
    out = json.loads(run_admission(lambda r: forbidden(r, "no"), testing.review_text(req)))
    assert out["apiVersion"] == "admission.k8s.io/v1" and out["kind"] == "AdmissionReview"
    assert out["response"]["uid"] == "test-uid" and out["response"]["allowed"] is False


def test_run_admission_refuses_bad_input_and_bad_answers():
    with pytest.raises(PolicyError, match="invalid AdmissionReview"):
        run_admission(lambda r: allow(), "{")
    with pytest.raises(PolicyError, match="has no request"):
        run_admission(lambda r: allow(), "{}")
    req = testing.review_text(testing.request("CREATE", "v1", "pods", "Pod", "ns", pod()))
    with pytest.raises(PolicyError, match="must return an AdmissionResponse"):
        run_admission(lambda r: True, req)


def test_run_json_for_the_other_worlds():
    answer = run_json(lambda t: {**t, "status": {"authenticated": False}}, "TokenReview",
                      '{"kind": "TokenReview", "spec": {"token": "x"}}')
    assert json.loads(answer)["status"] == {"authenticated": False}


def test_the_request_is_typed():
    req = testing.request("UPDATE", "apps/v1", "deployments", "Deployment", "ns", pod(), sub_resource="scale")
    assert req.kind.kind == "Deployment" and req.resource.group == "apps" and req.resource.version == "v1"
    assert req.sub_resource == "scale" and req.user_info.username == "test"
    assert req.written_object() is None and req.is_write()
    assert testing.request("DELETE", "v1", "pods", "Pod", "ns", pod()).old_object == pod()


def test_config_and_logs():
    assert config() == {}
    testing.set_config({"labels": ["team"]})
    assert config() == {"labels": ["team"]}
    testing.set_config_text("{not json")
    with pytest.raises(ConfigError, match="invalid plugin configuration"):
        config()
    log(Level.WARN, "hello")
    assert testing.logs() == [(Level.WARN, "hello")]


def test_reads_through_the_fake_host():
    testing.put_object("v1", "pods", pod("a", "x", app="web"))
    testing.put_object("v1", "pods", pod("b", "y", app="db"))
    assert get_object("v1", "pods", "x", "a")["metadata"]["name"] == "a"
    assert get_object("v1", "pods", "x", "missing") is None
    names = lambda items: sorted(o["metadata"]["name"] for o in items)
    assert names(list_objects("v1", "pods")) == ["a", "b"]
    assert names(list_objects("v1", "pods", namespace="y")) == ["b"]
    assert names(list_objects("v1", "pods", label_selector="app!=web")) == ["b"]
    assert names(list_objects("v1", "pods", field_selector="metadata.name=a")) == ["a"]
    before = watermark("v1", "pods")
    testing.remove_object("v1", "pods", "x", "a")
    assert watermark("v1", "pods") != before
    testing.fail_reads("etcd is down")
    with pytest.raises(HostError, match="etcd is down"):
        list_objects("v1", "pods")


class Err(Exception):
    """Like componentize_py_types.Err: the WIT error in .value."""

    def __init__(self, value):
        super().__init__(value)
        self.value = value


class FakeWit:
    class Level:
        INFO = "wit-info"

        def __class_getitem__(cls, name):
            return getattr(cls, name)

    def __init__(self):
        self.logged = []

    def log(self, level, message):
        self.logged.append((level, message))

    def get_object(self, *args):
        raise Err("no such resource")


def test_wit_host_maps_levels_and_errors():
    wit = FakeWit()
    host = WitHost(wit)
    host.log(Level.INFO, "m")
    assert wit.logged == [("wit-info", "m")]
    with pytest.raises(HostError, match="^no such resource$"):
        host.get_object("v1", "pods", None, "x")


def test_the_entry_exports_each_world_around_the_policy(tmp_path):
    for world, export in [("admission", "review"), ("authorizer", "authorize")]:
        source = entry_source("my_policy", world)
        tree = ast.parse(source)
        cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
        assert cls.name == "WitWorld" and [f.name for f in cls.body] == [export]
    with pytest.raises(ValueError, match="unknown world"):
        entry_source("p", "nope")


def test_staging_takes_the_policy_and_the_sdk_but_not_tests(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ["my_policy.py", "helpers.py", "test_my_policy.py", "conftest.py"]:
        (src / name).write_text("")
    out = tmp_path / "out"
    out.mkdir()
    assert stage(src / "my_policy.py", "admission", out) == "my_policy"
    files = sorted(p.name for p in out.iterdir())
    assert files == ["capstan_entry.py", "capstan_plugin", "helpers.py", "my_policy.py"]
    assert not (out / "capstan_plugin" / "testing.py").exists()
    assert (WIT_PATH / "capstan.wit").exists()


def test_a_missing_or_other_componentize_py_is_named_with_the_install_line():
    install = f"    /py -m pip install componentize-py=={COMPONENTIZE_PY}\n"
    missing = componentize_py_problem("", python="/py")
    assert missing.startswith(f"componentize-py {COMPONENTIZE_PY} is missing: /py cannot import componentize_py")
    assert install in missing
    other = componentize_py_problem("0.19.3", python="/py")
    assert other.startswith(f"componentize-py 0.19.3 is installed; this SDK builds with componentize-py {COMPONENTIZE_PY}")
    assert install in other
    assert componentize_py_problem(COMPONENTIZE_PY, python="/py") is None
