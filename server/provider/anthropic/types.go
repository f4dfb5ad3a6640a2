package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/llmrelay/llmrelay/server/provider"
)

// Wire types of the Anthropic Messages API (POST /v1/messages), request and
// response side. Only the fields the adapter reads or writes are declared;
// unknown fields are ignored on decode.

// messagesRequest is the request body. Field order is the order in which
// the body is written.
type messagesRequest struct {
	Model         string            `json:"model"`
	MaxTokens     int32             `json:"max_tokens"`
	System        any               `json:"system,omitempty"` // string or []contentBlockParam
	Messages      []wireMessage     `json:"messages"`
	Tools         []wireTool        `json:"tools,omitempty"`
	ToolChoice    *wireToolChoice   `json:"tool_choice,omitempty"`
	Temperature   *float64          `json:"temperature,omitempty"`
	TopP          *float64          `json:"top_p,omitempty"`
	TopK          *int32            `json:"top_k,omitempty"`
	StopSequences []string          `json:"stop_sequences,omitempty"`
	Thinking      *wireThinking     `json:"thinking,omitempty"`
	OutputConfig  *wireOutputConfig `json:"output_config,omitempty"`
	Metadata      *wireMetadata     `json:"metadata,omitempty"`
	Stream        bool              `json:"stream,omitempty"`
}

type wireMessage struct {
	Role    string              `json:"role"`
	Content []contentBlockParam `json:"content"`
}

