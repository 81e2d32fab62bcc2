package capstan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Level is a log level, in the order of the WIT enum `level`.
type Level uint8

// The log levels of the WIT enum `level`.
const (
	Trace Level = iota
	Debug
	Info
	Warn
	Error
)

// Host is what the server offers a plugin (the WIT interface
// `capstan:plugin/host`), in the WIT's own shapes: option<string> is a
// *string (nil = none), result<_, string> an error. Inside the component the
// build's generated bindings provide it; in tests, package capstantest's
// fake. Policies call the package functions (Log, Config, GetObject, ...)
// rather than a Host.
type Host interface {
	Log(level Level, message string)
	Config() string
	GetObject(apiVersion, resource string, namespace *string, name string) (*string, error)
	ListObjects(apiVersion, resource string, namespace, labelSelector, fieldSelector *string) (string, error)
	Watermark(apiVersion, resource string) (string, error)
}

var host Host

// SetHost installs the functions behind the host calls: the component's
// imports (the build does this) or a fake (capstantest.Reset does this).
func SetHost(h Host) {
	host = h
}

// ErrNoHost is the error of a host call made with no host installed.
var ErrNoHost = errors.New("no host: run inside Capstan, or call capstantest.Reset() in tests")

// Log writes a line into the server's log, tagged with the plugin's name.
// Without a host it does nothing.
func Log(level Level, message string) {
	if host != nil {
		host.Log(level, message)
	}
}

// Logf is Log with fmt.Sprintf.
func Logf(level Level, format string, args ...any) {
	Log(level, fmt.Sprintf(format, args...))
}

// ConfigText is the plugin's configuration as JSON text ("{}" when none).
func ConfigText() string {
	if host == nil {
		return "{}"
	}
	return host.Config()
}

// Config decodes the plugin's configuration into v (a pointer to a struct
// or map). Unknown fields are an error, so a misspelt key is reported
// rather than ignored: `invalid plugin configuration: json: unknown field "label"`.
func Config(v any) error {
	text := bytes.TrimSpace([]byte(ConfigText()))
	if len(text) == 0 {
		text = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid plugin configuration: %w", err)
	}
	return nil
}

// ListOptions narrows ListObjects; empty fields are not applied.
type ListOptions struct {
	// Namespace lists one namespace ("" = all namespaces).
	Namespace string
	// LabelSelector as with `kubectl get -l`.
	LabelSelector string
	// FieldSelector as with `kubectl get --field-selector`.
	FieldSelector string
}

// GetObject reads one object from the server's own store (apiVersion "v1"
// or "<group>/<version>", resource the plural, namespace "" for
// cluster-scoped objects). It returns nil and no error when the object does
// not exist, and an error when the store cannot answer.
func GetObject(apiVersion, resource, namespace, name string) (Object, error) {
	if host == nil {
		return nil, ErrNoHost
	}
	text, err := host.GetObject(apiVersion, resource, optional(namespace), name)
	if err != nil || text == nil {
		return nil, err
	}
	var obj Object
	if err := json.Unmarshal([]byte(*text), &obj); err != nil {
		return nil, fmt.Errorf("host returned invalid JSON: %w", err)
	}
	return obj, nil
}

// ListObjects lists objects (filtered as opts says) and returns the List's items.
func ListObjects(apiVersion, resource string, opts ListOptions) ([]Object, error) {
	if host == nil {
		return nil, ErrNoHost
	}
	text, err := host.ListObjects(apiVersion, resource, optional(opts.Namespace), optional(opts.LabelSelector), optional(opts.FieldSelector))
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []Object `json:"items"`
	}
	if err := json.Unmarshal([]byte(text), &list); err != nil {
		return nil, fmt.Errorf("host returned an invalid List: %w", err)
	}
	return list.Items, nil
}

// Watermark is a token that changes whenever an object of resource is
// created, updated or deleted: compare it to decide whether a list you
// cached (in a package variable) is still current.
func Watermark(apiVersion, resource string) (string, error) {
	if host == nil {
		return "", ErrNoHost
	}
	return host.Watermark(apiVersion, resource)
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
