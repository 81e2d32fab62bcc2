// Package uniqueingresshost is the example context-aware admission plugin
// `unique-ingress-host`: an Ingress (networking.k8s.io/v1) may not claim a
// host that another Ingress, in any namespace, already has. It reads the
// server's own cache through the host import list-objects, so it sees an
// Ingress created a moment before.
package uniqueingresshost

import (
	"fmt"

	"capstan.dev/capstan"
)

// Review is the admission world's function (capstan-plugin-build exports it).
func Review(r *capstan.AdmissionRequest) (*capstan.AdmissionResponse, error) {
	obj := r.WrittenObjectOf("networking.k8s.io", "ingresses")
	if obj == nil {
		return capstan.Allow(), nil
	}
	hosts := ruleHosts(obj)
	if len(hosts) == 0 {
		return capstan.Allow(), nil
	}
	others, err := capstan.ListObjects("networking.k8s.io/v1", "ingresses", capstan.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("cannot list ingresses: %w", err)
	}
	namespace, name := r.Namespace, capstan.Name(obj)
	for _, host := range hosts {
		for _, other := range others {
			if capstan.Namespace(other) == namespace && capstan.Name(other) == name {
				continue
			}
			if contains(ruleHosts(other), host) {
				capstan.Logf(capstan.Info, "rejecting %s/%s: host %q is used by %s/%s", namespace, name, host, capstan.Namespace(other), capstan.Name(other))
				message := fmt.Sprintf("host %q is already used by ingress %s/%s", host, capstan.Namespace(other), capstan.Name(other))
				return capstan.Forbidden(r, message), nil
			}
		}
	}
	return capstan.Allow(), nil
}

// ruleHosts are the non-empty spec.rules[].host of an Ingress, in rule order.
func ruleHosts(ingress capstan.Object) []string {
	var hosts []string
	for _, rule := range capstan.Slice(ingress, "spec", "rules") {
		if rule, ok := rule.(map[string]any); ok {
			if host, _ := capstan.Str(rule, "host"); host != "" {
				hosts = append(hosts, host)
			}
		}
	}
	return hosts
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
