package gemini

import (
	"context"
	"encoding/json"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// r23Contents is the contents buildRequest makes of req, as JSON.
func r23Contents(t *testing.T, req *provider.Request) (string, []string) {
	t.Helper()
	out, warnings, err := buildRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(out.Contents)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), warnings
}

// TestRound23SplitParallelCalls: the two parallel calls of
// real_maruel_gemini25_flash_lite_parallel_same_tool_stream (gemini-2.5-flash-lite,
// best_country(USA) then best_country(Canada), without ids) given back as
// two assistant messages of one call each (as clients that write every
// call of a step as a message of its own send them), then the results in
// the other order. They go out as one model turn holding both calls in
// order, then one user turn with the results in the calls' order: Gemini
// refuses a function call turn that does not follow a user or function
// response turn, and pairs id-less function responses by position with
// the calls of the turn before. **Bug:** two model turns went out, and the
// results in the client's order (best_country(USA) would have got
// Canada's result).
func TestRound23SplitParallelCalls(t *testing.T) {
	t.Parallel()
	const q = "I wonder if the USA is a better country than Canada? Call the tool best_country to tell me which country is the best one."
	tool := &llmrelayv1.Tool{Name: "best_country", Description: "A tool to specify the best country",
		Parameters: `{"properties":{"country":{"enum":["USA","Canada"],"type":"string"}},"required":["country"],"type":"object"}`}
	user := msg(llmrelayv1.Role_ROLE_USER, text(q))
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-flash-lite",
		Messages: []*llmrelayv1.Message{user}, Tools: []*llmrelayv1.Tool{tool}, Options: r22Mode(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED)}
	evs, _ := r20Stream(t, "real_maruel_gemini25_flash_lite_parallel_same_tool_stream", req)
	answer := foldMessage(t, evs)
	if len(answer.GetParts()) != 2 {
		t.Fatalf("answer %v: want two calls", answer)
	}
	usaID, canadaID := answer.GetParts()[0].GetToolCall().GetCallId(), answer.GetParts()[1].GetToolCall().GetCallId()
	if usaID == "" || canadaID == "" || usaID == canadaID {
		t.Fatalf("call ids %q, %q", usaID, canadaID)
	}
	const wantTurns = `[{"role":"user","parts":[{"text":"` + q + `"}]},` +
		`{"role":"model","parts":[{"functionCall":{"name":"best_country","args":{"country":"USA"}}},{"functionCall":{"name":"best_country","args":{"country":"Canada"}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"name":"best_country","response":{"result":"USA: no"}}},{"functionResponse":{"name":"best_country","response":{"result":"Canada: yes"}}}]}]`
	for _, c := range []struct {
		what     string
		messages []*llmrelayv1.Message
	}{
		{"one message, results reversed", []*llmrelayv1.Message{answer,
			msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(canadaID, "Canada: yes")), msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(usaID, "USA: no"))}},
		{"two messages, results reversed", []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_ASSISTANT, answer.GetParts()[0]), msg(llmrelayv1.Role_ROLE_ASSISTANT, answer.GetParts()[1]),
			msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(canadaID, "Canada: yes")), msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(usaID, "USA: no"))}},
		{"two messages, results reversed in one tool message", []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_ASSISTANT, answer.GetParts()[0]), msg(llmrelayv1.Role_ROLE_ASSISTANT, answer.GetParts()[1]),
			msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(canadaID, "Canada: yes"), toolResultPart(usaID, "USA: no"))}},
		{"two messages, results in order", []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_ASSISTANT, answer.GetParts()[0]), msg(llmrelayv1.Role_ROLE_ASSISTANT, answer.GetParts()[1]),
			msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(usaID, "USA: no")), msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(canadaID, "Canada: yes"))}},
	} {
		req2 := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-flash-lite", Tools: []*llmrelayv1.Tool{tool},
			Messages: append([]*llmrelayv1.Message{user}, c.messages...)}
		got, warnings := r23Contents(t, req2)
		if !jsonEqual(r19Decode(t, got), r19Decode(t, wantTurns)) || len(warnings) != 0 {
			t.Errorf("%s: contents\n sent %s\n want %s\nwarnings %q", c.what, got, wantTurns, warnings)
		}
	}

	// Through the adapter, as sent on the wire.
	p, srv := replay(t, "real_maruel_gemini25_flash_lite_parallel_same_tool_stream")
	req2 := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-flash-lite", Tools: []*llmrelayv1.Tool{tool},
		Messages: []*llmrelayv1.Message{user, msg(llmrelayv1.Role_ROLE_ASSISTANT, answer.GetParts()[0]), msg(llmrelayv1.Role_ROLE_ASSISTANT, answer.GetParts()[1]),
			msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(canadaID, "Canada: yes")), msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(usaID, "USA: no"))}}
	if _, err := p.Generate(context.Background(), req2); err == nil {
		t.Fatal("the replayed stream is not a unary answer; want the decoding error")
	}
	if got := r17JSON(t, srv.Last(t).Body)["contents"]; !jsonEqual(got, r19Decode(t, wantTurns)) {
		b, _ := json.Marshal(got)
		t.Errorf("contents on the wire\n sent %s\n want %s", b, wantTurns)
	}
}

