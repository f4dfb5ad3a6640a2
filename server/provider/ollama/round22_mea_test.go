package ollama

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 22: dotnet/extensions' Ollama tests (Microsoft.Extensions.AI,
// testdata/README.md, "Round 22"): a local Ollama's answers of October
// 2024 (llama3.1, all-minilm) kept in the tests as the server wrote them,
// the unary ones indented by the tests' authors. Every expectation is read
// off the recording by hand.

func meaLocal(total, load, in, inDur, out, outDur float64) map[string]float64 {
	return map[string]float64{extTotalDuration: total, extLoadDuration: load, extPromptEvalCount: in,
		extPromptEvalDuration: inDur, extEvalCount: out, extEvalDuration: outDur}
}

// TestRound22MEALength: llama3.1 stopped by num_predict, unary (10
// tokens) and streamed (20): done_reason "length" is LENGTH, the text cut
// mid-sentence as sent. The stream's done line has a space after a comma
// (`"length", "done"`), which the authors' editing left and the decoder
// takes.
func TestRound22MEALength(t *testing.T) {
	t.Parallel()
	for _, tc := range []r22Case{
		{
			name: "real_mea_chat_length", model: "llama3.1", prompt: "hello",
			opts: &llmrelayv1.GenerationOptions{MaxTokens: ptr(int32(10)), Temperature: ptr(0.5)},
			text: "Hello! How are you today? Is there something", in: 11, out: 10, length: true,
			counters: meaLocal(22186844400, 17947219100, 11, 1953805000, 10, 2277274000),
			created:  "2024-10-01T15:46:10.5248793Z", sent: r22Options(`{"num_predict":10,"temperature":0.5}`),
		},
		{
			name: "real_mea_stream_length", model: "llama3.1", prompt: "hello", stream: true,
			opts: &llmrelayv1.GenerationOptions{MaxTokens: ptr(int32(20)), Temperature: ptr(0.5)},
			text: "Hello! How are you today? Is there something I can help you with or would you like to", in: 11, out: 20, length: true,
			counters: meaLocal(11912402900, 6824559200, 11, 1329601000, 20, 3754262000),
			created:  "2024-10-01T16:15:24.2514508Z", sent: r22Options(`{"num_predict":20,"temperature":0.5}`),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r22Run(t, tc)
		})
	}
}

// TestRound22MEAMultiTurn: three messages and every sampling option
// M.E.AI maps; the options we send are the recorded request's, which the
// server answered (stop, 36 in, 55 out).
func TestRound22MEAMultiTurn(t *testing.T) {
	t.Parallel()
	r22Run(t, r22Case{
		name: "real_mea_chat_multi_turn", model: "llama3.1",
		msgs: []*llmrelayv1.Message{
			msg(llmrelayv1.Role_ROLE_USER, text("hello!")),
			msg(llmrelayv1.Role_ROLE_ASSISTANT, text("hi, how are you?")),
			msg(llmrelayv1.Role_ROLE_USER, text("i'm good. how are you?")),
		},
		opts: &llmrelayv1.GenerationOptions{Temperature: ptr(0.25), FrequencyPenalty: ptr(0.75), PresencePenalty: ptr(0.5),
			Stop: []string{"great"}, Seed: ptr(int64(42))},
		text: "I'm just a computer program, so I don't have feelings or emotions like humans do, but I'm functioning properly and ready " +
			"to help with any questions or tasks you may have! How about we chat about something in particular or just shoot the breeze? Your choice!",
		in: 36, out: 55, counters: meaLocal(23229369000, 7724086300, 36, 4245660000, 55, 11256470000),
		created: "2024-10-01T17:18:46.308987Z",
		sent: func(t *testing.T, body map[string]json.RawMessage) {
			r22Options(`{"frequency_penalty":0.75,"presence_penalty":0.5,"seed":42,"stop":["great"],"temperature":0.25}`)(t, body)
			var msgs []map[string]any
			if err := json.Unmarshal(body["messages"], &msgs); err != nil {
				t.Fatal(err)
			}
			want := []map[string]any{{"role": "user", "content": "hello!"}, {"role": "assistant", "content": "hi, how are you?"},
				{"role": "user", "content": "i'm good. how are you?"}}
			if !reflect.DeepEqual(msgs, want) {
				t.Errorf("messages sent %s", body["messages"])
			}
		},
	})
}

