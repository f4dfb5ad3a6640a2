package server

import (
	"testing"

	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// responseTypes are the messages the server sends.
func responseTypes() []proto.Message {
	return []proto.Message{
		&llmrelayv1.ChatResponse{}, &llmrelayv1.StreamChatResponse{}, &llmrelayv1.ToolsResponse{},
		&llmrelayv1.StreamToolsResponse{}, &llmrelayv1.EmbedResponse{}, &llmrelayv1.ListModelsResponse{},
		&llmrelayv1.ExtractResponse{},
	}
}

// roundTrip encodes m with the server codec and decodes it with the
// standard proto codec into a new message of the same type.
func roundTrip(t testing.TB, m proto.Message) proto.Message {
	t.Helper()
	c := newCodec()
	data, err := c.Marshal(m)
	if err != nil {
		t.Fatalf("marshal %T: %v", m, err)
	}
	defer data.Free()
	if n := data.Len(); n != proto.Size(m) {
		t.Errorf("%T: %d bytes, proto.Size %d", m, n, proto.Size(m))
	}
	got := m.ProtoReflect().New().Interface()
	if err := proto.Unmarshal(data.Materialize(), got); err != nil {
		t.Fatalf("unmarshal %T: %v", m, err)
	}
	return got
}

func TestCodecRoundTrip(t *testing.T) {
	t.Parallel()
	ext, err := structpb.NewStruct(map[string]any{"system_fingerprint": "fp_1", "content_filter": map[string]any{"hate": map[string]any{"filtered": false}}, "n": 3.5})
	if err != nil {
		t.Fatal(err)
	}
	meta := &llmrelayv1.ResponseMeta{RequestId: "r-1", ProviderRequestId: "req_1", Provider: "oai", RequestedModel: "m", ResolvedModel: "gpt-4o",
		TotalDuration: durationpb.New(1234567), Attempts: 2, RetryReasons: []*llmrelayv1.RetryReason{{Reason: "http_429"}},
		Usage:    &llmrelayv1.Usage{InputTokens: 12, OutputTokens: 20, TotalTokens: 32, CachedInputTokens: 4, ReasoningTokens: 7},
		Extended: ext, FinishReason: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, Warnings: []string{"w"},
		Raw: &llmrelayv1.RawData{Request: []byte{0, 1, 0xff}, ResponseHeaders: map[string]string{"x-request-id": "req_1", "é": "ü"}}}
	big := make([]float32, 3072) // above the buffer pooling threshold
	for i := range big {
		big[i] = float32(i) / 7
	}
	for _, m := range []proto.Message{
		&llmrelayv1.ChatResponse{Message: &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{
			{Kind: &llmrelayv1.Part_Text{Text: "Paris, 巴黎 🗼"}},
			{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: "call_1", Name: "get_weather", Arguments: `{"city":`, ArgumentsValid: false}}},
		}}, Meta: meta},
		&llmrelayv1.StreamChatResponse{Event: &llmrelayv1.StreamChatResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{Text: "Hello "}}},
		&llmrelayv1.StreamChatResponse{Event: &llmrelayv1.StreamChatResponse_End{End: &llmrelayv1.StreamEnd{Meta: meta}}},
		&llmrelayv1.StreamToolsResponse{Event: &llmrelayv1.StreamToolsResponse_ToolCallDelta{ToolCallDelta: &llmrelayv1.ToolCallDelta{CallId: "call_1", Index: 1, ArgumentsDelta: `"Par`}}},
		&llmrelayv1.EmbedResponse{Embeddings: []*llmrelayv1.Embedding{{Values: big}}, Meta: meta},
		&llmrelayv1.StreamChatResponse{}, // empty: zero bytes
	} {
		if got := roundTrip(t, m); !proto.Equal(got, m) {
			t.Errorf("%T changed:\n got %v\nwant %v", m, got, m)
		}
	}
}

// TestCodecFallback: messages without generated marshalers (health,
// reflection) take the standard codec.
func TestCodecFallback(t *testing.T) {
	t.Parallel()
	m := &grpc_health_v1.HealthCheckResponse{Status: grpc_health_v1.HealthCheckResponse_SERVING}
	if got := roundTrip(t, m); !proto.Equal(got, m) {
		t.Errorf("got %v", got)
	}
	if _, err := newCodec().Marshal(struct{}{}); err == nil {
		t.Error("a non-message was marshaled")
	}
	var out llmrelayv1.ChatRequest
	if err := newCodec().Unmarshal(mem.BufferSlice{mem.SliceBuffer([]byte{0x0a, 0x02, 0xff, 0xfe})}, &out); err == nil {
		t.Error("invalid UTF-8 in a request string was accepted")
	}
}

// FuzzCodecMarshal: any message the standard decoder builds from any
// bytes comes out of the server codec as the same message, for every
// response type. Unknown fields are dropped first: the server builds its
// responses and never has any, and vtprotobuf does not keep those inside
// well-known types (found by this fuzz: a Timestamp with field 6).
func FuzzCodecMarshal(f *testing.F) {
	for _, m := range []proto.Message{
		&llmrelayv1.StreamChatResponse{Event: &llmrelayv1.StreamChatResponse_TextDelta{TextDelta: &llmrelayv1.TextDelta{Text: "Hello "}}},
		&llmrelayv1.ChatResponse{Meta: &llmrelayv1.ResponseMeta{RequestId: "r", Usage: &llmrelayv1.Usage{TotalTokens: 3}}},
	} {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0xfa, 0x01, 0x02, 0x08, 0x01}) // an unknown field
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, typ := range responseTypes() {
			m := typ.ProtoReflect().New().Interface()
			if proto.Unmarshal(b, m) != nil {
				continue
			}
			dropUnknown(m.ProtoReflect())
			if got := roundTrip(t, m); !proto.Equal(got, m) {
				t.Fatalf("%T changed:\n got %v\nwant %v", m, got, m)
			}
		}
	})
}

func dropUnknown(m protoreflect.Message) {
	m.SetUnknown(nil)
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				dropUnknown(mv.Message())
				return true
			})
		case fd.IsList() && fd.Message() != nil:
			for i := 0; i < v.List().Len(); i++ {
				dropUnknown(v.List().Get(i).Message())
			}
		case !fd.IsMap() && !fd.IsList() && fd.Message() != nil:
			dropUnknown(v.Message())
		}
		return true
	})
}
