package openai

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

const mgbXiaomi = "https://api.xiaomimimo.com/v1"

// TestRound22MgbXiaomiReasoningBack: Xiaomi's mimo-v2.5-pro (thinking,
// May 2026), square_root with tool choice auto: content "", the
// reasoning in reasoning_content ("The user wants me to calculate … Let
// me do that."), the call call_7332b91b9ef841b1aaf0cef1 with
// `{"number": 132413}`; 552 in of which 512 cached, 76 out of which 47
// reasoning; a hex response id, no request id header (MiFE's). The
// second request maruel/genai sent (which the API answered) gave the
// reasoning back as the assistant turn's reasoning_content beside the
// call: MiMo refuses a tool turn without it (400 "reasoning_content must
// be passed back"). **Bug:** ours did not send it (reasoning replay was
// none for this host, with a warning); it does now, and the request is
// the recorded one but for "content": null. The answer: reasoning, then
// "363.89", stop; 646 in (576 cached), 96 out (87 reasoning).
func TestRound22MgbXiaomiReasoningBack(t *testing.T) {
	t.Parallel()
	const (
		model  = "mimo-v2.5-pro"
		callID = "call_7332b91b9ef841b1aaf0cef1"
		r1     = "The user wants me to calculate the square root of 132413 using the square_root tool and only provide the result without explanation. I should call the tool and then output just the result. Let me do that."
	)
	req := mgbSqrtReq(model, llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO)
	req.Reasoning = true
	res, body := mgbUnary(t, "real_maruel_xiaomi_mimo_sqrt_1", mgbXiaomi, "", req)
	if body["tool_choice"] != "auto" {
		t.Errorf("request %v", body)
	}
	parts := res.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != r1 {
		t.Fatalf("parts %v", parts)
	}
	if c := parts[1].GetToolCall(); c.GetCallId() != callID || c.GetName() != "square_root" || c.GetArguments() != `{"number": 132413}` || !c.GetArgumentsValid() {
		t.Errorf("call %v", c)
	}
	r22Meta(t, res.Meta, "b957054199b2483da97a0172875f00bd", "", model, 1779928122,
		&llmrelayv1.Usage{InputTokens: 552, OutputTokens: 76, TotalTokens: 628, CachedInputTokens: 512, ReasoningTokens: 47},
		llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	r22Ext(t, res.Meta, nil)

	req2 := mgbSqrtFollowUp(model, res.Message, callID)
	req2.Reasoning = true
	req2.Options.ToolChoice = req.Options.ToolChoice
	res2, body2 := mgbUnary(t, "real_maruel_xiaomi_mimo_sqrt_2", mgbXiaomi, "", req2)
	const recorded = `[{"role":"user","content":"` + mgbSqrtQuestion + `"},` +
		`{"role":"assistant","content":null,"reasoning_content":"` + r1 + `","tool_calls":[{"id":"` + callID + `","type":"function","function":{"name":"square_root","arguments":"{\"number\": 132413}"}}]},` +
		`{"role":"tool","content":"363.89","tool_call_id":"` + callID + `"}]`
	if !mgbJSONEqual(t, body2["messages"], recorded) || body2["tool_choice"] != "auto" {
		t.Errorf("second request %v", body2["messages"])
	}
	p2 := res2.Message.GetParts()
	if len(p2) != 2 || p2[1].GetText() != "363.89" ||
		p2[0].GetReasoning().GetText() != `The tool returned 363.89. That's likely rounded. The square root of 132413 is approximately 363.888... but the tool returned 363.89. I should just output the result as requested. The user said "reply with only the result" so I should just say 363.89. Let me do that.` {
		t.Errorf("parts %v", p2)
	}
	r22Meta(t, res2.Meta, "b18f0a3231964088868c98e6cda4f424", "", model, 1779928126,
		&llmrelayv1.Usage{InputTokens: 646, OutputTokens: 96, TotalTokens: 742, CachedInputTokens: 576, ReasoningTokens: 87},
		llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	r22Ext(t, res2.Meta, nil)
}

// TestRound22MgbXiaomiStream: the same model streamed: a role chunk with
// content "" and null fields, the reasoning in eleven reasoning_content
// deltas ("I need to use the square_root tool to calculate the square
// root of 132413 and just give the result. Let me do that."), the call
// call_08ef8be8603446b69b905dc2 with its name and "" arguments, then
// three fragments whose id and name are null (`{"number": `, `132413`,
// `}`), tool_calls on a chunk with "usage": null, and the usage on a
// chunk without choices (552 in of which 512 cached, 61 out of which 32
// reasoning), unasked by maruel/genai. No bug.
func TestRound22MgbXiaomiStream(t *testing.T) {
	t.Parallel()
	req := mgbSqrtReq("mimo-v2.5-pro", llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO)
	req.Reasoning = true
	evs, f, body := mgbStream(t, "real_maruel_xiaomi_mimo_sqrt_stream_1", mgbXiaomi, "", req)
	if body["stream"] != true || body["tool_choice"] != "auto" {
		t.Errorf("request %v", body)
	}
	parts := f.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != "I need to use the square_root tool to calculate the square root of 132413 and just give the result. Let me do that." {
		t.Fatalf("parts %v", parts)
	}
	if c := parts[1].GetToolCall(); c.GetCallId() != "call_08ef8be8603446b69b905dc2" || c.GetName() != "square_root" || c.GetArguments() != `{"number": 132413}` || !c.GetArgumentsValid() {
		t.Errorf("call %v", c)
	}
	r22Meta(t, f.Meta, "19dd8969e4f84c1dbe51057edd9f7f7f", "", "mimo-v2.5-pro", 1779928123,
		&llmrelayv1.Usage{InputTokens: 552, OutputTokens: 61, TotalTokens: 613, CachedInputTokens: 512, ReasoningTokens: 32},
		llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	r22Ext(t, f.Meta, nil)
	var ends int
	for _, ev := range evs {
		if ev.Kind == provider.EventToolCallEnd {
			ends++
		}
	}
	if ends != 1 {
		t.Errorf("%d tool call ends", ends)
	}
}
