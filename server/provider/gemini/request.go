package gemini

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// skipSignature is Google's documented placeholder thoughtSignature for
// replayed function calls whose real signature is not available; Gemini 3
// rejects a replayed model turn with function calls but no signature.
const skipSignature = provider.GoogleSkipSignature

// placeholderSignatures sends a conversation whose thought signatures the
// deployment refused as not its own (provider.Request.DropSignatures,
// after a 400 "Corrupted thought signature.": another API key's project,
// Vertex AI after the Gemini API) the way Google documents for history it
// did not produce: "You can set the following dummy signatures of either
// \"context_engineering_is_the_way_to_go\" or
// \"skip_thought_signature_validator\"" (ai.google.dev/gemini-api/docs/
// thought-signatures, FAQs; Vertex AI's page names the second, which
// both take). Every function call (a built-in tool's call too) that
// carried a signature carries the placeholder instead, where Gemini 3
// validates one; a signature on any
// other part (a thought, a signed text part) is left out, since nothing
// requires it there, and a thought part that was only a signature goes
// with it. The warning, "" when nothing changed, counts both.
func placeholderSignatures(out *generateContentRequest) string {
	replaced, dropped := 0, 0
	for i := range out.Contents {
		c := &out.Contents[i]
		if c.Role != "model" {
			continue
		}
		parts := c.Parts[:0]
		for _, p := range c.Parts {
			switch {
			case p.ThoughtSignature == "" || p.ThoughtSignature == skipSignature:
			case p.FunctionCall != nil || p.ToolCall != nil:
				// A call (a built-in tool's too): where Gemini 3
				// validates a signature.
				p.ThoughtSignature = skipSignature
				replaced++
			default:
				p.ThoughtSignature = ""
				dropped++
				if p.Thought && (p.Text == nil || *p.Text == "") {
					continue // a signature-only thought: nothing left to send
				}
			}
			parts = append(parts, p)
		}
		c.Parts = parts
	}
	kept := out.Contents[:0]
	for _, c := range out.Contents {
		if len(c.Parts) > 0 {
			kept = append(kept, c)
		}
	}
	out.Contents = kept
	if replaced == 0 && dropped == 0 {
		return ""
	}
	return fmt.Sprintf("gemini refused the conversation's thought signatures as another account's or platform's (%s); "+
		"this attempt sent %d function call(s) with Google's placeholder signature (%s) and left out %d other signature(s)",
		provider.SignatureRetryNote, replaced, skipSignature, dropped)
}

// refSiblings moves the keywords beside a "$ref" that Gemini refuses there
// into that schema's description (provider.RefSiblings), and returns the
// warning that says so, "" when there were none. Gemini's JSON Schema
// fields (responseJsonSchema, parametersJsonSchema) refuse them before
// generating: the reference says "If $ref is set on a sub-schema, no other
// properties, except for than those starting as a $, may be set", the API
// answered parametersJsonSchema with a 400 "schema at properties.draft can
// only contain properties starting with '$' when $ref is present"
// (google-gemini/gemini-cli#4758, July 2025) and now says "If a schema node
// has Schema.ref set, then only description and default can be set
// alongside it; other fields they would be replaced by the expanded
// reference" (diegosouzapw/OmniRoute#1416, anomalyco/opencode#12295):
// $-keywords, description and default stay (pydantic's description beside
// a $ref is sent as written, as Google's own example of
// parametersJsonSchema does, googleapis/python-genai#1122).
func refSiblings(schema json.RawMessage, field string) (json.RawMessage, string) {
	out, moved := provider.RefSiblings(schema, func(key string) bool {
		return strings.HasPrefix(key, "$") || key == "description" || key == "default"
	})
	if len(moved) == 0 {
		return schema, ""
	}
	return out, fmt.Sprintf("%s: Gemini takes only description, default and $-keywords beside a $ref; %s moved into that schema's description, which the model reads but is not held to",
		field, strings.Join(moved, ", "))
}

