package openai

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 17 (sources): wandb/weave's VCR cassettes of its integration tests
// (testdata/README.md, "Round 17: wandb/weave's cassettes").

// TestRound17WeaveGroqToolLoop replays weave's Groq tool loop (July 2024,
// llama3-70b-8192 on api.groq.com/openai/v1, gzip bodies decoded).
//
// The first answer is one call and nothing else: the assistant message
// has tool_calls and no content key at all (not null, not ""); the call
// keeps Groq's short id (call_22p5) and its argument bytes; finish
// tool_calls; Groq's timings inside usage go to usage_details; the
// request id is the header's (x_groq.id repeats it); the rate-limit
// resets are Groq's "1.728s"/"134ms" from the Date header.
//
// The request we build for the second turn must carry what the live API
// accepted in the cassette's second request: the assistant turn's call
// with its id, type and argument string, then one tool message keyed by
// the call id with the result as its content. (weave also sent the
// tool's name on the tool message, which the Chat Completions schema
// does not have and we do not send, and sent the second turn without
// tools and max_tokens.) The second answer is the text.
func TestRound17WeaveGroqToolLoop(t *testing.T) {
	t.Parallel()
	const system = "You are a function calling LLM that uses the data extracted from the get_game_score function to answer questions around NBA game scores. Include the team and their opponent in your response."
	const result = `{"game_id": "401585601", "status": "Final", "home_team": "Los Angeles Lakers", "home_team_score": 121, "away_team": "Golden State Warriors", "away_team_score": 128}`
	req := func(msgs ...*llmrelayv1.Message) *provider.Request {
		return &provider.Request{
			Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "llama3-70b-8192", Format: "openai-chat",
			Messages: append([]*llmrelayv1.Message{
				msgOf(llmrelayv1.Role_ROLE_SYSTEM, text(system)),
				msgOf(llmrelayv1.Role_ROLE_USER, text("What was the score of the Warriors game?")),
			}, msgs...),
			Tools: []*llmrelayv1.Tool{{Name: "get_game_score", Description: "Get the score for a given NBA game",
				Parameters: `{"type": "object", "properties": {"team_name": {"type": "string", "description": "The name of the NBA team (e.g. 'Golden State Warriors')"}}, "required": ["team_name"]}`}},
			Options: &llmrelayv1.GenerationOptions{MaxTokens: proto.Int32(4096), Seed: proto.Int64(42)},
		}
	}
	srv1 := providertest.ReplayFile(t, td("real_weave_groq_tool_call_1.http"))
	res, err := newTestProvider(t, kOpenAI, srv1.URL).Generate(context.Background(), req())
	if err != nil {
		t.Fatal(err)
	}
	checkResultInvariants(t, res)
	providertest.Golden(t, td("real_weave_groq_tool_call_1.golden"), renderResult(t, res))
	parts := res.Message.GetParts()
	if want := (&llmrelayv1.ToolCall{CallId: "call_22p5", Name: "get_game_score", Arguments: `{"team_name":"Golden State Warriors"}`, ArgumentsValid: true}); len(parts) != 1 || !proto.Equal(parts[0].GetToolCall(), want) {
		t.Fatalf("parts %v, want the one call %v", parts, want)
	}
	wantFinish(t, res.Meta, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls")
	wantUsage(t, res.Meta.GetUsage(), &llmrelayv1.Usage{InputTokens: 973, OutputTokens: 47, TotalTokens: 1020})
	timings := map[string]any{"prompt_time": 0.144756529, "completion_time": 0.139318766, "total_time": 0.284075295}
	if d := res.Meta.GetExtended().GetFields()["usage_details"].GetStructValue().AsMap(); !reflect.DeepEqual(d, timings) {
		t.Errorf("usage_details %v, want %v", d, timings)
	}
	if res.Meta.GetResponseId() != "chatcmpl-e8112aed-4365-4729-87da-30b22b3a2042" || res.Meta.GetResolvedModel() != "llama3-70b-8192" ||
		res.Meta.GetProviderRequestId() != "req_01j2y2eegverptpmacwcpq4dme" ||
		res.Meta.GetExtended().GetFields()["system_fingerprint"].GetStringValue() != "fp_753a4aecf6" {
		t.Errorf("meta %v", res.Meta)
	}
	wantRateLimit(t, res.Meta.GetRateLimit(), &llmrelayv1.RateLimit{
		RequestsLimit: proto.Int64(50000), RequestsRemaining: proto.Int64(49999), RequestsResetTime: ts("2024-07-16T15:26:47.728Z"),
		TokensLimit: proto.Int64(30000), TokensRemaining: proto.Int64(29933), TokensResetTime: ts("2024-07-16T15:26:46.134Z")})
	wantWarnings(t, res.Meta)

	follow := req(res.Message, msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_22p5", result)))
	body, _, err := newTestProvider(t, kOpenAI, srv1.URL).buildChatRequest(follow, false)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	// The cassette's second request's messages, as YAML reads them.
	const recorded = `[{"role": "system", "content": "You are a function calling LLM that uses the data extracted from the get_game_score function to answer questions around NBA game scores. Include the team and their opponent in your response."}, {"role": "user", "content": "What was the score of the Warriors game?"}, {"role": "assistant", "tool_calls": [{"id": "call_22p5", "function": {"arguments": "{\"team_name\":\"Golden State Warriors\"}", "name": "get_game_score"}, "type": "function"}]}, {"tool_call_id": "call_22p5", "role": "tool", "name": "get_game_score", "content": "{\"game_id\": \"401585601\", \"status\": \"Final\", \"home_team\": \"Los Angeles Lakers\", \"home_team_score\": 121, \"away_team\": \"Golden State Warriors\", \"away_team_score\": 128}"}]`
	var want []any
	if err := json.Unmarshal([]byte(recorded), &want); err != nil {
		t.Fatal(err)
	}
	gm, _ := got["messages"].([]any)
	if len(gm) != len(want) {
		t.Fatalf("messages %v, want %v", gm, want)
	}
	for i := range want {
		g, _ := gm[i].(map[string]any)
		for k, v := range want[i].(map[string]any) {
			if i == 3 && k == "name" {
				continue // not in the Chat Completions schema; see above
			}
			if !reflect.DeepEqual(g[k], v) {
				t.Errorf("message %d %s: %v, want %v", i, k, g[k], v)
			}
		}
	}
	if c, ok := gm[2].(map[string]any)["content"]; ok && c != nil && c != "" {
		t.Errorf("assistant content %v beside the call, want none", c)
	}

	srv2 := providertest.ReplayFile(t, td("real_weave_groq_tool_call_2.http"))
	res2, err := newTestProvider(t, kOpenAI, srv2.URL).Generate(context.Background(), follow)
	if err != nil {
		t.Fatal(err)
	}
	checkResultInvariants(t, res2)
	providertest.Golden(t, td("real_weave_groq_tool_call_2.golden"), renderResult(t, res2))
	if p := res2.Message.GetParts(); len(p) != 1 || p[0].GetText() != "The Golden State Warriors played against the Los Angeles Lakers and won the game 128-121." {
		t.Fatalf("parts %v", p)
	}
	wantFinish(t, res2.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	wantUsage(t, res2.Meta.GetUsage(), &llmrelayv1.Usage{InputTokens: 177, OutputTokens: 20, TotalTokens: 197})
	if res2.Meta.GetResponseId() != "chatcmpl-c7cd25e4-5168-44af-9c56-a86a762029e3" || res2.Meta.GetProviderRequestId() != "req_01j2y2ef3hefz8782tpd16z131" {
		t.Errorf("meta %v", res2.Meta)
	}
	wantRateLimit(t, res2.Meta.GetRateLimit(), &llmrelayv1.RateLimit{
		RequestsLimit: proto.Int64(50000), RequestsRemaining: proto.Int64(49998), RequestsResetTime: ts("2024-07-16T15:26:48.859Z"),
		TokensLimit: proto.Int64(30000), TokensRemaining: proto.Int64(28998), TokensResetTime: ts("2024-07-16T15:26:48.003Z")})
	wantWarnings(t, res2.Meta)
}
