// Package capstantest is a fake host for unit tests of Capstan plugins with
// `go test`: a configuration, an object store, captured logs and failing
// reads, plus helpers to build requests and apply a response's patch. Call
// Reset at the start of each test; it installs the fake with capstan.SetHost.
// The fake is one global, like the host it stands for: tests that use it
// must not run in parallel.
package capstantest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"capstan.dev/capstan"
)

// LogLine is one line the plugin logged.
type LogLine struct {
	Level   capstan.Level
	Message string
}

type key struct{ apiVersion, resource, namespace, name string }

type resourceKey struct{ apiVersion, resource string }

type fake struct {
	config    string
	objects   map[key]string
	logs      []LogLine
	readError string
	changes   map[resourceKey]int
}

var state *fake

// Reset empties the store, the logs and the configuration ("{}"), and
// installs the fake host.
func Reset() {
	state = &fake{config: "{}", objects: map[key]string{}, changes: map[resourceKey]int{}}
	capstan.SetHost(state)
}

// SetConfig sets the configuration the plugin reads with capstan.Config (encoded as JSON).
func SetConfig(v any) {
	state.config = mustJSON(v)
}

// SetConfigText sets the raw configuration text (to test invalid configurations).
func SetConfigText(text string) {
	state.config = text
}

// PutObject stores obj under its metadata.namespace / metadata.name and
// moves the resource's watermark.
func PutObject(apiVersion, resource string, obj capstan.Object) {
	k := key{apiVersion, resource, capstan.Namespace(obj), capstan.Name(obj)}
	state.objects[k] = mustJSON(obj)
	state.changes[resourceKey{apiVersion, resource}]++
}

// RemoveObject removes an object (namespace "" for cluster-scoped ones)
// and moves the resource's watermark.
func RemoveObject(apiVersion, resource, namespace, name string) {
	delete(state.objects, key{apiVersion, resource, namespace, name})
	state.changes[resourceKey{apiVersion, resource}]++
}

// FailReads makes every get, list and watermark fail with message ("" restores them).
func FailReads(message string) {
	state.readError = message
}

// Logs are the lines the plugin logged since Reset.
func Logs() []LogLine {
	return append([]LogLine(nil), state.logs...)
}

// Request builds an AdmissionRequest for obj at apiVersion ("v1",
// "apps/v1") / resource, with kind and namespace; the name comes from the
// object's metadata. DELETE requests carry obj as OldObject.
func Request(op capstan.Operation, apiVersion, resource, kind, namespace string, obj capstan.Object) *capstan.AdmissionRequest {
	group, version, found := strings.Cut(apiVersion, "/")
	if !found {
		group, version = "", apiVersion
	}
	r := &capstan.AdmissionRequest{
		UID:       "test-uid",
		Kind:      capstan.GroupVersionKind{Group: group, Version: version, Kind: kind},
		Resource:  capstan.GroupVersionResource{Group: group, Version: version, Resource: resource},
		Name:      capstan.Name(obj),
		Namespace: namespace,
		Operation: op,
		UserInfo:  capstan.UserInfo{Username: "test"},
	}
	if op == capstan.Delete {
		r.OldObject = obj
	} else {
		r.Object = obj
	}
	return r
}

// ReviewText is the AdmissionReview the host would send for r (JSON text, for capstan.RunAdmission).
func ReviewText(r *capstan.AdmissionRequest) string {
	return mustJSON(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": r})
}

func mustJSON(v any) string {
	bytes, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("capstantest: cannot encode %T: %v", v, err))
	}
	return string(bytes)
}

func (f *fake) Log(level capstan.Level, message string) {
	f.logs = append(f.logs, LogLine{level, message})
}

func (f *fake) Config() string {
	return f.config
}

func (f *fake) checkReads() error {
	if f.readError != "" {
		return errors.New(f.readError)
	}
	return nil
}

func (f *fake) GetObject(apiVersion, resource string, namespace *string, name string) (*string, error) {
	if err := f.checkReads(); err != nil {
		return nil, err
	}
	text, ok := f.objects[key{apiVersion, resource, deref(namespace), name}]
	if !ok {
		return nil, nil
	}
	return &text, nil
}

func (f *fake) ListObjects(apiVersion, resource string, namespace, labelSelector, fieldSelector *string) (string, error) {
	if err := f.checkReads(); err != nil {
		return "", err
	}
	keys := make([]key, 0, len(f.objects))
	for k := range f.objects {
		if k.apiVersion == apiVersion && k.resource == resource && (namespace == nil || *namespace == k.namespace) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].namespace+"/"+keys[i].name < keys[j].namespace+"/"+keys[j].name
	})
	items := []any{}
	for _, k := range keys {
		var obj capstan.Object
		_ = json.Unmarshal([]byte(f.objects[k]), &obj)
		if labelsMatch(obj, deref(labelSelector)) && fieldsMatch(obj, deref(fieldSelector)) {
			items = append(items, obj)
		}
	}
	return mustJSON(map[string]any{"apiVersion": apiVersion, "kind": "List", "items": items}), nil
}

func (f *fake) Watermark(apiVersion, resource string) (string, error) {
	if err := f.checkReads(); err != nil {
		return "", err
	}
	return strconv.Itoa(f.changes[resourceKey{apiVersion, resource}]), nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