// functionName is what Gemini takes as a function declaration's name: the
// API refuses any other before generating, with a 400 naming each
// ("tools[0].function_declarations[53].name: [FIELD_INVALID] Invalid
// function name. Must start with a letter or an underscore. Must be a-z,
// A-Z, 0-9, or contain underscores (_), dots (.), colons (:), or dashes
// (-), with a maximum length of 64."). Vertex AI takes the same
// characters up to 128 (maxFunctionName, the gateway's own bound); the
// Gemini API's 64 is checked where the adapter talks to it
// (geminiAPIName).
var functionName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$`)

const (
	// maxFunctionName is Vertex AI's bound on a function name.
	maxFunctionName = 128
	// maxGeminiAPIFunctionName is the Gemini API's.
	maxGeminiAPIFunctionName = 64
	// geminiAPIHost is the Gemini API's host (DefaultBaseURL's).
	geminiAPIHost = "generativelanguage.googleapis.com"
)

// checkFunctionNames refuses, naming the tool, a function name longer than
// the Gemini API takes when the adapter talks to it (the API's 400 above);
// a proxy or Vertex AI base URL keeps Vertex's 128.
func (p *Provider) checkFunctionNames(req *provider.Request) error {
	u, err := url.Parse(p.baseURL)
	if err != nil || !strings.EqualFold(u.Hostname(), geminiAPIHost) {
		return nil
	}
	for i, t := range req.Tools {
		if n := len(t.GetName()); n > maxGeminiAPIFunctionName {
			return invalidField(fmt.Sprintf("tools[%d].name", i), "%q is %d characters: the Gemini API takes function names of at most %d", t.GetName(), n, maxGeminiAPIFunctionName)
		}
	}
	return nil
}

func invalidRequest(format string, args ...any) *provider.Error {
	return &provider.Error{Provider: providerName, Kind: provider.KindInvalidRequest, Message: fmt.Sprintf(format, args...)}
}

// invalidField is invalidRequest naming the request field param.
func invalidField(param, format string, args ...any) *provider.Error {
	return &provider.Error{Provider: providerName, Kind: provider.KindInvalidRequest, Param: param, Message: param + ": " + fmt.Sprintf(format, args...)}
}

// invalidPart is invalidRequest for part pi of message mi, naming the
// field (messages[mi].parts[pi], then sub if set) so the gRPC status carries
// a BadRequest violation for it.
func invalidPart(mi, pi int, sub, format string, args ...any) *provider.Error {
	param := fmt.Sprintf("messages[%d].parts[%d]", mi, pi)
	if sub != "" {
		param += "." + sub
	}
	return &provider.Error{Provider: providerName, Kind: provider.KindInvalidRequest, Param: param, Message: param + ": " + fmt.Sprintf(format, args...)}
}

// encodeRequest renders the generateContent body for req.
func (p *Provider) encodeRequest(req *provider.Request) ([]byte, error) {
	body, _, err := p.encodeRequestWarn(req)
	return body, err
}

// encodeRequestWarn renders the generateContent body for req and returns
// the warnings for meta.warnings (content Gemini cannot take back).
func (p *Provider) encodeRequestWarn(req *provider.Request) ([]byte, []string, error) {
	wire, warnings, err := buildRequest(req)
	if err != nil {
		return nil, nil, err
	}
	if err := p.checkFunctionNames(req); err != nil {
		return nil, nil, err
	}
	body, extraWarnings, err := encodeBody(wire, req.ProviderOptions)
	if err != nil {
		return nil, nil, err
	}
	return body, append(warnings, extraWarnings...), nil
}

// encodeBody marshals v and merges ProviderOptions.extra_body into it
// (extra fields win; the model and the streaming mode are in the URL, so
// no field is reserved). Gemini keeps nearly every setting inside objects
// (generationConfig, its thinkingConfig, toolConfig): an extra_body object
// is merged into the body's object of the same name, field by field, so
// that a caller who adds generationConfig.candidateCount keeps the
// maxOutputTokens, thinking and schema the request asked for (a field both
// have takes the caller's value; arrays and other values are replaced).
// The warnings name each value the request gave that extra_body replaced
// with another (generationConfig.temperature, a whole schema), as
// provider.MergeExtra reports the top-level ones.
func encodeBody(v any, po *llmrelayv1.ProviderOptions) ([]byte, []string, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, nil, invalidRequest("encoding request: %v", err)
	}
	extra, merged, warnings := provider.MergeExtraObjects(body, po.GetExtraBody(), nil, wholeValues)
	// The objects merged were checked field by field above: at the top
	// level they are not replacements. Nothing is reserved: the model
	// and the streaming mode are in the URL.
	body, top, err := provider.MergeExtra(body, extra, provider.ExtraFields{Defaults: merged})
	if err != nil {
		return nil, nil, invalidRequest("%v", err)
	}
	return body, append(warnings, top...), nil
}

// wholeValues are the fields whose value extra_body replaces whole even
// when both are objects: a schema is one value, and the union of two
// schemas' properties is neither the caller's nor the request's.
var wholeValues = []string{"responseJsonSchema", "responseSchema", "_responseJsonSchema"}

// callInfo is what a tool result needs from the call it answers.
type callInfo struct {
	name string
	// geminiID is the id Gemini gave the call, "" when the gateway made it.
	geminiID string
	// turn is the index of the message that made the call (the first of
	// the consecutive assistant messages sent as one model turn), pos the
	// call's place among that turn's calls.
	turn, pos int
}

// modelTurn is the model content last appended from assistant messages,
// which the next assistant message may continue.
type modelTurn struct {
	// content is its index in contents, -1 when the last content is not
	// a model turn.
	content int
	// first is the index of its first message, calls the calls it holds.
	first, calls int
}

// buildRequest maps a normalized request to the Gemini wire request; the
// warnings name parts it had to drop.
func buildRequest(req *provider.Request) (*generateContentRequest, []string, error) {
	out := &generateContentRequest{Contents: []content{}}
	var warnings []string
	warn := func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }
	gemini3 := isGemini3Plus(req.Model)
	calls := map[string]callInfo{}
	lastFromTool := false
	model := modelTurn{content: -1}
	for mi, m := range req.Messages {
		if m == nil {
			continue
		}
		if m.GetName() != "" {
			warn("messages[%d]: name %q not sent (Gemini has no message names)", mi, m.GetName())
		}
		switch m.GetRole() {
		case llmrelayv1.Role_ROLE_SYSTEM:
			if len(out.Contents) > 0 {
				warn("messages[%d]: a system message after the conversation began is sent in systemInstruction, before every message (Gemini has no system role in contents)", mi)
			}
			if out.SystemInstruction == nil {
				out.SystemInstruction = &content{}
			}
			for pi, pt := range m.GetParts() {
				t, ok := pt.GetKind().(*llmrelayv1.Part_Text)
				if !ok {
					return nil, nil, invalidPart(mi, pi, "", "system messages may only contain text")
				}
				if t.Text != "" { // Gemini refuses an empty text part
					out.SystemInstruction.Parts = append(out.SystemInstruction.Parts, textPart(t.Text))
				}
			}
			lastFromTool = false
		case llmrelayv1.Role_ROLE_USER, llmrelayv1.Role_ROLE_TOOL:
			parts, err := userParts(mi, m, calls, gemini3, warn)
			if err != nil {
				return nil, nil, err
			}
			if len(parts) == 0 {
				warn("messages[%d]: empty message not sent (Gemini refuses empty text)", mi)
				continue
			}
			isTool := m.GetRole() == llmrelayv1.Role_ROLE_TOOL
			if isTool && lastFromTool {
				// Results of parallel calls go back in one content, as
				// many functionResponse parts as the turn had calls.
				last := &out.Contents[len(out.Contents)-1]
				last.Parts = append(last.Parts, parts...)
			} else {
				out.Contents = append(out.Contents, content{Role: "user", Parts: parts})
			}
			lastFromTool = isTool
			model = modelTurn{content: -1}
		case llmrelayv1.Role_ROLE_ASSISTANT:
			// Consecutive assistant messages one of which calls a function
			// (a client that writes each of a step's parallel calls as a
			// message of its own) are one model turn: Gemini refuses a
			// function call turn that does not come right after a user or
			// function response turn, and pairs id-less function responses
			// by position with the calls of the turn before them.
			cont := model.content >= 0
			turn, base := mi, 0
			if cont {
				turn, base = model.first, model.calls
			}
			parts, n, err := modelParts(mi, m, calls, gemini3, turn, base, warn)
			if err != nil {
				return nil, nil, err
			}
			if len(parts) == 0 {
				warn("messages[%d]: empty message not sent (Gemini refuses empty text)", mi)
				continue
			}
			if cont && (n > 0 || model.calls > 0) {
				last := &out.Contents[model.content]
				last.Parts = append(last.Parts, parts...)
				model.calls += n
			} else {
				// A first model turn, or text after text (two model turns,
				// as sent).
				out.Contents = append(out.Contents, content{Role: "model", Parts: parts})
				model = modelTurn{content: len(out.Contents) - 1, first: mi, calls: n}
			}
			lastFromTool = false
		default:
			return nil, nil, &provider.Error{Provider: providerName, Kind: provider.KindInvalidRequest, Param: fmt.Sprintf("messages[%d].role", mi), Message: fmt.Sprintf("messages[%d].role: unsupported role %s", mi, m.GetRole())}
		}
	}
	if req.DropSignatures {
		if w := placeholderSignatures(out); w != "" {
			warnings = append(warnings, w)
		}
	}
	if out.SystemInstruction != nil && len(out.SystemInstruction.Parts) == 0 {
		out.SystemInstruction = nil
	}
	if out.SystemInstruction != nil && noSystemInstruction(req.Model) {
		// Gemma 3 on the Gemini API refuses a systemInstruction with a
		// 400 "Developer instruction is not enabled for
		// models/gemma-3-27b-it"; Google's ADK (models/gemma_llm.py)
		// sends the instructions as a user turn before the conversation.
		out.Contents = append([]content{{Role: "user", Parts: out.SystemInstruction.Parts}}, out.Contents...)
		out.SystemInstruction = nil
		warn("%s takes no system instruction: the system messages are sent as the first user turn", req.Model)
	}
	if len(out.Contents) == 0 {
		// Instructions alone, or only empty messages: Gemini refuses a
		// request without contents ("GenerateContentRequest.contents:
		// contents is not specified") and took one user turn of empty
		// text, which pydantic-ai sends for instructions alone
		// (testdata/real_pyd_google_instructions_only_with_tool_calls_1.http).
		// Vertex AI refuses empty text as it refuses no contents.
		out.Contents = append(out.Contents, content{Role: "user", Parts: []part{textPart("")}})
		warn("no message has content to send: one user turn of empty text sent (Gemini refuses a request without contents)")
	}
	for i := range out.Contents {
		trailing(out.Contents[i].Parts)
		n := len(out.Contents[i].Parts)
		for n > 0 && out.Contents[i].Parts[n-1].trail {
			n--
		}
		inCallOrder(out.Contents[i].Parts[:n])
	}

	// strict: a tool asked for strict schema adherence, which Gemini 2.5
	// and later give the whole request in VALIDATED function calling mode
	// (set below unless the tool choice holds the calls already).
	strict := false
	if len(req.Tools) > 0 {
		decls := make([]functionDeclaration, 0, len(req.Tools))
		validated := parseGemini(req.Model).takesValidated()
		for i, t := range req.Tools {
			if t.GetName() == "" {
				return nil, nil, invalidField(fmt.Sprintf("tools[%d].name", i), "the tool has no name")
			}
			if !functionName.MatchString(t.GetName()) {
				return nil, nil, invalidField(fmt.Sprintf("tools[%d].name", i), "%q: a Gemini function name starts with a letter or _ and holds only letters, digits, _ . : and - (at most %d)", t.GetName(), maxFunctionName)
			}
			d := functionDeclaration{Name: t.GetName(), Description: t.GetDescription()}
			if t.GetStrict() {
				if validated {
					strict = true
				} else {
					// A function declaration has no strict flag, and no
					// recording shows this model taking VALIDATED mode: the
					// schema goes out and the model is asked, not held, to
					// follow it.
					warn("tools[%d] (%s): strict is not supported by %s; the schema is sent, not enforced", i, t.GetName(), req.Model)
				}
			}
			if t.GetParameters() != "" {
				raw, err := provider.SchemaJSON(t.GetParameters())
				if err != nil {
					return nil, nil, invalidField(fmt.Sprintf("tools[%d].parameters", i), "%v", err)
				}
				raw, w := refSiblings(raw, fmt.Sprintf("tools[%d].parameters", i))
				if w != "" {
					warnings = append(warnings, w)
				}
				d.ParametersJSONSchema = raw
			}
			decls = append(decls, d)
		}
		out.Tools = []tool{{FunctionDeclarations: decls}}
	}

	opts := req.Options
	if tc := opts.GetToolChoice(); tc != nil {
		switch c := tc.GetChoice().(type) {
		case *llmrelayv1.ToolChoice_Mode:
			switch c.Mode {
			case llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO:
				out.ToolConfig = &toolConfig{FunctionCallingConfig: functionCallingConfig{Mode: "AUTO"}}
			case llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE:
				out.ToolConfig = &toolConfig{FunctionCallingConfig: functionCallingConfig{Mode: "NONE"}}
			case llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED:
				out.ToolConfig = &toolConfig{FunctionCallingConfig: functionCallingConfig{Mode: "ANY"}}
			}
		case *llmrelayv1.ToolChoice_FunctionName:
			out.ToolConfig = &toolConfig{FunctionCallingConfig: functionCallingConfig{
				Mode: "ANY", AllowedFunctionNames: []string{c.FunctionName},
			}}
		}
	}
	if strict && (out.ToolConfig == nil || out.ToolConfig.FunctionCallingConfig.Mode == "AUTO") {
		// VALIDATED: calls or text, as AUTO, each call held to its schema
		// (pydantic-ai's recording, gemini-2.5-flash: the API took it for a
		// three-turn tool loop). ANY already holds every call to its
		// schema, and NONE makes no call.
		out.ToolConfig = &toolConfig{FunctionCallingConfig: functionCallingConfig{Mode: "VALIDATED"}}
	}

	gemOpts := req.ProviderOptions.GetGemini()
	for _, s := range gemOpts.GetSafetySettings() {
		out.SafetySettings = append(out.SafetySettings, safetySetting{Category: s.GetCategory(), Threshold: s.GetThreshold()})
	}

	gc, thinkWarns, err := generationConfigFor(opts, gemOpts, req.Model)
	if err != nil {
		return nil, nil, err
	}
	warnings = append(warnings, thinkWarns...)
	out.GenerationConfig = gc
	if gc != nil && gc.ResponseMimeType != "" && len(out.Tools) > 0 && !gemini3 && !extraReplaces(req.ProviderOptions.GetExtraBody(), "tools", "responseMimeType", "response_mime_type") {
		// Gemini before 3 answers the pair with a 400 "Function calling
		// with a response mime type: 'application/json' is unsupported"
		// that names no field (googleapis/python-genai#867,
		// symfony/ai#1777 on gemini-2.5-flash); Gemini 3 combines them.
		return nil, nil, invalidField("options.response_format", "%s cannot combine function calling (the request's tools) with JSON output; Gemini 3 models can", req.Model)
	}
	return out, warnings, nil
}

// generationConfigFor maps the generation options, the thinking by
// model's generation (thinking.go); nil when none is set. The warnings say
// where a reasoning_effort got the nearest level the model takes.
func generationConfigFor(o *llmrelayv1.GenerationOptions, g *llmrelayv1.GeminiOptions, model string) (*generationConfig, []string, error) {
	if o == nil {
		// The gateway always merges options; a library caller may not.
		o = &llmrelayv1.GenerationOptions{}
	}
	gc := &generationConfig{
		Temperature:      o.Temperature,
		TopP:             o.TopP,
		TopK:             o.TopK,
		MaxOutputTokens:  o.MaxTokens,
		Seed:             o.Seed,
		PresencePenalty:  o.PresencePenalty,
		FrequencyPenalty: o.FrequencyPenalty,
		StopSequences:    o.GetStop(),
	}
	var schemaWarnings []string
	if rf := o.GetResponseFormat(); rf != nil {
		switch rf.GetType() {
		case llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_OBJECT:
			gc.ResponseMimeType = "application/json"
		case llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA:
			gc.ResponseMimeType = "application/json"
			if rf.GetSchema() == "" {
				return nil, nil, invalidField("options.response_format.schema", "response_format json_schema needs a schema")
			}
			raw, err := provider.SchemaJSON(rf.GetSchema())
			if err != nil {
				return nil, nil, invalidField("options.response_format.schema", "%v", err)
			}
			raw, w := refSiblings(raw, "options.response_format.schema")
			if w != "" {
				schemaWarnings = append(schemaWarnings, w)
			}
			gc.ResponseJSONSchema = raw
			if w := schemaSubsetWarning(raw); w != "" {
				schemaWarnings = append(schemaWarnings, w)
			}
		}
	}
	var (
		tc       thinkingConfig
		warnings []string
	)
	if g != nil && g.ThinkingBudget != nil {
		if g.GetThinkingBudget() == 0 && !parseGemini(model).canStopThinking() {
			// Gemini 3 models and 2.5 Pro cannot switch thinking off: the
			// API answers a zero budget with a 400, for Gemini 3 a bare
			// "Request contains an invalid argument." that names no field
			// (pydantic/logfire's live recording, gemini-3.5-flash-lite).
			return nil, nil, &provider.Error{Provider: providerName, Kind: provider.KindInvalidRequest,
				Param:   "provider_options.gemini.thinking_budget",
				Message: model + " cannot switch thinking off (thinking_budget 0); use reasoning_effort minimal, or a budget of -1 (dynamic) or above 0"}
		}
		tc.ThinkingBudget = g.ThinkingBudget
	} else if e := o.GetReasoningEffort(); e != llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED {
		var err error
		tc, warnings, err = effortThinking(model, e)
		if err != nil {
			return nil, nil, err
		}
	}
	if g != nil && g.IncludeThoughts != nil {
		tc.IncludeThoughts = g.IncludeThoughts
	}
	if tc != (thinkingConfig{}) {
		gc.ThinkingConfig = &tc
	}
	if gc.Temperature == nil && gc.TopP == nil && gc.TopK == nil && gc.MaxOutputTokens == nil && gc.Seed == nil &&
		gc.PresencePenalty == nil && gc.FrequencyPenalty == nil && len(gc.StopSequences) == 0 &&
		gc.ResponseMimeType == "" && gc.ThinkingConfig == nil {
		return nil, warnings, nil
	}
	return gc, append(warnings, schemaWarnings...), nil
}

// thinkingLevel maps a reasoning effort to Gemini 3's thinkingLevel. Gemini
// 3 cannot switch thinking off: "none" asks for the least ("minimal").
func thinkingLevel(e llmrelayv1.ReasoningEffort) string {
	switch e {
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE, llmrelayv1.ReasoningEffort_REASONING_EFFORT_MINIMAL:
		return "minimal"
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW:
		return "low"
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_MEDIUM:
		return "medium"
	default:
		return "high"
	}
}

// thinkingBudget maps a reasoning effort to a Gemini 2.5 thinkingBudget
// (tokens; 0 switches thinking off where the model allows it).
func thinkingBudget(e llmrelayv1.ReasoningEffort) int32 {
	switch e {
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE:
		return 0
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_MINIMAL:
		return 512
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW:
		return 1024
	case llmrelayv1.ReasoningEffort_REASONING_EFFORT_MEDIUM:
		return 8192
	default:
		return 24576
	}
}

// isGemini3Plus reports whether model is a Gemini 3 or later model
// ("gemini-3-pro-preview", "gemini-3.1-flash", and the -latest aliases,
// which point at Gemini 3 models), which take thinkingLevel and need
// thought signatures on replayed function calls: the generation the
// thinking mapping reads (parseGemini), so the two cannot disagree.
func isGemini3Plus(model string) bool { return parseGemini(model).gemini3Plus() }

// noSystemInstruction reports a model the Gemini API serves without
// system instructions: Gemma before 4 ("gemma-3-27b-it", "gemma-3n-e4b-it";
// ADK's Gemma class is for Gemma 3 only, Gemma 4 takes them natively).
func noSystemInstruction(model string) bool {
	s := strings.ToLower(model)
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	rest, ok := strings.CutPrefix(s, "gemma-")
	if !ok {
		return false
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	major, err := strconv.Atoi(rest[:n])
	return err == nil && major <= 3
}

func textPart(s string) part { return part{Text: &s} }

// userParts maps the parts of a user or tool message. An empty text part
// is left out: Gemini refuses one ("Unable to submit request because it
// has an empty text parameter"), and it says nothing.
func userParts(mi int, m *llmrelayv1.Message, calls map[string]callInfo, gemini3 bool, warn func(string, ...any)) ([]part, error) {
	var out []part
	for pi, pt := range m.GetParts() {
		switch k := pt.GetKind().(type) {
		case *llmrelayv1.Part_Text:
			if k.Text != "" {
				out = append(out, textPart(k.Text))
			}
		case *llmrelayv1.Part_Image:
			ip, err := imagePart(k.Image)
			if err != nil {
				return nil, invalidPart(mi, pi, "image", "%s", err.Error())
			}
			imageDetail(&ip, k.Image.GetDetail(), gemini3, func(why string) {
				warn("messages[%d].parts[%d].image.detail %s not sent: %s", mi, pi, k.Image.GetDetail(), why)
			})
			out = append(out, ip)
		case *llmrelayv1.Part_File:
			if m.GetRole() != llmrelayv1.Role_ROLE_USER {
				return nil, invalidPart(mi, pi, "file", "files belong in user messages")
			}
			fp, err := filePart(mi, pi, k.File)
			if err != nil {
				return nil, err
			}
			out = append(out, fp)
		case *llmrelayv1.Part_ToolResult:
			fr, err := functionResponseFor(k.ToolResult, calls)
			if err != nil {
				return nil, invalidPart(mi, pi, "tool_result", "%s", err.Error())
			}
			trail, err := resultMedia(mi, pi, k.ToolResult, fr, gemini3, warn)
			if err != nil {
				return nil, err
			}
			if err := referenceParts(mi, pi, k.ToolResult, fr, warn); err != nil {
				return nil, invalidPart(mi, pi, "tool_result", "%s", err.Error())
			}
			out = append(out, part{FunctionResponse: fr})
			out = append(out, trail...)
		case *llmrelayv1.Part_Refusal:
			if k.Refusal != "" {
				out = append(out, textPart(k.Refusal))
			}
		default:
			return nil, invalidPart(mi, pi, "", "%T not allowed in a %s message", pt.GetKind(), m.GetRole())
		}
	}
	return out, nil
}

// modelParts maps an assistant message and records its tool calls.
// Reasoning parts go back in place as thought parts with their signature; a
// signature-only Reasoning right after a text part (the signature Gemini put
// on that text) is re-attached to it. Tool calls carry their signature; on
// Gemini 3 the first call of the turn gets the documented placeholder when
// it has none.
func modelParts(mi int, m *llmrelayv1.Message, calls map[string]callInfo, gemini3 bool, turn, base int, warn func(string, ...any)) ([]part, int, error) {
	var out []part
	firstCall := base == 0
	ncalls := 0
	for pi, pt := range m.GetParts() {
		switch k := pt.GetKind().(type) {
		case *llmrelayv1.Part_Text:
			if k.Text != "" { // Gemini refuses an empty text part
				out = append(out, textPart(k.Text))
			}
		case *llmrelayv1.Part_Refusal:
			if k.Refusal != "" {
				out = append(out, textPart(k.Refusal))
			}
		case *llmrelayv1.Part_Image:
			ip, err := imagePart(k.Image)
			if err != nil {
				return nil, 0, invalidPart(mi, pi, "image", "%s", err.Error())
			}
			out = append(out, ip)
		case *llmrelayv1.Part_Reasoning:
			r := k.Reasoning
			switch {
			case r.GetRedacted():
				warn("message %d part %d: redacted reasoning dropped: Gemini cannot take back another provider's redacted thinking", mi, pi)
				continue
			case r.GetId() != "":
				warn("message %d part %d: reasoning item %q dropped: Gemini cannot take back another provider's reasoning items", mi, pi, r.GetId())
				continue
			case r.GetText() == "" && r.GetSignature() == "":
				// Nothing to send.
				continue
			}
			if r.GetText() == "" && len(out) > 0 {
				if last := &out[len(out)-1]; isPlainText(last) {
					last.ThoughtSignature = r.GetSignature()
					continue
				}
			}
			t := r.GetText()
			out = append(out, part{Text: &t, Thought: true, ThoughtSignature: r.GetSignature()})
		case *llmrelayv1.Part_ProviderItem:
			// A code execution, media or built-in tool part of an
			// earlier answer: back as it came, in its place.
			if p, ok := itemPart(k.ProviderItem); ok {
				out = append(out, p)
				continue
			}
			warn("%s", provider.DroppedItemWarning(mi, pi, k.ProviderItem, "Gemini"))
		case *llmrelayv1.Part_ToolCall:
			tc := k.ToolCall
			if tc.GetName() == "" {
				return nil, 0, invalidPart(mi, pi, "tool_call.name", "tool call without a name")
			}
			args, err := argsObject(tc.GetArguments())
			if err != nil {
				return nil, 0, invalidPart(mi, pi, "tool_call.arguments", "tool call %q: %s", tc.GetName(), err.Error())
			}
			info := callInfo{name: tc.GetName(), turn: turn, pos: base + ncalls}
			ncalls++
			if id := tc.GetCallId(); id != "" && !isGeneratedID(id) {
				info.geminiID = id
			}
			if tc.GetCallId() != "" {
				calls[tc.GetCallId()] = info
			}
			p := part{FunctionCall: &functionCall{ID: info.geminiID, Name: tc.GetName(), Args: args}, ThoughtSignature: tc.GetSignature()}
			if gemini3 && firstCall && p.ThoughtSignature == "" {
				// Without the real signature, Gemini 3 (which validates the
				// first call of a step) needs the placeholder.
				p.ThoughtSignature = skipSignature
			}
			firstCall = false
			out = append(out, p)
		default:
			return nil, 0, invalidPart(mi, pi, "", "%T not allowed in an assistant message", pt.GetKind())
		}
	}
	return out, ncalls, nil
}

// isPlainText reports whether p is a non-thought text part without a
// signature (one a signature-only Reasoning part can be re-attached to).
func isPlainText(p *part) bool {
	return p.Text != nil && *p.Text != "" && !p.Thought && p.ThoughtSignature == "" &&
		p.InlineData == nil && p.FileData == nil && p.FunctionCall == nil && p.FunctionResponse == nil
}

// argsObject returns the call arguments as a compact JSON object ("" is
// {}); other JSON values and malformed text are rejected, since Gemini's
// args is a Struct.
func argsObject(s string) (json.RawMessage, error) {
	if strings.TrimSpace(s) == "" {
		return json.RawMessage("{}"), nil
	}
	if !fold.ValidArguments(s) {
		return nil, fmt.Errorf("arguments are not a JSON object")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return nil, fmt.Errorf("arguments: %v", err)
	}
	return b.Bytes(), nil
}

// functionResponseMedia are the media types a Gemini 3 functionResponse
// takes in its parts ("Multimodal function responses", Gemini 3 series:
// images image/png, image/jpeg, image/webp; documents application/pdf,
// text/plain; ai.google.dev/gemini-api/docs/function-calling).
var functionResponseMedia = map[string]bool{"image/png": true, "image/jpeg": true, "image/webp": true, "application/pdf": true, "text/plain": true}

// resultMedia puts a tool result's images and files (ToolResult.parts; its
// text parts are in the response, functionResponseFor): inline media of the
// types a Gemini 3 functionResponse takes go in fr.parts as inlineData;
// every other medium (all of them before Gemini 3, which answers media in a
// functionResponse with a 400 "Multimodal function responses are not
// supported for this model"; media by URL or file id, whose fileData a
// functionResponse does not take on the Gemini API; other types) is
// returned as parts of the user turn, sent after the turn's function
// responses behind a text part naming the function, with a warning.
func resultMedia(mi, pi int, tr *llmrelayv1.ToolResult, fr *functionResponse, gemini3 bool, warn func(string, ...any)) ([]part, error) {
	var trail []part
	for n, rp := range tr.GetParts() {
		var (
			mp  part
			err error
			sub string
		)
		switch k := rp.GetKind().(type) {
		case *llmrelayv1.Part_Image:
			sub = fmt.Sprintf("tool_result.parts[%d].image", n)
			if mp, err = imagePart(k.Image); err != nil {
				return nil, invalidPart(mi, pi, sub, "%s", err.Error())
			}
		case *llmrelayv1.Part_File:
			sub = fmt.Sprintf("tool_result.parts[%d].file", n)
			if mp, err = filePart(mi, pi, k.File); err != nil {
				var pe *provider.Error
				if errors.As(err, &pe) {
					pe.Param = strings.Replace(pe.Param, ".file", "."+sub, 1)
					pe.Message = strings.Replace(pe.Message, ".file", "."+sub, 1)
				}
				return nil, err
			}
		default:
			continue
		}
		if gemini3 && mp.InlineData != nil && functionResponseMedia[mp.InlineData.MimeType] {
			b := *mp.InlineData
			b.DisplayName = mediaName(fr, n, rp.GetFile().GetFilename(), b.MimeType)
			fr.Parts = append(fr.Parts, functionResponsePart{InlineData: &b})
			continue
		}
		if len(trail) == 0 {
			call := "the " + fr.Name + " call"
			if fr.ID != "" {
				call = fr.Name + " call " + fr.ID
			}
			label := textPart("The result of " + call + " continues with these attachments:")
			label.trail = true
			trail = append(trail, label)
		}
		mp.trail = true
		trail = append(trail, mp)
		why := "this model takes no media in a functionResponse (Gemini 3 and later do)"
		switch {
		case gemini3 && mp.InlineData == nil:
			why = "a functionResponse takes inline media only on the Gemini API (fileData there is Vertex AI's)"
		case gemini3:
			why = "a functionResponse takes png, jpeg and webp images and PDF and plain text documents only, not " + mp.InlineData.MimeType
		}
		warn("messages[%d].parts[%d].%s sent as a part of the user turn after the function responses: %s", mi, pi, sub, why)
	}
	return trail, nil
}

// mediaExt is the file extension a generated displayName gets for each
// type a functionResponse takes (functionResponseMedia).
var mediaExt = map[string]string{"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "application/pdf": "pdf", "text/plain": "txt"}

// mediaName is the displayName of the medium at tool_result.parts[n]
// inside fr: the file's name when it has one no earlier medium of fr has
// (the name the tool's own {"$ref": …} uses), else "image_<n>.png",
// "file_<n>.pdf", … by the part's index, unique in the response (Google:
// "If you reference a multimodal part from within the structured response
// field, it must contain a unique displayName").
func mediaName(fr *functionResponse, n int, filename, mimeType string) string {
	taken := func(name string) bool {
		for _, p := range fr.Parts {
			if p.InlineData != nil && p.InlineData.DisplayName == name {
				return true
			}
		}
		return false
	}
	if name := strings.TrimSpace(filename); name != "" && !taken(name) {
		return name
	}
	kind := "file"
	if strings.HasPrefix(mimeType, "image/") {
		kind = "image"
	}
	name := fmt.Sprintf("%s_%d.%s", kind, n, mediaExt[mimeType])
	for i := 2; taken(name); i++ {
		// A file named like a generated name ("image_1.png" as parts[3]'s
		// filename, then parts[1] unnamed): still unique.
		name = fmt.Sprintf("%s_%d_%d.%s", kind, n, i, mediaExt[mimeType])
	}
	return name
}

// jsonRefs lists the values of every "$ref" key in a JSON document, in
// document order: a value that is not a string is listed as its JSON.
func jsonRefs(doc json.RawMessage) []string {
	if !bytes.Contains(doc, []byte("$ref")) && !bytes.Contains(doc, []byte(`\u`)) {
		// No "$ref" key however escaped: not decoded again (a tool's
		// result may be large).
		return nil
	}
	var refs []string
	var walk func(v any)
	walk = func(v any) {
		switch c := v.(type) {
		case map[string]any:
			for k, sub := range c {
				if k == "$ref" {
					if s, ok := sub.(string); ok {
						refs = append(refs, s)
					} else {
						// A value json.Unmarshal made (a map, list,
						// number, bool or null) always marshals.
						b, _ := json.Marshal(sub)
						refs = append(refs, string(b))
					}
					continue
				}
				walk(sub)
			}
		case []any:
			for _, sub := range c {
				walk(sub)
			}
		}
	}
	var root any
	if json.Unmarshal(doc, &root) == nil {
		walk(root)
	}
	slices.Sort(refs) // map order is random: sorted, for the warning
	return refs
}

// referenceParts settles the "$ref"s of a function response. Gemini reads
// every "$ref" key in functionResponse.response as a reference to one of
// its parts by displayName ("You can also reference a multimodal part from
// within the structured response field of the functionResponse part by
// using the JSON reference format {"$ref": "<displayName>"}",
// ai.google.dev/gemini-api/docs/function-calling, multimodal function
// responses) and refuses any other with a 400 "The referenced name
// `#/$defs/__schema0` in function_response.response does not match to a
// display_name in the function_response.parts." (vercel/ai#14369, a tool
// returning a JSON Schema; RooCodeInc/Roo-Code#11430 on
// gemini-3-pro-preview; twentyhq/twenty#21712). So a tool's JSON whose
// "$ref"s do not all name media of this response goes as text
// ({"result": "<the JSON>"}, or {"error": …}), which the model reads the
// same, with a warning; so does one that references a medium twice ("Each
// displayName can only be referenced once in the structured response
// field"). Media nothing references stay unreferenced, which the
// documentation allows: the adapter adds no references of its own, since
// googleapis/python-genai#2792 reports the documented "$ref" layout
// refused on gemini-3.5-flash and gemini-3.6-flash ("does not match to a
// display_name") where the same media without "$ref" were taken.
func referenceParts(mi, pi int, tr *llmrelayv1.ToolResult, fr *functionResponse, warn func(string, ...any)) error {
	names := map[string]bool{}
	for _, p := range fr.Parts {
		if p.InlineData != nil {
			names[p.InlineData.DisplayName] = true
		}
	}
	refs := jsonRefs(fr.Response)
	var problems []string
	for i, r := range refs {
		switch {
		case i > 0 && refs[i-1] == r:
			if names[r] && (i == 1 || refs[i-2] != r) {
				// "Each displayName can only be referenced once in the
				// structured response field."
				problems = append(problems, strconv.Quote(r)+" is referenced more than once")
			}
		case !names[r]:
			problems = append(problems, strconv.Quote(r)+" names none")
		}
	}
	if len(problems) > 0 {
		key := "result"
		if tr.GetIsError() {
			key = "error"
		}
		raw, err := json.Marshal(map[string]string{key: provider.ToolResultText(tr)})
		if err != nil {
			return fmt.Errorf("tool result content: %v", err)
		}
		fr.Response = raw
		warn("messages[%d].parts[%d].tool_result: sent as text under %q: Gemini reads a \"$ref\" key in a function response as a reference to a medium of that response, each referenced once, and %s", mi, pi, key, strings.Join(problems, ", "))
	}
	return nil
}

