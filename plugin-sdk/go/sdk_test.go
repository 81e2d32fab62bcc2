package capstan_test

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"capstan.dev/capstan"
	"capstan.dev/capstan/capstantest"
)

func pod(name string) capstan.Object {
	return capstan.Object{"metadata": map[string]any{"name": name, "labels": map[string]any{"app": "web"}}}
}

func TestForbiddenIsWordedLikeKube(t *testing.T) {
	r := capstantest.Request(capstan.Create, "apps/v1", "deployments", "Deployment", "ns", pod("web"))
	resp := capstan.Forbidden(r, "no")
	if resp.Allowed || resp.Code() != 403 || resp.Status.Reason != "Forbidden" || resp.Status.Status != "Failure" {
		t.Fatalf("%+v", resp.Status)
	}
	if got := resp.Message(); got != `deployments.apps "web" is forbidden: no` {
		t.Fatal(got)
	}
	want := capstan.StatusDetails{Name: "web", Group: "apps", Kind: "deployments"}
	if !reflect.DeepEqual(*resp.Status.Details, want) {
		t.Fatalf("%+v", resp.Status.Details)
	}
	core := capstan.Forbidden(capstantest.Request(capstan.Create, "v1", "pods", "Pod", "ns", capstan.Object{"metadata": map[string]any{"generateName": "p-"}}), "x")
	if core.Message() != `pods "p-" is forbidden: x` {
		t.Fatal(core.Message())
	}
	if got := capstan.NotFound("apps", "deployments", "d").Message(); got != `deployments.apps "d" not found` {
		t.Fatal(got)
	}
}

func TestDetailsCarryTheCoreGroupAsTheOtherSDKsDo(t *testing.T) {
	core := capstan.Forbidden(capstantest.Request(capstan.Create, "v1", "pods", "Pod", "ns", pod("web")), "x")
	for _, c := range []struct {
		resp *capstan.AdmissionResponse
		want string
	}{
		{core, `{"name":"web","group":"","kind":"pods"}`},
		{capstan.NotFound("", "configmaps", "c"), `{"name":"c","group":"","kind":"configmaps"}`},
		{capstan.Forbidden(capstantest.Request(capstan.Create, "apps/v1", "deployments", "Deployment", "ns", pod("d")), "x"), `{"name":"d","group":"apps","kind":"deployments"}`},
		{capstan.Deny(422, "Invalid", "bad").WithCause("FieldValueInvalid", "spec.x", "no"), `{"causes":[{"reason":"FieldValueInvalid","message":"no","field":"spec.x"}]}`},
	} {
		got, err := json.Marshal(c.resp.Status.Details)
		if err != nil || string(got) != c.want {
			t.Fatalf("got %s (%v), want %s", got, err, c.want)
		}
		var back capstan.StatusDetails
		if err := json.Unmarshal(got, &back); err != nil || !reflect.DeepEqual(back, *c.resp.Status.Details) {
			t.Fatalf("%s decoded as %+v (%v)", got, back, err)
		}
	}
}

func TestRunAdmissionAnswersTheReviewWithPatchWarningsAndAnnotations(t *testing.T) {
	capstantest.Reset()
	r := capstantest.Request(capstan.Create, "v1", "pods", "Pod", "ns", pod("web"))
	review := func(r *capstan.AdmissionRequest) (*capstan.AdmissionResponse, error) {
		after := capstan.DeepCopy(r.Object)
		after["metadata"].(map[string]any)["labels"].(map[string]any)["a/b"] = "c"
		return capstan.Allow().WithChanges(r.Object, after).WithWarning("careful").WithAuditAnnotation("k", "v"), nil
	}
	text, err := capstan.RunAdmission(review, capstantest.ReviewText(r))
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		APIVersion, Kind string
		Response         map[string]any
	}
	if err := json.Unmarshal([]byte(text), &answer); err != nil {
		t.Fatal(err)
	}
	resp := answer.Response
	if answer.APIVersion != "admission.k8s.io/v1" || answer.Kind != "AdmissionReview" || resp["uid"] != "test-uid" || resp["allowed"] != true {
		t.Fatal(text)
	}
	patch, _ := base64.StdEncoding.DecodeString(resp["patch"].(string))
	if string(patch) != `[{"op":"add","path":"/metadata/labels/a~1b","value":"c"}]` || resp["patchType"] != "JSONPatch" {
		t.Fatal(string(patch))
	}
	if !reflect.DeepEqual(resp["warnings"], []any{"careful"}) || !reflect.DeepEqual(resp["auditAnnotations"], map[string]any{"k": "v"}) {
		t.Fatal(text)
	}
}

