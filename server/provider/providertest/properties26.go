package providertest

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/server/provider"
)

// PropKept is the property that nothing an answer's body says is dropped
// silently (checkKept).
const PropKept = "kept"

// keptScopes are, per format, the objects whose fields checkKept reads: a
// path of keys from a body object ("[]" a list's elements), "" the object
// itself.
var keptScopes = map[Wire][]string{
	WireChat:      {"", "usage", "choices[]", "choices[].message", "choices[].delta"},
	WireResponses: {"", "usage", "response", "response.usage", "output[]", "response.output[]"},
	WireAnthropic: {"", "usage", "message", "message.usage", "delta", "content[]", "content_block"},
	WireGemini:    {"", "usageMetadata", "candidates[]", "candidates[].content.parts[]"},
	WireOllama:    {"", "message"},
}

// IgnoredFields are, per format, the fields (scope path + "." + key, the
// key alone at the top) that checkKept does not ask to be kept, each with
// why: they carry nothing of the answer (an object kind, an index, a
// creation time), or another property reads them (text, calls, usage
// counts, finish reasons, ids).
var IgnoredFields = map[Wire]map[string]string{
	WireChat: {
		"object":                 "the object kind (chat.completion, chat.completion.chunk)",
		"created":                "the creation time in seconds: the answer's Date header says when",
		"choices":                "read per choice",
		"choices[].index":        "the choice's place; the first is the answer",
		"choices[].message":      "read per field",
		"choices[].delta":        "read per field",
		"choices[].logprobs":     "kept in meta.extended[\"logprobs\"] when requested (the properties' request does not ask for them)",
		"choices[].message.role": "always assistant",
		"choices[].delta.role":   "always assistant",
		"usage":                  "read per field",
		// token counts: the usage property compares them
		"usage.prompt_tokens":     "the usage property",
		"usage.completion_tokens": "the usage property",
		"usage.total_tokens":      "the usage property",
		// What the text, toolcalls and finish properties compare.
		"choices[].message.content":           "the text property",
		"choices[].delta.content":             "the text property",
		"choices[].text":                      "the text property (a completions-style choice)",
		"choices[].message.reasoning_content": "the text property (reasoning)",
		"choices[].delta.reasoning_content":   "the text property (reasoning)",
		"choices[].message.reasoning":         "the text property (reasoning)",
		"choices[].delta.reasoning":           "the text property (reasoning)",
		"choices[].message.tool_calls":        "the toolcalls property",
		"choices[].delta.tool_calls":          "the toolcalls property",
		"choices[].message.function_call":     "the toolcalls property",
		"choices[].delta.function_call":       "the toolcalls property",
		"choices[].finish_reason":             "the finish property",
		"choices[].role":                      "always assistant",
		// Padding.
		"obfuscation":                    "OpenAI's stream padding (stream_options.include_obfuscation): random characters that hide the chunks' sizes",
		"choices[].obfuscation":          "the same padding, inside the choice (Bedrock Mantle's gpt-oss)",
		"p":                              "Mistral's stream padding: a run of letters that hides the chunks' sizes",
		"data":                           "an embeddings list: the recordings of embeddings calls (object list), not chat answers",
		"usage.prompt_cache_miss_tokens": "DeepSeek's uncached prompt tokens: prompt_tokens − prompt_cache_hit_tokens (input − cached)",
		"usage.prompt_cache_hit_tokens":  "DeepSeek's cached prompt tokens: the usage property (cached)",
	},
	WireResponses: responsesIgnored(),
	WireAnthropic: anthropicIgnored(),
	WireGemini: {
		"candidates":                                "read per candidate",
		"usageMetadata":                             "read per field",
		"candidates[].index":                        "the candidate's place; the first is the answer",
		"candidates[].content.parts[].text":         "the text property",
		"candidates[].content.parts[].thought":      "the text property (reasoning: the part's text)",
		"candidates[].content.parts[].functionCall": "the toolcalls property",
		"candidates[].content":                      "the text, toolcalls and text (reasoning) properties read the parts",
		"candidates[].finishReason":                 "the finish property",
		"usageMetadata.promptTokenCount":            "the usage property",
		"usageMetadata.candidatesTokenCount":        "the usage property (output: candidates + thoughts)",
		"usageMetadata.thoughtsTokenCount":          "the usage property",
		"usageMetadata.totalTokenCount":             "the usage property",
		"usageMetadata.cachedContentTokenCount":     "the usage property",
		"usageMetadata.toolUsePromptTokenCount":     "the usage property (input: prompt + tool use prompt)",
	},
	WireOllama: {
		"message":            "read per field",
		"message.role":       "always assistant",
		"message.content":    "the text property",
		"message.thinking":   "the text property (reasoning)",
		"message.tool_calls": "the toolcalls property",
		"response":           "the text property (/api/generate)",
		"thinking":           "the text property (reasoning, /api/generate)",
		"done_reason":        "the finish property",
		"prompt_eval_count":  "the usage property",
		"eval_count":         "the usage property",
		"done":               "the finish property (done_reason, the terminal line)",
		"created_at":         "the creation time: the answer's Date header says when",
	},
}

