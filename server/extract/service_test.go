package extract

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

func assertJSONEqual(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("got %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want %q: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("got %s, want %s", got, want)
	}
}

// requestFromJSON builds the request the way grpcurl does from its -d text.
func requestFromJSON(t *testing.T, js string) *llmrelayv1.ExtractRequest {
	t.Helper()
	req := &llmrelayv1.ExtractRequest{}
	if err := protojson.Unmarshal([]byte(js), req); err != nil {
		t.Fatalf("request %s: %v", js, err)
	}
	return req
}

func TestServiceExtract(t *testing.T) {
	t.Parallel()
	svc := NewService()
	for _, tc := range []struct {
		name string
		req  string // the grpcurl -d text
		want string
	}{
		{"value: seed content string", `{"value": {"content": "Hello world"}}`,
			`{"texts":[{"text":"Hello world","pattern":"content_string","path":"/content"}],"matched_patterns":["content_string"]}`},
		{"value: seed tool_calls", `{"value": {"text": "Using tools", "tool_calls": [{"id": "call_123", "type": "function", "function": {"name": "search", "arguments": "{}"}}]}}`,
			`{"texts":[{"text":"Using tools","pattern":"text_field","path":"/text"}],
			"tool_uses":[{"name":"search","id":"call_123","input":{},"pattern":"openai_function","path":"/tool_calls/0"}],
			"matched_patterns":["text_field","openai_function"]}`},
		{"value: members in key order", `{"value": {"z": {"text": "last"}, "a": {"text": "first"}}}`,
			`{"texts":[{"text":"first","pattern":"text_field","path":"/a/text"},{"text":"last","pattern":"text_field","path":"/z/text"}],
			"matched_patterns":["text_field"]}`},
		{"value: null", `{"value": null}`, `{}`},
		{"json: document order", `{"json": "{\"z\": {\"text\": \"first\"}, \"a\": {\"text\": \"last\"}}"}`,
			`{"texts":[{"text":"first","pattern":"text_field","path":"/z/text"},{"text":"last","pattern":"text_field","path":"/a/text"}],
			"matched_patterns":["text_field"]}`},
		{"json: seed malformed arguments", `{"json": "{\"name\": \"search\", \"arguments\": \"not valid json {\"}"}`,
			`{"tool_uses":[{"name":"search","raw_arguments":"not valid json {","pattern":"flat_tool_use"}],"matched_patterns":["flat_tool_use"]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := svc.Extract(context.Background(), requestFromJSON(t, tc.req))
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			assertResponse(t, got, wantResponse(t, tc.want))
		})
	}
}

func TestServiceErrors(t *testing.T) {
	t.Parallel()
	svc := NewService()
	for _, tc := range []struct {
		name   string
		req    *llmrelayv1.ExtractRequest
		field  string // for *InputError
		offset int64  // for *SyntaxError, when field is ""
	}{
		{"no payload", &llmrelayv1.ExtractRequest{}, "payload", 0},
		{"nil request", nil, "payload", 0},
		{"empty json", &llmrelayv1.ExtractRequest{Payload: &llmrelayv1.ExtractRequest_Json{Json: ""}}, "json", 0},
		{"value without kind", &llmrelayv1.ExtractRequest{Payload: &llmrelayv1.ExtractRequest_Value{Value: &structpb.Value{}}}, "value", 0},
		{"nil value", &llmrelayv1.ExtractRequest{Payload: &llmrelayv1.ExtractRequest_Value{}}, "value", 0},
		{"invalid json", &llmrelayv1.ExtractRequest{Payload: &llmrelayv1.ExtractRequest_Json{Json: `{"content": "a",}`}}, "", 16},
		{"truncated json", &llmrelayv1.ExtractRequest{Payload: &llmrelayv1.ExtractRequest_Json{Json: `{"content": "a`}}, "", 14},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp, err := svc.Extract(context.Background(), tc.req)
			if resp != nil {
				t.Errorf("response %v with error", resp)
			}
			var ie *InputError
			var se *SyntaxError
			switch {
			case tc.field != "":
				if !errors.As(err, &ie) || ie.Field != tc.field || ie.Msg == "" {
					t.Fatalf("error %#v, want *InputError on %q", err, tc.field)
				}
			case !errors.As(err, &se) || se.Offset != tc.offset:
				t.Fatalf("error %#v, want *SyntaxError at %d", err, tc.offset)
			}
			if _, ok := err.(interface{ GRPCStatus() *status.Status }); ok {
				t.Errorf("errors must not build gRPC statuses themselves")
			}
		})
	}
}