// meaAgeTool is the tool of the recorded requests.
func meaAgeTool() *llmrelayv1.Tool {
	return &llmrelayv1.Tool{Name: "GetPersonAge", Description: "Gets the age of the specified person.",
		Parameters: `{"type":"object","properties":{"personName":{"description":"The person whose age is being requested","type":"string"}},"required":["personName"]}`}
}

// TestRound22MEAToolCall: llama3.1 calls GetPersonAge({"personName":
// "Alice"}) with arguments as an object and no id (Ollama of October 2024
// gave none): a made id, the same the stream would make, the arguments
// compact as sent, a tool-call finish on done_reason "stop"; 170 in, 19
// out. The tools we send are the recorded request's. The follow-up
// (real_mea_tool_result_answer) answers the call's result: "Alice is 42
// years old.", 106 in, 8 out.
func TestRound22MEAToolCall(t *testing.T) {
	t.Parallel()
	const name = "real_mea_tool_call"
	srv := providertest.ReplayFile(t, td(name+".http"))
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "llama3.1",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("How old is Alice?"))},
		Tools:    []*llmrelayv1.Tool{meaAgeTool()}}
	built, err := buildChatRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	res, err := newTestProvider(t, srv).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, td(name+".golden"), renderResult(t, res))
	parts := res.Message.GetParts()
	if len(parts) != 1 {
		t.Fatalf("parts %v, want one call", parts)
	}
	call := parts[0].GetToolCall()
	if call.GetName() != "GetPersonAge" || call.GetArguments() != `{"personName":"Alice"}` || !call.GetArgumentsValid() ||
		call.GetCallId() != callID(built.salt, "llama3.1", 0, "GetPersonAge") {
		t.Errorf("call %v", call)
	}
	m := res.Meta
	if m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetProviderFinishReason() != "stop" || m.GetToolCallCount() != 1 ||
		m.GetResolvedModel() != "llama3.1" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	checkUsage(t, m.GetUsage(), 170, 19)
	checkCounters(t, m, meaLocal(27351311300, 8041538400, 170, 16078776000, 19, 3227962000))
	var sent struct {
		Tools []any `json:"tools"`
	}
	if err := json.Unmarshal(srv.Last(t).Body, &sent); err != nil {
		t.Fatal(err)
	}
	var recorded []any
	if err := json.Unmarshal([]byte(`[{"type":"function","function":{"name":"GetPersonAge","description":"Gets the age of the specified person.",
		"parameters":{"type":"object","properties":{"personName":{"description":"The person whose age is being requested","type":"string"}},"required":["personName"]}}}]`), &recorded); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sent.Tools, recorded) {
		t.Errorf("tools sent %v, the recorded request's %v", sent.Tools, recorded)
	}

	// The follow-up: the call given back with its result.
	follow := []*llmrelayv1.Message{
		msg(llmrelayv1.Role_ROLE_USER, text("How old is Alice?")),
		{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: parts},
		msg(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{
			CallId: call.GetCallId(), Name: "GetPersonAge", Content: "42"}}}),
	}
	r22Run(t, r22Case{
		name: "real_mea_tool_result_answer", model: "llama3.1", msgs: follow,
		text: "Alice is 42 years old.", in: 106, out: 8,
		counters: meaLocal(20320666000, 8159642600, 106, 10846727000, 8, 1307842000), created: "2024-10-01T20:57:20.157266Z",
		sent: func(t *testing.T, body map[string]json.RawMessage) {
			// M.E.AI of 2024 sent the call and its result as JSON text
			// in content (which the server answered); ours sends them as
			// Ollama's tool_calls and a tool message naming the call.
			var msgs []struct {
				Role      string `json:"role"`
				Content   string `json:"content"`
				ToolName  string `json:"tool_name"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct {
						Name      string          `json:"name"`
						Arguments json.RawMessage `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			}
			if err := json.Unmarshal(body["messages"], &msgs); err != nil {
				t.Fatal(err)
			}
			if len(msgs) != 3 || len(msgs[1].ToolCalls) != 1 || msgs[1].ToolCalls[0].ID != call.GetCallId() ||
				msgs[1].ToolCalls[0].Function.Name != "GetPersonAge" || string(msgs[1].ToolCalls[0].Function.Arguments) != `{"personName":"Alice"}` ||
				msgs[2].Role != "tool" || msgs[2].Content != "42" || msgs[2].ToolName != "GetPersonAge" {
				t.Errorf("messages sent %s", body["messages"])
			}
		},
	})
}

