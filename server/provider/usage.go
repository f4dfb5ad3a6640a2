package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

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
// allocates only for the details it returns. ok is false, and the slow
// path (json.Unmarshal and flatten) decides, for anything the scan does
// not handle exactly as they do: input that is not valid JSON (the scan
// checks the grammar of all it reads, as json.Valid does), a top level
// that is not an object, keys with escapes or bytes outside printable
// ASCII, a key twice in one object, two kept values on one path, a kept
// string with escapes or bytes outside printable ASCII, a non-empty array,
// an object kept whole (too deep), a number out of float64's range.
func readUsageFast(raw []byte, mapped []string) (d UsageDetails, ok bool) {
	u := usageScan{raw: raw, mapped: mapped}
	u.ws()
	if !u.at('{') {
		return nil, false
	}
	var buf [128]byte
	if !u.object(buf[:0], 0) {
		return nil, false
	}
	u.ws()
	if u.i != len(raw) {
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

// maxSkipDepth bounds the nesting of skipped values (deeper: the slow
// path, whose decoder has its own bound).
const maxSkipDepth = 64

func (u *usageScan) at(c byte) bool { return u.i < len(u.raw) && u.raw[u.i] == c }

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

// plainString reads the string at u.i (its opening quote) and returns its
// bytes, ok only for printable ASCII without escapes (its bytes are then
// the decoded string).
func (u *usageScan) plainString() ([]byte, bool) {
	start := u.i + 1
	for j := start; j < len(u.raw); j++ {
		switch c := u.raw[j]; {
		case c == '"':
			u.i = j + 1
			return u.raw[start:j], true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return nil, false
		}
	}
	return nil, false
}

// object reads the object at u.i ('{'), whose fields' paths start with
// prefix.
func (u *usageScan) object(prefix []byte, depth int) bool {
	u.i++ // '{'
	u.ws()
	if u.at('}') {
		u.i++
		return true
	}
	var seen [32][2]int
	n := 0
	for {
		if !u.at('"') || n == len(seen) {
			return false
		}
		ks := u.i + 1
		key, ok := u.plainString()
		if !ok {
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
		if !u.at(':') {
			return false
		}
		u.i++
		u.ws()
		if !u.value(append(prefix, key...), depth) {
			return false
		}
		u.ws()
		switch {
		case u.at(','):
			u.i++
			u.ws()
		case u.at('}'):
			u.i++
			return true
		default:
			return false
		}
	}
}

// value reads the value at u.i, the field at path.
func (u *usageScan) value(path []byte, depth int) bool {
	for _, m := range u.mapped {
		if m == string(path) {
			return u.skip(0)
		}
	}
	if u.i >= len(u.raw) {
		return false
	}
	switch u.raw[u.i] {
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
		return len(s) == 0 || u.keep(path, string(s))
	case 't':
		return u.literal("true") && u.keep(path, true)
	case 'f':
		return u.literal("false")
	case 'n':
		return u.literal("null")
	case '[':
		u.i++
		u.ws()
		if !u.at(']') {
			return false
		}
		u.i++
		return true
	default:
		num, ok := u.number()
		if !ok {
			return false
		}
		f, err := strconv.ParseFloat(string(num), 64)
		if err != nil {
			return false
		}
		return f == 0 || u.keep(path, f)
	}
}

func (u *usageScan) literal(lit string) bool {
	if len(u.raw)-u.i < len(lit) || string(u.raw[u.i:u.i+len(lit)]) != lit {
		return false
	}
	u.i += len(lit)
	return true
}

// number reads a number as JSON writes it: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (u *usageScan) number() ([]byte, bool) {
	start := u.i
	if u.at('-') {
		u.i++
	}
	switch {
	case u.at('0'):
		u.i++
	case u.i < len(u.raw) && '1' <= u.raw[u.i] && u.raw[u.i] <= '9':
		u.digits()
	default:
		return nil, false
	}
	if u.at('.') {
		u.i++
		if !u.digits() {
			return nil, false
		}
	}
	if u.at('e') || u.at('E') {
		u.i++
		if u.at('+') || u.at('-') {
			u.i++
		}
		if !u.digits() {
			return nil, false
		}
	}
	return u.raw[start:u.i], true
}

// digits reads [0-9]+.
func (u *usageScan) digits() bool {
	start := u.i
	for u.i < len(u.raw) && '0' <= u.raw[u.i] && u.raw[u.i] <= '9' {
		u.i++
	}
	return u.i > start
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

// skip reads past any JSON value at u.i, checking its grammar.
func (u *usageScan) skip(depth int) bool {
	if u.i >= len(u.raw) || depth > maxSkipDepth {
		return false
	}
	switch u.raw[u.i] {
	case '{', '[':
		end := byte('}')
		if u.raw[u.i] == '[' {
			end = ']'
		}
		u.i++
		u.ws()
		if u.at(end) {
			u.i++
			return true
		}
		for {
			if end == '}' {
				if !u.at('"') || !u.anyString() {
					return false
				}
				u.ws()
				if !u.at(':') {
					return false
				}
				u.i++
				u.ws()
			}
			if !u.skip(depth + 1) {
				return false
			}
			u.ws()
			switch {
			case u.at(','):
				u.i++
				u.ws()
			case u.at(end):
				u.i++
				return true
			default:
				return false
			}
		}
	case '"':
		return u.anyString()
	case 't':
		return u.literal("true")
	case 'f':
		return u.literal("false")
	case 'n':
		return u.literal("null")
	default:
		_, ok := u.number()
		return ok
	}
}

// anyString reads past the string at u.i, checking its escapes (any other
// byte from 0x20 up is accepted, as by json.Valid).
func (u *usageScan) anyString() bool {
	for j := u.i + 1; j < len(u.raw); j++ {
		switch c := u.raw[j]; {
		case c == '"':
			u.i = j + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			j++
			if j >= len(u.raw) {
				return false
			}
			switch u.raw[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(u.raw) {
					return false
				}
				for _, h := range u.raw[j+1 : j+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				j += 4
			default:
				return false
			}
		}
	}
	return false
}

// ReadCount reads a token count as a provider, or a proxy re-encoding its
// answer, may write it: a JSON integer, an integral number written with a
// fraction or an exponent (7.0, 1e3), or either in a string ("7"). ok is
// false for null and for anything else (a fraction, a negative or
// out-of-range number, another kind of value); see OddUsageWarning.
func ReadCount(raw json.RawMessage) (n int64, ok bool) {
	t := bytes.TrimSpace(raw)
	if len(t) > 0 && t[0] == '"' {
		var s string
		if json.Unmarshal(t, &s) != nil {
			return 0, false
		}
		t = []byte(strings.TrimSpace(s))
	}
	if n, err := strconv.ParseInt(string(t), 10, 64); err == nil {
		return n, n >= 0
	}
	f, err := strconv.ParseFloat(string(t), 64)
	if err != nil || f != math.Trunc(f) || f < 0 || f > math.MaxInt64/2 {
		return 0, false
	}
	return int64(f), true
}

// OddUsageWarning is the warning for a usage field an adapter reads (a
// count, a service tier) which held no value of its kind (a count
// ReadCount cannot read, a tier that is no string): the adapter leaves it
// out and keeps it, as sent, in meta.extended.usage_details under its
// path.
func OddUsageWarning(path string) string {
	return fmt.Sprintf("usage field %q holds a value of an unexpected type; kept as sent in extended.%s", path, ExtUsageDetails)
}

// MappedExcept is mapped without the paths in odd: the paths an adapter read,
// less those whose values it could not read (ReadUsageDetails keeps
// those).
func MappedExcept(mapped, odd []string) []string {
	if len(odd) == 0 {
		return mapped
	}
	out := make([]string, 0, len(mapped))
	for _, m := range mapped {
		if !slices.Contains(odd, m) {
			out = append(out, m)
		}
	}
	return out
}