// functionResponseFor maps a tool result; its function name comes from the
// result or, when empty, from the earlier call with the same call_id.
func functionResponseFor(tr *llmrelayv1.ToolResult, calls map[string]callInfo) (*functionResponse, error) {
	info, known := calls[tr.GetCallId()]
	name := tr.GetName()
	if name == "" {
		if !known {
			return nil, fmt.Errorf("tool result for call_id %q names no function and matches no earlier tool call", tr.GetCallId())
		}
		name = info.name
	}
	fr := &functionResponse{ID: info.geminiID, Name: name}
	if known {
		fr.call = &info
	}
	if !known && tr.GetCallId() != "" && !isGeneratedID(tr.GetCallId()) {
		fr.ID = tr.GetCallId()
	}
	// The content and the text parts: the response's text.
	text := provider.ToolResultText(tr)
	c := []byte(text)
	var resp any
	switch {
	case tr.GetIsError():
		var v json.RawMessage
		if json.Valid(c) && len(bytes.TrimSpace(c)) > 0 {
			var b bytes.Buffer
			if err := json.Compact(&b, c); err != nil {
				return nil, fmt.Errorf("tool result content: %v", err)
			}
			v = b.Bytes()
		} else {
			s, err := json.Marshal(text)
			if err != nil {
				return nil, fmt.Errorf("tool result content: %v", err)
			}
			v = s
		}
		resp = map[string]json.RawMessage{"error": v}
	case fold.ValidArguments(string(c)):
		var b bytes.Buffer
		if err := json.Compact(&b, c); err != nil {
			return nil, fmt.Errorf("tool result content: %v", err)
		}
		fr.Response = b.Bytes()
		return fr, nil
	default:
		resp = map[string]string{"result": text}
	}
	raw, err := json.Marshal(resp)
	if err != nil {
		return nil, fmt.Errorf("tool result content: %v", err)
	}
	fr.Response = raw
	return fr, nil
}

