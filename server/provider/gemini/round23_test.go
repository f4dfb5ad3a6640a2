package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
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

// r23Partial is a stream in the shape of real_stream_tool_call_partial_args
// (gemini-3.1-pro-preview on Vertex AI, streamed function call arguments):
// a first call whose arguments stream and which an empty functionCall
// closes, then a second call still being streamed (willContinue) when
// last (the final chunk, "" for none) comes.
func r23Partial(id, last string) string {
	var b strings.Builder
	for _, c := range []string{
		`{"functionCall":{"name":"getWeather","willContinue":true},"thoughtSignature":"r23sig` + id + `"}`,
		`{"functionCall":{"partialArgs":[{"jsonPath":"$.location","stringValue":"Boston","willContinue":true}],"willContinue":true}}`,
		`{"functionCall":{"partialArgs":[{"jsonPath":"$.location","stringValue":""}],"willContinue":true}}`,
		`{"functionCall":{}}`,
		`{"functionCall":{"name":"getWeather","willContinue":true}}`,
		`{"functionCall":{"partialArgs":[{"jsonPath":"$.location","stringValue":"San Fr","willContinue":true}],"willContinue":true}}`,
	} {
		b.WriteString(`data: {"candidates":[{"content":{"role":"model","parts":[` + c + `]}}],"usageMetadata":{"trafficType":"ON_DEMAND"},` +
			`"modelVersion":"gemini-3.1-pro-preview","responseId":"r23` + id + `"}` + "\r\n\r\n")
	}
	if last != "" {
		b.WriteString("data: " + last + "\r\n\r\n")
	}
	return b.String()
}

// r23Drain streams body through the adapter.
func r23Drain(t *testing.T, body string) ([]*provider.Event, error) {
	t.Helper()
	srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: []byte(body)})
	p, err := New(testKey, WithBaseURL(srv.URL+"/v1beta"), WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.Stream(context.Background(), r21User("gemini-3.1-pro-preview", "", msg(llmrelayv1.Role_ROLE_USER, text("Weather in Boston and San Francisco?"))))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	return drain(t, st)
}

