package capstan

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// Status is the metav1.Status of a denied request.
type Status struct {
	Status  string         `json:"status"`
	Message string         `json:"message,omitempty"`
	Reason  string         `json:"reason,omitempty"`
	Details *StatusDetails `json:"details,omitempty"`
	Code    int            `json:"code"`
}

// StatusDetails names the object a Status is about, and its causes.
type StatusDetails struct {
	Name   string        `json:"name,omitempty"`
	Group  string        `json:"group,omitempty"`
	Kind   string        `json:"kind,omitempty"`
	Causes []StatusCause `json:"causes,omitempty"`
}

// MarshalJSON writes `group` whenever the details name an object (name or
// kind set), the core group's "" included, as the JS, Python and C SDKs do:
// Forbidden and NotFound give {name, group, kind}; details holding only
// causes (WithCause on a Deny) have no group.
func (d StatusDetails) MarshalJSON() ([]byte, error) {
	var group *string
	if d.Group != "" || d.Name != "" || d.Kind != "" {
		group = &d.Group
	}
	return json.Marshal(struct {
		Name   string        `json:"name,omitempty"`
		Group  *string       `json:"group,omitempty"`
		Kind   string        `json:"kind,omitempty"`
		Causes []StatusCause `json:"causes,omitempty"`
	}{d.Name, group, d.Kind, d.Causes})
}

// StatusCause is one cause of a denial (e.g. one invalid field).
type StatusCause struct {
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Field   string `json:"field,omitempty"`
}

// AdmissionResponse is the `response` of an AdmissionReview. Build one with
// Allow, Deny, Forbidden or NotFound and chain the With... methods; the
// response's uid is filled in by RunAdmission.
type AdmissionResponse struct {
	Allowed          bool
	Status           *Status
	Patch            []PatchOp
	Warnings         []string
	AuditAnnotations map[string]string
}

// Allow admits the request unchanged.
func Allow() *AdmissionResponse {
	return &AdmissionResponse{Allowed: true}
}

// Deny rejects the request with a Failure status: code (e.g. 403), reason
// (e.g. "Forbidden") and the message kubectl prints after "Error from server".
func Deny(code int, reason, message string) *AdmissionResponse {
	return &AdmissionResponse{Status: &Status{Status: "Failure", Message: message, Reason: reason, Code: code}}
}

// Forbidden is kube's admission.NewForbidden: 403, reason Forbidden,
// `<resource>[.<group>] "<name>" is forbidden: <message>`.
func Forbidden(r *AdmissionRequest, message string) *AdmissionResponse {
	name := r.ObjectName()
	text := fmt.Sprintf("%s %q is forbidden: %s", GroupResource(r.Resource.Group, r.Resource.Resource), name, message)
	return Deny(403, "Forbidden", text).WithDetails(StatusDetails{Name: name, Group: r.Resource.Group, Kind: r.Resource.Resource})
}

// NotFound is kube's apierrors.NewNotFound: 404, `<resource>[.<group>] "<name>" not found`.
func NotFound(group, resource, name string) *AdmissionResponse {
	text := fmt.Sprintf("%s %q not found", GroupResource(group, resource), name)
	return Deny(404, "NotFound", text).WithDetails(StatusDetails{Name: name, Group: group, Kind: resource})
}

// WithDetails sets status.details (no effect on a response without status).
func (a *AdmissionResponse) WithDetails(d StatusDetails) *AdmissionResponse {
	if a.Status != nil {
		a.Status.Details = &d
	}
	return a
}

// WithCause adds a cause to status.details.causes.
func (a *AdmissionResponse) WithCause(causeType, field, message string) *AdmissionResponse {
	if a.Status != nil {
		if a.Status.Details == nil {
			a.Status.Details = &StatusDetails{}
		}
		a.Status.Details.Causes = append(a.Status.Details.Causes, StatusCause{Reason: causeType, Message: message, Field: field})
	}
	return a
}

// WithPatch attaches JSON Patch operations (none leaves no patch).
func (a *AdmissionResponse) WithPatch(ops ...PatchOp) *AdmissionResponse {
	a.Patch = append(a.Patch, ops...)
	return a
}

// WithChanges attaches the JSON Patch that turns before into after (see Diff).
func (a *AdmissionResponse) WithChanges(before, after any) *AdmissionResponse {
	return a.WithPatch(Diff(before, after)...)
}

// WithWarning adds a warning (kubectl prints "Warning: ...").
func (a *AdmissionResponse) WithWarning(warning string) *AdmissionResponse {
	a.Warnings = append(a.Warnings, warning)
	return a
}

// WithAuditAnnotation adds an audit annotation.
func (a *AdmissionResponse) WithAuditAnnotation(key, value string) *AdmissionResponse {
	if a.AuditAnnotations == nil {
		a.AuditAnnotations = map[string]string{}
	}
	a.AuditAnnotations[key] = value
	return a
}

// Message is the status message, "" when none.
func (a *AdmissionResponse) Message() string {
	if a.Status == nil {
		return ""
	}
	return a.Status.Message
}

// Code is the status code, 0 when none.
func (a *AdmissionResponse) Code() int {
	if a.Status == nil {
		return 0
	}
	return a.Status.Code
}

// wireResponse is the JSON form: base64 JSON Patch with patchType JSONPatch.
type wireResponse struct {
	UID              string            `json:"uid"`
	Allowed          bool              `json:"allowed"`
	Status           *Status           `json:"status,omitempty"`
	Patch            string            `json:"patch,omitempty"`
	PatchType        string            `json:"patchType,omitempty"`
	AuditAnnotations map[string]string `json:"auditAnnotations,omitempty"`
	Warnings         []string          `json:"warnings,omitempty"`
}

func (a *AdmissionResponse) wire(uid string) (wireResponse, error) {
	w := wireResponse{UID: uid, Allowed: a.Allowed, Status: a.Status, AuditAnnotations: a.AuditAnnotations, Warnings: a.Warnings}
	if len(a.Patch) > 0 {
		ops, err := json.Marshal(a.Patch)
		if err != nil {
			return w, fmt.Errorf("cannot encode the patch: %w", err)
		}
		w.Patch = base64.StdEncoding.EncodeToString(ops)
		w.PatchType = "JSONPatch"
	}
	return w, nil
}
