package openai

import (
	"encoding/json"

	"github.com/llmrelay/llmrelay/server/provider"
)

// Wire types of the OpenAI Responses API (POST /responses). As in types.go,
// response types are lenient: fields whose shape varies between OpenAI,
// Azure and compatible servers are json.RawMessage and are read by hand in
// responses.go and responses_stream.go.

// formatResponses is the request format that selects the Responses API.
const formatResponses = "openai-responses"

// respRequest is the body of POST /responses. Field order is the order on
// the wire.
type respRequest struct {
	Model             string            `json:"model"`
	Input             []respInputItem   `json:"input"`
	Tools             []respTool        `json:"tools,omitempty"`
	ToolChoice        any               `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool             `json:"parallel_tool_calls,omitempty"`
	Temperature       *float64          `json:"temperature,omitempty"`
	TopP              *float64          `json:"top_p,omitempty"`
	MaxOutputTokens   *int32            `json:"max_output_tokens,omitempty"`
	Reasoning         *respReasoning    `json:"reasoning,omitempty"`
	Text              *respText         `json:"text,omitempty"`
	TopLogprobs       *int32            `json:"top_logprobs,omitempty"`
	SafetyIdentifier  string            `json:"safety_identifier,omitempty"`
	Metadata          map[string]string `json:"metadata,omitempty"`
	ServiceTier       string            `json:"service_tier,omitempty"`
	Store             bool              `json:"store"`
	Include           []string          `json:"include,omitempty"`
	Stream            bool              `json:"stream,omitempty"`
}

// respInputItem is one input item: a message ({type:"message", role,
// content}), a function call the model made earlier ({type:"function_call",
// call_id, name, arguments}), a tool result ({type:"function_call_output",
// call_id, output}) or the model's earlier reasoning ({type:"reasoning", id,
// summary, encrypted_content}).
type respInputItem struct {
	Type string `json:"type"`
	// ID is a reasoning item's rs_... id or an assistant message's msg_...
	// id (Part.item_id); Status goes with a message's id ("completed", as
	// the output message it came from).
	ID      string             `json:"id,omitempty"`
	Status  string             `json:"status,omitempty"`
	Role    string             `json:"role,omitempty"`
	Content []respInputContent `json:"content,omitempty"`
	// Phase is an assistant message's phase ("commentary",
	// "final_answer"), sent back as the answer gave it (Part.phase).
	Phase     string  `json:"phase,omitempty"`
	CallID    string  `json:"call_id,omitempty"`
	Name      string  `json:"name,omitempty"`
	Arguments *string `json:"arguments,omitempty"`
	Output    *string `json:"output,omitempty"`
	// OutputItems, when set, is a function_call_output's output as
	// input_text, input_image and input_file items (a tool result with
	// parts), sent as output instead of Output.
	OutputItems []respInputContent `json:"-"`
	// Summary is required on reasoning items (possibly empty: a pointer
	// so that [] is sent and other items omit it).
	Summary          *[]respSummaryPart `json:"summary,omitempty"`
	EncryptedContent string             `json:"encrypted_content,omitempty"`
	// from is the request message (and part) the item was built from, for
	// naming the request's field when OpenAI refuses an input item
	// (respInputField); not sent.
	from respFrom
	// raw is a provider item (Part.provider_item), sent as it is instead
	// of the fields above; Type repeats its type.
	raw json.RawMessage
}

// respOwnItems are the item types the contract has parts for: never
// provider items (one claiming such a type is not sent).
var respOwnItems = map[string]bool{"message": true, "function_call": true, "function_call_output": true, "custom_tool_call": true, "reasoning": true}

// MarshalJSON encodes a provider item as sent, any other item from its
// fields.
func (it *respInputItem) MarshalJSON() ([]byte, error) {
	if it.raw != nil {
		return it.raw, nil
	}
	type fields respInputItem
	if it.OutputItems != nil {
		return json.Marshal(struct {
			*fields
			Output []respInputContent `json:"output"`
		}{(*fields)(it), it.OutputItems})
	}
	return json.Marshal((*fields)(it))
}

// respSummaryPart is a reasoning summary part: {type:"summary_text", text}.
type respSummaryPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// respInputContent is a content part of an input message: input_text,
// input_image, input_file (user/system), output_text or refusal (assistant
// history).
type respInputContent struct {
	Type     string  `json:"type"`
	Text     *string `json:"text,omitempty"`
	ImageURL string  `json:"image_url,omitempty"`
	Detail   string  `json:"detail,omitempty"`
	Refusal  *string `json:"refusal,omitempty"`
	// Annotations is output_text's list, sent empty ([]) in a message
	// sent back with its id (the output message's shape).
	Annotations *[]struct{} `json:"annotations,omitempty"`
	// input_file: one of file_data (a data: URL, with filename), file_id,
	// file_url.
	FileData string `json:"file_data,omitempty"`
	FileID   string `json:"file_id,omitempty"`
	FileURL  string `json:"file_url,omitempty"`
	Filename string `json:"filename,omitempty"`
}

// respTool is a function tool; unlike Chat Completions the function's
// fields are at the top level.
type respTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
	// Hosted MCP tools (type "mcp").
	ServerLabel     string            `json:"server_label,omitempty"`
	ServerURL       string            `json:"server_url,omitempty"`
	AllowedTools    []string          `json:"allowed_tools,omitempty"`
	Authorization   string            `json:"authorization,omitempty"`
	Headers         map[string]string `json:"headers,omitempty"`
	RequireApproval string            `json:"require_approval,omitempty"`
}

type respNamedToolChoice struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

type respReasoning struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary,omitempty"`
}

