package capstan

import (
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// PatchOp is one JSON Patch (RFC 6902) operation.
type PatchOp struct {
	Op    string
	Path  string
	Value any
}

// MarshalJSON writes `value` for every operation but `remove` (null included).
func (o PatchOp) MarshalJSON() ([]byte, error) {
	if o.Op == "remove" {
		return json.Marshal(struct {
			Op   string `json:"op"`
			Path string `json:"path"`
		}{o.Op, o.Path})
	}
	return json.Marshal(struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}{o.Op, o.Path, o.Value})
}

// Escape escapes one JSON pointer token: `~` → `~0`, `/` → `~1` (RFC 6901).
func Escape(token string) string {
	return strings.ReplaceAll(strings.ReplaceAll(token, "~", "~0"), "/", "~1")
}

// Pointer builds a JSON pointer from unescaped segments:
// ["metadata", "labels", "a/b"] → "/metadata/labels/a~1b".
func Pointer(segments ...string) string {
	var b strings.Builder
	for _, s := range segments {
		b.WriteString("/")
		b.WriteString(Escape(s))
	}
	return b.String()
}

// JSONPatch collects operations with segment paths.
type JSONPatch struct {
	Ops []PatchOp
}

// Add appends an `add` operation.
func (p *JSONPatch) Add(path []string, value any) *JSONPatch {
	p.Ops = append(p.Ops, PatchOp{Op: "add", Path: Pointer(path...), Value: value})
	return p
}

// Replace appends a `replace` operation.
func (p *JSONPatch) Replace(path []string, value any) *JSONPatch {
	p.Ops = append(p.Ops, PatchOp{Op: "replace", Path: Pointer(path...), Value: value})
	return p
}

// Remove appends a `remove` operation.
func (p *JSONPatch) Remove(path ...string) *JSONPatch {
	p.Ops = append(p.Ops, PatchOp{Op: "remove", Path: Pointer(path...)})
	return p
}

// Diff is the JSON Patch that turns before into after (decoded JSON values):
// objects are compared key by key (remove, add, replace), lists of equal
// length element by element, anything else that differs is replaced whole.
// Mutate a copy of the request's object (DeepCopy) and diff it against the
// original. Keys are visited in sorted order, so the patch is deterministic.
func Diff(before, after any) []PatchOp {
	return diff(before, after, nil)
}

func diff(before, after any, path []string) []PatchOp {
	if reflect.DeepEqual(before, after) {
		return nil
	}
	b, bIsMap := before.(map[string]any)
	a, aIsMap := after.(map[string]any)
	if bIsMap && aIsMap {
		var ops []PatchOp
		for _, key := range sortedKeys(b) {
			if _, ok := a[key]; !ok {
				ops = append(ops, PatchOp{Op: "remove", Path: Pointer(extend(path, key)...)})
			}
		}
		for _, key := range sortedKeys(a) {
			old, ok := b[key]
			if !ok {
				ops = append(ops, PatchOp{Op: "add", Path: Pointer(extend(path, key)...), Value: a[key]})
				continue
			}
			ops = append(ops, diff(old, a[key], extend(path, key))...)
		}
		return ops
	}
	bl, bIsList := before.([]any)
	al, aIsList := after.([]any)
	if bIsList && aIsList && len(bl) == len(al) {
		var ops []PatchOp
		for i := range bl {
			ops = append(ops, diff(bl[i], al[i], extend(path, strconv.Itoa(i)))...)
		}
		return ops
	}
	return []PatchOp{{Op: "replace", Path: Pointer(path...), Value: after}}
}

// extend is path + segment, never sharing path's backing array.
func extend(path []string, segment string) []string {
	return append(append(make([]string, 0, len(path)+1), path...), segment)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// DeepCopy copies a decoded JSON value (maps, lists and scalars).
func DeepCopy[T any](v T) T {
	copied, _ := deepCopy(v).(T)
	return copied
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = deepCopy(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = deepCopy(x)
		}
		return out
	default:
		return v
	}
}