// TestRound23SplitCallsTurns: which consecutive assistant messages make
// one model turn. Text then a call (a model that says what it will do,
// written as two messages), and a call then text, are one turn, the
// calls numbered across it; two texts stay two turns as sent. On Gemini
// 3 the placeholder signature goes on the first call of the turn only
// (the first call of a step is the one Gemini validates), not on the
// first call of each message; a signed call keeps its own signature.
func TestRound23SplitCallsTurns(t *testing.T) {
	t.Parallel()
	user := msg(llmrelayv1.Role_ROLE_USER, text("Weather in Paris and Rome?"))
	a := toolCallPart("call_r23_paris", "get_weather", `{"city":"Paris"}`)
	b := toolCallPart("call_r23_rome", "get_weather", `{"city":"Rome"}`)
	results := []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_r23_rome", "sun")), msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_r23_paris", "rain"))}
	const resp = `{"role":"user","parts":[{"functionResponse":{"id":"call_r23_paris","name":"get_weather","response":{"result":"rain"}}},` +
		`{"functionResponse":{"id":"call_r23_rome","name":"get_weather","response":{"result":"sun"}}}]}`
	const callA = `{"functionCall":{"id":"call_r23_paris","name":"get_weather","args":{"city":"Paris"}}}`
	const callB = `{"functionCall":{"id":"call_r23_rome","name":"get_weather","args":{"city":"Rome"}}}`
	const q = `{"role":"user","parts":[{"text":"Weather in Paris and Rome?"}]}`
	for _, c := range []struct {
		what, model string
		messages    []*llmrelayv1.Message
		want        string
	}{
		{"text then calls", "gemini-2.5-flash", append([]*llmrelayv1.Message{user, msg(llmrelayv1.Role_ROLE_ASSISTANT, text("Let me look.")),
			msg(llmrelayv1.Role_ROLE_ASSISTANT, b), msg(llmrelayv1.Role_ROLE_ASSISTANT, a)}, results...),
			`[` + q + `,{"role":"model","parts":[{"text":"Let me look."},` + callB + `,` + callA + `]},` +
				`{"role":"user","parts":[{"functionResponse":{"id":"call_r23_rome","name":"get_weather","response":{"result":"sun"}}},` +
				`{"functionResponse":{"id":"call_r23_paris","name":"get_weather","response":{"result":"rain"}}}]}]`},
		{"call then text", "gemini-2.5-flash", append([]*llmrelayv1.Message{user, msg(llmrelayv1.Role_ROLE_ASSISTANT, a),
			msg(llmrelayv1.Role_ROLE_ASSISTANT, text("And Rome:"), b)}, results...),
			`[` + q + `,{"role":"model","parts":[` + callA + `,{"text":"And Rome:"},` + callB + `]},` + resp + `]`},
		{"two texts stay two turns", "gemini-2.5-flash", []*llmrelayv1.Message{user, msg(llmrelayv1.Role_ROLE_ASSISTANT, text("One.")),
			msg(llmrelayv1.Role_ROLE_ASSISTANT, text("Two."))},
			`[` + q + `,{"role":"model","parts":[{"text":"One."}]},{"role":"model","parts":[{"text":"Two."}]}]`},
		{"gemini 3: one placeholder per turn", "gemini-3-flash-preview", append([]*llmrelayv1.Message{user, msg(llmrelayv1.Role_ROLE_ASSISTANT, a),
			msg(llmrelayv1.Role_ROLE_ASSISTANT, b)}, results...),
			`[` + q + `,{"role":"model","parts":[{"functionCall":{"id":"call_r23_paris","name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"` + skipSignature + `"},` +
				callB + `]},` + resp + `]`},
	} {
		req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: c.model, Tools: []*llmrelayv1.Tool{weatherTool(t)}, Messages: c.messages}
		got, _ := r23Contents(t, req)
		if !jsonEqual(r19Decode(t, got), r19Decode(t, c.want)) {
			t.Errorf("%s: contents\n sent %s\n want %s", c.what, got, c.want)
		}
	}
}
