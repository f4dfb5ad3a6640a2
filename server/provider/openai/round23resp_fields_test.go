package openai

import (
	"context"
	"net/http"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
	"google.golang.org/protobuf/proto"
)

// r23LongCallID is a call id of 116 characters, as another provider's
// history can carry (AnswerDotAI/fastllm#45: OpenAI refused one at
// input[95].call_id, its maximum being 64).
var r23LongCallID = "call_" + strings.Repeat("Zq7Xw2Lm9Np4Rt6Vb8Hc1Jd3Kf5Gs0Ya", 4)[:111]

// r23ToolHistory is a conversation whose input items are not its
// messages one for one: user (input[0]); the assistant's text (input[1])
// and call (input[2]); the tool's result (input[3]).
func r23ToolHistory() *provider.Request {
	return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-5.4", Format: formatResponses,
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_USER, text("What is the weather in Paris?")),
			msgOf(llmrelayv1.Role_ROLE_ASSISTANT, text("Let me check."), toolCallPart(r23LongCallID, "get_weather", `{"city":"Paris"}`)),
			msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart(r23LongCallID, "18°C and sunny")),
		},
		Tools: []*llmrelayv1.Tool{{Name: "get_weather", Parameters: `{"type":"object","properties":{"city":{"type":"string"}}}`}}}
}

