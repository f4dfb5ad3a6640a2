package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
)

// The request fuzzer: arbitrary bytes as a request message, and valid
// requests mutated field by field, sent through every RPC of an
// in-process server whose models are the builtin offline provider and
// OpenAI and Anthropic upstreams (an httptest server recording what it
// is sent). Bad input must come back as a clear status: never Internal or
// Unknown (a panic, which the recovery interceptor turns into Internal),
// every InvalidArgument with a BadRequest naming the field, and a request
// that is accepted must reach the upstream whole: its texts, stop
// sequences and tool names are all in the upstream request.

const rfYAML = `
defaults:
  retry: {max_attempts: 1}
providers:
  - {name: builtin, type: builtin}
  - {name: oai, type: openai, base_url: "{{URL}}/v1", api_key: sk-test-reqfuzz-0000}
  - {name: ant, type: anthropic, base_url: "{{URL}}", api_key: sk-ant-test-reqfuzz-0000, default_max_tokens: 64}
  - {name: goog, type: gemini, base_url: "{{URL}}", api_key: AIzaSyTEST-reqfuzz-0000000000000000000}
models:
  - name: echo
    provider: builtin
    upstream_model: echo
    capabilities:
      chat: {format: builtin}
      vision: {format: builtin}
      documents: {format: builtin}
      audio: {format: builtin}
      tools: {format: builtin}
  - name: embed
    provider: builtin
    upstream_model: embed
    capabilities:
      embeddings: {format: builtin}
  - name: oai
    provider: oai
    upstream_model: gpt-4o-audio-preview
    capabilities:
      chat: {format: openai-chat}
      tools: {format: openai-tools}
      vision: {format: openai-chat}
      documents: {format: openai-chat}
      audio: {format: openai-chat}
      embeddings: {format: openai-embeddings}
  - name: textonly
    provider: oai
    upstream_model: gpt-4o
    capabilities:
      chat: {format: openai-chat}
  - name: claude
    provider: ant
    upstream_model: claude-sonnet-4-5
    capabilities:
      chat: {format: anthropic-messages}
      tools: {format: anthropic-messages}
      vision: {format: anthropic-messages}
      documents: {format: anthropic-messages}
  - name: flash
    provider: goog
    upstream_model: gemini-2.5-flash
    capabilities:
      chat: {format: gemini}
      tools: {format: gemini}
      vision: {format: gemini}
      documents: {format: gemini}
      audio: {format: gemini}
`

