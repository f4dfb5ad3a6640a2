package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 19: google/adk-go's httprr recordings (testdata/README.md,
// "Round 19").

func init() {
	round17Recordings = append(round17Recordings, "real_adkgo_coordinator_parallel_calls_1",
		"real_adkgo_coordinator_parallel_calls_2", "real_adkgo_translator_es")
}

// The coordinator of adk-go's TestDelegation_04_ChatToTwoSingleTurnParallel,
// as its requests carried it.
const (
	r19CoordSystem = "When the user asks for translations into multiple\nlanguages, call BOTH translator sub-agents in your NEXT response —\n" +
		"prefer putting both function calls in a single response so they run\nin parallel. After both return, reply with one short sentence\n" +
		"listing both translations.\n\nYou are an agent. Your internal name is \"coordinator\". The description about you is \"Calls both translators (in parallel) and reports both.\"."
	r19CoordUser        = "Translate 'good morning' to both Spanish and French."
	r19CoordSig         = "EooFCocFAQw51sfGwqe3X5IS4qSBOJjdufQw9YD1r1BPWMhu8f66fgSANhGb+mWpPq4CvOC9sHrqczctSFg0cEjgZP87Em2Xkg7/OzvGR1wyDlOzgAa7nne1rlMr7OiIGzFuVApgbtN1pLawnHgu78HlBBF7rLtb9QFUM0bH0X0fLFfxYYwwRZODR/Q19ALz6bs3NSy5IJq1QCMNHQ5i3f86ZeNoBGBLuq7L2saWrN3EMEEg2YLiL3s8jOScPc3/9Iny+6CxKw39NFIjejGq7fveZ87KQLKlmsnayXvc7JPp+PxsR2rE/Zx+1q+7LlVJdO133M4XK82qRJpudQAqhodlN5gCcxquINHmvx9NsaS91eJbruaFzqXLAGReakICqkAlDBDBSxiHgi/yOov+a3+omlyopboC3YD/HhlF1jWtvfOJJMRYFsqLekz2UXj+IT5Jf0tzrrkSE4cy65HH+1MjnMJJWtnkbRbdXdy2IS86m1QTSHri2RgO6xArVoVXUzNe0i2SO10ZBA78ftWot3VnvgnEuLZZLjHk4s1n+fYaFh+n2dii8EuCgjbQszLYY82RRBkWoGAZ0qeIAYA4nwSMlCMBhfvw5LKjRfOnfhcrGxcqeVzqyPd4JWNKyMtCwn5dkMNwmMAfT/QOF23IwOrwzgX+SsZkwQFGWUDzNFMGGmbRE9WDXvp3ujChLjuBdY1wqjfGE+Vz3e3CWlcHFQqAr7YkDpogx8zyENVVzfbImQ/OGzIoyEd71GQeg4CojuFdEWCJfy39EXs159rGPfQN77umLDQUBqDLRQSTZpAGdNMs5wGC5nmkgXJBa3ZU1hK9M0wTXizwiflPHoTMFgTgnNDztyOfNpDn0SU="
	r19TranslatorParams = `{"properties":{"request":{"type":"string"}},"required":["request"],"type":"object"}`
	// The contents of adk-go's follow-up (its fourth request), which the
	// API answered: the two calls by their ids, the signature on the
	// first, then both results by id and name.
	r19CoordContents2 = `[{"parts":[{"text":"Translate 'good morning' to both Spanish and French."}],"role":"user"},` +
		`{"parts":[{"functionCall":{"args":{"request":"good morning"},"id":"rgjcr7hc","name":"translator_es"},"thoughtSignature":"` + r19CoordSig + `"},` +
		`{"functionCall":{"args":{"request":"good morning"},"id":"cu6rg45q","name":"translator_fr"}}],"role":"model"},` +
		`{"parts":[{"functionResponse":{"id":"rgjcr7hc","name":"translator_es","response":{"result":"Buenos días"}}},` +
		`{"functionResponse":{"id":"cu6rg45q","name":"translator_fr","response":{"result":"Bonjour"}}}],"role":"user"}]`
)

