package capstan

// Object is a Kubernetes object as decoded JSON (encoding/json's view:
// maps, slices, strings, float64, bool, nil).
type Object = map[string]any

// Str returns the string at path (a sequence of keys) in obj, and whether
// there is one.
func Str(obj Object, path ...string) (string, bool) {
	var v any = obj
	for _, key := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		v = m[key]
	}
	s, ok := v.(string)
	return s, ok
}

// Name is metadata.name, "" when none.
func Name(obj Object) string {
	s, _ := Str(obj, "metadata", "name")
	return s
}

// Namespace is metadata.namespace, "" when none (cluster-scoped).
func Namespace(obj Object) string {
	s, _ := Str(obj, "metadata", "namespace")
	return s
}

// NameOrGenerateName is metadata.name, else metadata.generateName, else "".
func NameOrGenerateName(obj Object) string {
	if name := Name(obj); name != "" {
		return name
	}
	s, _ := Str(obj, "metadata", "generateName")
	return s
}

// Labels is metadata.labels (string values only), empty when none.
func Labels(obj Object) map[string]string {
	return stringMap(obj, "metadata", "labels")
}

// Annotations is metadata.annotations (string values only), empty when none.
func Annotations(obj Object) map[string]string {
	return stringMap(obj, "metadata", "annotations")
}

// Slice returns the list at path in obj, nil when there is none.
func Slice(obj Object, path ...string) []any {
	var v any = obj
	for _, key := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[key]
	}
	s, _ := v.([]any)
	return s
}

func stringMap(obj Object, path ...string) map[string]string {
	out := map[string]string{}
	var v any = obj
	for _, key := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return out
		}
		v = m[key]
	}
	m, _ := v.(map[string]any)
	for k, value := range m {
		if s, ok := value.(string); ok {
			out[k] = s
		}
	}
	return out
}