// TestRound23OpenCallAtEnd: a call still being streamed (its last
// functionCall said willContinue) when the answer ends is partial, however
// it ends: a finish chunk without content (SAFETY with its ratings,
// RECITATION, PROHIBITED_CONTENT, SPII, BLOCKLIST, IMAGE_SAFETY), an empty
// content (MALFORMED_FUNCTION_CALL with its finishMessage,
// UNEXPECTED_TOOL_CALL, TOO_MANY_TOOL_CALLS, LANGUAGE, OTHER, even STOP:
// then the finish is OTHER, not TOOL_CALLS, a turn whose calls are not to
// be run),
// the byte stream cut, an error event, or a promptFeedback block after
// the calls began. The first call, which an empty
// functionCall closed, ends whole; the second ends cut
// (EventToolCallCut, arguments_valid false in the fold) with a warning,
// never as a complete call, and the finish maps as the reason says.
// **Bugs:** the open call ended as a whole call (tool_call_end, its
// arguments `{"location":"San Fr"}` valid); after a finish chunk without
// content, a cut stream, an error event or a block it was not delivered
// at all.
func TestRound23OpenCallAtEnd(t *testing.T) {
	t.Parallel()
	filter := llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER
	other := llmrelayv1.FinishReason_FINISH_REASON_OTHER
	const ratings = `[{"blocked":true,"category":"HARM_CATEGORY_DANGEROUS_CONTENT","probability":"HIGH"}]`
	usage := `"usageMetadata":{"promptTokenCount":26,"candidatesTokenCount":20,"totalTokenCount":46,"trafficType":"ON_DEMAND"},"modelVersion":"gemini-3.1-pro-preview"`
	for _, c := range []struct {
		id, last, raw string
		want          llmrelayv1.FinishReason
		err           provider.Kind // of a failed stream, 0 for none
	}{
		{"safety", `{"candidates":[{"finishReason":"SAFETY","safetyRatings":` + ratings + `}],` + usage + `}`, "SAFETY", filter, 0},
		{"recitation", `{"candidates":[{"finishReason":"RECITATION"}],` + usage + `}`, "RECITATION", filter, 0},
		{"prohibited", `{"candidates":[{"finishReason":"PROHIBITED_CONTENT"}],` + usage + `}`, "PROHIBITED_CONTENT", filter, 0},
		{"spii", `{"candidates":[{"finishReason":"SPII"}],` + usage + `}`, "SPII", filter, 0},
		{"blocklist", `{"candidates":[{"finishReason":"BLOCKLIST"}],` + usage + `}`, "BLOCKLIST", filter, 0},
		{"imagesafety", `{"candidates":[{"finishReason":"IMAGE_SAFETY"}],` + usage + `}`, "IMAGE_SAFETY", filter, 0},
		{"malformed", `{"candidates":[{"content":{"role":"model","parts":[]},"finishReason":"MALFORMED_FUNCTION_CALL","finishMessage":"Malformed function call: getWeather"}],` + usage + `}`,
			"MALFORMED_FUNCTION_CALL", other, 0},
		{"unexpected", `{"candidates":[{"content":{"role":"model","parts":[]},"finishReason":"UNEXPECTED_TOOL_CALL"}],` + usage + `}`, "UNEXPECTED_TOOL_CALL", other, 0},
		{"toomany", `{"candidates":[{"content":{"role":"model","parts":[]},"finishReason":"TOO_MANY_TOOL_CALLS"}],` + usage + `}`, "TOO_MANY_TOOL_CALLS", other, 0},
		{"language", `{"candidates":[{"content":{"role":"model","parts":[]},"finishReason":"LANGUAGE"}],` + usage + `}`, "LANGUAGE", other, 0},
		{"other", `{"candidates":[{"content":{"role":"model","parts":[]},"finishReason":"OTHER"}],` + usage + `}`, "OTHER", other, 0},
		{"stop", `{"candidates":[{"content":{"role":"model","parts":[]},"finishReason":"STOP"}],` + usage + `}`, "STOP", other, 0},
		{"cut", "", "", llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED, provider.KindBadResponse},
		{"error", `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`, "", llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED, provider.KindUnavailable},
		{"blocked", `{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},` + usage + `}`, "", llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED, provider.KindContentFilter},
	} {
		evs, end := r23Drain(t, r23Partial(c.id, c.last))
		var pe *provider.Error
		switch {
		case c.err == 0 && !errors.Is(end, io.EOF):
			t.Errorf("%s: stream ended with %v", c.id, end)
		case c.err != 0 && (!errors.As(end, &pe) || pe.Kind != c.err):
			t.Errorf("%s: stream ended with %v, want a %s error", c.id, end, c.err)
		}
		m := foldMessage(t, evs)
		first, second := generatedID("r23"+c.id, 0, "", ""), generatedID("r23"+c.id, 1, "", "")
		want := msg(llmrelayv1.Role_ROLE_ASSISTANT,
			&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: first, Name: "getWeather", Arguments: `{"location":"Boston"}`, ArgumentsValid: true, Signature: "r23sig" + c.id}}},
			&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: second, Name: "getWeather", Arguments: `{"location":"San Fr"}`}}})
		if !proto.Equal(m, want) {
			t.Errorf("%s: message\n got %v\nwant %v", c.id, m, want)
		}
		var ends []string
		for _, ev := range evs {
			if ev.Kind == provider.EventToolCallEnd || ev.Kind == provider.EventToolCallCut {
				ends = append(ends, renderEvent(t, ev))
			}
		}
		if want := []string{"tool_call_end id=" + first + " index=0", "tool_call_cut id=" + second + " index=1"}; !slices.Equal(ends, want) {
			t.Errorf("%s: call ends %q, want %q", c.id, ends, want)
		}
		f := foldEvents(evs)
		reason := c.raw
		if reason == "" {
			reason = "none"
		}
		if w := openCallWarning(second, c.raw); !slices.Contains(f.meta.GetWarnings(), w) || !strings.Contains(w, "finishReason "+reason+")") {
			t.Errorf("%s: warnings %q, want %q", c.id, f.meta.GetWarnings(), w)
		}
		if f.meta.GetProviderFinishReason() != c.raw || f.meta.GetFinishReason() != c.want {
			t.Errorf("%s: finish %v (%q), want %v (%q)", c.id, f.meta.GetFinishReason(), f.meta.GetProviderFinishReason(), c.want, c.raw)
		}
		if c.err == 0 && f.meta.GetToolCallCount() != 2 {
			t.Errorf("%s: tool_call_count %d", c.id, f.meta.GetToolCallCount())
		}
		if c.id == "safety" && compactProto(t, f.meta.GetExtended().GetFields()[extSafetyRatings]) != ratings {
			t.Errorf("safety: ratings %v", f.meta.GetExtended().GetFields()[extSafetyRatings])
		}
		if c.id == "malformed" && f.meta.GetExtended().GetFields()[extFinishMessage].GetStringValue() != "Malformed function call: getWeather" {
			t.Errorf("malformed: finish message %v", f.meta.GetExtended().GetFields()[extFinishMessage])
		}
	}
}

