package ollama

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/llmrelay/llmrelay/server/provider"
)

// Wire types of Ollama's native API (ollama/ollama api/types.go). Request
// types marshal with omitempty so that unset options take the model's
// defaults; response types are lenient (json.RawMessage and flexInt) so
// that one odd field never loses the rest of an answer.

// chatRequest is the body of POST /api/chat.
type chatRequest struct {
	Model    string          `json:"model"`
	Messages []wireMessage   `json:"messages"`
	Tools    []wireTool      `json:"tools,omitempty"`
	Stream   bool            `json:"stream"`
	Format   json.RawMessage `json:"format,omitempty"`
	Options  *wireOptions    `json:"options,omitempty"`
	// KeepAlive is a Go duration string ("5m", "0s", "-1s").
	KeepAlive string `json:"keep_alive,omitempty"`
	// Think is true/false or "low"/"medium"/"high".
	Think json.RawMessage `json:"think,omitempty"`
	// Truncate and Shift are sent false (see noSilentCut); older Ollama
	// versions ignore them.
	Truncate *bool `json:"truncate,omitempty"`
	Shift    *bool `json:"shift,omitempty"`
}

// wireMessage is api.Message.
type wireMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// Thinking is the assistant's earlier reasoning, sent back so that
	// thinking models (gpt-oss, qwen3, deepseek-r1) see it in the prompt
	// their template renders.
	Thinking  string         `json:"thinking,omitempty"`
	Images    []string       `json:"images,omitempty"`
	ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
	ToolName  string         `json:"tool_name,omitempty"`
	// ToolCallID is sent on tool messages (newer Ollama versions read it;
	// older ones ignore unknown fields).
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// wireToolCall is api.ToolCall in requests.
type wireToolCall struct {
	ID       string           `json:"id,omitempty"`
	Function wireToolCallFunc `json:"function"`
}