// TestRound19AdkGoParallelCalls: gemini-3.5-flash (June 2026), unary,
// asked to call two translator tools at once: two functionCall parts in
// one answer, each with an id of the API's ("rgjcr7hc", "cu6rg45q": the
// call ids we relay), the thoughtSignature on the first only; STOP with
// finishMessage: a tool-call finish; 186 in, 34 + 129 thought tokens out,
// 349 total; serviceTier "standard" in usageMetadata and in the header.
//
// adk-go sent both calls back, then both results by id and name, and the
// API answered (_2): one sentence with both translations, its text signed
// (Gemini 3: the signature is kept as a text-less reasoning part after the
// text), 376 in, 16 + 70 out. Ours carries the same contents, byte for
// byte the same JSON: the ids the API gave go back on the calls and on the
// results.
func TestRound19AdkGoParallelCalls(t *testing.T) {
	t.Parallel()
	const first, second = "real_adkgo_coordinator_parallel_calls_1", "real_adkgo_coordinator_parallel_calls_2"
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-3.5-flash",
		Messages: []*llmrelayv1.Message{
			msg(llmrelayv1.Role_ROLE_SYSTEM, text(r19CoordSystem)),
			msg(llmrelayv1.Role_ROLE_USER, text(r19CoordUser)),
		},
		Tools: []*llmrelayv1.Tool{
			{Name: "translator_es", Description: "Translates an English phrase into Spanish.", Parameters: r19TranslatorParams},
			{Name: "translator_fr", Description: "Translates an English phrase into French.", Parameters: r19TranslatorParams},
		},
	}
	p, srv := replay(t, first)
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", first+".golden"), renderResult(t, res))
	sent := r17JSON(t, srv.Last(t).Body)
	if want := `[{"parts":[{"text":"Translate 'good morning' to both Spanish and French."}],"role":"user"}]`; !jsonEqual(sent["contents"], r19Decode(t, want)) {
		t.Errorf("contents %v", sent["contents"])
	}
	es := toolCallPart("rgjcr7hc", "translator_es", `{"request":"good morning"}`)
	es.GetToolCall().Signature = r19CoordSig
	fr := toolCallPart("cu6rg45q", "translator_fr", `{"request":"good morning"}`)
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, es, fr); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	if m.GetResponseId() != "VnoyavS1H8PmnsEP1uDjsQo" || m.GetResolvedModel() != "gemini-3.5-flash" || m.GetServiceTier() != "standard" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetProviderFinishReason() != "STOP" ||
		m.GetToolCallCount() != 2 || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 186, OutputTokens: 34 + 129, TotalTokens: 349, ReasoningTokens: 129}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}

	// The follow-up.
	req.Messages = append(req.Messages, res.Message, msg(llmrelayv1.Role_ROLE_TOOL,
		toolResultPart("rgjcr7hc", "Buenos días"), toolResultPart("cu6rg45q", "Bonjour")))
	next, srv2 := replay(t, second)
	res2, err := next.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", second+".golden"), renderResult(t, res2))
	got := r17JSON(t, srv2.Last(t).Body)
	if !jsonEqual(got["contents"], r19Decode(t, r19CoordContents2)) {
		t.Errorf("contents\n got %v\nwant %s", got["contents"], r19CoordContents2)
	}
	const sig2 = "EukCCuYCAQw51sdycoidvxzRzs7jhKJ/lzD4e4DAf6F3ZWDF4Jv/lWRKrsKI3EW1L/IcxPjcgEetONtHKWtSDtcp3mwffwCgYKL/A1B476XoesvicYxoruHrHUjME78+s1M7VRT5faIdhBlU6Z79LvByG7KZnzkmwxMq7MCllqsG+lz24Tqaeg8CIC0PVSlnH8JnEW5tUTA9sRgY/HlURpLjpmR6xTwrGQFfWGwG8IrUIA97mZ2w/4P7sWvAau3pQVTtJQfBrIQzcqkzAKJ7p9cV8NvYz0dr7aUTJ1waxzLQ8EfFPYH9wSLJB53iABlkoDfeZfFU8vPR0SkqDfJNIHTWg5xPcgZef/ZsH9GPXCj1eOUB9O3bLNKYxuEA/Kg9m73r+zGV319e6A6pV0dqOkbze+2JsUG1n6dYDdYFJS5S2y/JZpXl2d5ELWYO0b7I/uQVsCYh6j5hkTNew5Po9SUz9vZguvjs5MNQVA=="
	sigPart := &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Signature: sig2}}}
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("In Spanish it is 'Buenos días' and in French it is 'Bonjour'."), sigPart); !proto.Equal(res2.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res2.Message, want)
	}
	m2 := res2.Meta
	if m2.GetResponseId() != "WnoyasPtD735nsEPwteEgAo" || m2.GetServiceTier() != "standard" ||
		m2.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m2.GetToolCallCount() != 0 || len(m2.GetWarnings()) != 0 {
		t.Errorf("meta %v", m2)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 376, OutputTokens: 16 + 70, TotalTokens: 462, ReasoningTokens: 70}); !proto.Equal(m2.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m2.GetUsage(), want)
	}
}