// filePart maps a document, audio or video file: inline bytes as
// inlineData, a URL or an uploaded file's URI as fileData. A Files API
// name as the SDKs print it ("files/abc123") is sent as the file's URI,
// which fileData takes (https://generativelanguage.googleapis.com/v1beta/files/abc123,
// the `uri` the upload returns).
func filePart(mi, pi int, f *llmrelayv1.File) (part, error) {
	param := fmt.Sprintf("messages[%d].parts[%d].file", mi, pi)
	if field, reason := provider.CheckFile("gemini", f); reason != "" {
		if field != "" {
			param += "." + field
		}
		return part{}, &provider.Error{Provider: providerName, Kind: provider.KindInvalidRequest, Param: param, Message: param + ": " + reason}
	}
	mt := provider.MediaType(f)
	switch src := f.GetSource().(type) {
	case *llmrelayv1.File_Data:
		return part{InlineData: &blob{MimeType: mt, Data: base64.StdEncoding.EncodeToString(src.Data)}}, nil
	case *llmrelayv1.File_Url:
		return part{FileData: &fileData{MimeType: mt, FileURI: src.Url}}, nil
	case *llmrelayv1.File_FileId:
		return part{FileData: &fileData{MimeType: mt, FileURI: filesAPIURI(src.FileId)}}, nil
	}
	return part{}, &provider.Error{Provider: providerName, Kind: provider.KindInvalidRequest, Param: param, Message: param + ": a file needs a url, data or file_id"}
}