// checkKept: every field of the scopes keptScopes names, in every body
// object, that says something (a string or a non-zero number among its
// values) is kept: one of its strings or numbers is in the answer (its
// message or meta, meta.extended included), a warning names its key, or
// the field is in ignored with a reason. A field none of whose values the answer holds
// was dropped silently.
func checkKept(w Wire, said *SaidAnswer, res *provider.Result, ignored map[string]string, report func(string, string, ...any)) int {
	strs, nums := answerValues(res)
	warned := ""
	if res != nil {
		warned = strings.Join(res.Meta.GetWarnings(), "\n")
	}
	lost := map[string]string{} // path → its first value, never kept
	keptAt := map[string]bool{}
	fields := 0
	for _, e := range said.events {
		for _, scope := range keptScopes[w] {
			if w == WireResponses && (scope == "" || scope == "usage") && strings.HasPrefix(str(e, "type"), "response.") {
				continue // a stream's event: its response is read
			}
			for _, obj := range objectsAt(e, scope) {
				for k, v := range obj {
					path := k
					if scope != "" {
						path = scope + "." + k
					}
					if _, ok := IgnoredFields[w][path]; ok {
						continue
					}
					if _, ok := ignored[path]; ok {
						continue
					}
					fields++
					switch {
					case keptAt[path]:
					case kept(v, strs, nums) || strings.Contains(warned, k):
						// Kept, or a warning names it (not supported, ignored).
						keptAt[path] = true
						delete(lost, path)
					case says(v):
						if _, seen := lost[path]; !seen {
							lost[path] = compact(v)
						}
					}
				}
			}
		}
	}
	// A field kept from one object is not lost in another (a stream's
	// chunks repeat their id and model, and its first event's may be
	// placeholders the last one's replace).
	var names []string
	for p := range lost {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		report(PropKept, "field %s dropped: %s", p, Shorten(lost[p]))
	}
	return fields
}

// objectsAt are the objects at path in v.
func objectsAt(v any, path string) []map[string]any {
	vs := []any{v}
	if path != "" {
		for _, k := range strings.Split(path, ".") {
			var next []any
			elems := strings.HasSuffix(k, "[]")
			k = strings.TrimSuffix(k, "[]")
			for _, x := range vs {
				y := at(x, k)
				if elems {
					l, _ := y.([]any)
					next = append(next, l...)
				} else if y != nil {
					next = append(next, y)
				}
			}
			vs = next
		}
	}
	var out []map[string]any
	for _, x := range vs {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// says: v holds a string that is not blank or a non-zero number.
func says(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x) != ""
	case float64:
		return x != 0
	case []any:
		for _, e := range x {
			if says(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if says(e) {
				return true
			}
		}
	}
	return false
}

// kept: one of v's non-blank strings is in the answer's strings (a part
// of one: a stream's delta) or one of its non-zero numbers is one of the
// answer's.
func kept(v any, strs string, nums map[float64]bool) bool {
	switch x := v.(type) {
	case string:
		t := strings.TrimSpace(x)
		return t != "" && strings.Contains(strs, t)
	case float64:
		return x != 0 && nums[x]
	case []any:
		for _, e := range x {
			if kept(e, strs, nums) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if kept(e, strs, nums) {
				return true
			}
		}
	}
	return false
}

// answerValues are the strings (joined by NULs) and numbers of res's
// message and meta as protojson writes them (int64s as strings are
// numbers too; a string that holds JSON gives its values as well).
func answerValues(res *provider.Result) (string, map[float64]bool) {
	var b strings.Builder
	nums := map[float64]bool{}
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		switch x := v.(type) {
		case string:
			b.WriteString(x)
			b.WriteByte(0)
			if f, err := strconv.ParseFloat(x, 64); err == nil {
				nums[f] = true
			}
			var inner any
			if depth < 4 && (strings.HasPrefix(x, "{") || strings.HasPrefix(x, "[")) && json.Unmarshal([]byte(x), &inner) == nil {
				walk(inner, depth+1)
			}
		case float64:
			nums[x] = true
		case []any:
			for _, e := range x {
				walk(e, depth)
			}
		case map[string]any:
			for _, e := range x {
				walk(e, depth)
			}
		}
	}
	if res != nil {
		for _, raw := range [][]byte{marshal(res.Message), marshal(res.Meta)} {
			var v any
			if json.Unmarshal(raw, &v) == nil {
				walk(v, 0)
			}
		}
	}
	return b.String(), nums
}

func marshal(m proto.Message) []byte {
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		return nil
	}
	return b
}

