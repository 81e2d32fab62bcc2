package capstantest

import (
	"fmt"
	"strconv"
	"strings"

	"capstan.dev/capstan"
)

// ApplyPatch applies a response's JSON Patch to a copy of obj, as the
// server will (add, replace, remove; "-" appends to a list).
func ApplyPatch(obj capstan.Object, r *capstan.AdmissionResponse) (capstan.Object, error) {
	var doc any = capstan.DeepCopy(obj)
	for _, op := range r.Patch {
		var err error
		if doc, err = applyOp(doc, op); err != nil {
			return nil, err
		}
	}
	out, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the patch replaced the object with a %T", doc)
	}
	return out, nil
}

func tokens(path string) []string {
	if path == "" {
		return nil
	}
	parts := strings.Split(path, "/")[1:]
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
	}
	return parts
}

func applyOp(doc any, op capstan.PatchOp) (any, error) {
	parts := tokens(op.Path)
	if len(parts) == 0 {
		if op.Op == "remove" {
			return nil, fmt.Errorf("%s: cannot remove the root", op.Path)
		}
		return capstan.DeepCopy(op.Value), nil
	}
	parent, last := doc, parts[len(parts)-1]
	for _, p := range parts[:len(parts)-1] {
		switch node := parent.(type) {
		case map[string]any:
			parent = node[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(node) {
				return nil, fmt.Errorf("%s: index out of range", op.Path)
			}
			parent = node[i]
		default:
			return nil, fmt.Errorf("%s: parent does not exist", op.Path)
		}
	}
	switch node := parent.(type) {
	case map[string]any:
		return doc, applyToMap(node, last, op)
	case []any:
		list, err := applyToList(node, last, op)
		if err != nil {
			return nil, err
		}
		return replaceList(doc, parts[:len(parts)-1], list), nil
	default:
		return nil, fmt.Errorf("%s: parent does not exist", op.Path)
	}
}

func applyToMap(node map[string]any, key string, op capstan.PatchOp) error {
	if _, ok := node[key]; !ok && op.Op != "add" {
		return fmt.Errorf("%s: cannot apply %s", op.Path, op.Op)
	}
	if op.Op == "remove" {
		delete(node, key)
	} else {
		node[key] = capstan.DeepCopy(op.Value)
	}
	return nil
}

func applyToList(node []any, token string, op capstan.PatchOp) ([]any, error) {
	i, err := strconv.Atoi(token)
	if token == "-" {
		i, err = len(node), nil
	}
	bound := len(node) - 1
	if op.Op == "add" {
		bound = len(node)
	}
	if err != nil || i < 0 || i > bound {
		return nil, fmt.Errorf("%s: index out of range", op.Path)
	}
	switch op.Op {
	case "add":
		return append(node[:i], append([]any{capstan.DeepCopy(op.Value)}, node[i:]...)...), nil
	case "replace":
		node[i] = capstan.DeepCopy(op.Value)
		return node, nil
	default:
		return append(node[:i], node[i+1:]...), nil
	}
}

// replaceList stores list at path in doc (a list's length changed).
func replaceList(doc any, path []string, list []any) any {
	if len(path) == 0 {
		return list
	}
	parent := doc
	for _, p := range path[:len(path)-1] {
		switch node := parent.(type) {
		case map[string]any:
			parent = node[p]
		case []any:
			i, _ := strconv.Atoi(p)
			parent = node[i]
		}
	}
	last := path[len(path)-1]
	switch node := parent.(type) {
	case map[string]any:
		node[last] = list
	case []any:
		i, _ := strconv.Atoi(last)
		node[i] = list
	}
	return doc
}
