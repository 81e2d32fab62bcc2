package capstantest

import (
	"strings"

	"capstan.dev/capstan"
)

// requirement is one term of a selector: key=value, key!=value, key, !key.
type requirement struct{ op, key, value string }

func requirements(selector string) []requirement {
	var out []requirement
	for _, term := range strings.Split(selector, ",") {
		term = strings.TrimSpace(term)
		switch {
		case term == "":
		case strings.Contains(term, "!="):
			k, v, _ := strings.Cut(term, "!=")
			out = append(out, requirement{"ne", strings.TrimSpace(k), strings.TrimSpace(v)})
		case strings.Contains(term, "=="):
			k, v, _ := strings.Cut(term, "==")
			out = append(out, requirement{"eq", strings.TrimSpace(k), strings.TrimSpace(v)})
		case strings.Contains(term, "="):
			k, v, _ := strings.Cut(term, "=")
			out = append(out, requirement{"eq", strings.TrimSpace(k), strings.TrimSpace(v)})
		case strings.HasPrefix(term, "!"):
			out = append(out, requirement{"absent", strings.TrimSpace(term[1:]), ""})
		default:
			out = append(out, requirement{"exists", term, ""})
		}
	}
	return out
}

// labelsMatch: the simple label selectors (a=b, a!=b, a, !a).
func labelsMatch(obj capstan.Object, selector string) bool {
	labels := capstan.Labels(obj)
	for _, r := range requirements(selector) {
		value, present := labels[r.key]
		ok := map[string]bool{
			"eq":     present && value == r.value,
			"ne":     value != r.value || !present,
			"exists": present,
			"absent": !present,
		}[r.op]
		if !ok {
			return false
		}
	}
	return true
}

// fieldsMatch: field selectors on string fields (x.y=z, x.y!=z).
func fieldsMatch(obj capstan.Object, selector string) bool {
	for _, r := range requirements(selector) {
		value, _ := capstan.Str(obj, strings.Split(r.key, ".")...)
		if (r.op == "eq" && value != r.value) || (r.op == "ne" && value == r.value) {
			return false
		}
	}
	return true
}
