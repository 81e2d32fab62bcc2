// Unit tests against the SDK's fake host: offline, no Wasm.
package policy

import (
	"encoding/json"
	"strings"
	"testing"

	"capstan.dev/capstan"
	"capstan.dev/capstan/capstantest"
)

func create(t *testing.T, obj capstan.Object) *capstan.AdmissionResponse {
	t.Helper()
	r, err := Review(capstantest.Request(capstan.Create, "apps/v1", "deployments", "Deployment", "ns", obj))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func meta(name string, labels map[string]any) capstan.Object {
	return capstan.Object{"metadata": map[string]any{"name": name, "labels": labels}}
}

func TestRejectsObjectsMissingAListedLabelInKubesForbiddenWording(t *testing.T) {
	capstantest.Reset()
	capstantest.SetConfig(map[string]any{"labels": []string{"team", "tier", "owner"}})
	r := create(t, meta("web", map[string]any{"tier": "front"}))
	if r.Allowed || r.Code() != 403 {
		t.Fatalf("%+v", r.Status)
	}
	if want := `deployments.apps "web" is forbidden: missing required label(s): team, owner`; r.Message() != want {
		t.Fatal(r.Message())
	}
	logs := capstantest.Logs()
	if len(logs) != 1 || logs[0].Level != capstan.Info || logs[0].Message != `rejecting web: missing ["team","owner"]` {
		t.Fatal(logs)
	}
}

func TestAllowsLabelledObjectsAndEverythingWithAnEmptyConfiguration(t *testing.T) {
	capstantest.Reset()
	capstantest.SetConfig(map[string]any{"labels": []string{"team"}})
	if !create(t, meta("web", map[string]any{"team": "a"})).Allowed {
		t.Fatal("a labelled object was refused")
	}
	capstantest.Reset()
	if !create(t, meta("web", nil)).Allowed {
		t.Fatal("an empty configuration refused an object")
	}
}

func TestDeletesAndSubresourcesAreNotCheckedAndABadConfigurationFails(t *testing.T) {
	capstantest.Reset()
	capstantest.SetConfig(map[string]any{"labels": []string{"team"}})
	status := capstantest.Request(capstan.Update, "v1", "pods", "Pod", "ns", meta("p", nil))
	status.SubResource = "status"
	if r, _ := Review(status); !r.Allowed {
		t.Fatal("a status update was checked")
	}
	if r, _ := Review(capstantest.Request(capstan.Delete, "v1", "pods", "Pod", "ns", meta("p", nil))); !r.Allowed {
		t.Fatal("a delete was checked")
	}
	capstantest.SetConfig(map[string]any{"label": "team"})
	if _, err := Review(capstantest.Request(capstan.Create, "v1", "pods", "Pod", "ns", meta("p", nil))); err == nil || !strings.Contains(err.Error(), "invalid plugin configuration") {
		t.Fatal(err)
	}
}

func TestAnswersTheAdmissionReviewTheHostSends(t *testing.T) {
	capstantest.Reset()
	capstantest.SetConfig(map[string]any{"labels": []string{"team"}})
	text := capstantest.ReviewText(capstantest.Request(capstan.Create, "v1", "configmaps", "ConfigMap", "ns", meta("cm", nil)))
	out, err := capstan.RunAdmission(Review, text)
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		Kind     string
		Response struct {
			UID     string
			Allowed bool
			Status  capstan.Status
		}
	}
	if err := json.Unmarshal([]byte(out), &answer); err != nil {
		t.Fatal(err)
	}
	if answer.Kind != "AdmissionReview" || answer.Response.UID != "test-uid" || answer.Response.Allowed {
		t.Fatal(out)
	}
	if answer.Response.Status.Message != `configmaps "cm" is forbidden: missing required label(s): team` || answer.Response.Status.Reason != "Forbidden" {
		t.Fatal(out)
	}
}