// TestRound19AdkGoTranslatorES: the Spanish translator of the same run
// (its own agent: the phrase as a JSON text, one transfer tool): "Buenos
// días" (UTF-8 as sent) with its signature, 126 in, 2 + 148 out, 276 total.
func TestRound19AdkGoTranslatorES(t *testing.T) {
	t.Parallel()
	const name = "real_adkgo_translator_es"
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-3.5-flash",
		Messages: []*llmrelayv1.Message{
			msg(llmrelayv1.Role_ROLE_SYSTEM, text("Translate the given English phrase into Spanish. Reply\nwith ONLY the Spanish translation, no other words.\n\n")),
			msg(llmrelayv1.Role_ROLE_USER, text(`{"request":"good morning"}`)),
		},
		Tools: []*llmrelayv1.Tool{{Name: "transfer_to_agent",
			Description: "Transfer the question to another agent.\nThis tool hands off control to another agent when it's more suitable to answer the user's question according to the agent's description.",
			Parameters:  `{"properties":{"agent_name":{"description":"the agent name to transfer to","enum":["coordinator"],"type":"string"}},"required":["agent_name"],"type":"object"}`}},
	}
	p, _ := replay(t, name)
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
	const sig = "EuIECt8EAQw51sdnEHyodJT5jN/Q+BervKxsKTxyYQ8zzM6VNr9kX2IfFr57PQ+KYiPR46cjx0/a5ec4eUt+whSB7gLP1cEtoV6jMrWFyMSLY2i/fGchzTACDKNHH9GZ3o/yp9TwfceD/1P9N1L+wIjg/Fwu/Ru/AjOqMD/DHT4MFDTlWWJ9CJHPVQJMyuF2/U3owILwxUIXpt52I7/DF1WQH4FQiUb2HCG7byZVyg3osbKicy5OqG23MJrkhmVuYhNxS16POWHFOPvjBqdVDtvmrOf975u/9D6VzYjN2T3+fHmd2NSG1QvC4km4CXV9T1qyGDVuqXdweZSyEgprN3pqF+JPuLech5TtoFHQT6Dr0gqPi6R9GBKb4QEtNPEJmFB1+M8QrTjEz0phWhVrordPCIVLiRNjYQHmxd0Q2W96MU1Ux+H4MmVEL/b42/Hfy3d0DWDfzVNNArFTo1oN21BZmw0nFCArQWSo5DblNjiUADApiLAkLr8Ms69wKr6zYZLH9y8VJK3+K/pySnBeAwwWohOvqzHnB+L4KuaoHc7eCW1Kmmx9+cFybwVoNJwZH+pI1ZyDn9X/B2XXaaTBUbMq5P7dcFMbAWebSjpJwgE2oSVkOmSw0oX4aiV7wiuqMoWk6wmD4SeTL7iSkjqHOP/8TJ5nnVTtHJSkm5SgYOAK8I2MWeXVYxOzjvRDPq4xEcS5fC15vt6M4b1e3W1vH2NfzjNL05shqccbO94i0QxkuYDJNBTYwptAfV2wPHbXZuLX2PDyWaa/gUBaKzNuKuGTjVa2zVDHIC0DWOOF6SVHNO6zfw=="
	sigPart := &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Signature: sig}}}
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("Buenos días"), sigPart); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	if m.GetResponseId() != "V3oyaruKPJWonsEPtsmCiA8" || m.GetServiceTier() != "standard" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 126, OutputTokens: 2 + 148, TotalTokens: 276, ReasoningTokens: 148}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
}

// r19Decode decodes a JSON text.
func r19Decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func init() {
	round17Recordings = append(round17Recordings, "real_adkgo_solver_validation_retry_1", "real_adkgo_solver_validation_retry_2")
}

