package openai

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

const mgbBaseten = "https://inference.baseten.co/v1"

// TestRound22MgbBasetenTwinReasoning: MiniMaxAI/MiniMax-M2.5 on Baseten
// (February 2026), square_root required: no content, the call
// chatcmpl-tool-c8db6b9e46b74298a32931054d268502 with `{"number":
// 132413}`, 248 in, 24 out; no request id header (x-baseten-accepted-at
// only). The second request maruel/genai sent (answered) is ours but for
// "content": null and the tool result's name. The answer carries its
// reasoning twice, as reasoning_content and as reasoning (the same text,
// vLLM's two names): one reasoning part, then the text "\n\n363.89";
// reasoning_tokens 0 as Baseten counted (108 in, 57 out). No bug.
func TestRound22MgbBasetenTwinReasoning(t *testing.T) {
	t.Parallel()
	const (
		model  = "MiniMaxAI/MiniMax-M2.5"
		callID = "chatcmpl-tool-c8db6b9e46b74298a32931054d268502"
	)
	res, body := mgbUnary(t, "real_maruel_baseten_minimax_sqrt_1", mgbBaseten, "", mgbSqrtReq(model, llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED))
	if body["tool_choice"] != "required" {
		t.Errorf("request %v", body)
	}
	parts := res.Message.GetParts()
	if len(parts) != 1 {
		t.Fatalf("parts %v", parts)
	}
	if c := parts[0].GetToolCall(); c.GetCallId() != callID || c.GetArguments() != `{"number": 132413}` || !c.GetArgumentsValid() {
		t.Errorf("call %v", c)
	}
	r22Meta(t, res.Meta, "chatcmpl-51e3a8f088fc4615b8669a28fb8b3c81", "", model, 1771458879,
		&llmrelayv1.Usage{InputTokens: 248, OutputTokens: 24, TotalTokens: 272}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	r22Ext(t, res.Meta, nil)

	res2, body2 := mgbUnary(t, "real_maruel_baseten_minimax_sqrt_2", mgbBaseten, "", mgbSqrtFollowUp(model, res.Message, callID))
	const recorded = `[{"role":"user","content":"` + mgbSqrtQuestion + `"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"type":"function","id":"` + callID + `","function":{"name":"square_root","arguments":"{\"number\": 132413}"}}]},` +
		`{"role":"tool","content":"363.89","tool_call_id":"` + callID + `"}]`
	if !mgbJSONEqual(t, body2["messages"], recorded) || body2["tool_choice"] != "none" {
		t.Errorf("second request %v", body2["messages"])
	}
	p2 := res2.Message.GetParts()
	const r = "The user wants me to use the square_root tool to calculate the square root of 132413 and reply with only the result, no explanation.\n\nThe tool has already calculated this: 363.89\n\nI should just output this number as my response.\n"
	if len(p2) != 2 || p2[0].GetReasoning().GetText() != r || p2[1].GetText() != "\n\n363.89" {
		t.Errorf("parts %v", p2)
	}
	r22Meta(t, res2.Meta, "chatcmpl-3a3e92e82637407a97e2ebdc2d9716c0", "", model, 1771458880,
		&llmrelayv1.Usage{InputTokens: 108, OutputTokens: 57, TotalTokens: 165}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	r22Ext(t, res2.Meta, nil)
}
