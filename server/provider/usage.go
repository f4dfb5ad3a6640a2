package provider

import (
	"encoding/json"
	"reflect"

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
