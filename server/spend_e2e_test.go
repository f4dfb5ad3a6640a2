package server_test

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/redistest"
)

const spendToken = "spend-token-0123456789abcdef"

// spendYAML: builtin/priced costs 0.10 USD a token; the caller "spender"
// has 1.00 USD a day and may use builtin/echo too, which has no prices.
func spendYAML(redis string) string {
	y := string(config.DefaultYAML()) + `
  - name: builtin/priced
    provider: builtin
    upstream_model: echo
    capabilities: {chat: {format: builtin}}
    prices: {input: 100000, output: 100000}
  - name: builtin/priced-tools
    provider: builtin
    upstream_model: echo
    capabilities: {tools: {format: builtin}}
    prices: {input: 100000, output: 100000}
auth:
  tokens:
    - name: spender
      sha256: ` + sha(spendToken) + `
      models: [builtin/echo, builtin/priced, builtin/priced-tools]
      spend: {limit: "1.00", per: day}
`
	if redis != "" {
		y += "  redis: {address: " + redis + "}\n"
	}
	return y
}

// spendRefused checks a refusal for the spend budget: ResourceExhausted,
// ErrorInfo naming the limit and the budget, RetryInfo up to a day.
func spendRefused(t *testing.T, err error) {
	t.Helper()
	st, info, _ := statusDetails(t, err)
	if st.Code() != codes.ResourceExhausted || info.GetReason() != "RESOURCE_EXHAUSTED" || info.GetMetadata()["limit"] != "spend" ||
		info.GetMetadata()["budget"] != "1.00 USD per day" || info.GetMetadata()["caller"] != "spender" {
		t.Fatalf("over the spend budget: %v %v", st, info)
	}
	var retry *errdetails.RetryInfo
	for _, d := range st.Details() {
		if r, ok := d.(*errdetails.RetryInfo); ok {
			retry = r
		}
	}
	if d := retry.GetRetryDelay().AsDuration(); d <= 0 || d > 24*60*60e9 {
		t.Errorf("RetryInfo %v: want the time until the day ends", retry)
	}
}

func pricedChat(text string) *llmrelayv1.ChatRequest {
	return &llmrelayv1.ChatRequest{Model: "builtin/priced", Messages: []*llmrelayv1.Message{user(text)}}
}

// TestSpendBudget: calls of a model without prices charge nothing; a call
// may overdraw the budget (its cost is known at its end), the next is
// refused before any provider call, and the start log names the models
// whose calls are not charged.
func TestSpendBudget(t *testing.T) {
	t.Parallel()
	c, logs := startWith(t, spendYAML(""), "")
	for range 3 {
		resp, err := c.Chat(bearer(spendToken), &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("one two three four five")}})
		if err != nil || resp.GetMeta().GetCost() != nil {
			t.Fatalf("unpriced call: %v %v", resp.GetMeta(), err)
		}
	}
	resp, err := c.Chat(bearer(spendToken), pricedChat("one two three four five six"))
	if err != nil || resp.GetMeta().GetCost().GetAmountNanos() < 1e9 {
		t.Fatalf("the call that reaches the budget: %v %v", resp.GetMeta(), err)
	}
	_, err = c.Chat(bearer(spendToken), pricedChat("hi"))
	spendRefused(t, err)
	// Over the budget, unpriced models are refused too: the budget is the caller's.
	_, err = c.Chat(bearer(spendToken), &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("hi")}})
	spendRefused(t, err)
	if !strings.Contains(logs.String(), "caller spender has a spend budget but may use models without prices") ||
		!strings.Contains(logs.String(), "builtin/echo") {
		t.Errorf("no warning about unpriced models: %s", logs.String())
	}
}

// TestSharedSpendBudget: two servers on one Redis share the caller's
// spending: what one charged refuses the caller on the other.
func TestSharedSpendBudget(t *testing.T) {
	sock := redistest.Start(t)
	a, _ := startWith(t, spendYAML(sock), "")
	b, _ := startWith(t, spendYAML(sock), "")
	resp, err := a.Chat(bearer(spendToken), pricedChat("one two three"))
	if err != nil || resp.GetMeta().GetCost().GetAmountNanos() >= 1e9 || len(resp.GetMeta().GetWarnings()) != 0 {
		t.Fatalf("first call: %v %v", resp.GetMeta(), err)
	}
	// Each server alone is under the budget; together they are over it.
	if resp, err := b.Chat(bearer(spendToken), pricedChat("four five six")); err != nil || resp.GetMeta().GetCost().GetAmountNanos() >= 1e9 {
		t.Fatalf("second call: %v %v", resp.GetMeta(), err)
	}
	// The charge is written when the call ends, off the response path:
	// wait for it to land, with calls that charge nothing.
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err = a.Chat(bearer(spendToken), &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("hi")}})
		if err != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	spendRefused(t, err)
	_, err = b.Chat(bearer(spendToken), pricedChat("hi"))
	spendRefused(t, err)
}

// TestSpendBudgetAgentRounds: an Agent run is admitted again before each
// model call after the first, so a run whose first round spent the budget
// is refused before its second model call instead of overdrawing by every
// round it has left.
func TestSpendBudgetAgentRounds(t *testing.T) {
	t.Parallel()
	c, _ := startWith(t, spendYAML(""), "")
	evs, err := agentRun(bearer(spendToken), t, c, &llmrelayv1.AgentSetup{Model: "builtin/priced-tools",
		Messages: []*llmrelayv1.Message{user("one two three four five six seven eight nine ten Paris")}, Tools: agentTools(t)}, answerAll)
	spendRefused(t, err)
	requested := 0
	for _, ev := range evs {
		if ev.GetToolCallRequest() != nil {
			requested++
		}
		if ev.GetEnd() != nil {
			t.Fatalf("the run ended normally: %v", ev.GetEnd().GetMeta())
		}
	}
	if requested == 0 {
		t.Fatal("round 1 was refused too: the run's own admission let it through with a budget left")
	}
}