// TestRound23OpenCallUnary: the same in a unary body (a relay that
// gathered the streamed parts into one answer): the open call is not
// valid, with the warning; the closed one is; STOP is OTHER.
func TestRound23OpenCallUnary(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		raw  string
		want llmrelayv1.FinishReason
	}{
		{"SAFETY", llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER},
		{"STOP", llmrelayv1.FinishReason_FINISH_REASON_OTHER},
	} {
		body := `{"candidates":[{"content":{"role":"model","parts":[` +
			`{"functionCall":{"name":"getWeather","args":{"location":"Boston"}}},` +
			`{"functionCall":{"name":"getWeather","willContinue":true}},` +
			`{"functionCall":{"partialArgs":[{"jsonPath":"$.location","stringValue":"San Fr","willContinue":true}],"willContinue":true}}]},` +
			`"finishReason":"` + c.raw + `"}],"modelVersion":"gemini-3.1-pro-preview","responseId":"r23unary` + strings.ToLower(c.raw) + `"}`
		srv := providertest.Replay(t, providertest.Recording{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)})
		p, err := New(testKey, WithBaseURL(srv.URL+"/v1beta"), WithHTTPClient(srv.Client()))
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Generate(context.Background(), r21User("gemini-3.1-pro-preview", "", msg(llmrelayv1.Role_ROLE_USER, text("Weather?"))))
		if err != nil {
			t.Fatal(err)
		}
		parts := res.Message.GetParts()
		if len(parts) != 2 || !parts[0].GetToolCall().GetArgumentsValid() || parts[1].GetToolCall().GetArgumentsValid() ||
			parts[1].GetToolCall().GetArguments() != `{"location":"San Fr"}` {
			t.Fatalf("%s: parts %v", c.raw, parts)
		}
		second := parts[1].GetToolCall().GetCallId()
		if m := res.Meta; m.GetFinishReason() != c.want || m.GetProviderFinishReason() != c.raw ||
			!slices.Equal(m.GetWarnings(), []string{openCallWarning(second, c.raw)}) || m.GetToolCallCount() != 2 {
			t.Errorf("%s: meta %v", c.raw, m)
		}
	}
}

func init() {
	round17Recordings = append(round17Recordings, "real_stream_tool_call_nested_args", "real_code_execution_multiple_results",
		"real_jsgenai_vertex_stream_malformed_function_call", "real_pyd_google_image_and_text_output")
}

