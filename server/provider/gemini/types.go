package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/llmrelay/llmrelay/server/provider"
)

// Wire types of the Gemini API (generativelanguage.googleapis.com v1beta),
// JSON names as in the REST reference and googleapis/go-genai. Request types
// carry only what the adapter sends; response types decode leniently
// (unknown fields ignored, nested provider-specific objects kept raw).

// generateContentRequest is the body of :generateContent and
// :streamGenerateContent.
type generateContentRequest struct {
	Contents          []content         `json:"contents"`
	SystemInstruction *content          `json:"systemInstruction,omitempty"`
	Tools             []tool            `json:"tools,omitempty"`
	ToolConfig        *toolConfig       `json:"toolConfig,omitempty"`
	SafetySettings    []safetySetting   `json:"safetySettings,omitempty"`
	GenerationConfig  *generationConfig `json:"generationConfig,omitempty"`
}

// content is one turn: role "user" or "model" (none for systemInstruction).
type content struct {
	Role  string `json:"role,omitempty"`
	Parts []part `json:"parts"`
}

// part is one piece of content. Exactly one of the data fields is set.
type part struct {
	Text             *string           `json:"text,omitempty"`
	InlineData       *blob             `json:"inlineData,omitempty"`
	FileData         *fileData         `json:"fileData,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
	// Thought marks a replayed thought (reasoning) part.
	Thought bool `json:"thought,omitempty"`
	// ThoughtSignature is the opaque signature the part came with, sent back
	// unchanged (on function calls, thoughts and signed text parts).
	ThoughtSignature string `json:"thoughtSignature,omitempty"`
	// trail marks a tool result's medium sent as a part of the user turn
	// after the turn's function responses (not sent): inCallOrder keeps
	// such parts at the end.
	trail bool
	// MediaResolution is an image part's resolution (Gemini 3: the
	// request's image detail level).
	MediaResolution *mediaResolution `json:"mediaResolution,omitempty"`
	// ExecutableCode, CodeExecutionResult, ToolCall and ToolResponse are
	// a code execution or built-in tool part of an earlier answer (a
	// provider item: partItem), sent back as it came; so are an answer's
	// media parts, as InlineData and FileData with their raw object.
	ExecutableCode      json.RawMessage `json:"executableCode,omitempty"`
	CodeExecutionResult json.RawMessage `json:"codeExecutionResult,omitempty"`
	ToolCall            json.RawMessage `json:"toolCall,omitempty"`
	ToolResponse        json.RawMessage `json:"toolResponse,omitempty"`
}

// mediaResolution is a part's {"level": "MEDIA_RESOLUTION_…"} (Gemini 3
// only; other models take the request-wide generationConfig setting).
type mediaResolution struct {
	Level string `json:"level"`
}

type blob struct {
	// DisplayName names a medium inside a functionResponse (a
	// FunctionResponseBlob), which the response references as
	// {"$ref": "<displayName>"}; empty elsewhere.
	DisplayName string `json:"displayName,omitempty"`
	MimeType    string `json:"mimeType"`
	// Data is standard base64.
	Data string `json:"data"`
	// raw, when set, is an answer's inlineData object sent back as it
	// came (a provider item), instead of the fields.
	raw json.RawMessage
}

// MarshalJSON writes raw when set, else the fields.
func (b blob) MarshalJSON() ([]byte, error) {
	if b.raw != nil {
		return b.raw, nil
	}
	type plain blob
	return json.Marshal(plain(b))
}

// fileData is a file by URI: a Files API file, a gs:// object or an
// http(s) URL. mimeType is optional for Files API files (their own type).
type fileData struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
	// raw, when set, is an answer's fileData object sent back as it came
	// (a provider item), instead of the fields.
	raw json.RawMessage
}

// MarshalJSON writes raw when set, else the fields.
func (f fileData) MarshalJSON() ([]byte, error) {
	if f.raw != nil {
		return f.raw, nil
	}
	type plain fileData
	return json.Marshal(plain(f))
}

type functionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type functionResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
	// Parts are the result's media (Gemini 3 multimodal function
	// responses: inlineData only on the Gemini API).
	Parts []functionResponsePart `json:"parts,omitempty"`
	// call is the call this answers, when the request holds it (not
	// sent): results go back in the order of their calls.
	call *callInfo
}

// functionResponsePart is a medium inside a functionResponse
// (FunctionResponsePart: inlineData; fileData "is not supported in Gemini
// API", googleapis/python-genai google/genai/types.py).
type functionResponsePart struct {
	InlineData *blob `json:"inlineData,omitempty"`
}

type tool struct {
	FunctionDeclarations []functionDeclaration `json:"functionDeclarations"`
}

// functionDeclaration uses parametersJsonSchema, which takes a full JSON
// Schema as written; the older `parameters` field takes Gemini's OpenAPI
// subset Schema and rejects much of JSON Schema.
type functionDeclaration struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

type toolConfig struct {
	FunctionCallingConfig functionCallingConfig `json:"functionCallingConfig"`
}

type functionCallingConfig struct {
	// AUTO, ANY or NONE.
	Mode                 string   `json:"mode"`
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

type safetySetting struct {
	Category  string `json:"category"`
	Threshold string `json:"threshold"`
}

type generationConfig struct {
	StopSequences    []string `json:"stopSequences,omitempty"`
	ResponseMimeType string   `json:"responseMimeType,omitempty"`
	// ResponseJSONSchema takes a full JSON Schema (responseSchema takes the
	// OpenAPI subset).
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
	MaxOutputTokens    *int32          `json:"maxOutputTokens,omitempty"`
	Temperature        *float64        `json:"temperature,omitempty"`
	TopP               *float64        `json:"topP,omitempty"`
	TopK               *int32          `json:"topK,omitempty"`
	Seed               *int64          `json:"seed,omitempty"`
	PresencePenalty    *float64        `json:"presencePenalty,omitempty"`
	FrequencyPenalty   *float64        `json:"frequencyPenalty,omitempty"`
	ThinkingConfig     *thinkingConfig `json:"thinkingConfig,omitempty"`
}

type thinkingConfig struct {
	IncludeThoughts *bool  `json:"includeThoughts,omitempty"`
	ThinkingBudget  *int32 `json:"thinkingBudget,omitempty"`
	// ThinkingLevel (Gemini 3 and later): "minimal", "low", "medium", "high".
	ThinkingLevel string `json:"thinkingLevel,omitempty"`
}

// generateContentResponse is the answer of :generateContent and each chunk
// of :streamGenerateContent. Error is set when a stream carries an error
// object instead of a chunk.
type generateContentResponse struct {
	Candidates     []candidate     `json:"candidates"`
	PromptFeedback *promptFeedback `json:"promptFeedback"`
	UsageMetadata  *usageMetadata  `json:"usageMetadata"`
	ModelVersion   string          `json:"modelVersion"`
	ResponseID     string          `json:"responseId"`
	// CreateTime is sent by Vertex AI only (RFC 3339).
	CreateTime string `json:"createTime"`
	// TurnToken identifies the model turn (v1_ + base64 of a message
	// holding the responseId); sent by the Developer API on answers that
	// take part in automatic continuation
	// (testdata/continuation_header_tier_1.http). Kept as sent.
	TurnToken string `json:"turnToken"`
	// ModelStatus is the Gemini API's word on the model's stage
	// (modelStage: EXPERIMENTAL, PREVIEW, STABLE, LEGACY, DEPRECATED,
	// RETIRED), when it retires (retirementTime, RFC 3339) and why
	// (message), as Google's SDKs type it (GenerateContentResponse
	// .modelStatus; not sent by Vertex AI). Kept whole.
	ModelStatus json.RawMessage `json:"modelStatus"`
	Error       *statusError    `json:"error"`
}

type candidate struct {
	Content          *respContent     `json:"content"`
	FinishReason     finishReasonName `json:"finishReason"`
	FinishMessage    string           `json:"finishMessage"`
	SafetyRatings    json.RawMessage  `json:"safetyRatings"`
	CitationMetadata json.RawMessage  `json:"citationMetadata"`
	// GroundingMetadata is the Google Search (or Maps, URL context) grounding
	// of the answer: the sources, which text each supports, the queries.
	GroundingMetadata json.RawMessage `json:"groundingMetadata"`
	// URLContextMetadata lists the URLs the URL context tool retrieved and
	// how each retrieval went.
	URLContextMetadata json.RawMessage `json:"urlContextMetadata"`
	// AvgLogprobs is the average log probability of the candidate's
	// tokens, which some models send unasked (gemini-2.0-flash, 1.5);
	// LogprobsResult the per-token ones asked with responseLogprobs.
	AvgLogprobs    json.RawMessage `json:"avgLogprobs"`
	LogprobsResult json.RawMessage `json:"logprobsResult"`
	// ContinuationToken is set when the answer stopped at the API's output
	// cap per response (finishReason CONTINUATION, or no finishReason on a
	// stream's checkpoint chunks): sent back as the request's top-level
	// continuationToken, it makes the API go on where the answer stopped.
	ContinuationToken string `json:"continuationToken"`
	Index             int    `json:"index"`
}

type respContent struct {
	Role  string     `json:"role"`
	Parts []respPart `json:"parts"`
}

// respPart is a response part. Text is a pointer so that an empty text part
// is distinguishable from a non-text part. Thought marks a thought summary
// (sent with includeThoughts); ThoughtSignature may come on any part.
type respPart struct {
	Text             *string       `json:"text"`
	Thought          bool          `json:"thought"`
	ThoughtSignature string        `json:"thoughtSignature"`
	FunctionCall     *respFunction `json:"functionCall"`
	// Parts of the kinds the normalized answer has no place for, kept
	// as provider items (partItem), or reported (unsupportedPartKind)
	// when not a JSON object: code execution (a tool Gemini runs
	// itself), inline and file data (generated media).
	ExecutableCode      json.RawMessage `json:"executableCode"`
	CodeExecutionResult json.RawMessage `json:"codeExecutionResult"`
	InlineData          json.RawMessage `json:"inlineData"`
	FileData            json.RawMessage `json:"fileData"`
	// ToolCall and ToolResponse are a built-in tool's invocation and
	// result ({"toolType": "FILE_SEARCH", "id": "std8lcuv"}), which
	// Gemini 3 sends with toolConfig.includeServerSideToolInvocations.
	ToolCall     json.RawMessage `json:"toolCall"`
	ToolResponse json.RawMessage `json:"toolResponse"`
}

// unsupportedPartKind names the kind of a part the adapter cannot
// translate ("" for text, thought and function call parts).
func unsupportedPartKind(pt *respPart) string {
	switch {
	case present(pt.ExecutableCode):
		return "executableCode"
	case present(pt.CodeExecutionResult):
		return "codeExecutionResult"
	case present(pt.InlineData):
		return "inlineData"
	case present(pt.FileData):
		return "fileData"
	case present(pt.ToolCall):
		return "toolCall"
	case present(pt.ToolResponse):
		return "toolResponse"
	}
	return ""
}

// respFunction keeps args raw: an object is re-encoded compactly with its
// key order; anything else is kept as the model sent it.
//
// With streamed function call arguments (Vertex AI's
// streamFunctionCallArguments) a call comes in several parts: the first
// has the name and willContinue: true, the next ones partialArgs, and an
// empty functionCall ({}) ends it (see streamedCall).
type respFunction struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Args         json.RawMessage `json:"args"`
	WillContinue bool            `json:"willContinue"`
	PartialArgs  []partialArg    `json:"partialArgs"`
}

// partialArg is one piece of a streamed call's arguments: the value at
// jsonPath ("$.location", "$.items[0].name"). A string value may come in
// several pieces for the same path (willContinue: true on all but the
// last); they are concatenated.
type partialArg struct {
	JSONPath     string          `json:"jsonPath"`
	StringValue  *string         `json:"stringValue"`
	NumberValue  json.RawMessage `json:"numberValue"`
	BoolValue    json.RawMessage `json:"boolValue"`
	NullValue    json.RawMessage `json:"nullValue"`
	WillContinue bool            `json:"willContinue"`
	// rawString is stringValue's quoted token as sent, read only when
	// the piece has a surrogate escape (a cut pair's half decodes to
	// U+FFFD alone: streamedCall joins it with the next piece's).
	rawString json.RawMessage
}

// UnmarshalJSON decodes a piece, keeping stringValue's token when it may
// hold half of a surrogate pair.
func (pa *partialArg) UnmarshalJSON(b []byte) error {
	type plain partialArg
	if err := json.Unmarshal(b, (*plain)(pa)); err != nil {
		return err
	}
	pa.rawString = nil
	if provider.HasSurrogateEscape(b) {
		var raw struct {
			StringValue json.RawMessage `json:"stringValue"`
		}
		if json.Unmarshal(b, &raw) == nil && len(raw.StringValue) > 0 && raw.StringValue[0] == '"' {
			pa.rawString = raw.StringValue
		}
	}
	return nil
}

type promptFeedback struct {
	BlockReason        blockReasonName `json:"blockReason"`
	BlockReasonMessage string          `json:"blockReasonMessage"`
	SafetyRatings      json.RawMessage `json:"safetyRatings"`
}

type usageMetadata struct {
	PromptTokenCount        int64 `json:"promptTokenCount"`
	CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
	ThoughtsTokenCount      int64 `json:"thoughtsTokenCount"`
	CachedContentTokenCount int64 `json:"cachedContentTokenCount"`
	ToolUsePromptTokenCount int64 `json:"toolUsePromptTokenCount"`
	TotalTokenCount         int64 `json:"totalTokenCount"`
	// Raw is the object as sent: the fields no counter holds (the
	// per-modality *TokensDetails, trafficType, fields added later) are
	// read from it into meta.extended.
	Raw json.RawMessage `json:"-"`
	// Odd are the counts that held no count (provider.ReadCount): left
	// at 0, kept in usage_details as sent, and said in a warning.
	Odd []string `json:"-"`
}

// UnmarshalJSON decodes the counts and keeps the object's bytes. A count
// of another JSON type fails no answer: one a proxy re-encoded ("7", 7.0)
// is read, anything else is odd.
func (u *usageMetadata) UnmarshalJSON(b []byte) error {
	type plain usageMetadata
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
	for _, c := range []struct {
		key string
		dst *int64
	}{{"promptTokenCount", &u.PromptTokenCount}, {"candidatesTokenCount", &u.CandidatesTokenCount},
		{"thoughtsTokenCount", &u.ThoughtsTokenCount}, {"cachedContentTokenCount", &u.CachedContentTokenCount},
		{"toolUsePromptTokenCount", &u.ToolUsePromptTokenCount}, {"totalTokenCount", &u.TotalTokenCount}} {
		raw, ok := fields[c.key]
		if !ok || string(bytes.TrimSpace(raw)) == "null" {
			continue
		}
		if n, ok := provider.ReadCount(raw); ok {
			*c.dst = n
		} else {
			*c.dst = 0
			u.Odd = append(u.Odd, c.key)
		}
	}
	return nil
}

// Embeddings.

type embedContentRequest struct {
	Model                string  `json:"model,omitempty"`
	Content              content `json:"content"`
	OutputDimensionality *int32  `json:"outputDimensionality,omitempty"`
}

type batchEmbedContentsRequest struct {
	Requests []embedContentRequest `json:"requests"`
}

// contentEmbedding keeps its values as sent: each number is rounded to
// float32 once, from its decimal (float32Values), not through float64,
// whose rounding first can land on the midpoint of two float32s and then
// round to the other one.
type contentEmbedding struct {
	Values json.RawMessage `json:"values"`
}

// The embedding responses carry usageMetadata too (promptTokenCount and
// promptTokenDetails, for all inputs of a batch together).
type embedContentResponse struct {
	Embedding     *contentEmbedding `json:"embedding"`
	UsageMetadata *usageMetadata    `json:"usageMetadata"`
}

type batchEmbedContentsResponse struct {
	Embeddings    []*contentEmbedding `json:"embeddings"`
	UsageMetadata *usageMetadata      `json:"usageMetadata"`
}

// Errors: google.rpc.Status in an "error" envelope.

type errorEnvelope struct {
	Error *statusError `json:"error"`
}

// statusError is a google.rpc.Status, its details as the provider
// package reads them for every Google API (Vertex AI's OpenAI-compatible
// endpoint too).
type statusError = provider.GoogleStatus

// finishReasonName and blockReasonName are the API's enum values as names.
// The API writes enums as their names unless the request asked for numbers
// ($alt=json;enum-encoding=int, as the older Go SDK, genai-go, did; a proxy
// that relays such a client's answers sends "finishReason": 1). A number is
// read back to its name where the enum's definition
// (google/ai/generativelanguage/v1beta/generative_service.proto) gives one,
// else kept as its decimal text (a finish of OTHER, the number as the
// provider's finish reason).
type (
	finishReasonName string
	blockReasonName  string
)

// finishReasonNames are Candidate.FinishReason's values by number, as
// generative_service.proto (googleapis/googleapis @ bc7e3baa) numbers them:
// LANGUAGE is 6 after OTHER's 5, and the values added since (7 to 17) are
// numbered in the order they were added, not the order the proto lists
// them in.
var finishReasonNames = []string{
	"FINISH_REASON_UNSPECIFIED", "STOP", "MAX_TOKENS", "SAFETY", "RECITATION", "OTHER", "LANGUAGE",
	"BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "MALFORMED_FUNCTION_CALL", "IMAGE_SAFETY",
	"UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS", "IMAGE_PROHIBITED_CONTENT", "IMAGE_OTHER", "NO_IMAGE",
	"IMAGE_RECITATION",
}

// blockReasonNames are PromptFeedback.BlockReason's values by number (the
// same proto).
var blockReasonNames = []string{"BLOCK_REASON_UNSPECIFIED", "SAFETY", "OTHER", "BLOCKLIST", "PROHIBITED_CONTENT", "IMAGE_SAFETY"}

// UnmarshalJSON reads the name, or the number (see finishReasonName).
func (f *finishReasonName) UnmarshalJSON(b []byte) error {
	s, err := enumName(b, finishReasonNames)
	*f = finishReasonName(s)
	return err
}

// UnmarshalJSON reads the name, or the number (see finishReasonName).
func (r *blockReasonName) UnmarshalJSON(b []byte) error {
	s, err := enumName(b, blockReasonNames)
	*r = blockReasonName(s)
	return err
}

// enumName reads an enum value written as its name (a JSON string) or its
// number; names maps numbers to names. A value that is neither (an object,
// a bool, a fraction: a shape the API may adopt later, or a proxy's) is
// kept as its JSON text (provider.OddEnumText) instead of failing the
// whole answer: the provider's finish reason shows it as sent and it maps
// to OTHER, as any unknown name does.
func enumName(b []byte, names []string) (string, error) {
	if len(b) > 0 && b[0] == '"' {
		var s string
		err := json.Unmarshal(b, &s)
		return s, err
	}
	if string(b) == "null" {
		return "", nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return provider.OddEnumText(b), nil
	}
	if n >= 0 && n < int64(len(names)) {
		return names[n], nil
	}
	return strconv.FormatInt(n, 10), nil
}

// itemKinds are the part kinds that become provider items (partItem), in
// the order partItem looks for them: code execution (a tool Gemini runs
// itself), generated media (an image model's inlineData, a fileData), and
// a built-in tool's invocation and result (Gemini 3's toolCall and
// toolResponse with toolConfig.includeServerSideToolInvocations).
var itemKinds = [...]string{"executableCode", "codeExecutionResult", "inlineData", "fileData", "toolCall", "toolResponse"}

// itemRaw is pt's object of kind itemKinds[i].
func itemRaw(pt *respPart, i int) json.RawMessage {
	switch i {
	case 0:
		return pt.ExecutableCode
	case 1:
		return pt.CodeExecutionResult
	case 2:
		return pt.InlineData
	case 3:
		return pt.FileData
	case 4:
		return pt.ToolCall
	}
	return pt.ToolResponse
}

// partItem is the provider item of a part of one of the itemKinds, typed
// by its kind: {"<kind>": <as sent>, "thought": true if it was marked so,
// "thoughtSignature": <its signature, if any>}. An image's base64 data is
// kept as sent, whatever its size: it is what the next turn sends back
// (Gemini 3 image models check the image part's signature).
// ok is false for other parts, and for one whose content is not a JSON
// object.
func partItem(pt *respPart) (provider.ProviderItem, bool) {
	var kind string
	var raw json.RawMessage
	for i, k := range itemKinds {
		if r := itemRaw(pt, i); present(r) {
			kind, raw = k, r
			break
		}
	}
	if kind == "" || !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		return provider.ProviderItem{}, false
	}
	v := map[string]json.RawMessage{kind: raw}
	if pt.Thought {
		v["thought"] = json.RawMessage("true")
	}
	if pt.ThoughtSignature != "" {
		sig, err := json.Marshal(pt.ThoughtSignature)
		if err != nil {
			return provider.ProviderItem{}, false
		}
		v["thoughtSignature"] = sig
	}
	b, err := json.Marshal(v)
	if err != nil {
		return provider.ProviderItem{}, false
	}
	js, ok := provider.ItemJSON(b)
	if !ok {
		return provider.ProviderItem{}, false
	}
	return provider.ProviderItem{Type: kind, JSON: js}, true
}
