package main

// world is what the export of one world of capstan.wit looks like in Go:
// the generated function's name and parameter, and the SDK call behind it.
type world struct {
	export, param string
	// call is the SDK call on the policy's function and the input `<param>`.
	call string
}

var worlds = map[string]world{
	"admission":     {"Review", "admissionReview", "capstan.RunAdmission(policy.Review, admissionReview)"},
	"authenticator": {"Authenticate", "tokenReview", `capstan.RunJSON(policy.Authenticate, "TokenReview", tokenReview)`},
	"authorizer":    {"Authorize", "subjectAccessReview", `capstan.RunJSON(policy.Authorize, "SubjectAccessReview", subjectAccessReview)`},
	"strategy":      {"Call", "strategyCall", `capstan.RunJSON(policy.Call, "strategy call", strategyCall)`},
	"converter":     {"Convert", "conversionReview", `capstan.RunJSON(policy.Convert, "ConversionReview", conversionReview)`},
}

// exportTemplate is the one hand-written file of the build module: it
// connects the generated bindings (export_wit_world's function, the
// capstan_plugin_host imports) to the SDK. Every canonical-ABI detail is
// in the generated code.
const exportTemplate = `// Written by capstan-plugin-build: the world's export and the host, over
// the bindings wit-bindgen generated from capstan.wit.
package export_wit_world

import (
	"runtime/debug"

	"capstan.dev/capstan"
	witTypes "go.bytecodealliance.org/pkg/wit/types"
	host "wit_component/capstan_plugin_host"

	policy "{{.Policy}}"
)

// The garbage collector runs only inside the policy's own code. Go's
// collector reads clocks and polls timers, and the component model forbids
// imports while the host allocates in the guest (cabi_realloc: the call's
// input, an import's result), so a collection starting there would trap
// ("cannot leave component instance"; the WASI adapter pauses only the
// monotonic clock, wasmtime#14318). So collection is off between calls and
// around each import, and on while the policy runs.
const gcPercent = 100

func gcOff() { debug.SetGCPercent(-1) } // returns once no collection is running
func gcOn()  { debug.SetGCPercent(gcPercent) }

func init() {
	gcOff()
	capstan.SetHost(witHost{})
}

// {{.Export}} is the world's export: JSON text in, result<string, string> out.
func {{.Export}}({{.Param}} string) witTypes.Result[string, string] {
	gcOn()
	out, err := {{.Call}}
	gcOff()
	if err != nil {
		return witTypes.Err[string, string](err.Error())
	}
	return witTypes.Ok[string, string](out)
}

// witHost is capstan.Host over the generated imports of capstan:plugin/host.
type witHost struct{}

// Each import runs with the collector off (its result is allocated by cabi_realloc).

func (witHost) Log(level capstan.Level, message string) {
	gcOff()
	defer gcOn()
	host.Log(host.Level(level), message)
}

func (witHost) Config() string {
	gcOff()
	defer gcOn()
	return host.Config()
}

func (witHost) GetObject(apiVersion, resource string, namespace *string, name string) (*string, error) {
	gcOff()
	r := host.GetObject(apiVersion, resource, option(namespace), name)
	gcOn()
	if r.IsErr() {
		return nil, hostError(r.Err())
	}
	if found := r.Ok(); found.IsSome() {
		text := found.Some()
		return &text, nil
	}
	return nil, nil
}

func (witHost) ListObjects(apiVersion, resource string, namespace, labelSelector, fieldSelector *string) (string, error) {
	gcOff()
	defer gcOn()
	return text(host.ListObjects(apiVersion, resource, option(namespace), option(labelSelector), option(fieldSelector)))
}

func (witHost) Watermark(apiVersion, resource string) (string, error) {
	gcOff()
	defer gcOn()
	return text(host.Watermark(apiVersion, resource))
}

func option(s *string) witTypes.Option[string] {
	if s == nil {
		return witTypes.None[string]()
	}
	return witTypes.Some[string](*s)
}

func text(r witTypes.Result[string, string]) (string, error) {
	if r.IsErr() {
		return "", hostError(r.Err())
	}
	return r.Ok(), nil
}

type hostError string

func (e hostError) Error() string { return string(e) }
`