// TestRound23NestedStreamedArgs: gemini-3.1-pro-preview on Vertex AI
// (vercel/ai's google-vertex-stream-tool-call-arguments-nested capture),
// one call cookRecipe whose arguments stream as 75 partialArgs pieces into
// paths two and three levels deep: ten ingredient objects
// ($.recipe.ingredients[i].amount and .name, each object followed by a
// functionCall of willContinue alone), $.recipe.name after them, then ten
// steps ($.recipe.steps[i], strings continued across pieces: "…set
// aside" then "."; "spread a" then " thin layer of meat sauce."; a "°"),
// each value closed by an empty stringValue; an empty functionCall with
// STOP closes the call. One whole call with the model's key order, the
// thoughtSignature of its first piece, valid; a TOOL_CALLS finish; 31 in,
// 684 + 1026 thought tokens out, 1741 total; trafficType among the usage
// details, no warning.
func TestRound23NestedStreamedArgs(t *testing.T) {
	t.Parallel()
	const name = "real_stream_tool_call_nested_args"
	evs, _ := r20Stream(t, name, r21User("gemini-3.1-pro-preview", "", msg(llmrelayv1.Role_ROLE_USER, text("Give me a lasagna recipe."))))
	f := foldEvents(evs)
	const args = `{"recipe":{"ingredients":[{"amount":"16 oz","name":"Lasagna noodles"},{"amount":"1 lb","name":"Ground beef"},` +
		`{"amount":"15 oz","name":"Ricotta cheese"},{"amount":"3 cups","name":"Mozzarella cheese"},{"amount":"1/2 cup","name":"Parmesan cheese"},` +
		`{"amount":"24 oz","name":"Tomato sauce"},{"amount":"1","name":"Egg"},{"amount":"2 cloves","name":"Garlic"},{"amount":"1 tsp","name":"Salt"},` +
		`{"amount":"1/2 tsp","name":"Pepper"}],"name":"Lasagna","steps":["Preheat oven to 375°F (190°C).",` +
		`"Cook lasagna noodles according to package directions, drain and set aside.",` +
		`"Brown ground beef with minced garlic in a skillet. Drain fat and stir in tomato sauce. Simmer for 10 minutes.",` +
		`"In a bowl, mix ricotta cheese, egg, salt, pepper, and Parmesan cheese.","In a 9x13 baking dish, spread a thin layer of meat sauce.",` +
		`"Layer noodles, ricotta mixture, mozzarella, and meat sauce. Repeat.","Top with remaining mozzarella cheese.",` +
		`"Cover with foil and bake for 25 minutes.","Remove foil and bake for another 25 minutes until golden.","Let stand for 15 minutes before serving."]}}`
	m := foldMessage(t, evs)
	if len(m.GetParts()) != 1 {
		t.Fatalf("message %v", m)
	}
	c := m.GetParts()[0].GetToolCall()
	if c.GetName() != "cookRecipe" || c.GetArguments() != args || !c.GetArgumentsValid() || c.GetCallId() != generatedID("tjXVaYaxFISTq8YP_MWiyAo", 0, "", "") ||
		!strings.HasPrefix(c.GetSignature(), "CmIBjz1rX0OQAtrZ") || !strings.HasSuffix(c.GetSignature(), "d1a6nrcsk=") || len(c.GetSignature()) != 5832 {
		t.Errorf("call %s %s (valid %v, id %s, signature %d bytes)\n args %s\n want %s", c.GetName(), c.GetCallId(), c.GetArgumentsValid(), c.GetCallId(), len(c.GetSignature()), c.GetArguments(), args)
	}
	meta := f.meta
	if meta.GetResponseId() != "tjXVaYaxFISTq8YP_MWiyAo" || meta.GetResolvedModel() != "gemini-3.1-pro-preview" || meta.GetToolCallCount() != 1 ||
		meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || meta.GetProviderFinishReason() != "STOP" || len(meta.GetWarnings()) != 0 {
		t.Errorf("meta %v", meta)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 31, OutputTokens: 1710, TotalTokens: 1741, ReasoningTokens: 1026}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
	if got := meta.GetExtended().GetFields()[provider.ExtUsageDetails].GetStructValue().GetFields()["trafficType"].GetStringValue(); got != "ON_DEMAND" {
		t.Errorf("trafficType %q", got)
	}
}

