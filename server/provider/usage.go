package provider

import (
	"encoding/json"
	"reflect"
	"strconv"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// ExtUsageDetails is the meta.extended key of UsageDetails.
const ExtUsageDetails = "usage_details"

// UsageDetails are the fields of a provider's usage object that no
// normalized counter holds (OpenAI's audio and prediction tokens,
// Anthropic's cache_creation split and server_tool_use, Gemini's
// per-modality details, and whatever a provider adds later), keyed by
// their path in the object ("completion_tokens_details.audio_tokens").
// A field is never silently dropped: it is either mapped into Usage by
// the adapter or kept here.
type UsageDetails map[string]any

// maxUsageDepth bounds how deep nested usage objects are flattened;
// deeper objects are kept whole.
const maxUsageDepth = 4

// ReadUsageDetails returns the fields of raw (a usage JSON object) whose
// paths are not in mapped, the paths the adapter read into Usage. Objects
// are flattened into dotted paths; other values are kept as JSON values
// (numbers as float64). Values that say nothing (null, 0, false, "", empty
// arrays and objects) are left out. nil when nothing is left or raw is not
// an object.
func ReadUsageDetails(raw []byte, mapped ...string) UsageDetails {
	if !json.Valid(raw) {
		return nil // what json.Unmarshal would refuse
	}
	if d, ok := readUsageFast(raw, mapped); ok {
		return d
	}
	return readUsageSlow(raw, mapped)
}

// readUsageSlow is ReadUsageDetails by decoding the whole object.
func readUsageSlow(raw []byte, mapped []string) UsageDetails {
	var obj map[string]any
	if json.Unmarshal(raw, &obj) != nil {
		return nil
	}
	skip := make(map[string]bool, len(mapped))
	for _, m := range mapped {
		skip[m] = true
	}
	out := UsageDetails{}
	out.flatten("", obj, skip, 0)
	if len(out) == 0 {
		return nil
	}
	return out
}

func (d UsageDetails) flatten(prefix string, obj map[string]any, skip map[string]bool, depth int) {
	for k, v := range obj {
		path := prefix + k
		if skip[path] {
			continue
		}
		if m, ok := v.(map[string]any); ok && depth < maxUsageDepth {
			d.flatten(path+".", m, skip, depth+1)
			continue
		}
		if !emptyValue(v) {
			d[path] = v
		}
	}
}

func emptyValue(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case float64:
		return x == 0
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// Merge adds other's fields to d (a later report of a field replaces the
// earlier one, as stream usage counts are cumulative) and reports whether
// d changed.
func (d *UsageDetails) Merge(other UsageDetails) bool {
	changed := false
	for k, v := range other {
		if old, ok := (*d)[k]; ok && reflect.DeepEqual(old, v) {
			continue
		}
		if *d == nil {
			*d = UsageDetails{}
		}
		(*d)[k] = v
		changed = true
	}
	return changed
}

// Set stores the details in meta.extended (nothing when empty).
func (d UsageDetails) Set(meta *llmrelayv1.ResponseMeta) {
	if len(d) == 0 {
		return
	}
	SetExtended(meta, ExtUsageDetails, map[string]any(d))
}

// readUsageFast is ReadUsageDetails without decoding what is mapped or
// empty (a usage object is mostly counters the adapter read and zeros): it
// allocates only for the details it returns. raw must be valid JSON. ok is
// false, and the slow path decides, for anything it does not handle the
// way json.Unmarshal and flatten do: a top level that is not an object,
// keys with escapes or non-ASCII bytes, a key twice in one object, two
// kept values on one path, a string with escapes or non-ASCII bytes, a
// non-empty array, an object kept whole (too deep), a number out of
// float64's range.
func readUsageFast(raw []byte, mapped []string) (d UsageDetails, ok bool) {
	u := usageScan{raw: raw, mapped: mapped}
	u.ws()
	if u.i >= len(raw) || raw[u.i] != '{' {
		return nil, false
	}
	var buf [128]byte
	if !u.object(buf[:0], 0) {
		return nil, false
	}
	return u.out, true
}

type usageScan struct {
	raw    []byte
	i      int
	mapped []string
	out    UsageDetails
}

func (u *usageScan) ws() {
	for u.i < len(u.raw) {
		switch u.raw[u.i] {
		case ' ', '\t', '\n', '\r':
			u.i++
		default:
			return
		}
	}
}

// plainString reads the string at u.i (its opening quote) and returns
// its bytes, ok only for printable ASCII without escapes (the raw bytes
// are then the decoded string).
func (u *usageScan) plainString() ([]byte, bool) {
	start := u.i + 1
	for j := start; j < len(u.raw); j++ {
		switch c := u.raw[j]; {
		case c == '"':
			u.i = j + 1
			return u.raw[start:j], true
		case c == '\\' || c >= 0x80:
			return nil, false
		}
	}
	return nil, false
}

// object reads the object at u.i ('{'), whose fields' paths start with
// prefix, and its value's end.
func (u *usageScan) object(prefix []byte, depth int) bool {
	u.i++ // '{'
	var seen [32][2]int
	n := 0
	for {
		u.ws()
		if u.raw[u.i] == '}' {
			u.i++
			return true
		}
		if u.raw[u.i] == ',' {
			u.i++
			u.ws()
		}
		ks := u.i + 1
		key, ok := u.plainString()
		if !ok || n == len(seen) {
			return false
		}
		for _, s := range seen[:n] {
			if string(u.raw[s[0]:s[1]]) == string(key) {
				return false // json.Unmarshal keeps the last one
			}
		}
		seen[n] = [2]int{ks, ks + len(key)}
		n++
		u.ws()
		u.i++ // ':'
		u.ws()
		path := append(prefix, key...)
		if !u.value(path, depth) {
			return false
		}
	}
}

// value reads the value at u.i, the field at path.
func (u *usageScan) value(path []byte, depth int) bool {
	for _, m := range u.mapped {
		if m == string(path) {
			return u.skip()
		}
	}
	switch c := u.raw[u.i]; c {
	case '{':
		if depth >= maxUsageDepth {
			return false // kept whole
		}
		return u.object(append(path, '.'), depth+1)
	case '"':
		s, ok := u.plainString()
		if !ok {
			return false
		}
		if len(s) == 0 {
			return true
		}
		return u.keep(path, string(s))
	case 't':
		u.i += len("true")
		return u.keep(path, true)
	case 'f':
		u.i += len("false")
		return true
	case 'n':
		u.i += len("null")
		return true
	case '[':
		u.i++
		u.ws()
		if u.raw[u.i] != ']' {
			return false
		}
		u.i++
		return true
	default:
		start := u.i
		for u.i < len(u.raw) && isNumberByte(u.raw[u.i]) {
			u.i++
		}
		f, err := strconv.ParseFloat(string(u.raw[start:u.i]), 64)
		if err != nil {
			return false
		}
		if f == 0 {
			return true
		}
		return u.keep(path, f)
	}
}

func isNumberByte(c byte) bool {
	return '0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// keep stores a non-empty value; false when another value has the path
// (flatten's result would depend on the map's order).
func (u *usageScan) keep(path []byte, v any) bool {
	if _, dup := u.out[string(path)]; dup {
		return false
	}
	if u.out == nil {
		u.out = UsageDetails{}
	}
	u.out[string(path)] = v
	return true
}

// skip reads past the value at u.i (valid JSON).
func (u *usageScan) skip() bool {
	nest := 0
	for u.i < len(u.raw) {
		c := u.raw[u.i]
		switch c {
		case '"':
			u.i++
			for u.i < len(u.raw) && u.raw[u.i] != '"' {
				if u.raw[u.i] == '\\' {
					u.i++
				}
				u.i++
			}
		case '{', '[':
			nest++
		case '}', ']':
			if nest == 0 {
				return true // the end of the enclosing object
			}
			nest--
		case ',':
			if nest == 0 {
				return true
			}
		}
		u.i++
		if nest == 0 && (c == '"' || c == '}' || c == ']') {
			return true
		}
	}
	return true
}