// filesAPIURI is the URI of an uploaded file named by its Files API name
// ("files/abc123"); anything else (a full URI) is sent as it is.
func filesAPIURI(id string) string {
	if strings.HasPrefix(id, "files/") && !strings.Contains(id, "://") {
		return "https://generativelanguage.googleapis.com/v1beta/" + id
	}
	return id
}

// imagePart maps an image: bytes and data: URLs inline, http(s) URLs as
// fileData (mime type from the image, else guessed from the extension).
func imagePart(img *llmrelayv1.Image) (part, error) {
	if img == nil {
		return part{}, fmt.Errorf("empty image")
	}
	switch src := img.GetSource().(type) {
	case *llmrelayv1.Image_Data:
		if len(src.Data) == 0 {
			return part{}, fmt.Errorf("image has no data")
		}
		mt := provider.ImageMediaType(img)
		if mt == "" {
			mt = sniffImage(src.Data)
		}
		if mt == "" {
			return part{}, fmt.Errorf("image bytes need a mime_type")
		}
		return part{InlineData: &blob{MimeType: mt, Data: base64.StdEncoding.EncodeToString(src.Data)}}, nil
	case *llmrelayv1.Image_Url:
		u := strings.TrimSpace(src.Url)
		if strings.HasPrefix(strings.ToLower(u), "data:") {
			mt, data, err := decodeDataURL(u)
			if err != nil {
				return part{}, err
			}
			if t := provider.ImageMediaType(img); t != "" {
				mt = t
			}
			if mt == "" {
				mt = sniffImage(data)
			}
			if mt == "" {
				return part{}, fmt.Errorf("data URL has no media type")
			}
			return part{InlineData: &blob{MimeType: mt, Data: base64.StdEncoding.EncodeToString(data)}}, nil
		}
		pu, err := url.Parse(u)
		if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return part{}, errors.New("image URL must be an http(s) or data URL")
		}
		mt := provider.ImageMediaType(img)
		if mt == "" {
			mt = mimeFromExt(pu.Path)
		}
		if mt == "" {
			return part{}, fmt.Errorf("image URL %q: set mime_type (Gemini requires it and the extension does not tell)", redactURL(pu))
		}
		return part{FileData: &fileData{MimeType: mt, FileURI: u}}, nil
	default:
		return part{}, fmt.Errorf("image has neither url nor data")
	}
}

