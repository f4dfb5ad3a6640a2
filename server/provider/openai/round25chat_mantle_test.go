package openai

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"google.golang.org/protobuf/proto"
)

// TestRound25BedrockMantleGptOss120bToolLoop: gpt-oss-120b on Bedrock's
// OpenAI-compatible endpoint (opencode's recording, its third and fourth
// interactions): every chunk with an obfuscation string in the choice and
// another at the top, keys sorted, chunks with an empty delta, the reasoning
// as delta.reasoning, the call whole in one chunk (id chatcmpl-tool-…), the
// usage on a last chunk without choices, and no [DONE]: the stream ends
// with the usage chunk. Both answers are complete (finish reason and usage
// seen), with no warning; the follow-up Bedrock answered sends the
// tool-call turn's reasoning in a "reasoning" field, ours the same (the
// answered text turns' reasoning, which opencode also sent, stays out,
// warned).
func TestRound25BedrockMantleGptOss120bToolLoop(t *testing.T) {
	t.Parallel()
	const name, model, base = "real_opencode_mantle_gptoss120b_tool_", "openai.gpt-oss-120b", "https://bedrock-mantle.us-east-1.api.aws/v1"
	reasoning := func(s string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Text: s}}}
	}
	req := r22Ask(model, `Reply with exactly "OK".`)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{{Name: "lookup_code", Description: "Return the code to reply with",
		Parameters: `{"type":"object","properties":{},"additionalProperties":false}`}}
	req.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW
	req.Messages = append(req.Messages,
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT, reasoning(`The user asks: "Reply with exactly "OK"." So we need to output exactly OK. No extra whitespace, punctuation, or anything else. Should be just the text OK.`+"\n\nMake sure to not include anything else."), text("OK")),
		msgOf(llmrelayv1.Role_ROLE_USER, text(`Now reply with exactly "TEST".`)),
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT, reasoning(`The user wants exactly "TEST".`), text("TEST")),
		msgOf(llmrelayv1.Role_ROLE_USER, text("Call lookup_code. After the tool returns, reply with exactly the returned code.")))

	evs3, f3, _ := mgbStream(t, name+"stream_3", base, "", req)
	for _, ev := range evs3 {
		// The one warning is the request's (the text turns' reasoning);
		// none for the stream that ends without [DONE].
		if ev.Kind == provider.EventMeta && len(ev.Meta.GetWarnings()) > 0 && (len(ev.Meta.GetWarnings()) != 1 || !strings.Contains(ev.Meta.GetWarnings()[0], "tool-call turns only")) {
			t.Errorf("turn 3 warnings %v", ev.Meta.GetWarnings())
		}
	}
	var call *llmrelayv1.ToolCall
	for _, p := range f3.Message.GetParts() {
		if c := p.GetToolCall(); c != nil {
			call = c
		}
	}
	if call == nil || call.GetCallId() != "chatcmpl-tool-a262a39a8541bd69" || call.GetArguments() != "{}" {
		t.Fatalf("call %v", call)
	}
	if f3.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || f3.Meta.GetUsage().GetOutputTokens() != 31 || f3.Meta.GetUsage().GetInputTokens() != 167 {
		t.Errorf("turn 3 meta %v", f3.Meta)
	}

	follow := &provider.Request{}
	*follow = *req
	follow.Options = proto.Clone(req.Options).(*llmrelayv1.GenerationOptions)
	follow.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE}}
	follow.Messages = append(append([]*llmrelayv1.Message{}, req.Messages...), f3.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: call.GetCallId(), Content: "DONE"}}}))
	evs4, f4, sent := mgbStream(t, name+"stream_4", base, "", follow)
	b, err := os.ReadFile(td(name + "4.recorded_request.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := r20Request(t, b)
	wantMsgs := want["messages"].([]any)
	for _, i := range []int{1, 3} { // the answered turns: their reasoning is not sent
		delete(wantMsgs[i].(map[string]any), "reasoning")
	}
	if !reflect.DeepEqual(sent["messages"], wantMsgs) {
		g, _ := json.Marshal(sent["messages"])
		w, _ := json.Marshal(wantMsgs)
		t.Errorf("messages\n got %s\nwant %s", g, w)
	}
	for _, k := range []string{"tool_choice", "reasoning_effort", "stream_options"} {
		if !reflect.DeepEqual(sent[k], want[k]) {
			t.Errorf("%s: sent %v, recorded %v", k, sent[k], want[k])
		}
	}
	warned := false
	for _, ev := range evs4 {
		if ev.Kind == provider.EventMeta {
			for _, w := range ev.Meta.GetWarnings() {
				if strings.Contains(w, "2 reasoning part(s)") && strings.Contains(w, "tool-call turns only") {
					warned = true
				} else {
					t.Errorf("turn 4 warning %q", w)
				}
			}
		}
	}
	if !warned {
		t.Error("the text turns' reasoning left out without a warning")
	}
	if got := f4.Message.GetParts(); len(got) != 1 || got[0].GetText() != "DONE" {
		t.Errorf("answer %v", got)
	}
	if f4.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || f4.Meta.GetUsage().GetTotalTokens() != 199 {
		t.Errorf("turn 4 meta %v", f4.Meta)
	}
}
