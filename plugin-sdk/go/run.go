package capstan

import (
	"encoding/json"
	"fmt"
)

// AdmissionFunc is an admission policy: it decides on one request. An
// error means "could not decide": the server applies the plugin's
// failurePolicy, as it does for a trap or a timeout.
type AdmissionFunc func(*AdmissionRequest) (*AdmissionResponse, error)

// RunAdmission is the admission world's export: AdmissionReview JSON in,
// AdmissionReview JSON out. It calls review on the request, sets the
// response's uid to the request's and echoes apiVersion
// ("admission.k8s.io/v1" when absent). A panic in review is returned as an
// error (the instance survives it). Tests can call it with the JSON the
// host would send.
func RunAdmission(review AdmissionFunc, text string) (out string, err error) {
	defer recoverInto(&err)
	var envelope struct {
		APIVersion string            `json:"apiVersion"`
		Request    *AdmissionRequest `json:"request"`
	}
	if err := json.Unmarshal([]byte(text), &envelope); err != nil {
		return "", fmt.Errorf("invalid AdmissionReview: %w", err)
	}
	if envelope.Request == nil {
		return "", fmt.Errorf("AdmissionReview has no request")
	}
	response, err := review(envelope.Request)
	if err != nil {
		return "", err
	}
	if response == nil {
		return "", fmt.Errorf("review returned no AdmissionResponse (use capstan.Allow())")
	}
	wire, err := response.wire(envelope.Request.UID)
	if err != nil {
		return "", err
	}
	if envelope.APIVersion == "" {
		envelope.APIVersion = "admission.k8s.io/v1"
	}
	return marshal(struct {
		APIVersion string       `json:"apiVersion"`
		Kind       string       `json:"kind"`
		Response   wireResponse `json:"response"`
	}{envelope.APIVersion, "AdmissionReview", wire})
}

// RunJSON is the export of the other worlds (authenticator: TokenReview,
// authorizer: SubjectAccessReview, strategy: the strategy call, converter:
// ConversionReview): the input decoded into In, fn called, its answer (the
// whole review with status or response set, as plugin-sdk/wit/capstan.wit
// describes) encoded. In and Out may be your own structs or Object.
func RunJSON[In, Out any](fn func(In) (Out, error), what, text string) (out string, err error) {
	defer recoverInto(&err)
	var input In
	if err := json.Unmarshal([]byte(text), &input); err != nil {
		return "", fmt.Errorf("invalid %s: %w", what, err)
	}
	answer, err := fn(input)
	if err != nil {
		return "", err
	}
	return marshal(answer)
}

func marshal(v any) (string, error) {
	bytes, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("cannot encode the answer: %w", err)
	}
	return string(bytes), nil
}

// recoverInto turns a panic of the policy into the call's error.
func recoverInto(err *error) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("plugin panicked: %v", p)
	}
}