const (
	rfChatJSON = `{"id":"chatcmpl-rf","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`
	rfChatSSE  = "data: {\"id\":\"chatcmpl-rf\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"ok\"},\"finish_reason\":null}]}\n\n" +
		"data: {\"id\":\"chatcmpl-rf\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1,\"total_tokens\":4}}\n\n" +
		"data: [DONE]\n\n"
	rfMsgJSON = `{"id":"msg_rf","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}`
	rfMsgSSE  = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_rf\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":1}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	rfGemJSON = `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":1,"totalTokenCount":4},"modelVersion":"gemini-2.5-flash","responseId":"rf"}`
)

// rfUpstream answers every chat, message and embedding request and keeps
// the bodies it was sent since the last take.
type rfUpstream struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (u *rfUpstream) take() [][]byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	b := u.bodies
	u.bodies = nil
	return b
}

func (u *rfUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	u.mu.Lock()
	u.bodies = append(u.bodies, body)
	u.mu.Unlock()
	var head struct {
		Stream bool            `json:"stream"`
		Input  json.RawMessage `json:"input"`
	}
	_ = json.Unmarshal(body, &head) // a body that is not JSON gets the unary answer: the test then fails on the body check
	switch {
	case strings.HasSuffix(r.URL.Path, "/embeddings"):
		var in []string
		if json.Unmarshal(head.Input, &in) != nil {
			var one string
			if json.Unmarshal(head.Input, &one) == nil {
				in = []string{one}
			}
		}
		var sb strings.Builder
		sb.WriteString(`{"object":"list","model":"text-embedding-3-small","data":[`)
		for i := range in {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(`{"object":"embedding","index":` + strconv.Itoa(i) + `,"embedding":[0.5,0.25]}`)
		}
		sb.WriteString(`],"usage":{"prompt_tokens":1,"total_tokens":1}}`)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, sb.String())
	case strings.HasSuffix(r.URL.Path, ":streamGenerateContent"):
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: "+rfGemJSON+"\r\n\r\n")
	case strings.HasSuffix(r.URL.Path, ":generateContent"):
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, rfGemJSON)
	case strings.HasSuffix(r.URL.Path, "/messages") && head.Stream:
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, rfMsgSSE)
	case strings.HasSuffix(r.URL.Path, "/messages"):
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, rfMsgJSON)
	case head.Stream:
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, rfChatSSE)
	default:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, rfChatJSON)
	}
}

// rfHarness is one server for all of a fuzz worker's inputs.
type rfHarness struct {
	up  *rfUpstream
	std *grpc.ClientConn // the standard codec
	raw *grpc.ClientConn // requests as bytes (rawCodec)
}

func newRFHarness(tb testing.TB) *rfHarness {
	tb.Helper()
	h := &rfHarness{up: &rfUpstream{}}
	hs := httptest.NewServer(h.up)
	tb.Cleanup(hs.Close)
	cfg, err := config.Parse([]byte(strings.ReplaceAll(rfYAML, "{{URL}}", hs.URL)), "reqfuzz")
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		tb.Fatal(err)
	}
	h.std = serveBufconn(tb, srv)
	h.raw = serveBufconn(tb, srv)
	return h
}

// rfMethods are the RPCs every input goes through, with a response
// message to decode into.
var rfMethods = []struct {
	name   string
	stream bool
	out    func() proto.Message
}{
	{"/llmrelay.v1.GatewayService/Chat", false, func() proto.Message { return &llmrelayv1.ChatResponse{} }},
	{"/llmrelay.v1.GatewayService/StreamChat", true, func() proto.Message { return &llmrelayv1.StreamChatResponse{} }},
	{"/llmrelay.v1.GatewayService/Tools", false, func() proto.Message { return &llmrelayv1.ToolsResponse{} }},
	{"/llmrelay.v1.GatewayService/StreamTools", true, func() proto.Message { return &llmrelayv1.StreamToolsResponse{} }},
	{"/llmrelay.v1.GatewayService/Embed", false, func() proto.Message { return &llmrelayv1.EmbedResponse{} }},
	{"/llmrelay.v1.ExtractService/Extract", false, func() proto.Message { return &llmrelayv1.ExtractResponse{} }},
}

// call sends req (bytes) to method and returns the final error and the
// responses.
func (h *rfHarness) call(method string, stream bool, req []byte, out func() proto.Message) ([]proto.Message, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	opt := grpc.ForceCodecV2(rawCodec{std: encoding.GetCodecV2(grpcproto.Name)})
	if !stream {
		m := out()
		if err := h.raw.Invoke(ctx, method, &req, m, opt); err != nil {
			return nil, err
		}
		return []proto.Message{m}, nil
	}
	s, err := h.raw.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, method, opt)
	if err != nil {
		return nil, err
	}
	if err := s.SendMsg(&req); err != nil {
		return nil, err
	}
	if err := s.CloseSend(); err != nil {
		return nil, err
	}
	var got []proto.Message
	for {
		m := out()
		err := s.RecvMsg(m)
		if errors.Is(err, io.EOF) {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		got = append(got, m)
	}
}

// checkStatus is the product rule for a refused request. Bytes that are
// no message at all (raw) cannot name a field.
// A call.timeout shorter than a call (tiny) may end it: DeadlineExceeded.
func checkStatus(t *testing.T, what string, raw, tiny bool, err error) {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok {
		t.Fatalf("%s: not a status: %v", what, err)
	}
	var info *errdetails.ErrorInfo
	var br *errdetails.BadRequest
	for _, d := range st.Details() {
		switch x := d.(type) {
		case *errdetails.ErrorInfo:
			info = x
		case *errdetails.BadRequest:
			br = x
		}
	}
	switch st.Code() {
	case codes.InvalidArgument:
		if raw && br == nil && strings.Contains(st.Message(), "could not be decoded") {
			break
		}
		if br == nil || len(br.GetFieldViolations()) == 0 || br.GetFieldViolations()[0].GetField() == "" {
			t.Fatalf("%s: InvalidArgument without a BadRequest naming the field: %v", what, st)
		}
	case codes.NotFound:
		if info.GetReason() != rfReason(llmrelayv1.ErrorReason_ERROR_REASON_MODEL_NOT_FOUND) {
			t.Fatalf("%s: NotFound with reason %q: %v", what, info.GetReason(), st)
		}
	case codes.FailedPrecondition:
		// or an answer (the stubs' "ok") that does not match a response_format
		if r := info.GetReason(); r != rfReason(llmrelayv1.ErrorReason_ERROR_REASON_CAPABILITY_NOT_SUPPORTED) &&
			r != rfReason(llmrelayv1.ErrorReason_ERROR_REASON_OUTPUT_VALIDATION_FAILED) {
			t.Fatalf("%s: FailedPrecondition with reason %q: %v", what, info.GetReason(), st)
		}
	case codes.ResourceExhausted: // a request beyond the gateway's size limits
	case codes.DeadlineExceeded:
		if !tiny {
			t.Fatalf("%s: DeadlineExceeded without a short call.timeout: %v", what, st)
		}
	default:
		t.Fatalf("%s: code %v: %v", what, st.Code(), st)
	}
	if info == nil {
		t.Fatalf("%s: status without ErrorInfo: %v", what, st)
	}
}

func rfReason(r llmrelayv1.ErrorReason) string {
	return strings.TrimPrefix(r.String(), "ERROR_REASON_")
}

// rfInvalid marks, in a mutated request, a string to be sent as invalid
// UTF-8: U+FFFD is three bytes, replaced on the wire by three bytes that
// are no UTF-8, so every length prefix stays right.
const rfInvalid = "\uFFFD"

// rfBytes hands out the fuzz input a byte at a time (zeros when used up).
type rfBytes struct{ b []byte }

func (r *rfBytes) next() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *rfBytes) pick(n int) int { return int(r.next()) % n }

var rfStrings = []string{"", " ", "x", rfInvalid, "a" + rfInvalid + "b", strings.Repeat("long ", 40000), "\x00", "日本語", "{", "null", "[]", "1"}

var rfFloats = []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1, 0, 0.5, 1.5, 3, 1e308, math.Copysign(0, -1), math.SmallestNonzeroFloat64}

var rfInts = []int32{-1, 0, 1, 64, math.MaxInt32, math.MinInt32}

var rfSchemas = []string{
	"", "not json", "[]", `"s"`, "null", "{", `{"type":"object"}`, `{"type":"string"}`, `{"type":"object","properties":{"a":{"type":"nope"}}}`,
	`{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`, rfDeepSchema(300), rfDeepSchema(5000), `{"$ref":"#/nowhere"}`,
	`{"type":"object","additionalProperties":false,"properties":{}}`, `{"type":"object","x":` + rfInvalid + `}`,
}

func rfDeepSchema(depth int) string {
	return strings.Repeat(`{"type":"object","properties":{"a":`, depth) + `{"type":"string"}` + strings.Repeat(`}}`, depth)
}

var rfExtraBodies = []string{"", "[]", "1", "null", "{", `"s"`, `{}`, `{"model":"x"}`, `{"stream":false}`, `{"temperature":2}`, `{"a":{"b":[1,2]}}`, `{"messages":[]}`, `{"a":1,"a":2}`}

var rfURLs = []string{"", "https://example.com/a.png", "http://", "ftp://x/y", "data:image/png;base64,iVBORw0KGgo=", "data:image/png,raw", "gs://bucket/f.pdf", "%zz", "https://exa mple.com/x", "javascript:alert(1)", "https://example.com/" + rfInvalid}

var rfMimes = []string{"", "image/png", "application/pdf", "text/plain", "audio/wav", "audio/mpeg", "audio/ogg", "video/mp4", "nonsense", "image/", "application/pdf; x=\"", "text/plain; charset=utf-8"}

func rfImage(r *rfBytes) *llmrelayv1.Image {
	img := &llmrelayv1.Image{MimeType: rfMimes[r.pick(len(rfMimes))], Detail: llmrelayv1.ImageDetail(int32(r.pick(6)) - 1)}
	switch r.pick(3) {
	case 0:
		img.Source = &llmrelayv1.Image_Url{Url: rfURLs[r.pick(len(rfURLs))]}
	case 1:
		img.Source = &llmrelayv1.Image_Data{Data: [][]byte{nil, {0x89, 'P', 'N', 'G'}, bytes.Repeat([]byte{1}, 3000)}[r.pick(3)]}
	}
	return img
}

func rfFile(r *rfBytes) *llmrelayv1.File {
	f := &llmrelayv1.File{MimeType: rfMimes[r.pick(len(rfMimes))], Filename: []string{"", "a.pdf", "a\nb", rfInvalid, "x\x00"}[r.pick(5)]}
	switch r.pick(4) {
	case 0:
		f.Source = &llmrelayv1.File_Url{Url: rfURLs[r.pick(len(rfURLs))]}
	case 1:
		f.Source = &llmrelayv1.File_Data{Data: [][]byte{nil, []byte("%PDF-1.4"), []byte("RIFF")}[r.pick(3)]}
	case 2:
		f.Source = &llmrelayv1.File_FileId{FileId: []string{"", " ", "file-abc", rfInvalid}[r.pick(4)]}
	}
	return f
}

func rfPart(r *rfBytes) *llmrelayv1.Part {
	s := func() string { return rfStrings[r.pick(len(rfStrings))] }
	switch r.pick(9) {
	case 0:
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: s()}}
	case 1:
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: rfImage(r)}}
	case 2:
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: rfFile(r)}}
	case 3:
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: s(), Name: []string{"get_weather", "", "unknown_tool", "bad name"}[r.pick(4)], Arguments: []string{`{"city":"Paris"}`, "", "not json", "[]", "null", `{"a":` + rfInvalid + `}`}[r.pick(6)]}}}
	case 4:
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: []string{"call_1", "", "call_nowhere", rfInvalid}[r.pick(4)], Content: s()}}}
	case 5:
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Refusal{Refusal: s()}}
	case 6:
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Text: s(), Signature: s()}}}
	case 7:
		return &llmrelayv1.Part{} // no kind
	}
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{}} // a kind holding nil
}

// rfBase is a valid tools request: a tool loop's second turn.
func rfBase(model string) *llmrelayv1.ToolsRequest {
	params := `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`
	return &llmrelayv1.ToolsRequest{
		Model: model,
		Messages: []*llmrelayv1.Message{
			{Role: llmrelayv1.Role_ROLE_SYSTEM, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "be brief"}}}},
			user("weather in Paris?"),
			{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}}}},
			{Role: llmrelayv1.Role_ROLE_TOOL, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "call_1", Content: "sunny"}}}}},
		},
		Tools: []*llmrelayv1.Tool{{Name: "get_weather", Description: "Weather", Parameters: params}},
	}
}

var rfModels = []string{"echo", "oai", "claude", "textonly", "embed", "nope", "", rfInvalid}

// rfModel picks a model; the Gemini one came last, on the top bytes, so
// that the corpus's inputs keep their models.
func rfModel(r *rfBytes) string {
	b := r.next()
	if b >= 240 {
		return "flash"
	}
	return rfModels[int(b)%len(rfModels)]
}

// rfMutate builds a request from the fuzz bytes: a valid one, then one
// mutation per byte pair.
func rfMutate(data []byte) (*llmrelayv1.ToolsRequest, *llmrelayv1.EmbedRequest) {
	r := &rfBytes{b: data}
	req := rfBase(rfModel(r))
	emb := &llmrelayv1.EmbedRequest{Model: []string{"embed", "oai", "echo", "nope"}[r.pick(4)], Inputs: []string{"hello", "world"}}
	opts := func() *llmrelayv1.GenerationOptions {
		if req.Options == nil {
			req.Options = &llmrelayv1.GenerationOptions{}
		}
		return req.Options
	}
	po := func() *llmrelayv1.ProviderOptions {
		if req.ProviderOptions == nil {
			req.ProviderOptions = &llmrelayv1.ProviderOptions{}
		}
		return req.ProviderOptions
	}
	for n := 0; len(r.b) > 0 && n < 64; n++ {
		s := func() string { return rfStrings[r.pick(len(rfStrings))] }
		f := func() *float64 { v := rfFloats[r.pick(len(rfFloats))]; return &v }
		i := func() *int32 { v := rfInts[r.pick(len(rfInts))]; return &v }
		msg := func() *llmrelayv1.Message { return req.Messages[r.pick(len(req.Messages))] }
		switch r.pick(24) {
		case 0:
			if len(req.Messages) > 0 {
				msg().Role = llmrelayv1.Role(int32(r.pick(8)) - 1)
			}
		case 1:
			if len(req.Messages) > 0 {
				m := msg()
				m.Parts = append(m.Parts, rfPart(r))
			}
		case 2:
			req.Messages = append(req.Messages, &llmrelayv1.Message{Role: llmrelayv1.Role(r.pick(6)), Parts: []*llmrelayv1.Part{rfPart(r)}})
		case 3:
			if len(req.Messages) > 0 {
				m := msg()
				if len(m.Parts) > 0 {
					m.Parts[r.pick(len(m.Parts))] = rfPart(r)
				} else {
					m.Parts = nil
				}
			}
		case 4:
			if len(req.Messages) > 0 {
				k := r.pick(len(req.Messages))
				req.Messages = append(req.Messages[:k], req.Messages[k+1:]...)
			}
		case 5:
			switch r.pick(4) {
			case 0:
				opts().Temperature = f()
			case 1:
				opts().TopP = f()
			case 2:
				opts().PresencePenalty = f()
			default:
				opts().FrequencyPenalty = f()
			}
		case 6:
			switch r.pick(3) {
			case 0:
				opts().MaxTokens = i()
			case 1:
				opts().TopK = i()
			default:
				v := int64(*i())
				opts().Seed = &v
			}
		case 7:
			switch r.pick(4) {
			case 0:
				opts().Stop = append(opts().Stop, s())
			case 1:
				opts().Stop = make([]string, 5000)
			case 2:
				for k := 0; k < 10; k++ {
					opts().Stop = append(opts().Stop, "stop"+strconv.Itoa(k))
				}
			default:
				opts().Stop = []string{"", ""}
			}
		case 8:
			opts().ReasoningEffort = llmrelayv1.ReasoningEffort(int32(r.pick(10)) - 1)
		case 9:
			switch r.pick(3) {
			case 0:
				opts().ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode(int32(r.pick(8)) - 1)}}
			case 1:
				opts().ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: []string{"get_weather", "", "other", rfInvalid}[r.pick(4)]}}
			default:
				opts().ToolChoice = &llmrelayv1.ToolChoice{}
			}
		case 10:
			opts().ResponseFormat = &llmrelayv1.ResponseFormat{
				Type:       llmrelayv1.ResponseFormatType(int32(r.pick(6)) - 1),
				SchemaName: []string{"", "answer", "bad name", strings.Repeat("n", 65), rfInvalid}[r.pick(5)],
				Schema:     rfSchemas[r.pick(len(rfSchemas))],
				Validation: llmrelayv1.OutputValidationMode(int32(r.pick(6)) - 1),
			}
		case 11:
			b := r.next()
			if b&1 != 0 {
				opts().ParallelToolCalls = proto.Bool(b&2 != 0)
			} else {
				opts().ParallelToolCalls = nil
			}
		case 12:
			req.Tools = append(req.Tools, &llmrelayv1.Tool{
				Name:        []string{"get_weather", "get_time", "", "bad name", strings.Repeat("t", 129), rfInvalid}[r.pick(6)],
				Description: s(),
				Parameters:  rfSchemas[r.pick(len(rfSchemas))],
			})
		case 13:
			if len(req.Tools) > 0 {
				t := req.Tools[r.pick(len(req.Tools))]
				t.Parameters = rfSchemas[r.pick(len(rfSchemas))]
			}
		case 14:
			req.Tools = nil
		case 15:
			po().ExtraBody = rfExtraBodies[r.pick(len(rfExtraBodies))]
		case 16:
			switch r.pick(5) {
			case 0:
				po().Provider = &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{User: s(), ServiceTier: []string{"", "auto", "flex", "bogus"}[r.pick(4)], TopLogprobs: i(), Metadata: map[string]string{s(): s()}, ReasoningSummary: s()}}
			case 1:
				po().Provider = &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{ThinkingBudgetTokens: i(), UserId: s(), Betas: []string{s()}}}
			case 2:
				po().Provider = &llmrelayv1.ProviderOptions_Gemini{Gemini: &llmrelayv1.GeminiOptions{}}
			case 3:
				po().Provider = &llmrelayv1.ProviderOptions_Ollama{Ollama: &llmrelayv1.OllamaOptions{}}
			default:
				po().Provider = &llmrelayv1.ProviderOptions_Openai{}
			}
		case 17:
			req.Call = &llmrelayv1.CallOptions{
				IgnoreInvalidOptions: r.next()&1 != 0,
				Timeout:              []*durationpb.Duration{nil, {Seconds: -1}, {Seconds: 0}, {Nanos: 1}, {Seconds: 1 << 40}, {Seconds: 5, Nanos: -1}}[r.pick(6)],
				Labels:               map[string]string{s(): s()},
			}
		case 18:
			req.Model = rfModel(r)
		case 19:
			emb.Inputs = append(emb.Inputs, s())
		case 20:
			switch r.pick(3) {
			case 0:
				emb.Inputs = nil
			case 1:
				emb.Inputs = make([]string, 3000)
			default:
				emb.Inputs = []string{""}
			}
		case 21:
			emb.Dimensions = i()
		case 22:
			emb.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: rfExtraBodies[r.pick(len(rfExtraBodies))]}
		case 23:
			if len(req.Messages) > 0 && r.next()&1 == 0 {
				// a tool result answering no call
				req.Messages = append(req.Messages, &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_TOOL, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "call_nowhere", Content: "x"}}}}})
			} else {
				req.Messages = append(req.Messages, user(s()))
			}
		}
	}
	return req, emb
}

// rfWire marshals m, turning every rfInvalid into invalid UTF-8.
func rfWire(t *testing.T, m proto.Message) []byte {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatalf("marshal %T: %v", m, err)
	}
	return bytes.ReplaceAll(b, []byte(rfInvalid), []byte{0xff, 0xfe, 0xfd})
}

// rfStrings collects every string of a JSON value, keys included.
func rfJSONStrings(v any, out *strings.Builder) {
	switch x := v.(type) {
	case string:
		out.WriteString(x)
		out.WriteByte(0)
	case []any:
		for _, e := range x {
			rfJSONStrings(e, out)
		}
	case map[string]any:
		for k, e := range x {
			out.WriteString(k)
			out.WriteByte(0)
			rfJSONStrings(e, out)
		}
	}
}

// checkSent: what an accepted request says reached the upstream: every
// non-empty text, every stop sequence and every tool name is one of the
// strings of the body (or in one of them).
func checkSent(t *testing.T, what string, req *llmrelayv1.ToolsRequest, tools bool, bodies [][]byte, meta *llmrelayv1.ResponseMeta) {
	t.Helper()
	if len(bodies) != 1 {
		t.Fatalf("%s: accepted, the upstream got %d requests", what, len(bodies))
	}
	if req.GetProviderOptions().GetExtraBody() != "" {
		// extra_body replaces the body's fields it names, by design
		// (provider.MergeExtraBody): {"messages":[]} sends none.
		return
	}
	var v any
	if err := json.Unmarshal(bodies[0], &v); err != nil {
		t.Fatalf("%s: the upstream got no JSON: %v: %.300s", what, err, bodies[0])
	}
	var sb strings.Builder
	rfJSONStrings(v, &sb)
	all := sb.String()
	want := func(field, s string) {
		if s != "" && !strings.Contains(all, s) {
			t.Fatalf("%s: %s %.80q accepted but not in the upstream request: %.600s", what, field, s, bodies[0])
		}
	}
	for i, m := range req.GetMessages() {
		for j, p := range m.GetParts() {
			f := "messages[" + strconv.Itoa(i) + "].parts[" + strconv.Itoa(j) + "]."
			want(f+"text", strings.TrimSpace(p.GetText()))
			want(f+"refusal", strings.TrimSpace(p.GetRefusal()))
			want(f+"tool_result.content", strings.TrimSpace(p.GetToolResult().GetContent()))
			want(f+"tool_result.call_id", p.GetToolResult().GetCallId())
			want(f+"tool_call.call_id", p.GetToolCall().GetCallId())
			want(f+"tool_call.name", p.GetToolCall().GetName())
			want(f+"image.url", rfURLPayload(p.GetImage().GetUrl()))
			want(f+"file.url", rfURLPayload(p.GetFile().GetUrl()))
			want(f+"file.file_id", p.GetFile().GetFileId())
		}
	}
	// The numeric options are in the body with their values, unless
	// ignore_invalid_options dropped them (and the meta says so).
	dropped := map[string]bool{}
	for _, d := range meta.GetDroppedOptions() {
		dropped[d.GetOption()] = true
	}
	top, _ := v.(map[string]any)
	gem, _ := top["generationConfig"].(map[string]any) // Gemini's options
	if gem != nil {
		top = map[string]any{"temperature": gem["temperature"], "top_p": gem["topP"], "seed": gem["seed"], "max_tokens": gem["maxOutputTokens"]}
	}
	num := func(option, key string, set bool, val float64) {
		if !set || dropped[option] {
			return
		}
		got, ok := top[key].(float64)
		if !ok || got != val {
			t.Fatalf("%s: options.%s %v accepted, the upstream got %s=%v: %.600s", what, option, val, key, top[key], bodies[0])
		}
	}
	o := req.GetOptions()
	if o == nil {
		o = &llmrelayv1.GenerationOptions{}
	}
	num("temperature", "temperature", o.Temperature != nil, o.GetTemperature())
	num("top_p", "top_p", o.TopP != nil, o.GetTopP())
	num("seed", "seed", o.Seed != nil && top["seed"] != nil, float64(o.GetSeed())) // Anthropic has no seed: refused or dropped
	if o.MaxTokens != nil && !dropped["max_tokens"] {
		got := top["max_tokens"]
		if got == nil {
			got = top["max_completion_tokens"]
		}
		if g, ok := got.(float64); !ok || g != float64(o.GetMaxTokens()) {
			t.Fatalf("%s: options.max_tokens %d accepted, the upstream got %v: %.600s", what, o.GetMaxTokens(), got, bodies[0])
		}
	}
	for i, s := range req.GetOptions().GetStop() {
		want("options.stop["+strconv.Itoa(i)+"]", s)
	}
	if tools {
		for i, tl := range req.GetTools() {
			want("tools["+strconv.Itoa(i)+"].name", tl.GetName())
		}
	}
}

// rfURLPayload is what of a URL reaches the upstream verbatim: a data URL
// is sent as its base64 payload by the formats with a source object
// (Anthropic's base64 source, Gemini's inlineData, Ollama's images), so
// only the payload is looked for; any other URL whole.
func rfURLPayload(u string) string {
	if strings.HasPrefix(u, "data:") {
		if i := strings.IndexByte(u, ','); i >= 0 {
			return u[i+1:]
		}
	}
	return u
}

// rfMeta is the meta of a call's responses (a stream's, from its end).
func rfMeta(resps []proto.Message) *llmrelayv1.ResponseMeta {
	for _, r := range resps {
		switch x := r.(type) {
		case *llmrelayv1.ChatResponse:
			return x.GetMeta()
		case *llmrelayv1.ToolsResponse:
			return x.GetMeta()
		case *llmrelayv1.StreamChatResponse:
			if e := x.GetEnd(); e != nil {
				return e.GetMeta()
			}
		case *llmrelayv1.StreamToolsResponse:
			if e := x.GetEnd(); e != nil {
				return e.GetMeta()
			}
		}
	}
	return nil
}

func FuzzChatRequest(f *testing.F) {
	// Seeds: (raw, data): raw sends data as the request bytes as they
	// are; otherwise data drives rfMutate.
	for _, m := range []proto.Message{
		&llmrelayv1.ChatRequest{Model: "echo", Messages: []*llmrelayv1.Message{user("hi")}},
		rfBase("oai"), rfBase("claude"),
		&llmrelayv1.EmbedRequest{Model: "embed", Inputs: []string{"a"}},
	} {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(true, b)
	}
	f.Add(true, []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0x01})
	for _, d := range [][]byte{
		{0}, {1}, {2}, {3}, {240}, // the base request to echo, oai, claude, textonly, flash
		{240, 0, 5, 0, 3, 7, 2},  // flash, temperature -1, ten stop sequences
		{1, 0, 5, 0, 0},          // oai, NaN temperature
		{1, 0, 7, 1},             // oai, 5000 empty stop strings
		{2, 0, 12, 0},            // claude, a duplicate tool
		{1, 0, 15, 1},            // oai, extra_body an array
		{2, 0, 10, 3, 0, 1, 0},   // claude, json_schema "not json"
		{1, 0, 1, 1, 2, 0, 1, 0}, // oai, an image part with a bad URL
		{2, 0, 1, 1, 2, 1, 2},    // claude, a file part by file_id
		{1, 0, 23, 0},            // oai, a tool result without a call
		{0, 1, 19, 3, 21, 0},     // embed to oai, invalid UTF-8, dimensions -1
	} {
		f.Add(false, d)
	}
	h := newRFHarness(f)
	f.Fuzz(func(t *testing.T, raw bool, data []byte) {
		if raw {
			for _, m := range rfMethods {
				h.up.take()
				if _, err := h.call(m.name, m.stream, data, m.out); err != nil {
					checkStatus(t, m.name+" (raw)", true, false, err)
				}
			}
			h.up.take()
			return
		}
		req, emb := rfMutate(data)
		chat := &llmrelayv1.ChatRequest{Model: req.Model, Messages: req.Messages, Options: req.Options, ProviderOptions: req.ProviderOptions, Call: req.Call}
		schat := &llmrelayv1.StreamChatRequest{Model: req.Model, Messages: req.Messages, Options: req.Options, ProviderOptions: req.ProviderOptions, Call: req.Call}
		stools := &llmrelayv1.StreamToolsRequest{Model: req.Model, Messages: req.Messages, Tools: req.Tools, Options: req.Options, ProviderOptions: req.ProviderOptions, Call: req.Call}
		wires := []proto.Message{chat, schat, req, stools, emb}
		d := req.GetCall().GetTimeout()
		tiny := d != nil && d.AsDuration() > 0 && d.AsDuration() < time.Second
		for k, m := range rfMethods[:5] {
			h.up.take()
			wire := rfWire(t, wires[k])
			resps, err := h.call(m.name, m.stream, wire, m.out)
			sent := h.up.take()
			if err != nil {
				checkStatus(t, m.name, false, tiny, err)
				continue
			}
			if bytes.Contains(wire, []byte{0xff, 0xfe, 0xfd}) {
				t.Fatalf("%s: invalid UTF-8 accepted", m.name)
			}
			if k < 4 && (req.Model == "oai" || req.Model == "claude" || req.Model == "textonly" || req.Model == "flash") {
				checkSent(t, m.name, req, k >= 2, sent, rfMeta(resps))
			}
		}
	})
}

// TestUndecodableNamesField: a request the decoder rejects is
// InvalidArgument with a BadRequest naming the field it broke in (a
// string that is not UTF-8, a nested message cut short, nesting beyond
// the limit under its top-level field); bytes that are no message name
// none.
func TestUndecodableNamesField(t *testing.T) {
	t.Parallel()
	h := newRFHarness(t)
	tools := rfBase("oai")
	tools.Tools[0].Parameters = `{"type":"object","description":"` + rfInvalid + `"}`
	stop := rfBase("oai")
	stop.Options = &llmrelayv1.GenerationOptions{Stop: []string{"a", "b", rfInvalid}}
	meta := rfBase("oai")
	meta.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Metadata: map[string]string{"k": rfInvalid}}}}
	// messages[1] whose bytes end inside its first part's length prefix
	cut := protowire.AppendTag(nil, 1, protowire.BytesType)
	cut = protowire.AppendString(cut, "oai")
	cut = protowire.AppendTag(cut, 2, protowire.BytesType)
	cut = protowire.AppendBytes(cut, rfWire(t, user("a")))
	cut = protowire.AppendTag(cut, 2, protowire.BytesType)
	cut = protowire.AppendBytes(cut, []byte{0x12, 0x80})
	cases := []struct {
		name   string
		method int
		req    []byte
		want   string
	}{
		{"text", 0, rfWire(t, &llmrelayv1.ChatRequest{Model: "oai", Messages: []*llmrelayv1.Message{user("a"), user("b" + rfInvalid)}}), "messages[1].parts[0].text"},
		{"tool parameters", 2, rfWire(t, tools), "tools[0].parameters"},
		{"stop, streamed", 3, rfWire(t, stop), "options.stop[2]"},
		{"map value", 2, rfWire(t, meta), "provider_options.openai.metadata"},
		{"embed input", 4, rfWire(t, &llmrelayv1.EmbedRequest{Model: "embed", Inputs: []string{"a", rfInvalid}}), "inputs[1]"},
		{"model", 1, rfWire(t, &llmrelayv1.ChatRequest{Model: rfInvalid}), "model"},
		{"cut short", 0, cut, "messages[1].parts[0]"},
		{"too deep", 5, deepValue(10_001), "value"},
		{"garbage", 0, []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0x01}, ""},
	}
	for _, tc := range cases {
		m := rfMethods[tc.method]
		_, err := h.call(m.name, m.stream, tc.req, m.out)
		st, _, br := statusDetails(t, err)
		if st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "could not be decoded") {
			t.Errorf("%s: %v", tc.name, st)
			continue
		}
		var got string
		if br != nil && len(br.GetFieldViolations()) == 1 {
			got = br.GetFieldViolations()[0].GetField()
		}
		if got != tc.want || (br == nil) != (tc.want == "") {
			t.Errorf("%s: field %q, want %q (%v)", tc.name, got, tc.want, st)
		}
	}
}

// TestExtraBodyNotObjectNamesField: an extra_body that is no JSON object
// is InvalidArgument naming provider_options.extra_body, on every model
// (the builtin one, which sends no body, too) and on Embed, before any
// upstream call; before, the OpenAI adapter's refusal came back without a
// field and the builtin model accepted it silently.
func TestExtraBodyNotObjectNamesField(t *testing.T) {
	t.Parallel()
	h := newRFHarness(t)
	c := llmrelayv1.NewGatewayServiceClient(h.std)
	ctx := context.Background()
	for _, extra := range []string{"[]", "1", "null", "{", `{"a":1,"a":2}`, `{} x`} {
		for _, model := range []string{"oai", "claude", "echo"} {
			req := &llmrelayv1.ChatRequest{Model: model, Messages: []*llmrelayv1.Message{user("hi")}, ProviderOptions: &llmrelayv1.ProviderOptions{ExtraBody: extra}}
			_, err := c.Chat(ctx, req)
			checkExtraRefused(t, model+" "+extra, err)
		}
		_, err := c.Embed(ctx, &llmrelayv1.EmbedRequest{Model: "oai", Inputs: []string{"a"}, ProviderOptions: &llmrelayv1.ProviderOptions{ExtraBody: extra}})
		checkExtraRefused(t, "embed "+extra, err)
	}
	if b := h.up.take(); len(b) != 0 {
		t.Errorf("the upstream was called %d times", len(b))
	}
}

func checkExtraRefused(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: accepted", what)
		return
	}
	st, _, br := statusDetails(t, err)
	if st.Code() != codes.InvalidArgument || br == nil || br.GetFieldViolations()[0].GetField() != "provider_options.extra_body" {
		t.Errorf("%s: %v %v", what, st, br)
	}
}

// TestToolMessageTextNamesPart: text beside a tool result in a tool
// message is refused for the OpenAI formats, naming the part (the adapter
// refused it without a field), and sent to Anthropic, whose tool messages
// are user turns that take it.
func TestToolMessageTextNamesPart(t *testing.T) {
	t.Parallel()
	h := newRFHarness(t)
	c := llmrelayv1.NewGatewayServiceClient(h.std)
	req := rfBase("oai")
	tool := req.Messages[3]
	tool.Parts = append(tool.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: "and a note"}})
	_, err := c.Tools(context.Background(), req)
	st, _, br := statusDetails(t, err)
	if st.Code() != codes.InvalidArgument || br == nil || br.GetFieldViolations()[0].GetField() != "messages[3].parts[1]" {
		t.Fatalf("oai: %v %v", st, br)
	}
	if b := h.up.take(); len(b) != 0 {
		t.Fatalf("the upstream was called: %s", b)
	}
	req.Model = "claude"
	resp, err := c.Tools(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkSent(t, "claude", req, true, h.up.take(), resp.GetMeta())
}