// The solver of adk-go's TestDelegation_07_ChatToTaskValidationRetry.
const (
	r19SolverSystem = "You answer one arithmetic question. On your FIRST\nfinish_task call, intentionally pass a wrong field name (\"wrong_field\"\n" +
		"instead of \"answer\") so the validation fails. On your SECOND call,\ncorrect it and pass {\"answer\": <integer>}. Never give up; the\n" +
		"validation error message will tell you what to fix.\n\nYou are an agent. Your internal name is \"solver\". The description about you is " +
		"\"Returns the integer answer to a simple arithmetic question.\".\n\n\n\n\nDo NOT call 'finish_task' prematurely. Use your available tools to\n" +
		"fully complete every aspect of the delegated task first. If the\ntask is unclear, ask the user for clarification before proceeding.\n" +
		"Once the task is fully complete, call 'finish_task' by itself with\nno accompanying text output.\n"
	r19SolverUser = `{"request":"What is 21 plus 21?"}`
	// adk-go's tool error, as its follow-up sent it back.
	r19SolverToolError = "Invoking `finish_task()` failed due to validation errors:\noutput arg: '\"wrong_field\"' does not exist in schema properties\n" +
		"You could retry calling this tool, but it is IMPORTANT for you to provide all the mandatory parameters with correct types."
)