// imageDetail carries an image's detail level: on Gemini 3 as the part's
// mediaResolution (LOW and HIGH; AUTO is the model's own choice, as no
// level is), elsewhere nowhere (only Gemini 3 takes a part's resolution;
// the request-wide generationConfig.mediaResolution would change every
// image): notSent says why.
func imageDetail(p *part, d llmrelayv1.ImageDetail, gemini3 bool, notSent func(why string)) {
	var level string
	switch d {
	case llmrelayv1.ImageDetail_IMAGE_DETAIL_LOW:
		level = "MEDIA_RESOLUTION_LOW"
	case llmrelayv1.ImageDetail_IMAGE_DETAIL_HIGH:
		level = "MEDIA_RESOLUTION_HIGH"
	default:
		return
	}
	if !gemini3 {
		notSent("only Gemini 3 models take a part's media resolution")
		return
	}
	p.MediaResolution = &mediaResolution{Level: level}
}

// redactURL drops the query (it may carry signatures or keys) for messages.
func redactURL(u *url.URL) string {
	c := *u
	c.RawQuery, c.Fragment, c.User = "", "", nil
	return c.String()
}

// decodeDataURL parses data:[<mediatype>][;base64],<data>.
func decodeDataURL(u string) (string, []byte, error) {
	comma := strings.IndexByte(u, ',')
	if comma < 0 {
		return "", nil, fmt.Errorf("malformed data URL")
	}
	meta, payload := u[len("data:"):comma], u[comma+1:]
	isB64 := false
	var mt string
	for i, f := range strings.Split(meta, ";") {
		f = strings.TrimSpace(f)
		switch {
		case i == 0:
			mt = strings.ToLower(f)
		case strings.EqualFold(f, "base64"):
			isB64 = true
		}
	}
	if !isB64 {
		s, err := url.PathUnescape(payload)
		if err != nil {
			return "", nil, fmt.Errorf("malformed data URL: %v", err)
		}
		return mt, []byte(s), nil
	}
	payload = strings.TrimRight(payload, "=")
	data, err := base64.RawStdEncoding.DecodeString(payload)
	if err != nil {
		data, err = base64.RawURLEncoding.DecodeString(payload)
	}
	if err != nil {
		return "", nil, fmt.Errorf("data URL: bad base64")
	}
	return mt, data, nil
}