type respText struct {
	Format respTextFormat `json:"format"`
}

// respTextFormat is text.format: {type:"text"}, {type:"json_object"} or
// {type:"json_schema", name, schema, strict} (flat, not nested as in Chat
// Completions' response_format).
type respTextFormat struct {
	Type   string          `json:"type"`
	Name   string          `json:"name,omitempty"`
	Schema json.RawMessage `json:"schema,omitempty"`
	Strict *bool           `json:"strict,omitempty"`
}

// respResponse is a Response object: the body of POST /responses, and the
// "response" of the response.created / completed / incomplete / failed
// stream events.
type respResponse struct {
	ID                string           `json:"id"`
	Object            string           `json:"object"`
	CreatedAt         flexInt          `json:"created_at"`
	Status            string           `json:"status"`
	Model             string           `json:"model"`
	Output            []respOutputItem `json:"output"`
	Usage             *respUsage       `json:"usage"`
	IncompleteDetails *respIncomplete  `json:"incomplete_details"`
	// MaxOutputTokens is the limit the response echoes, as sent (null
	// for none; limitOf).
	MaxOutputTokens json.RawMessage `json:"max_output_tokens"`
	Error           json.RawMessage `json:"error"`
	ServiceTier     string          `json:"service_tier"`
	// ContentFilters is Azure OpenAI's list of content filter verdicts
	// (one entry per source_type: prompt, completion), kept as sent.
	ContentFilters json.RawMessage `json:"content_filters"`
	// Moderation (OpenAI's moderation results, null unless asked) and
	// ToolUsage (the hosted tools' usage: image_gen tokens, web_search
	// calls) are kept in meta.extended (setRespExtras).
	Moderation json.RawMessage `json:"moderation"`
	ToolUsage  json.RawMessage `json:"tool_usage"`
	// ProviderMetadata is the Vercel AI Gateway's, on its final response
	// object: its routing names the provider that served the call
	// (provider.VercelGateway), as on its Chat Completions finish chunk;
	// the rest (costs) is not read.
	ProviderMetadata json.RawMessage `json:"provider_metadata"`
}

type respIncomplete struct {
	Reason string `json:"reason"`
}

// respOutputItem is an output item: message (content parts), function_call
// (id fc_..., call_id call_..., name, arguments), reasoning (id rs_...,
// summary, encrypted_content), or a hosted tool call we do not translate.
type respOutputItem struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	Status string `json:"status"`
	Role   string `json:"role"`
	// Phase labels a message item as the model's commentary or its
	// final_answer (gpt-5.3-codex and later): Part.phase.
	Phase string `json:"phase"`
	// Content is an array of output_text / refusal parts.
	Content json.RawMessage `json:"content"`
	CallID  string          `json:"call_id"`
	Name    string          `json:"name"`
	// Arguments is a JSON string on OpenAI; some compatible servers send
	// an object.
	Arguments json.RawMessage `json:"arguments"`
	// Namespace is a function_call's namespace (a function of a
	// namespace tool or one tool_search loaded), which the contract has
	// no place for (namespaceWarning).
	Namespace flexString `json:"namespace"`
	// Caller is what made a function_call when the model did not make
	// it directly: {type: "program", caller_id} for a call a program
	// item's code made (programmatic tool calling); callerWarning.
	Caller json.RawMessage `json:"caller"`
	// Input is the free-text input of a custom_tool_call.
	Input *string `json:"input"`
	// Summary is a reasoning item's array of summary_text parts.
	Summary json.RawMessage `json:"summary"`
	// EncryptedContent is a reasoning item's opaque state, present when
	// the request included "reasoning.encrypted_content" (a JSON string;
	// read leniently).
	EncryptedContent json.RawMessage `json:"encrypted_content"`
	// What the warning for an item the contract has no place for names
	// (hostedItemWarning): an MCP item's server_label, a hosted call's
	// error (mcp_call: a string or null), and an image_generation_call's
	// output_format, size and the length of its base64 result (the
	// image's bytes are not kept).
	ServerLabel  flexString      `json:"server_label"`
	Error        json.RawMessage `json:"error"`
	OutputFormat flexString      `json:"output_format"`
	Size         flexString      `json:"size"`
	Result       *byteCount      `json:"result"`
	// Environment is where a shell_call runs: absent for the client's
	// shell, a container (container_reference) for OpenAI's hosted one.
	Environment json.RawMessage `json:"environment"`
	// raw is a hosted item as sent (a provider item: itemKind ""),
	// compacted; nil for the items the contract has parts for.
	raw json.RawMessage
}