// TestRound19AdkGoToolErrorRetry: gemini-3.5-flash as adk-go's solver
// sub-agent, told to fail its first finish_task call: the call carries
// {"wrong_field": 42} (an argument the schema lacks: relayed as sent),
// id "dmyvsg54", signed; 353 in, 17 + 330 out. adk-go answered with the
// validation failure as the functionResponse's {"error": …} by id and name,
// and the API took it (_2): finish_task again with {"answer": 42}, a new id
// "uf0amaey", 765 in, 15 + 32 out. Ours sends the failure, a tool result
// marked as an error, the same way: contents JSON-equal to the recorded
// follow-up's (the signature as the first answer gave it).
func TestRound19AdkGoToolErrorRetry(t *testing.T) {
	t.Parallel()
	const first, second = "real_adkgo_solver_validation_retry_1", "real_adkgo_solver_validation_retry_2"
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-3.5-flash",
		Messages: []*llmrelayv1.Message{
			msg(llmrelayv1.Role_ROLE_SYSTEM, text(r19SolverSystem)),
			msg(llmrelayv1.Role_ROLE_USER, text(r19SolverUser)),
		},
		Tools: []*llmrelayv1.Tool{
			{Name: "transfer_to_agent",
				Description: "Transfer the question to another agent.\nThis tool hands off control to another agent when it's more suitable to answer the user's question according to the agent's description.",
				Parameters:  `{"properties":{"agent_name":{"description":"the agent name to transfer to","enum":["coordinator"],"type":"string"}},"required":["agent_name"],"type":"object"}`},
			{Name: "finish_task",
				Description: "Signal that this agent has completed its delegated task. Call this when you have finished your delegated task. Pass the required output data in the parameters.",
				Parameters:  `{"properties":{"answer":{"description":"The numeric answer.","type":"integer"}},"required":["answer"],"type":"object"}`},
		},
	}
	p, _ := replay(t, first)
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", first+".golden"), renderResult(t, res))
	parts := res.Message.GetParts()
	if len(parts) != 1 {
		t.Fatalf("message %v, want one call", res.Message)
	}
	call := parts[0].GetToolCall()
	sig := call.GetSignature()
	if call.GetCallId() != "dmyvsg54" || call.GetName() != "finish_task" || call.GetArguments() != `{"wrong_field":42}` || !call.GetArgumentsValid() ||
		len(sig) != 1676 || !strings.HasPrefix(sig, "EuQJCuEJAQw51seA") || !strings.HasSuffix(sig, "ZMZ3wA==") {
		t.Errorf("call %v", call)
	}
	m := res.Meta
	if m.GetResponseId() != "Y30yaqSYOIXNnsEP9se9wAo" || m.GetServiceTier() != "standard" || m.GetToolCallCount() != 1 ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 353, OutputTokens: 17 + 330, TotalTokens: 700, ReasoningTokens: 330}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}

	// The retry.
	failure := &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "dmyvsg54", Content: r19SolverToolError, IsError: true}}}
	req.Messages = append(req.Messages, res.Message, msg(llmrelayv1.Role_ROLE_TOOL, failure))
	next, srv := replay(t, second)
	res2, err := next.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", second+".golden"), renderResult(t, res2))
	errJSON, err := json.Marshal(r19SolverToolError)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"parts":[{"text":"{\"request\":\"What is 21 plus 21?\"}"}],"role":"user"},` +
		`{"parts":[{"functionCall":{"args":{"wrong_field":42},"id":"dmyvsg54","name":"finish_task"},"thoughtSignature":"` + sig + `"}],"role":"model"},` +
		`{"parts":[{"functionResponse":{"id":"dmyvsg54","name":"finish_task","response":{"error":` + string(errJSON) + `}}}],"role":"user"}]`
	if got := r17JSON(t, srv.Last(t).Body)["contents"]; !jsonEqual(got, r19Decode(t, want)) {
		t.Errorf("contents\n got %v\nwant %s", got, want)
	}
	retry := toolCallPart("uf0amaey", "finish_task", `{"answer":42}`)
	retry.GetToolCall().Signature = "Eq8BCqwBAQw51sfO++lX0lSLM4Uip/sdzB+0KzRyYmScT54SImwbis9Uxk8hJyVZ7JqGaZQeIjT3pGA9zJHxDu29smJTkvere6DRkaf9tJi7jideJiq/X5qfMr52q9C7nGIoBUYudLv1bfciYKXHhaTr0mXBJZAmJdQaoTd8mIHWyjPbhHzVm7ojneQNvxjcC7C83bLDkwb+wP6xDjj9SauISlCjVX4oyG474IDklE4E1A=="
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, retry); !proto.Equal(res2.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res2.Message, want)
	}
	m2 := res2.Meta
	if m2.GetResponseId() != "Zn0yavaxIq-nkdUP5NarqAo" || m2.GetToolCallCount() != 1 ||
		m2.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || len(m2.GetWarnings()) != 0 {
		t.Errorf("meta %v", m2)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 765, OutputTokens: 15 + 32, TotalTokens: 812, ReasoningTokens: 32}); !proto.Equal(m2.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m2.GetUsage(), want)
	}
}

func init() {
	round17Recordings = append(round17Recordings, "real_adkgo_flash2_stream_prompt_count_drops")
}

// TestRound19AdkGoPromptCountDrops: gemini-2.0-flash streamed (June 2025,
// adk-go's TestNewGeminiModel; events separated by CRLF CRLF). The first two
// chunks count 8 prompt tokens and no candidates (total 8); the last, with
// STOP, 7 prompt and 8 candidate tokens (total 15): the prompt count goes
// down. Each usage event replaces the one before, so the answer's usage is
// the last chunk's, 7 in, not the largest count seen; no index on the
// candidates, no thought tokens.
func TestRound19AdkGoPromptCountDrops(t *testing.T) {
	t.Parallel()
	const name = "real_adkgo_flash2_stream_prompt_count_drops"
	p, srv := replay(t, name)
	s, err := p.Stream(context.Background(), &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemini-2.0-flash",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("What is the capital of France?"))}})
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs, end := drain(t, s)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("stream ended with %v", end)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderStream(t, evs, end))
	if c := srv.Last(t); c.Path != "/v1beta/models/gemini-2.0-flash:streamGenerateContent" || c.Query != "alt=sse" {
		t.Errorf("request to %s?%s", c.Path, c.Query)
	}
	var usages []*llmrelayv1.Usage
	for _, ev := range evs {
		if ev.Kind == provider.EventUsage {
			usages = append(usages, ev.Usage)
		}
	}
	want := []*llmrelayv1.Usage{{InputTokens: 8, TotalTokens: 8}, {InputTokens: 7, OutputTokens: 8, TotalTokens: 15}}
	if len(usages) != len(want) || !proto.Equal(usages[0], want[0]) || !proto.Equal(usages[1], want[1]) {
		t.Errorf("usage events %v, want %v", usages, want)
	}
	f := foldEvents(evs)
	if f.text != "The capital of France is Paris.\n" || !proto.Equal(f.usage, want[1]) {
		t.Errorf("text %q usage %v", f.text, f.usage)
	}
	m := f.meta
	if m.GetResponseId() != "ictQaOn0MeeDmNAP8OOwqA0" || m.GetResolvedModel() != "gemini-2.0-flash" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
}