// TestRound23CodeExecutionResults: gemini-3-flash-preview with
// codeExecution, unary (vercel/ai's google-code-execution-multiple-results
// capture): an executableCode part carrying a thoughtSignature, two
// codeExecutionResult parts (OUTCOME_OK, then OUTCOME_FAILED with the
// traceback), then text with its own signature. Each code part is a
// provider item, the part as it came (the code's signature in it), with
// no warning; the text's signature follows the text and goes back on its
// part. The next turn sends the model's parts exactly as recorded. Before
// round 23, the code parts were a warning per kind and the code's
// signature a signature-only reasoning block, sent back on an empty
// thought part without the code. 23 + 289 tool-use prompt tokens in, 35
// out, 347 total.
func TestRound23CodeExecutionResults(t *testing.T) {
	t.Parallel()
	const (
		textSig = "EjQKMgFyyNp8EcK2k/joUmmIxJlqtIvdJP/1F+ziwsCn9P4uyk2ZNeBiYz2Um4GXD4IEGlE9"
		answer  = "The code execution resulted in the following output:\n\n```\nok\n```\n\nFollowed by an error:\n\n```python\nZeroDivisionError: division by zero\n```"
	)
	p, _ := replay(t, "real_code_execution_multiple_results")
	req := r21User("gemini-3-flash-preview", "", msg(llmrelayv1.Role_ROLE_USER, text("Run print('ok') and then print(1/0).")))
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// The recorded parts.
	var body struct {
		Candidates []struct {
			Content struct {
				Parts []json.RawMessage `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	rec := providertest.Load(t, "testdata/real_code_execution_multiple_results.http")
	if err := json.Unmarshal(rec.Body, &body); err != nil || len(body.Candidates) != 1 || len(body.Candidates[0].Content.Parts) != 4 {
		t.Fatalf("recording: %v", err)
	}
	recParts := body.Candidates[0].Content.Parts
	parts := res.Message.GetParts()
	if len(parts) != 5 {
		t.Fatalf("parts %v", parts)
	}
	for i, typ := range []string{"executableCode", "codeExecutionResult", "codeExecutionResult"} {
		it := parts[i].GetProviderItem()
		if it.GetType() != typ || !jsonEqual(r19Decode(t, it.GetJson()), r19Decode(t, string(recParts[i]))) {
			t.Errorf("part %d: %v, want the recorded %s", i, parts[i], recParts[i])
		}
	}
	if parts[3].GetText() != answer || parts[4].GetReasoning().GetSignature() != textSig {
		t.Errorf("parts %v", parts[3:])
	}
	r21Meta(t, res.Meta, "x7hVadT9OdKT_uMP792-mAc", "gemini-3-flash-preview", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 312, OutputTokens: 35, TotalTokens: 347})
	if w := res.Meta.GetWarnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
	if got := res.Meta.GetExtended().GetFields()[extToolUsePromptTokens].GetNumberValue(); got != 289 {
		t.Errorf("%s %v", extToolUsePromptTokens, got)
	}
	req.Messages = append(req.Messages, res.Message, msg(llmrelayv1.Role_ROLE_USER, text("Thanks.")))
	got, warnings := r23Contents(t, req)
	if len(warnings) != 0 {
		t.Errorf("request warnings %q", warnings)
	}
	var recTurn []string
	for _, p := range recParts {
		recTurn = append(recTurn, string(p))
	}
	wantTurns := `[{"role":"user","parts":[{"text":"Run print('ok') and then print(1/0)."}]},` +
		`{"role":"model","parts":[` + strings.Join(recTurn, ",") + `]},` +
		`{"role":"user","parts":[{"text":"Thanks."}]}]`
	if !jsonEqual(r19Decode(t, got), r19Decode(t, wantTurns)) {
		t.Errorf("next turn\n sent %s\n want %s", got, wantTurns)
	}
}

// TestRound23MalformedFunctionCallVertex: Vertex AI gemini-2.5-pro asked
// to call greet with streamed function call arguments (js-genai's system
// test recording): the one chunk is a candidate without content,
// finishReason MALFORMED_FUNCTION_CALL and the finishMessage "Malformed
// function call: ` tags.". An empty answer, finish OTHER with the
// provider's reason and message kept, no call made up; 20 in, nothing
// out; billablePromptUsage and trafficType among the usage details. The
// request is the recorded one (toolConfig through extra_body).
func TestRound23MalformedFunctionCallVertex(t *testing.T) {
	t.Parallel()
	const q = "call the greeter once with name: jone smith, and greeting: Hello"
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-2.5-pro",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text(q))},
		Tools: []*llmrelayv1.Tool{{Name: "greet", Description: "Greet the user",
			Parameters: `{"$schema":"http://json-schema.org/draft-07/schema#","additionalProperties":false,"properties":{"greeting":{"type":"string"},"name":{"type":"string"}},"required":["name","greeting"],"type":"object"}`}},
		ProviderOptions: &llmrelayv1.ProviderOptions{ExtraBody: `{"toolConfig":{"functionCallingConfig":{"streamFunctionCallArguments":true}}}`}}
	evs, srv := r20Stream(t, "real_jsgenai_vertex_stream_malformed_function_call", req)
	sent := r17JSON(t, srv.Last(t).Body)
	if !jsonEqual(sent["toolConfig"], r19Decode(t, `{"functionCallingConfig":{"streamFunctionCallArguments":true}}`)) ||
		!jsonEqual(sent["contents"], r19Decode(t, `[{"role":"user","parts":[{"text":"`+q+`"}]}]`)) {
		t.Errorf("request %s", srv.Last(t).Body)
	}
	f := foldEvents(evs)
	if f.text != "" || len(f.calls) != 0 || len(foldMessage(t, evs).GetParts()) != 0 {
		t.Errorf("text %q, calls %v", f.text, f.calls)
	}
	m := f.meta
	if m.GetResponseId() != "k90XaYCvHKe3nvgPw9mK0AY" || m.GetResolvedModel() != "gemini-2.5-pro" || m.GetToolCallCount() != 0 ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_OTHER || m.GetProviderFinishReason() != "MALFORMED_FUNCTION_CALL" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if got := m.GetExtended().GetFields()[extFinishMessage].GetStringValue(); got != "Malformed function call: ` tags." {
		t.Errorf("finish message %q", got)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 20, TotalTokens: 20}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
}

// TestRound23UndecodableChunkAfterCalls: a chunk that does not decode
// after a whole call and a call still being streamed fails the stream as
// a bad response, as before; what came before it is delivered as a cut
// stream's is: the whole call ends (tool_call_end), the open one ends cut
// with the warning. **Bug:** neither call was ended, and the open one was
// not delivered at all.
func TestRound23UndecodableChunkAfterCalls(t *testing.T) {
	t.Parallel()
	evs, end := r23Drain(t, r23Partial("badchunk", `{"candidates":[{"content":`))
	var pe *provider.Error
	if !errors.As(end, &pe) || pe.Kind != provider.KindBadResponse || !strings.Contains(pe.Message, "decoding stream chunk") {
		t.Fatalf("stream ended with %v", end)
	}
	first, second := generatedID("r23badchunk", 0, "", ""), generatedID("r23badchunk", 1, "", "")
	var ends []string
	for _, ev := range evs {
		if ev.Kind == provider.EventToolCallEnd || ev.Kind == provider.EventToolCallCut {
			ends = append(ends, renderEvent(t, ev))
		}
	}
	if want := []string{"tool_call_end id=" + first + " index=0", "tool_call_cut id=" + second + " index=1"}; !slices.Equal(ends, want) {
		t.Errorf("call ends %q, want %q", ends, want)
	}
	if w := foldEvents(evs).meta.GetWarnings(); !slices.Equal(w, []string{openCallWarning(second, "")}) {
		t.Errorf("warnings %q", w)
	}
}

// TestRound23ImageAndTextOutput: gemini-2.5-flash-image asked for a story
// with an illustration (TEXT and IMAGE modalities), unary (pydantic-ai's
// cassette; the SDK's authors truncated the image data to a placeholder,
// which the adapter never decodes): the text, then an inlineData PNG
// without signature. The text, then the image as a provider item (the
// part as it came), no warning; the next turn sends both parts back as
// recorded (before, the image was a warning and lost to the next turn);
// 17 in, 1349 out of which 1290 image tokens
// (candidatesTokensDetails.IMAGE among the usage details), 1366 total.
func TestRound23ImageAndTextOutput(t *testing.T) {
	t.Parallel()
	const story = "Once, in a hidden cenote, lived a shy axolotl named Pip who dreamed of seeing the surface world. One day, a curious diver " +
		"gently scooped him up, allowing Pip to briefly witness the sun-dappled world above before returning him to his serene, underwater home. "
	p, srv := replay(t, "real_pyd_google_image_and_text_output")
	req := r21User("gemini-2.5-flash-image", "", msg(llmrelayv1.Role_ROLE_USER, text("Tell me a two-sentence story about an axolotl with an illustration.")))
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"generationConfig":{"responseModalities":["TEXT","IMAGE"]}}`}
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if sent := r17JSON(t, srv.Last(t).Body); !jsonEqual(sent, r19Decode(t, `{"contents":[{"parts":[{"text":"Tell me a two-sentence story about an axolotl with an illustration."}],"role":"user"}],"generationConfig":{"responseModalities":["TEXT","IMAGE"]}}`)) {
		t.Errorf("request %s differs from the recorded one", srv.Last(t).Body)
	}
	recParts := r21RecordedCandidate(t, "real_pyd_google_image_and_text_output")["content"].(map[string]any)["parts"].([]any)
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text(story)); len(recParts) != 2 || !proto.Equal(r23NoItems(res.Message), want) ||
		len(res.Message.GetParts()) != 2 || res.Message.GetParts()[1].GetProviderItem().GetType() != "inlineData" ||
		!jsonEqual(r19Decode(t, res.Message.GetParts()[1].GetProviderItem().GetJson()), recParts[1]) {
		t.Errorf("message %v", res.Message)
	}
	next := r21User("gemini-2.5-flash-image", "", req.Messages[0], res.Message, msg(llmrelayv1.Role_ROLE_USER, text("Now make Pip blue.")))
	sent, warnings := r23Contents(t, next)
	wantTurns := []any{
		map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Tell me a two-sentence story about an axolotl with an illustration."}}},
		map[string]any{"role": "model", "parts": recParts},
		map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Now make Pip blue."}}},
	}
	if !jsonEqual(r19Decode(t, sent), wantTurns) || len(warnings) != 0 {
		t.Errorf("next turn %s (warnings %q), want the recorded parts back", sent, warnings)
	}
	r21Meta(t, res.Meta, "9r98acKtJKXUz7IPopGb6A8", "gemini-2.5-flash-image", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 17, OutputTokens: 1349, TotalTokens: 1366})
	if w := res.Meta.GetWarnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
	if got := res.Meta.GetExtended().GetFields()[provider.ExtUsageDetails].GetStructValue().GetFields()["candidatesTokensDetails.IMAGE"].GetNumberValue(); got != 1290 {
		t.Errorf("image tokens %v", got)
	}
}

// r23NoItems is msg without its provider items.
func r23NoItems(msg *llmrelayv1.Message) *llmrelayv1.Message {
	out := &llmrelayv1.Message{Role: msg.GetRole(), Name: msg.GetName()}
	for _, p := range msg.GetParts() {
		if p.GetProviderItem() == nil {
			out.Parts = append(out.Parts, p)
		}
	}
	return out
}

// TestProviderItemsToGemini: a code execution, media (inlineData,
// fileData) or built-in tool (toolCall, toolResponse) item goes back as the
// part it was, its object byte for byte with fields the adapter does not
// know, marks and signature included; an item of a type Gemini does
// not know, or without its kind's object, is not sent, with a warning
// naming the part.
func TestProviderItemsToGemini(t *testing.T) {
	t.Parallel()
	item := func(typ, js string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ProviderItem{ProviderItem: &llmrelayv1.ProviderItem{Type: typ, Json: js}}}
	}
	req := r21User("gemini-2.5-pro", "", msg(llmrelayv1.Role_ROLE_USER, text("q")),
		msg(llmrelayv1.Role_ROLE_ASSISTANT,
			item("executableCode", `{"executableCode":{"language":"PYTHON","code":"print(3)"},"thought":true,"thoughtSignature":"c2ln"}`),
			item("server_tool_use", `{"type":"server_tool_use","id":"srvtoolu_1"}`),
			item("codeExecutionResult", `{"executableCode":{"code":"x"}}`),
			text("3"),
			item("inlineData", `{"inlineData":{"data":"iVBORw0KGgo=","mimeType":"image/png","displayName":"cat.png"},"thoughtSignature":"aW1n"}`),
			item("fileData", `{"fileData":{"fileUri":"gs://bucket/cat.mp4","mimeType":"video/mp4"}}`),
			item("toolCall", `{"toolCall":{"toolType":"URL_CONTEXT","id":"u1","args":{"urls":["https://example.com"]}},"thoughtSignature":"dGM="}`),
			item("toolResponse", `{"toolResponse":{"toolType":"URL_CONTEXT","id":"u1","response":{"status":"ok"}}}`),
			item("inlineData", `{"fileData":{"fileUri":"gs://bucket/x"}}`),
			item("toolCall", `{"toolCall":"u2"}`)),
		msg(llmrelayv1.Role_ROLE_USER, text("more")))
	got, warnings := r23Contents(t, req)
	want := `[{"role":"user","parts":[{"text":"q"}]},{"role":"model","parts":[` +
		`{"executableCode":{"language":"PYTHON","code":"print(3)"},"thought":true,"thoughtSignature":"c2ln"},{"text":"3"},` +
		`{"inlineData":{"data":"iVBORw0KGgo=","mimeType":"image/png","displayName":"cat.png"},"thoughtSignature":"aW1n"},` +
		`{"fileData":{"fileUri":"gs://bucket/cat.mp4","mimeType":"video/mp4"}},` +
		`{"toolCall":{"toolType":"URL_CONTEXT","id":"u1","args":{"urls":["https://example.com"]}},"thoughtSignature":"dGM="},` +
		`{"toolResponse":{"toolType":"URL_CONTEXT","id":"u1","response":{"status":"ok"}}}]},` +
		`{"role":"user","parts":[{"text":"more"}]}]`
	if !jsonEqual(r19Decode(t, got), r19Decode(t, want)) {
		t.Errorf("sent %s\nwant %s", got, want)
	}
	// The image's object as it was, its keys in their order.
	if !strings.Contains(got, `{"inlineData":{"data":"iVBORw0KGgo=","mimeType":"image/png","displayName":"cat.png"},"thoughtSignature":"aW1n"}`) {
		t.Errorf("image part not verbatim: %s", got)
	}
	if !slices.Equal(warnings, []string{
		"messages[1].parts[1]: provider item server_tool_use not sent: Gemini has no place for it",
		"messages[1].parts[2]: provider item codeExecutionResult not sent: Gemini has no place for it",
		"messages[1].parts[8]: provider item inlineData not sent: Gemini has no place for it",
		"messages[1].parts[9]: provider item toolCall not sent: Gemini has no place for it",
	}) {
		t.Errorf("warnings %q", warnings)
	}
}