// responsesIgnored: a Responses object's fields that checkKept does not
// ask to be kept, unary (the object) and streamed (the events' response).
func responsesIgnored() map[string]string {
	m := map[string]string{}
	for k, why := range map[string]string{
		"object":     "the object kind (response)",
		"created_at": "the creation time in seconds",
		"usage":      "read per field",
		"output":     "the items: the text, toolcalls and finish properties read them",
		"status":     "the finish property (incomplete, failed)",
		// The request's parameters, echoed: what was asked, not answered.
		"instructions": "the request's instructions, echoed", "tools": "the request's tools, echoed",
		"tool_choice": "the request's tool_choice, echoed", "temperature": "the request's temperature, echoed",
		"top_p": "the request's top_p, echoed", "text": "the request's text format, echoed",
		"truncation": "the request's truncation, echoed", "reasoning": "the request's reasoning settings, echoed",
		"max_output_tokens": "the request's max_output_tokens, echoed", "metadata": "the request's metadata, echoed",
		"prompt_cache_key": "the request's prompt_cache_key, echoed", "prompt_cache_retention": "the request's prompt_cache_retention, echoed",
		"safety_identifier": "the request's safety_identifier, echoed", "user": "the request's user, echoed",
		"billing":      "who pays (billing.payer: developer): the account's, not the answer's",
		"completed_at": "the completion time in seconds",
		// An output item's fields.
		"output[].type":        "the item's kind",
		"output[].status":      "the item's status: the finish property reads the response's",
		"output[].role":        "always assistant",
		"output[].content":     "the text property",
		"output[].summary":     "the text property (reasoning)",
		"output[].arguments":   "the toolcalls property",
		"output[].input":       "the toolcalls property (a custom tool's input)",
		"output[].call_id":     "the toolcalls property",
		"output[].name":        "the toolcalls property",
		"prompt_cache_options": "the request's prompt_cache_options, echoed",
		"usage.input_tokens":   "the usage property", "usage.output_tokens": "the usage property", "usage.total_tokens": "the usage property",
	} {
		m[k] = why
		m["response."+k] = why
	}
	// Item ids: a message's and a reasoning item's are their parts'
	// item_id; a function call's fc_ id is dropped, meaningless when
	// nothing is stored (docs/decisions.md, "Stateless Responses API"),
	// and so is the item_id some servers give it.
	for _, k := range []string{"output[].id", "output[].item_id"} {
		m[k] = "an item's id: kept as its parts' item_id, but a function call's (dropped: nothing is stored)"
		m["response."+k] = m[k]
	}
	// A stream's final response repeats its items, some with a new
	// encrypted_content or fingerprint: the one output_item.done gave is
	// kept, the final one only signs an item still unsigned
	// (docs/decisions.md, "Encrypted reasoning from response.completed
	// too"). A unary answer's are checked.
	m["response.output[].encrypted_content"] = "the final response's copy: output_item.done's is kept"
	m["response.output[].fingerprint"] = "the final response's copy of a program item's fingerprint: output_item.done's is kept"
	return m
}

// anthropicIgnored: a Messages answer's fields that checkKept does not ask
// to be kept, unary (the message) and streamed (the events, message_start's
// message).
func anthropicIgnored() map[string]string {
	m := map[string]string{
		"index":              "the block's place",
		"content_block":      "the text, toolcalls and text (reasoning) properties read the blocks",
		"delta":              "read per field",
		"delta.type":         "the delta's kind",
		"delta.text":         "the text property",
		"delta.thinking":     "the text property (reasoning)",
		"delta.partial_json": "the toolcalls property",
		"delta.stop_reason":  "the finish property",
		// A content block's fields (content[] of a message, content_block of
		// a stream's content_block_start).
		"content[].type":                      "the block's kind",
		"content[].text":                      "the text property",
		"content[].thinking":                  "the text property (reasoning)",
		"content[].input":                     "the toolcalls property",
		"content[].name":                      "the toolcalls property",
		"content_block.type":                  "the block's kind",
		"content_block.text":                  "the text property (empty at the start)",
		"content_block.thinking":              "the text property (empty at the start)",
		"content_block.input":                 "the toolcalls property",
		"content_block.name":                  "the toolcalls property",
		"usage.output_tokens_details":         "the usage property (thinking_tokens: the reasoning, capped at the output with a warning)",
		"message.usage.output_tokens_details": "the usage property (thinking_tokens)",
	}
	for k, why := range map[string]string{
		"type":                              "the object's or event's kind",
		"role":                              "always assistant",
		"message":                           "read per field",
		"content":                           "the text and toolcalls properties read the blocks",
		"stop_reason":                       "the finish property",
		"usage":                             "read per field",
		"usage.input_tokens":                "the usage property",
		"usage.output_tokens":               "the usage property",
		"usage.cache_read_input_tokens":     "the usage property",
		"usage.cache_creation_input_tokens": "the usage property",
	} {
		m[k] = why
		m["message."+k] = why
	}
	return m
}
