// Package policy is the admission policy `require-labels`: it rejects
// creates and updates of objects that lack any of the labels listed in its
// configuration, `{"labels": ["team"]}`. Subresources (status, scale...)
// and deletes are not checked.
package policy

import (
	"encoding/json"
	"strings"

	"capstan.dev/capstan"
)

// config is the plugin's configuration; unknown fields are refused.
type config struct {
	Labels []string `json:"labels"`
}

// Review is the admission world's function (capstan-plugin-build exports it).
func Review(r *capstan.AdmissionRequest) (*capstan.AdmissionResponse, error) {
	obj := r.WrittenObject()
	if obj == nil {
		return capstan.Allow(), nil
	}
	var cfg config
	if err := capstan.Config(&cfg); err != nil {
		return nil, err
	}
	present := capstan.Labels(obj)
	var missing []string
	for _, key := range cfg.Labels {
		if _, ok := present[key]; !ok {
			missing = append(missing, key)
		}
	}
	if len(missing) == 0 {
		return capstan.Allow(), nil
	}
	list, _ := json.Marshal(missing)
	capstan.Logf(capstan.Info, "rejecting %s: missing %s", capstan.Name(obj), list)
	return capstan.Forbidden(r, "missing required label(s): "+strings.Join(missing, ", ")), nil
}
