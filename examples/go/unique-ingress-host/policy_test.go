// Unit tests against the SDK's fake host holding ingresses: offline, no Wasm.
package uniqueingresshost

import (
	"testing"

	"capstan.dev/capstan"
	"capstan.dev/capstan/capstantest"
)

func ingress(namespace, name string, hosts ...string) capstan.Object {
	var rules []any
	for _, h := range hosts {
		rules = append(rules, map[string]any{"host": h})
	}
	return capstan.Object{
		"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec":     map[string]any{"rules": rules},
	}
}

func review(t *testing.T, op capstan.Operation, obj capstan.Object) *capstan.AdmissionResponse {
	t.Helper()
	r, err := Review(capstantest.Request(op, "networking.k8s.io/v1", "ingresses", "Ingress", capstan.Namespace(obj), obj))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRefusesAHostAnotherIngressHasInAnyNamespace(t *testing.T) {
	capstantest.Reset()
	capstantest.PutObject("networking.k8s.io/v1", "ingresses", ingress("a", "shop", "shop.example.com"))
	capstantest.PutObject("networking.k8s.io/v1", "ingresses", ingress("a", "blog", "blog.example.com"))
	r := review(t, capstan.Create, ingress("b", "copy", "", "blog.example.com", "shop.example.com"))
	if r.Allowed || r.Code() != 403 {
		t.Fatalf("%+v", r.Status)
	}
	want := `ingresses.networking.k8s.io "copy" is forbidden: host "blog.example.com" is already used by ingress a/blog`
	if r.Message() != want {
		t.Fatal(r.Message())
	}
}

func TestAllowsNewHostsAndAnIngressUpdatingItself(t *testing.T) {
	capstantest.Reset()
	capstantest.PutObject("networking.k8s.io/v1", "ingresses", ingress("a", "shop", "shop.example.com"))
	if !review(t, capstan.Create, ingress("b", "other", "other.example.com")).Allowed {
		t.Fatal("a new host was refused")
	}
	if !review(t, capstan.Update, ingress("a", "shop", "shop.example.com")).Allowed {
		t.Fatal("an ingress conflicted with itself")
	}
	if !review(t, capstan.Create, ingress("b", "nohost")).Allowed {
		t.Fatal("an ingress without hosts was refused")
	}
}

func TestOtherResourcesAndSubresourcesAreNotCheckedAndStoreErrorsFail(t *testing.T) {
	capstantest.Reset()
	capstantest.PutObject("networking.k8s.io/v1", "ingresses", ingress("a", "shop", "shop.example.com"))
	status := capstantest.Request(capstan.Update, "networking.k8s.io/v1", "ingresses", "Ingress", "b", ingress("b", "x", "shop.example.com"))
	status.SubResource = "status"
	if r, _ := Review(status); !r.Allowed {
		t.Fatal("a status update was checked")
	}
	if r, _ := Review(capstantest.Request(capstan.Create, "v1", "configmaps", "ConfigMap", "b", ingress("b", "x", "shop.example.com"))); !r.Allowed {
		t.Fatal("a configmap was checked")
	}
	capstantest.FailReads("store unavailable")
	if _, err := Review(capstantest.Request(capstan.Create, "networking.k8s.io/v1", "ingresses", "Ingress", "b", ingress("b", "x", "new.example.com"))); err == nil || err.Error() != "cannot list ingresses: store unavailable" {
		t.Fatal(err)
	}
}