// sniffImage returns the image mime type of data, or "".
func sniffImage(data []byte) string {
	mt := http.DetectContentType(data)
	if strings.HasPrefix(mt, "image/") {
		return mt
	}
	return ""
}

// mimeFromExt guesses an image mime type from a URL path's extension
// (Gemini's supported image types).
func mimeFromExt(p string) string {
	switch strings.ToLower(path.Ext(p)) {
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".webp":
		return "image/webp"
	case ".heic":
		return "image/heic"
	case ".heif":
		return "image/heif"
	case ".gif":
		return "image/gif"
	}
	return ""
}

// extraReplaces reports whether extra_body names one of the fields (which
// it may then replace or remove): a check of what the request alone would
// send does not hold.
func extraReplaces(extra string, fields ...string) bool {
	for _, f := range fields {
		if strings.Contains(extra, `"`+f+`"`) {
			return true
		}
	}
	return false
}

// trailing moves the media of tool results sent beside their function
// responses (resultMedia) to the end of the turn, in their order: the
// function responses stay together, as Gemini pairs them with the calls.
func trailing(parts []part) {
	slices.SortStableFunc(parts, func(a, b part) int { return boolRank(a.trail) - boolRank(b.trail) })
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// inCallOrder puts a turn of results to one model turn's parallel calls in
// the order of the calls. Gemini pairs a functionResponse with its call by
// position when they have no id, which the calls the gateway gave ids of
// its own never have: results given in another order (a client answering
// parallel calls as they finish; the contract pairs by call_id) answered
// the wrong calls (best_country(USA) got Canada's result,
// TestRound22ParallelSameTool). A turn holding anything but results to
// the calls of one model turn is left as it is.
func inCallOrder(parts []part) {
	if len(parts) < 2 {
		return
	}
	turn := -1
	for _, p := range parts {
		fr := p.FunctionResponse
		if fr == nil || fr.call == nil || (turn >= 0 && fr.call.turn != turn) {
			return
		}
		turn = fr.call.turn
	}
	slices.SortStableFunc(parts, func(a, b part) int { return a.FunctionResponse.call.pos - b.FunctionResponse.call.pos })
}

// itemPart is the request part of a provider item of one of the itemKinds
// (partItem): the object as it came, with its thought mark and signature;
// ok is false for an item of another type, or one without its kind's
// object.
func itemPart(it *llmrelayv1.ProviderItem) (part, bool) {
	var v struct {
		ExecutableCode      json.RawMessage `json:"executableCode"`
		CodeExecutionResult json.RawMessage `json:"codeExecutionResult"`
		InlineData          json.RawMessage `json:"inlineData"`
		FileData            json.RawMessage `json:"fileData"`
		ToolCall            json.RawMessage `json:"toolCall"`
		ToolResponse        json.RawMessage `json:"toolResponse"`
		Thought             bool            `json:"thought"`
		ThoughtSignature    string          `json:"thoughtSignature"`
	}
	if json.Unmarshal([]byte(it.GetJson()), &v) != nil {
		return part{}, false
	}
	p := part{Thought: v.Thought, ThoughtSignature: v.ThoughtSignature}
	object := func(r json.RawMessage) bool { return bytes.HasPrefix(bytes.TrimSpace(r), []byte("{")) }
	switch t := it.GetType(); {
	case t == "executableCode" && object(v.ExecutableCode):
		p.ExecutableCode = v.ExecutableCode
	case t == "codeExecutionResult" && object(v.CodeExecutionResult):
		p.CodeExecutionResult = v.CodeExecutionResult
	case t == "inlineData" && object(v.InlineData):
		p.InlineData = &blob{raw: v.InlineData}
	case t == "fileData" && object(v.FileData):
		p.FileData = &fileData{raw: v.FileData}
	case t == "toolCall" && object(v.ToolCall):
		p.ToolCall = v.ToolCall
	case t == "toolResponse" && object(v.ToolResponse):
		p.ToolResponse = v.ToolResponse
	default:
		return part{}, false
	}
	return p, true
}