// TestRound23InputItemField: OpenAI's 400 for a call id longer than 64
// (the message and code AnswerDotAI/fastllm#45 quotes, the index our
// request's: input[2] is the assistant message's call) names the request's
// field, messages[1].parts[1].tool_call.call_id, not input[2].call_id, which
// no message of the request is; the provider's path stays in the message.
// Unary and streamed, never retried.
func TestRound23InputItemField(t *testing.T) {
	t.Parallel()
	if len(r23LongCallID) != 116 {
		t.Fatalf("call id of %d characters", len(r23LongCallID))
	}
	for _, streaming := range []bool{false, true} {
		srv := providertest.ReplayFile(t, td("responses_err_400_call_id_too_long.http"))
		p := newTestProvider(t, kOpenAI, srv.URL)
		var err error
		if streaming {
			var s provider.Stream
			if s, err = p.Stream(context.Background(), r23ToolHistory()); s != nil {
				t.Fatal("stream returned with an error status")
			}
		} else {
			_, err = p.Generate(context.Background(), r23ToolHistory())
		}
		e := providerError(t, err)
		if e.Kind != provider.KindInvalidRequest || e.HTTPStatus != http.StatusBadRequest || e.Code != "string_above_max_length" ||
			e.Param != "messages[1].parts[1].tool_call.call_id" || e.RequestID != "req_9148941c5d3ede13a7dfaad39f3f5b19" ||
			!strings.Contains(e.Message, "Invalid 'input[2].call_id': string too long.") {
			t.Errorf("streaming %v: error %+v", streaming, e)
		}
		sent := decodeBody(t, srv.Last(t).Body)
		if in, _ := sent["input"].([]any); len(in) != 4 || in[2].(map[string]any)["call_id"] != r23LongCallID {
			t.Errorf("input sent %v", sent["input"])
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	}
}

// TestRound23InputItemFieldMapping: each input item's paths, as the
// adapter encoded the request: a system message without parts, a user
// message's content entries (its parts), an assistant turn of reasoning,
// two text runs of different phases, a refusal and two calls, a tool
// message of two results; a reasoning part that could not be sent (no
// encrypted content) is no item, so the indexes after it are not the
// parts'. A path about a field the item has not (input[0].arguments of a
// message), an index past the input, or an input extra_body replaced stay
// the provider's.
func TestRound23InputItemFieldMapping(t *testing.T) {
	t.Parallel()
	reasoning := func(id, sig string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Id: id, Signature: sig, Text: "thinking"}}}
	}
	withItemID := func(p *llmrelayv1.Part, id string) *llmrelayv1.Part {
		p.ItemId = id
		return p
	}
	phased := func(s, phase string) *llmrelayv1.Part {
		p := text(s)
		p.Phase = phase
		return p
	}
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-5.4", Format: formatResponses, Reasoning: true,
		Messages: []*llmrelayv1.Message{
			{Role: llmrelayv1.Role_ROLE_SYSTEM}, // input[0]
			msgOf(llmrelayv1.Role_ROLE_USER, text("Compare these."), // input[1]
				&llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Url{Url: "https://example.com/a.png"}}}}),
			msgOf(llmrelayv1.Role_ROLE_ASSISTANT,
				reasoning("rs_dropped", ""),                                     // parts[0]: not sent
				reasoning("rs_0a1b2c3d4e5f", "gAAAAABenc"),                      // parts[1]: input[2]
				toolCallPart("call_Mf3kQz8Rw1Xn5Tb7", "a", `{}`),                // parts[2]: input[3]
				phased("Checking.", "commentary"),                               // parts[3]: input[4] content[0]
				withItemID(phased("Done.", "final_answer"), "msg_r23done"),      // parts[4]: input[5] content[0]
				&llmrelayv1.Part{Kind: &llmrelayv1.Part_Refusal{Refusal: "no"}}, // parts[5]: input[5] content[1]
				toolCallPart("call_Hv6nPw2Ys9Lc4Dj0", "b", `{"x":1}`)),          // parts[6]: input[6]
			msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_Mf3kQz8Rw1Xn5Tb7", "1"), toolResultPart("call_Hv6nPw2Ys9Lc4Dj0", "2")), // input[7], input[8]
		},
		Tools: []*llmrelayv1.Tool{{Name: "a"}, {Name: "b"}}}
	_, _, froms, err := newTestProvider(t, kOpenAI, "http://127.0.0.1:1").buildResponses(req, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(froms) != 9 {
		t.Fatalf("%d input items, want 9: %+v", len(froms), froms)
	}
	for _, tc := range []struct{ param, want string }{
		{"input[0]", "messages[0]"},
		{"input[0].content[0].text", "messages[0]"}, // the empty text sent for no parts
		{"input[0].arguments", "input[0].arguments"},
		{"input[1].content[1].image_url", "messages[1].parts[1]"},
		{"input[1].content[0]", "messages[1].parts[0]"},
		{"input[1].content[2]", "messages[1]"},
		{"input[1].role", "messages[1]"},
		{"input[2]", "messages[2].parts[1].reasoning"},
		{"input[2].encrypted_content", "messages[2].parts[1].reasoning.signature"},
		{"input[2].id", "messages[2].parts[1].reasoning.id"},
		{"input[2].summary[0].text", "messages[2].parts[1].reasoning.text"},
		{"input[3].arguments", "messages[2].parts[2].tool_call.arguments"},
		{"input[3].call_id", "messages[2].parts[2].tool_call.call_id"},
		{"input[3].name", "messages[2].parts[2].tool_call.name"},
		{"input[3].output", "input[3].output"},
		{"input[4].content[0]", "messages[2].parts[3]"},
		{"input[4].phase", "messages[2].parts[3].phase"},
		{"input[5].content[1]", "messages[2].parts[5]"},
		{"input[5].content[0].text", "messages[2].parts[4]"},
		{"input[5].id", "messages[2].parts[4].item_id"},
		{"input[6]", "messages[2].parts[6].tool_call"},
		{"input[7].output", "messages[3].parts[0].tool_result.content"},
		{"input[8].call_id", "messages[3].parts[1].tool_result.call_id"},
		{"input[8].arguments", "input[8].arguments"},
		{"input[9].call_id", "input[9].call_id"},
		{"input[x]", "input[x]"},
		{"input", "input"},
		{"tools[0].name", "tools[0].name"},
	} {
		e := &provider.Error{Provider: "openai", Kind: provider.KindInvalidRequest, HTTPStatus: 400, Param: tc.param}
		if respInputField(e, froms); e.Param != tc.want {
			t.Errorf("%s: %s, want %s", tc.param, e.Param, tc.want)
		}
	}
	// Refusals of the whole input (param input) naming one item.
	for _, tc := range []struct{ msg, want string }{
		{"No tool output found for function call call_Hv6nPw2Ys9Lc4Dj0.", "messages[2].parts[6].tool_call.call_id"},
		{"No tool call found for function call output with call_id call_Mf3kQz8Rw1Xn5Tb7.", "messages[3].parts[0].tool_result.call_id"},
		{"Item 'rs_0a1b2c3d4e5f' of type 'reasoning' was provided without its required following item.", "messages[2].parts[1].reasoning"},
		{"Item 'rs_dropped' of type 'reasoning' was provided without its required following item.", "input"}, // not sent: not ours
		{"No tool output found for function call call_Unknown0000.", "input"},
		{"Duplicate item found with id rs_0a1b2c3d4e5f. Remove duplicate items from your input and try again.", "input"},
		{"Item with id 'rs_0a1b2c3d4e5f' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.",
			"messages[2].parts[1].reasoning.id"},
		{"Item with id 'msg_r23done' not found. Items are not persisted when `store` is set to false.", "messages[2].parts[4].item_id"},
		{"Item with id 'msg_unknown' not found.", "input"},
	} {
		e := &provider.Error{Provider: "openai", Kind: provider.KindInvalidRequest, HTTPStatus: 400, Param: "input", Message: tc.msg}
		if respInputField(e, froms); e.Param != tc.want {
			t.Errorf("%q: %s, want %s", tc.msg, e.Param, tc.want)
		}
	}
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"input":"replaced"}`}
	_, _, froms, err = newTestProvider(t, kOpenAI, "http://127.0.0.1:1").buildResponses(req, false)
	if err != nil {
		t.Fatal(err)
	}
	e := &provider.Error{Provider: "openai", Kind: provider.KindInvalidRequest, HTTPStatus: 400, Param: "input[3].call_id"}
	if respInputField(e, froms); e.Param != "input[3].call_id" {
		t.Errorf("extra_body's input: %s", e.Param)
	}
}

// TestRound23NoToolCallField: OpenAI's recorded 400 for a
// function_call_output whose call is not in the input (param input, the
// call id in the message; testdata/real_responses_err_400_no_tool_call.http)
// names the tool result of the request that carries that call id: a server
// the adapter does not check results against calls for (here, as for
// GitHub Copilot's and other Responses servers, a base URL that is not
// OpenAI's) sends it. Unary and streamed.
func TestRound23NoToolCallField(t *testing.T) {
	t.Parallel()
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gpt-5.4", Format: formatResponses,
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_USER, text("What is the weather in Paris?")),
			msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_SjdIRQnfceiXp0D5eZCcjlxW", "18°C and sunny")),
		},
		Tools: []*llmrelayv1.Tool{{Name: "get_weather", Parameters: `{"type":"object","properties":{"city":{"type":"string"}}}`}}}
	for _, streaming := range []bool{false, true} {
		srv := providertest.ReplayFile(t, td("real_responses_err_400_no_tool_call.http"))
		p := newTestProvider(t, kOpenAI, srv.URL)
		var err error
		if streaming {
			_, err = p.Stream(context.Background(), req)
		} else {
			_, err = p.Generate(context.Background(), req)
		}
		e := providerError(t, err)
		if e.Kind != provider.KindInvalidRequest || e.Param != "messages[1].parts[0].tool_result.call_id" ||
			e.Message != "No tool call found for function call output with call_id call_SjdIRQnfceiXp0D5eZCcjlxW." {
			t.Errorf("streaming %v: error %+v", streaming, e)
		}
	}
}

// TestRound23ItemNotFoundField: OpenAI's 404 for an item the request
// names by its id alone that it does not have (the body
// router-for-me/CLIProxyAPI#2381 quotes, param input; the status
// can1357/oh-my-pi#41 reports): a stored request sends a reasoning part
// without encrypted content by its id, and the error names that part's
// id, messages[1].parts[0].reasoning.id. An invalid request, as the
// body's type says, not the unknown model a 404 stands for (it was
// KindNotFound: gRPC NotFound, reason MODEL_NOT_FOUND). Not retried.
func TestRound23ItemNotFoundField(t *testing.T) {
	t.Parallel()
	const rs = "rs_037db69c59ceb65f0169c774068f0c81918788deadface5709"
	req := &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-5.4", Format: formatResponses, Reasoning: true,
		Messages: []*llmrelayv1.Message{
			msgOf(llmrelayv1.Role_ROLE_USER, text("Pick a number.")),
			msgOf(llmrelayv1.Role_ROLE_ASSISTANT, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Id: rs}}},
				&llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: "7"}, ItemId: "msg_037db69c59ceb65f0169c77406a2f48191b2a1c0ffee5709"}),
			msgOf(llmrelayv1.Role_ROLE_USER, text("Another.")),
		},
		ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Store: proto.Bool(true)}}}}
	srv := providertest.ReplayFile(t, td("responses_err_404_item_not_found.http"))
	_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), req)
	e := providerError(t, err)
	if e.Kind != provider.KindInvalidRequest || e.HTTPStatus != http.StatusNotFound || e.Param != "messages[1].parts[0].reasoning.id" || !strings.HasPrefix(e.Message, "Item with id '"+rs+"' not found.") ||
		e.RequestID != "req_5d2b8e1f7a3c49d6b0e4f1a8c7d3e925" {
		t.Errorf("error %+v", e)
	}
	sent := decodeBody(t, srv.Last(t).Body)
	if in, _ := sent["input"].([]any); len(in) != 4 || in[1].(map[string]any)["id"] != rs {
		t.Errorf("input sent %v", sent["input"])
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}