func TestRunAdmissionTurnsErrorsAndPanicsIntoErrors(t *testing.T) {
	text := capstantest.ReviewText(capstantest.Request(capstan.Create, "v1", "pods", "Pod", "ns", pod("web")))
	_, err := capstan.RunAdmission(func(*capstan.AdmissionRequest) (*capstan.AdmissionResponse, error) { panic("boom") }, text)
	if err == nil || err.Error() != "plugin panicked: boom" {
		t.Fatal(err)
	}
	if _, err := capstan.RunAdmission(nil, `{"kind": "AdmissionReview"}`); err == nil || err.Error() != "AdmissionReview has no request" {
		t.Fatal(err)
	}
}

func TestDiffAndApplyPatchRoundTrip(t *testing.T) {
	before := capstan.Object{"metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "1", "gone": "y"}},
		"spec": map[string]any{"list": []any{"a", "b"}, "grow": []any{1.0}, "n": nil}}
	after := capstan.DeepCopy(before)
	delete(after["metadata"].(map[string]any)["labels"].(map[string]any), "gone")
	after["spec"].(map[string]any)["list"] = []any{"a", "c"}
	after["spec"].(map[string]any)["grow"] = []any{1.0, 2.0}
	after["spec"].(map[string]any)["new"] = nil
	ops := capstan.Diff(before, after)
	got, err := capstantest.ApplyPatch(before, capstan.Allow().WithPatch(ops...))
	if err != nil || !reflect.DeepEqual(got, after) {
		t.Fatalf("%v %v %v", ops, got, err)
	}
	if before["spec"].(map[string]any)["list"].([]any)[1] != "b" {
		t.Fatal("ApplyPatch changed its input")
	}
	encoded, _ := json.Marshal(ops)
	if !strings.Contains(string(encoded), `{"op":"add","path":"/spec/new","value":null}`) {
		t.Fatal(string(encoded))
	}
	p := (&capstan.JSONPatch{}).Add([]string{"a~b"}, 1).Remove("c")
	if p.Ops[0].Path != "/a~0b" || p.Ops[1].Op != "remove" {
		t.Fatal(p.Ops)
	}
}

func TestHostCallsReachTheFake(t *testing.T) {
	capstantest.Reset()
	capstantest.SetConfig(map[string]any{"labels": []string{"team"}})
	var cfg struct{ Labels []string }
	if err := capstan.Config(&cfg); err != nil || !reflect.DeepEqual(cfg.Labels, []string{"team"}) {
		t.Fatal(cfg, err)
	}
	capstantest.SetConfigText(`{"label": "team"}`)
	if err := capstan.Config(&cfg); err == nil || !strings.Contains(err.Error(), `invalid plugin configuration: json: unknown field "label"`) {
		t.Fatal(err)
	}
	capstantest.PutObject("v1", "namespaces", capstan.Object{"metadata": map[string]any{"name": "a", "labels": map[string]any{"env": "prod"}}})
	capstantest.PutObject("v1", "pods", capstan.Object{"metadata": map[string]any{"name": "p", "namespace": "a"}})
	mark, _ := capstan.Watermark("v1", "namespaces")
	ns, err := capstan.GetObject("v1", "namespaces", "", "a")
	if err != nil || capstan.Name(ns) != "a" {
		t.Fatal(ns, err)
	}
	if missing, err := capstan.GetObject("v1", "namespaces", "", "b"); missing != nil || err != nil {
		t.Fatal(missing, err)
	}
	items, err := capstan.ListObjects("v1", "namespaces", capstan.ListOptions{LabelSelector: "env=prod"})
	if err != nil || len(items) != 1 {
		t.Fatal(items, err)
	}
	if items, _ := capstan.ListObjects("v1", "pods", capstan.ListOptions{Namespace: "b"}); len(items) != 0 {
		t.Fatal(items)
	}
	capstantest.RemoveObject("v1", "namespaces", "", "a")
	if moved, _ := capstan.Watermark("v1", "namespaces"); moved == mark {
		t.Fatal("the watermark did not move")
	}
	capstantest.FailReads("store down")
	if _, err := capstan.ListObjects("v1", "pods", capstan.ListOptions{}); err == nil || err.Error() != "store down" {
		t.Fatal(err)
	}
	capstan.Logf(capstan.Warn, "n=%d", 1)
	if logs := capstantest.Logs(); len(logs) != 1 || logs[0] != (capstantest.LogLine{Level: capstan.Warn, Message: "n=1"}) {
		t.Fatal(logs)
	}
}

func TestRunJSONServesTheOtherWorlds(t *testing.T) {
	authenticate := func(review capstan.Object) (capstan.Object, error) {
		review["status"] = map[string]any{"authenticated": true, "user": map[string]any{"username": "alice"}}
		return review, nil
	}
	out, err := capstan.RunJSON(authenticate, "TokenReview", `{"kind": "TokenReview", "spec": {"token": "t"}}`)
	if err != nil || !strings.Contains(out, `"authenticated":true`) {
		t.Fatal(out, err)
	}
	if _, err := capstan.RunJSON(authenticate, "TokenReview", `not json`); err == nil || !strings.HasPrefix(err.Error(), "invalid TokenReview: ") {
		t.Fatal(err)
	}
}
