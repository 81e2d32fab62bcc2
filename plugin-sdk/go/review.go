package capstan

// Operation is an AdmissionRequest's operation.
type Operation string

// The operations of admission.k8s.io/v1.
const (
	Create  Operation = "CREATE"
	Update  Operation = "UPDATE"
	Delete  Operation = "DELETE"
	Connect Operation = "CONNECT"
)

// GroupVersionKind names a kind ("" group for the core API).
type GroupVersionKind struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// GroupVersionResource names a resource by its plural ("pods").
type GroupVersionResource struct {
	Group    string `json:"group"`
	Version  string `json:"version"`
	Resource string `json:"resource"`
}

// UserInfo is the user who made the request.
type UserInfo struct {
	Username string              `json:"username,omitempty"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

// AdmissionRequest is the `request` of an AdmissionReview (admission.k8s.io/v1).
// Object is nil on DELETE, OldObject nil on CREATE.
type AdmissionRequest struct {
	UID                string                `json:"uid"`
	Kind               GroupVersionKind      `json:"kind"`
	Resource           GroupVersionResource  `json:"resource"`
	SubResource        string                `json:"subResource,omitempty"`
	RequestKind        *GroupVersionKind     `json:"requestKind,omitempty"`
	RequestResource    *GroupVersionResource `json:"requestResource,omitempty"`
	RequestSubResource string                `json:"requestSubResource,omitempty"`
	Name               string                `json:"name,omitempty"`
	Namespace          string                `json:"namespace,omitempty"`
	Operation          Operation             `json:"operation"`
	UserInfo           UserInfo              `json:"userInfo"`
	Object             Object                `json:"object,omitempty"`
	OldObject          Object                `json:"oldObject,omitempty"`
	DryRun             *bool                 `json:"dryRun,omitempty"`
	Options            Object                `json:"options,omitempty"`
}

// GroupResource is `<resource>.<group>`, or `<resource>` for the core group
// (kube's GroupResource.String()).
func GroupResource(group, resource string) string {
	if group == "" {
		return resource
	}
	return resource + "." + group
}

// IsWrite is true for CREATE and UPDATE.
func (r *AdmissionRequest) IsWrite() bool {
	return r.Operation == Create || r.Operation == Update
}

// IsResource is true when the request is about group/resource itself (not a subresource).
func (r *AdmissionRequest) IsResource(group, resource string) bool {
	return r.Resource.Group == group && r.Resource.Resource == resource && r.SubResource == ""
}

// WrittenObject is the object being created or updated, when the request
// writes a resource itself (not a subresource); nil otherwise.
func (r *AdmissionRequest) WrittenObject() Object {
	if !r.IsWrite() || r.SubResource != "" {
		return nil
	}
	return r.Object
}

// WrittenObjectOf is WrittenObject for group/resource only (nil for any other resource).
func (r *AdmissionRequest) WrittenObjectOf(group, resource string) Object {
	if !r.IsResource(group, resource) {
		return nil
	}
	return r.WrittenObject()
}

// ObjectName is the name kube's admission errors use: the object's name,
// else its generateName, else the request's name, else "Unknown".
func (r *AdmissionRequest) ObjectName() string {
	if name := NameOrGenerateName(r.Object); name != "" {
		return name
	}
	if r.Name != "" {
		return r.Name
	}
	return "Unknown"
}