// TestRound22MEAEmbed: /api/embed with all-minilm for two inputs: two
// 384-value vectors (values from 1e-8 down to 7.8e-34 in exponent form,
// others plain, as Go writes float32; each vector of unit length), in
// input order; total_duration, load_duration and prompt_eval_count 9 (the
// input tokens of both), no eval counts. Every value must be the recorded
// number as a float32.
func TestRound22MEAEmbed(t *testing.T) {
	t.Parallel()
	const name = "real_mea_embed_minilm"
	srv := providertest.ReplayFile(t, td(name+".http"))
	res, err := newTestProvider(t, srv).Embed(context.Background(), &provider.EmbedRequest{Model: "all-minilm",
		Inputs: []string{"hello, world!", "red, white, blue"}})
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	var rec struct {
		Embeddings [][]float64 `json:"embeddings"`
	}
	if err := json.Unmarshal(recordedBody(t, name+".http"), &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.Embeddings) != 2 || len(res.Embeddings) != 2 {
		t.Fatalf("recorded %d embeddings, got %d", len(rec.Embeddings), len(res.Embeddings))
	}
	for i, e := range res.Embeddings {
		got := e.GetValues()
		if e.GetIndex() != int32(i) || len(got) != 384 || len(rec.Embeddings[i]) != 384 {
			t.Fatalf("embedding %d: index %d, %d values", i, e.GetIndex(), len(got))
		}
		for j, v := range rec.Embeddings[i] {
			if got[j] != float32(v) {
				t.Errorf("embedding %d value %d = %v, want %v", i, j, got[j], float32(v))
			}
		}
	}
	// Read off the recording: first and last values, and the exponent forms.
	a, b := res.Embeddings[0].GetValues(), res.Embeddings[1].GetValues()
	if a[0] != float32(-0.038159743) || a[383] != float32(0.018114654) || a[127] != float32(-6.525171e-33) ||
		b[0] != float32(0.007228383) || b[383] != float32(0.014734193) || b[46] != float32(0.0000012311281) || b[127] != float32(-3.0948323e-33) {
		t.Errorf("values %v %v %v / %v %v %v %v", a[0], a[383], a[127], b[0], b[383], b[46], b[127])
	}
	m := res.Meta
	if m.GetResolvedModel() != "all-minilm" || m.GetEmbeddingsCount() != 2 || len(m.GetWarnings()) != 0 || m.GetProviderRequestId() != "" {
		t.Errorf("model %q count %d warnings %q", m.GetResolvedModel(), m.GetEmbeddingsCount(), m.GetWarnings())
	}
	if u := m.GetUsage(); u.GetInputTokens() != 9 || u.GetOutputTokens() != 0 || u.GetTotalTokens() != 9 {
		t.Errorf("usage %v", u)
	}
	checkCounters(t, m, map[string]float64{extTotalDuration: 375551700, extLoadDuration: 354411900, extPromptEvalCount: 9})
	var sent struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.Unmarshal(srv.Last(t).Body, &sent); err != nil {
		t.Fatal(err)
	}
	// The recorded request: {"model":"all-minilm","input":["hello, world!","red, white, blue"]}.
	if sent.Model != "all-minilm" || !reflect.DeepEqual(sent.Input, []string{"hello, world!", "red, white, blue"}) {
		t.Errorf("sent %s", srv.Last(t).Body)
	}
}
