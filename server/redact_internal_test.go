package server

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/pipeline"
)

// redactTestMeta is a meta like a call's: ids, usage details in
// extended, rate limits, a retry reason, raw capture, no secret.
func redactTestMeta() *llmrelayv1.ResponseMeta {
	ext, err := structpb.NewStruct(map[string]any{
		"usage_details":      map[string]any{"completion_tokens_details.reasoning_tokens": 12.0, "note": `100% "quoted" \n`},
		"system_fingerprint": "fp_0123456789",
		"list":               []any{"a", 1.0, map[string]any{"deep": "x%2Fy"}},
	})
	if err != nil {
		panic(err)
	}
	return &llmrelayv1.ResponseMeta{
		RequestId: "req-1", ProviderRequestId: "chatcmpl-abc", Provider: "oai", RequestedModel: "m", ResolvedModel: "gpt-4o-mini",
		ResponseId: "resp_1", TotalDuration: durationpb.New(37), Attempts: 2,
		RetryReasons: []*llmrelayv1.RetryReason{{Message: "upstream 503: try again \\u0020"}},
		Usage:        &llmrelayv1.Usage{InputTokens: 10, OutputTokens: 20, TotalTokens: 30},
		Extended:     ext, Warnings: []string{"w1"}, Format: "openai-chat",
		Raw: &llmrelayv1.RawData{
			Request: []byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi \u00e9"}]}`), Response: []byte(`{"id":"chatcmpl-abc"}`),
			RequestMethod: "POST", RequestUrl: "https://api.example.com/v1/chat/completions?x=%41",
			RequestHeaders:  map[string]string{"authorization": "[REDACTED]", "content-type": "application/json"},
			ResponseHeaders: map[string]string{"x-request-id": "abc"},
		},
	}
}

// TestRedactProtoFastPath: the scan of the encoding (mayHoldSecret) never
// lets a secret through, wherever in the meta and however encoded it is,
// and redactProto's result is the walk's.
func TestRedactProtoFastPath(t *testing.T) {
	t.Parallel()
	const key = "sk-fast/Path+0123456789"
	r := pipeline.NewRedactor(key, "second-secret-xyz")
	clean := redactTestMeta()
	if mayHoldSecret(r, clean) {
		t.Fatal("a meta without a secret takes the slow path")
	}
	got := proto.Clone(clean).(*llmrelayv1.ResponseMeta)
	redactProto(r, got)
	if !proto.Equal(got, clean) {
		t.Fatal("a meta without a secret changed")
	}

	var jsonEsc, jsonEsc2 strings.Builder
	for i := range len(key) {
		fmt.Fprintf(&jsonEsc, `\u%04x`, key[i])
		fmt.Fprintf(&jsonEsc2, `\\u%04X`, key[i])
	}
	forms := map[string]string{
		"literal": key, "json": jsonEsc.String(), "json in json": jsonEsc2.String(),
		"percent": url.QueryEscape(key), "path-escaped": url.PathEscape(key), "mixed": `sk\u002dfast\/Path%2B0123456789`,
		"second": "second-secret-xyz",
	}
	places := map[string]func(m *llmrelayv1.ResponseMeta, s string){
		"top string":      func(m *llmrelayv1.ResponseMeta, s string) { m.ProviderRequestId = "id-" + s + "-end" },
		"repeated string": func(m *llmrelayv1.ResponseMeta, s string) { m.Warnings = append(m.Warnings, s) },
		"nested message":  func(m *llmrelayv1.ResponseMeta, s string) { m.RetryReasons[0].Message = "bad key " + s },
		"raw bytes":       func(m *llmrelayv1.ResponseMeta, s string) { m.Raw.Response = []byte(`{"error":"` + s + `"}`) },
		"raw url":         func(m *llmrelayv1.ResponseMeta, s string) { m.Raw.RequestUrl += "&k=" + s },
		"map value":       func(m *llmrelayv1.ResponseMeta, s string) { m.Raw.ResponseHeaders["openai-organization"] = s },
		"map key":         func(m *llmrelayv1.ResponseMeta, s string) { m.Raw.ResponseHeaders["x-"+s] = "v" },
		"struct text": func(m *llmrelayv1.ResponseMeta, s string) {
			m.Extended.Fields["system_fingerprint"] = structpb.NewStringValue(s)
		},
		"struct key": func(m *llmrelayv1.ResponseMeta, s string) { m.Extended.Fields[s] = structpb.NewBoolValue(true) },
		"struct deep value": func(m *llmrelayv1.ResponseMeta, s string) {
			m.Extended.Fields["list"].GetListValue().Values[2].GetStructValue().Fields["deep"] = structpb.NewStringValue("{\"k\":\"" + s + "\"}")
		},
		"dropped option": func(m *llmrelayv1.ResponseMeta, s string) {
			m.DroppedOptions = append(m.DroppedOptions, &llmrelayv1.DroppedOption{Reason: s})
		},
	}
	for fname, form := range forms {
		for pname, place := range places {
			m := redactTestMeta()
			place(m, form)
			if !mayHoldSecret(r, m) {
				t.Errorf("%s in %s: the scan misses it", fname, pname)
			}
			slow := proto.Clone(m).(*llmrelayv1.ResponseMeta)
			redactMessage(r, slow.ProtoReflect())
			redactProto(r, m)
			if !proto.Equal(m, slow) {
				t.Errorf("%s in %s: redactProto and the walk differ", fname, pname)
			}
			if mayHoldSecret(r, m) {
				t.Errorf("%s in %s: still there after redaction: %v", fname, pname, m)
			}
		}
	}
}

func BenchmarkRedactProto(b *testing.B) {
	r := pipeline.NewRedactor("sk-bench-test-key-0000000000")
	m := redactTestMeta()
	b.Run("scan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			redactProto(r, m)
		}
	})
	b.Run("walk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			redactMessage(r, m.ProtoReflect())
		}
	})
}