// contentBlockParam is one request content block: text, image, tool_use,
// tool_result, thinking or redacted_thinking, told apart by Type.
type contentBlockParam struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	// Thinking is set (possibly to "") on thinking blocks only: the API
	// requires the field there.
	Thinking  *string      `json:"thinking,omitempty"`
	Signature string       `json:"signature,omitempty"`
	Data      string       `json:"data,omitempty"`
	Source    *imageSource `json:"source,omitempty"`
	// Title is a document block's title (the File's filename).
	Title     string          `json:"title,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *string         `json:"content,omitempty"`
	// ContentBlocks, when set, is a tool_result's content as blocks (a
	// tool result with parts), sent as content instead of Content.
	ContentBlocks []contentBlockParam `json:"-"`
	IsError       bool                `json:"is_error,omitempty"`
	// raw is a provider item's block (Part.provider_item), or a block
	// the fields above cannot write (an unsigned thinking block with its
	// empty signature, reasoningBlock), sent as it is instead of them;
	// Type repeats its type.
	raw json.RawMessage
}

// MarshalJSON encodes a provider item's block as sent, any other block
// from its fields.
func (b *contentBlockParam) MarshalJSON() ([]byte, error) {
	if b.raw != nil {
		return b.raw, nil
	}
	type fields contentBlockParam
	if b.ContentBlocks != nil {
		return json.Marshal(struct {
			*fields
			Content []contentBlockParam `json:"content"`
		}{(*fields)(b), b.ContentBlocks})
	}
	return json.Marshal((*fields)(b))
}

// imageSource is the source of an image or document block: {type: base64,
// media_type, data}, {type: url, url}, {type: text, media_type: text/plain,
// data} (a plain text document, data being the text) or {type: file,
// file_id} (Files API beta).
type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
	FileID    string `json:"file_id,omitempty"`
}

type wireTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
	// Strict is strict tool use (the input is held to the schema); sent
	// only when asked for, false being the API's default.
	Strict bool `json:"strict,omitempty"`
}

type wireToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

// wireThinking is thinking: {type: enabled, budget_tokens} (a fixed
// budget) or {type: adaptive, display: summarized} (Claude 4.6 and later,
// the depth by output_config.effort).
type wireThinking struct {
	Type         string `json:"type"`
	BudgetTokens int32  `json:"budget_tokens,omitempty"`
	Display      string `json:"display,omitempty"`
}

// wireOutputConfig is output_config; Format is structured output's
// {type: json_schema, schema}, Effort adaptive thinking's depth (low,
// medium, high).
type wireOutputConfig struct {
	Format *wireOutputFormat `json:"format,omitempty"`
	Effort string            `json:"effort,omitempty"`
}

type wireOutputFormat struct {
	Type   string          `json:"type"`
	Schema json.RawMessage `json:"schema"`
}

type wireMetadata struct {
	UserID string `json:"user_id,omitempty"`
}

// messageResponse is the non-streaming response body, and the `message` of
// a message_start stream event.
type messageResponse struct {
	ID           string           `json:"id"`
	Type         string           `json:"type"`
	Role         string           `json:"role"`
	Model        string           `json:"model"`
	Content      blockList        `json:"content"`
	StopReason   *stopReason      `json:"stop_reason"`
	StopSequence *string          `json:"stop_sequence"`
	StopDetails  json.RawMessage  `json:"stop_details"`
	Usage        *wireUsage       `json:"usage"`
	Error        *wireErrorDetail `json:"error"`
	RequestID    string           `json:"request_id"`
	// InputTransformations lists the changes the API made to the request's
	// input before the model saw it (today thinking_dropped entries: a
	// thinking block of the history removed because it failed a binding
	// check); [] when nothing changed, absent without the
	// thinking-binding-controls beta.
	InputTransformations json.RawMessage `json:"input_transformations"`
	// Container is the code-execution container the answer ran in
	// ({id, expires_at}); null when none was used.
	Container json.RawMessage `json:"container"`
	// ContextManagement reports the context edits the API applied
	// (applied_edits: cleared tool uses or thinking turns and the input
	// tokens they freed); {applied_edits: []} when none.
	ContextManagement json.RawMessage `json:"context_management"`
	// ProviderMetadata is a gateway's addition (see streamEvent).
	ProviderMetadata json.RawMessage `json:"provider_metadata"`
	// Diagnostics is the cache diagnostics beta's report (where this
	// request's prompt prefix diverged from the previous message's: a
	// cache_miss_reason); null when not asked for.
	Diagnostics json.RawMessage `json:"diagnostics"`
}

// contentBlock is one response content block: text, tool_use, thinking,
// redacted_thinking, or a type this adapter does not know.
type contentBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// ToolUseID is a server tool result's (web_search_tool_result,
	// mcp_tool_result, ...) call id.
	ToolUseID string `json:"tool_use_id"`
	// Content is a server tool result's content: an `*_tool_result_error`
	// object ({"type": "web_fetch_tool_result_error", "error_code":
	// "unavailable"}) when the tool failed; IsError marks a failed
	// mcp_tool_result. Only read to say so in the warning.
	Content json.RawMessage `json:"content"`
	IsError bool            `json:"is_error"`
	// Thinking and Signature are a thinking block's text and signature;
	// Data is a redacted_thinking block's encrypted content.
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
	Data      string `json:"data"`
	// Citations are a text block's sources (web search, documents): kept
	// as sent in meta.extended.citations (citations.go).
	Citations json.RawMessage `json:"citations"`
	// ToolsetName is a tool_use block's toolset, when the called tool is
	// one of a client toolset's (Anthropic's SDKs carry toolset_name on
	// ToolUseBlock and on the ToolUseBlockParam and ToolResultBlockParam
	// sent back: anthropic-sdk-java's generated models). The contract's
	// tool call has no place for it: warned (toolsetWarning).
	ToolsetName string `json:"toolset_name"`
	// From, To and Trigger are a `fallback` block's (server-side
	// fallback beta): the model that declined, the model the rest of the
	// answer is from, and why (e.g. {type: refusal, category: …}).
	From    *fallbackModel  `json:"from"`
	To      *fallbackModel  `json:"to"`
	Trigger json.RawMessage `json:"trigger"`
}

// fallbackModel is a `fallback` block's from or to.
type fallbackModel struct {
	Model string `json:"model"`
}

// blockList decodes `content` leniently: an array of blocks, a bare string
// (taken as one text block), or null.
type blockList []contentBlock

func (b *blockList) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	switch {
	case bytes.Equal(data, []byte("null")):
		*b = nil
		return nil
	case len(data) > 0 && data[0] == '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*b = blockList{{Type: "text", Text: s}}
		return nil
	}
	var blocks []contentBlock
	if err := json.Unmarshal(data, &blocks); err != nil {
		return err
	}
	*b = blocks
	return nil
}

// wireUsage is `usage`. Pointers tell absent/null from 0: in a stream's
// message_delta only the counts present are updates.
type wireUsage struct {
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
	// OutputTokensDetails.ThinkingTokens: the part of output_tokens spent
	// thinking (newer models report it).
	OutputTokensDetails *struct {
		ThinkingTokens *int64 `json:"thinking_tokens"`
	} `json:"output_tokens_details"`
	ServiceTier string `json:"service_tier"`
	// Iterations is the per-sampling-iteration breakdown the API adds when
	// it sampled more than once for the answer. The top-level counts leave
	// out the compaction iterations (usageState adds them back,
	// testdata/real_pyd_anthropic_compaction_usage_with_cache_streaming.http)
	// and hold the other "message" iterations; an advisor_message iteration
	// is another model's (testdata/real_pyd_anthropic_advisor_tool_stream.http).
	Iterations []wireIteration `json:"iterations"`
	// Raw is the usage object as sent: the fields no counter holds
	// (cache_creation's 5m/1h split, server_tool_use, fields added later)
	// are read from it into meta.extended.
	Raw json.RawMessage `json:"-"`
	// Odd are the paths of the fields read into a counter that held no
	// value of theirs (see UnmarshalJSON).
	Odd []string `json:"-"`
}

// wireIteration is one entry of usage.iterations.
type wireIteration struct {
	Type                     string `json:"type"`
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
}

// UnmarshalJSON decodes the counts and keeps the object's bytes. A field
// of another JSON type fails no answer: a count a proxy re-encoded ("7",
// 7.0) is read (provider.ReadCount); a count that is none, or a
// service_tier that is no string, is odd (left out, kept in usage_details
// as sent, said in a warning); iterations that do not decode are odd too
// (kept in usage_details, not added to the counts).
func (u *wireUsage) UnmarshalJSON(b []byte) error {
	type plain wireUsage
	err := json.Unmarshal(b, (*plain)(u)) // a type error still decodes the rest
	u.Raw = append(json.RawMessage(nil), b...)
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
	present := func(key string) (json.RawMessage, bool) {
		raw, ok := fields[key]
		return raw, ok && string(bytes.TrimSpace(raw)) != "null"
	}
	count := func(path string, raw json.RawMessage, dst **int64) {
		if n, ok := provider.ReadCount(raw); ok {
			*dst = &n
		} else {
			*dst = nil
			u.Odd = append(u.Odd, path)
		}
	}
	for _, c := range []struct {
		key string
		dst **int64
	}{{"input_tokens", &u.InputTokens}, {"output_tokens", &u.OutputTokens},
		{"cache_creation_input_tokens", &u.CacheCreationInputTokens}, {"cache_read_input_tokens", &u.CacheReadInputTokens}} {
		if raw, ok := present(c.key); ok {
			count(c.key, raw, c.dst)
		}
	}
	u.OutputTokensDetails = nil
	if raw, ok := present("output_tokens_details"); ok {
		var d map[string]json.RawMessage
		if json.Unmarshal(raw, &d) == nil {
			if t, ok := d["thinking_tokens"]; ok && string(bytes.TrimSpace(t)) != "null" {
				u.OutputTokensDetails = &struct {
					ThinkingTokens *int64 `json:"thinking_tokens"`
				}{}
				count("output_tokens_details.thinking_tokens", t, &u.OutputTokensDetails.ThinkingTokens)
			}
		}
	}
	u.ServiceTier = ""
	if raw, ok := present("service_tier"); ok {
		if json.Unmarshal(raw, &u.ServiceTier) != nil {
			u.Odd = append(u.Odd, "service_tier")
		}
	}
	u.Iterations = nil
	if raw, ok := present("iterations"); ok && json.Unmarshal(raw, &u.Iterations) != nil {
		u.Iterations = nil
		u.Odd = append(u.Odd, "iterations")
	}
	return nil
}

// stopReason is stop_reason. A value that is no string (a shape the API
// may adopt later) is kept as its JSON text (provider.OddEnumText), a
// finish of OTHER, instead of failing the answer.
type stopReason string

func (r *stopReason) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*r = stopReason(s)
		return nil
	}
	if !json.Valid(b) {
		return fmt.Errorf("stop_reason: invalid JSON")
	}
	*r = stopReason(provider.OddEnumText(b))
	return nil
}

// errorBody is an error response: {"type":"error","error":{...},"request_id"}.
type errorBody struct {
	Type      string           `json:"type"`
	Error     *wireErrorDetail `json:"error"`
	RequestID string           `json:"request_id"`
}

type wireErrorDetail struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	// Code is a compatible endpoint's error code, a string or a number
	// (Z.ai's OpenAI-shaped {"error":{"code":"1308",…}}), read when
	// there is no type (codeText).
	Code json.RawMessage `json:"code"`
	// Status is Google's canonical status name (RESOURCE_EXHAUSTED,
	// FAILED_PRECONDITION, ...) beside a numeric code: Vertex AI answers
	// for Claude with Google's error object, {"error":{"code":429,
	// "message":…,"status":"RESOURCE_EXHAUSTED"}} (cline/cline#651,
	// anthropics/claude-code#1440). Read before the number (codeText).
	Status string `json:"status"`
	// Details is what Anthropic adds beside the type and message: its
	// rate-limits documentation names error.details.error_code
	// ("enforced_spend_limit_reached" on the 429 of an organization
	// past its tier's monthly spend; errorCode); often null.
	Details json.RawMessage `json:"details"`
	// Metadata is OpenRouter's beside its own "Provider returned error":
	// {"raw": the upstream's answer (a string or JSON), "provider_name":
	// …}, which its Messages endpoint sends as its chat endpoint does
	// (relayedError).
	Metadata json.RawMessage `json:"metadata"`
}

// errorCode is details.error_code, "" when the details hold none (null,
// absent, another shape).
func (d *wireErrorDetail) errorCode() string {
	var v struct {
		ErrorCode string `json:"error_code"`
	}
	if len(d.Details) == 0 || json.Unmarshal(d.Details, &v) != nil {
		return ""
	}
	return strings.TrimSpace(v.ErrorCode)
}

// codeText is the error's type, else its code as text (a string's
// value, a number's digits); "" when it has neither.
func (d *wireErrorDetail) codeText() string {
	if d.Type != "" {
		return d.Type
	}
	if st := strings.TrimSpace(d.Status); st != "" {
		return st
	}
	var s string
	if json.Unmarshal(d.Code, &s) == nil {
		return strings.TrimSpace(s)
	}
	var n json.Number
	if json.Unmarshal(d.Code, &n) == nil {
		return n.String()
	}
	return ""
}

// streamEvent is the data of one SSE event. Which fields are set depends on
// Type.
type streamEvent struct {
	Type         string           `json:"type"`
	Message      *messageResponse `json:"message"`
	Index        *int             `json:"index"`
	ContentBlock *contentBlock    `json:"content_block"`
	Delta        *streamDelta     `json:"delta"`
	Usage        *wireUsage       `json:"usage"`
	Error        *wireErrorDetail `json:"error"`
	RequestID    string           `json:"request_id"`
	// InputTransformations is on message_delta only after a server-side
	// model fallback: the serving model's list, replacing message_start's.
	InputTransformations json.RawMessage `json:"input_transformations"`
	// ContextManagement is message_delta's report of the context edits
	// applied (see messageResponse).
	ContextManagement json.RawMessage `json:"context_management"`
	// ProviderMetadata is the Vercel AI Gateway's addition to
	// message_delta: its routing (the provider that served the call),
	// cost, the upstream's own fields (upstreamProvider).
	ProviderMetadata json.RawMessage `json:"provider_metadata"`
	// Diagnostics is the cache diagnostics report on message_delta,
	// should it come there (see messageResponse).
	Diagnostics json.RawMessage `json:"diagnostics"`
	// rawBlock is a provider item's content block as sent (not decoded:
	// set from the event's bytes when ContentBlock is one).
	rawBlock json.RawMessage
}

// streamDelta is the `delta` of content_block_delta (Type set: text_delta,
// input_json_delta, thinking_delta, signature_delta, ...) and of
// message_delta (StopReason set).
type streamDelta struct {
	Type         string      `json:"type"`
	Text         string      `json:"text"`
	PartialJSON  string      `json:"partial_json"`
	Thinking     string      `json:"thinking"`
	Signature    string      `json:"signature"`
	StopReason   *stopReason `json:"stop_reason"`
	StopSequence *string     `json:"stop_sequence"`
	// StopDetails explains some stop reasons (refusal: category,
	// explanation, recommended_model); null otherwise.
	StopDetails json.RawMessage `json:"stop_details"`
	// Container is message_delta's code-execution container ({id,
	// expires_at}), null when none was used.
	Container json.RawMessage `json:"container"`
	// Citation is a citations_delta's citation of its text block.
	Citation json.RawMessage `json:"citation"`
	// Content and EncryptedContent are a compaction_delta's pieces of a
	// compaction block (the summary, joined; the opaque state, the last
	// one sent).
	Content          *string `json:"content"`
	EncryptedContent *string `json:"encrypted_content"`
}