// respContentPart is an output_text or refusal part of a message item.
type respContentPart struct {
	Type    string  `json:"type"`
	Text    *string `json:"text"`
	Refusal *string `json:"refusal"`
	// Annotations are an output_text part's citations (url_citation,
	// file_citation...), kept as sent in meta.extended["annotations"].
	Annotations json.RawMessage `json:"annotations"`
	// Logprobs is an output_text part's token logprobs (asked with
	// include "message.output_text.logprobs"; respLogprobs).
	Logprobs json.RawMessage `json:"logprobs"`
}

type respUsage struct {
	InputTokens         flexInt            `json:"input_tokens"`
	InputTokensDetails  *respInputDetails  `json:"input_tokens_details"`
	OutputTokens        flexInt            `json:"output_tokens"`
	OutputTokensDetails *respOutputDetails `json:"output_tokens_details"`
	TotalTokens         flexInt            `json:"total_tokens"`
	// Raw is the usage object as sent, for the fields no counter holds.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the counters and keeps the object's bytes.
func (u *respUsage) UnmarshalJSON(b []byte) error {
	type plain respUsage
	err := json.Unmarshal(b, (*plain)(u)) // a type error still decodes the rest
	u.Raw = append(json.RawMessage(nil), b...)
	return err
}

type respInputDetails struct {
	CachedTokens     flexInt `json:"cached_tokens"`
	CacheWriteTokens flexInt `json:"cache_write_tokens"`
}

type respOutputDetails struct {
	ReasoningTokens flexInt `json:"reasoning_tokens"`
}

// respEvent is one stream event. Which fields are set depends on Type.
type respEvent struct {
	Type           string          `json:"type"`
	SequenceNumber *flexInt        `json:"sequence_number"`
	Response       *respResponse   `json:"response"`
	OutputIndex    *flexInt        `json:"output_index"`
	ItemID         string          `json:"item_id"`
	Item           *respOutputItem `json:"item"`
	Delta          json.RawMessage `json:"delta"`
	// Logprobs are an output_text delta's (or done event's) token
	// logprobs (respLogprobs).
	Logprobs  json.RawMessage `json:"logprobs"`
	Arguments json.RawMessage `json:"arguments"`
	// SummaryIndex is the summary part a reasoning summary delta belongs to.
	SummaryIndex *flexInt `json:"summary_index"`
	// ContentIndex is the content part a delta belongs to (the
	// reasoning_text part of a raw reasoning delta).
	ContentIndex *flexInt `json:"content_index"`
	// Error is set on an "error" event ({type, code, message, param});
	// older servers put code/message/param at the top level instead.
	Error   json.RawMessage `json:"error"`
	Code    flexString      `json:"code"`
	Message flexString      `json:"message"`
	Param   flexString      `json:"param"`
}

// UnmarshalJSON decodes an output item and keeps a hosted item's JSON
// (raw), which goes back unchanged as an input item (Part.provider_item).
func (it *respOutputItem) UnmarshalJSON(b []byte) error {
	type fields respOutputItem
	it.raw = nil
	if err := json.Unmarshal(b, (*fields)(it)); err != nil {
		return err
	}
	if itemKind(it.Type) == "" && it.Type != "" {
		if js, ok := provider.ItemJSON(b); ok {
			it.raw = json.RawMessage(js)
		}
	}
	return nil
}