type wireToolCallFunc struct {
	Index     int             `json:"index"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// wireTool is api.Tool.
type wireTool struct {
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// wireOptions is the subset of api.Options the gateway sets.
type wireOptions struct {
	Temperature      *float64 `json:"temperature,omitempty"`
	TopP             *float64 `json:"top_p,omitempty"`
	TopK             *int32   `json:"top_k,omitempty"`
	NumPredict       *int32   `json:"num_predict,omitempty"`
	Stop             []string `json:"stop,omitempty"`
	Seed             *int64   `json:"seed,omitempty"`
	PresencePenalty  *float64 `json:"presence_penalty,omitempty"`
	FrequencyPenalty *float64 `json:"frequency_penalty,omitempty"`
	NumCtx           *int32   `json:"num_ctx,omitempty"`
	RepeatPenalty    *float64 `json:"repeat_penalty,omitempty"`
}

func (o *wireOptions) empty() bool {
	return o.Temperature == nil && o.TopP == nil && o.TopK == nil && o.NumPredict == nil && len(o.Stop) == 0 &&
		o.Seed == nil && o.PresencePenalty == nil && o.FrequencyPenalty == nil && o.NumCtx == nil && o.RepeatPenalty == nil
}

// embedRequest is the body of POST /api/embed.
type embedRequest struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int32    `json:"dimensions,omitempty"`
	KeepAlive  string   `json:"keep_alive,omitempty"`
	// Truncate is sent false (see noSilentCut): Ollama's default cuts an
	// over-long input to the context window without a word.
	Truncate *bool        `json:"truncate,omitempty"`
	Options  *wireOptions `json:"options,omitempty"`
}

// chatResponse is api.ChatResponse: the unary answer, and each line of a
// stream.
type chatResponse struct {
	Model string `json:"model"`
	// RemoteModel and RemoteHost name the upstream model and Ollama host
	// that answered when model is a local alias of a remote one (a
	// ":cloud" model proxied to ollama.com).
	RemoteModel string          `json:"remote_model"`
	RemoteHost  string          `json:"remote_host"`
	CreatedAt   string          `json:"created_at"`
	Message     *respMessage    `json:"message"`
	Done        bool            `json:"done"`
	DoneReason  doneReason      `json:"done_reason"`
	Error       json.RawMessage `json:"error"`
	// Logprobs is the generated tokens' log probabilities (Ollama 0.12.11
	// and later, when the request sets "logprobs"): a list of
	// {token, logprob, bytes, top_logprobs}, per line in a stream.
	Logprobs json.RawMessage `json:"logprobs"`
	// Response is /api/generate's answer field: never in an /api/chat
	// answer, so a body with it and no message is the wrong endpoint's
	// (a proxy rewriting the path), not an empty answer.
	Response json.RawMessage `json:"response"`
	metrics
}

// generateShaped reports whether an answer without a message is
// /api/generate's (a "response" field, even an empty string).
func (r *chatResponse) generateShaped() bool {
	return r.Message == nil && len(r.Response) > 0 && string(r.Response) != "null"
}

// metrics is api.Metrics: durations in nanoseconds and token counts.
type metrics struct {
	TotalDuration   flexInt `json:"total_duration"`
	LoadDuration    flexInt `json:"load_duration"`
	PromptEvalCount flexInt `json:"prompt_eval_count"`
	// PromptEvalCachedCount is the part of PromptEvalCount read from the
	// prompt cache (Ollama's promptEvalCount is cache_n + prompt_n).
	PromptEvalCachedCount flexInt `json:"prompt_eval_cached_count"`
	PromptEvalDuration    flexInt `json:"prompt_eval_duration"`
	EvalCount             flexInt `json:"eval_count"`
	EvalDuration          flexInt `json:"eval_duration"`
}

type respMessage struct {
	Role string `json:"role"`
	// Content is a string in Ollama; proxies have been seen sending an
	// array of parts, so it is decoded by contentText.
	Content   json.RawMessage `json:"content"`
	Thinking  json.RawMessage `json:"thinking"`
	ToolCalls []respToolCall  `json:"tool_calls"`
}

type respToolCall struct {
	ID       string `json:"id"`
	Function struct {
		Index *int   `json:"index"`
		Name  string `json:"name"`
		// Arguments is an object in Ollama; some models/proxies send a
		// JSON string holding the arguments text.
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// embedResponse is api.EmbedResponse.
type embedResponse struct {
	Model      string          `json:"model"`
	Embeddings [][]float32     `json:"embeddings"`
	Error      json.RawMessage `json:"error"`
	metrics
}

// errorBody is Ollama's error body: {"error":"..."}. Proxies in front of
// Ollama sometimes send {"error":{"message":...,"type":...,"code":...}}.
type errorBody struct {
	Error json.RawMessage `json:"error"`
	// SigninURL is where a local Ollama asks to be signed in to
	// ollama.com, beside its 401 "unauthorized" for a cloud model
	// (server/routes.go: gin.H{"error": "unauthorized", "signin_url": …}).
	SigninURL string `json:"signin_url"`
}

// flexInt is an integer that tolerates floats, numeric strings and null,
// so that a proxy's reformatting of a count never fails the whole answer.
// Present is false when the field was absent or null, or held no number;
// Odd is then the value it held instead (nil for absent or null), which
// setMetrics keeps in extended as sent, with a warning.
type flexInt struct {
	Value   int64
	Present bool
	Odd     json.RawMessage
}

func (f *flexInt) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*f = flexInt{}
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	s := string(b)
	if b[0] == '"' {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			f.Odd = append(json.RawMessage(nil), b...) // not representable
			return nil
		}
		s = str
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		*f = flexInt{Value: n, Present: true}
		return nil
	}
	if x, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(x) && !math.IsInf(x, 0) &&
		x > -9e18 && x < 9e18 {
		*f = flexInt{Value: int64(x), Present: true}
		return nil
	}
	f.Odd = append(json.RawMessage(nil), b...)
	return nil
}

// doneReason is done_reason. A value that is no string is kept as its
// JSON text (provider.OddEnumText), a finish of OTHER, instead of failing
// the answer.
type doneReason string

func (r *doneReason) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*r = doneReason(s)
		return nil
	}
	if string(bytes.TrimSpace(b)) != "null" {
		*r = doneReason(provider.OddEnumText(b))
	}
	return nil
}
