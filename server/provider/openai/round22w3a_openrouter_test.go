package openai

import (
	"encoding/json"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"google.golang.org/protobuf/proto"
)

const w3aHostQuestion = "Use the get_hostname tool to get the machine's hostname and reply with only the hostname. Do not give an explanation."

var w3aGetHostname = &llmrelayv1.Tool{Name: "get_hostname", Description: "Returns the machine's hostname",
	Parameters: `{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{},"additionalProperties":false,"type":"object"}`}

func TestRound22W3aOpenRouterNoArgs(t *testing.T) {
	t.Parallel()
	req := r22Ask("qwen/qwen3.5-122b-a10b", w3aHostQuestion)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{w3aGetHostname}
	req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO}}
	res, body := mgbUnary(t, "real_maruel_openrouter_qwen35_noargs_1", r22OpenRouter, "", req)
	t.Logf("%v\n%v", res, body)
	req2 := r22Ask("qwen/qwen3.5-122b-a10b", w3aHostQuestion)
	req2.Protocol = req.Protocol
	req2.Tools = req.Tools
	req2.Options.ToolChoice = req.Options.ToolChoice
	req2.Messages = append(req2.Messages, res.Message, msgOf(llmrelayv1.Role_ROLE_TOOL,
		&llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "call_d811b5843b124193a604034f", Content: "genai-smoke"}}}))
	res2, body2 := mgbUnary(t, "real_maruel_openrouter_qwen35_noargs_2", r22OpenRouter, "", req2)
	b, _ := json.Marshal(body2)
	t.Logf("%v\n%s", res2, b)
}

func TestRound22W3aOpenRouterLogprobs(t *testing.T) {
	t.Parallel()
	req := r22Ask("qwen/qwen3.5-122b-a10b", "Say hello. Use only one word.")
	req.ProviderOptions = &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: &llmrelayv1.OpenAIOptions{Logprobs: proto.Bool(true), TopLogprobs: proto.Int32(2)}}}
	res, body := mgbUnary(t, "real_maruel_openrouter_qwen35_logprobs", r22OpenRouter, "", req)
	t.Logf("%v\n%v", res, body)
}

const (
	w3aOOOSystem = "You are a terse voice assistant. Speak naturally. Follow the latest request. Never claim a task's state or reference without its tool result."
	w3aOOOAsk    = "Do you have task 7's reference yet? If not, just let me know you're still waiting. Don't give me the other tasks' references."
)

var w3aTaskStatus = &llmrelayv1.Tool{Name: "task_status", Description: "Read a task's current status and reference; does not change anything.",
	Parameters: `{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"task_id":{"type":"integer"}},"additionalProperties":false,"type":"object","required":["task_id"]}`}

func w3aOOOReq(msgs ...*llmrelayv1.Message) *provider.Request {
	req := r22Ask("qwen/qwen3.5-122b-a10b", "Check the status and reference of tasks 3, 7 and 11.")
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Messages = append([]*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(w3aOOOSystem))}, req.Messages...)
	req.Messages = append(req.Messages, msgOf(llmrelayv1.Role_ROLE_USER, text("Start the checks together if possible.")))
	req.Messages = append(req.Messages, msgs...)
	req.Tools = []*llmrelayv1.Tool{w3aTaskStatus}
	req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO}}
	return req
}

func TestRound22W3aOpenRouterOutOfOrder(t *testing.T) {
	t.Parallel()
	res1, body1 := mgbUnary(t, "real_maruel_openrouter_qwen35_out_of_order_1", r22OpenRouter, "", w3aOOOReq())
	b, _ := json.Marshal(body1)
	t.Logf("%v\n%s", res1, b)
	turn2 := []*llmrelayv1.Message{res1.Message,
		msgOf(llmrelayv1.Role_ROLE_USER, text("Actually, I only need task 7's reference. The other checks can finish in the background.")),
		msgOf(llmrelayv1.Role_ROLE_USER, text(w3aOOOAsk))}
	res2, body2 := mgbUnary(t, "real_maruel_openrouter_qwen35_out_of_order_2", r22OpenRouter, "", w3aOOOReq(turn2...))
	b, _ = json.Marshal(body2)
	t.Logf("%v\n%s", res2, b)
	result := func(id, content string) *llmrelayv1.Message {
		return msgOf(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: id, Content: content}}})
	}
	turn3 := append(turn2, res2.Message,
		result("call_bbcca66809ac4b7b91d729bc", `{"id":11,"status":"paused","reference":"cyan"}`),
		result("call_e814e9511ab14b09be50632d", `{"id":7,"status":"waiting","reference":"violet"}`),
		result("call_af0e84b67abd4aeb850e51cf", `{"id":3,"status":"running","reference":"amber"}`),
		msgOf(llmrelayv1.Role_ROLE_USER, text(w3aOOOAsk)))
	res3, body3 := mgbUnary(t, "real_maruel_openrouter_qwen35_out_of_order_3", r22OpenRouter, "", w3aOOOReq(turn3...))
	b, _ = json.Marshal(body3)
	t.Logf("%v\n%s", res3, b)
}

func TestRound22W3aOpenRouterNoArgsStream(t *testing.T) {
	t.Parallel()
	req := r22Ask("qwen/qwen3.5-122b-a10b", w3aHostQuestion)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{w3aGetHostname}
	req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO}}
	_, f, body := mgbStream(t, "real_maruel_openrouter_qwen35_noargs_stream_1", r22OpenRouter, "", req)
	b, _ := json.Marshal(body)
	t.Logf("%+v\n%s", f, b)
}
