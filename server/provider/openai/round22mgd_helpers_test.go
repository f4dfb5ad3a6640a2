package openai

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 22 (mgd): maruel/genai's go-vcr recordings of the live OpenAI
// Responses API (testdata/README.md, "Round 22: maruel/genai's Responses
// API recordings"). Every expectation is read off the recording by hand.

// mgdSqrtQuestion is maruel/genai's square_root prompt.
const mgdSqrtQuestion = "Use the square_root tool to calculate the square root of 132413 and reply with only the result. Do not give an explanation."

// mgdSquareRoot is maruel/genai's square_root tool (the $schema and
// additionalProperties it sends are left out: the API echoes neither
// back, and the adapter sends the parameters as given).
var mgdSquareRoot = &llmrelayv1.Tool{Name: "square_root", Description: "Calculates and return the square root of a number",
	Parameters: `{"properties":{"number":{"type":"number"}},"additionalProperties":false,"type":"object","required":["number"]}`}

// mgdRequest is a Responses API request of one user question, with
// maruel/genai's options: service tier flex, reasoning (summary "auto")
// when effort is set.
func mgdRequest(model, question string, effort llmrelayv1.ReasoningEffort) *provider.Request {
	oo := &llmrelayv1.OpenAIOptions{ServiceTier: "flex"}
	if effort != llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED {
		oo.ReasoningSummary = "auto"
	}
	return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: model, Format: formatResponses,
		Reasoning:       effort != llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED,
		Messages:        []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text(question))},
		Options:         &llmrelayv1.GenerationOptions{ReasoningEffort: effort},
		ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Openai{Openai: oo}}}
}

// mgdTools makes req a tool request of square_root with the tool choice m.
func mgdTools(req *provider.Request, m llmrelayv1.ToolChoiceMode) *provider.Request {
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{mgdSquareRoot}
	req.Options.ToolChoice = &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: m}}
	req.Options.ParallelToolCalls = proto.Bool(true)
	return req
}

// mgdDate records the Date header of the answers it carries: the
// cassettes have none (maruel/genai's recorder drops it), so the replay
// server adds its own, from which the adapter counts the x-ratelimit-*
// resets.
type mgdDate struct {
	mu   sync.Mutex
	date string
}

func (d *mgdDate) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		d.mu.Lock()
		d.date = resp.Header.Get("Date")
		d.mu.Unlock()
	}
	return resp, err
}

// mgdLimits are the six x-ratelimit-* headers of a recording.
type mgdLimits struct {
	reqLimit, reqLeft, tokLimit, tokLeft int64
	reqReset, tokReset                   time.Duration
}

// check checks rl against the headers, its resets counted from the Date
// the replay server sent, then clears the resets (they change with the
// day the test runs) so that the golden holds the rest.
func (want mgdLimits) check(t *testing.T, d *mgdDate, rl *llmrelayv1.RateLimit) {
	t.Helper()
	if rl == nil {
		t.Fatal("no rate limit")
	}
	d.mu.Lock()
	date := d.date
	d.mu.Unlock()
	at, err := http.ParseTime(date)
	if err != nil {
		t.Fatalf("served Date %q: %v", date, err)
	}
	if rl.GetRequestsLimit() != want.reqLimit || rl.GetRequestsRemaining() != want.reqLeft || rl.GetTokensLimit() != want.tokLimit ||
		rl.GetTokensRemaining() != want.tokLeft || rl.RequestsLimit == nil || rl.TokensRemaining == nil {
		t.Errorf("rate limit %v, want %+v", rl, want)
	}
	if got := rl.GetRequestsResetTime().AsTime(); rl.RequestsResetTime == nil || !got.Equal(at.Add(want.reqReset)) {
		t.Errorf("requests reset %v, want %v", got, at.Add(want.reqReset))
	}
	if got := rl.GetTokensResetTime().AsTime(); rl.TokensResetTime == nil || !got.Equal(at.Add(want.tokReset)) {
		t.Errorf("tokens reset %v, want %v", got, at.Add(want.tokReset))
	}
	if msg := typedInWindows(rl); msg != "" {
		t.Error(msg)
	}
	rl.RequestsResetTime, rl.TokensResetTime = nil, nil
	for _, w := range rl.GetWindows() {
		w.ResetTime = nil
	}
}

// mgdUnary replays a unary recording, checks its rate limits, golden and
// the result invariants, and returns the result and the request the
// adapter sent.
func mgdUnary(t *testing.T, name string, req *provider.Request, lim mgdLimits) (*provider.Result, map[string]any) {
	t.Helper()
	srv := providertest.ReplayFile(t, td(name+".http"))
	d := &mgdDate{}
	res, err := newTestProvider(t, kOpenAI, srv.URL, WithHTTPClient(&http.Client{Transport: d})).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkResultInvariants(t, res)
	lim.check(t, d, res.Meta.GetRateLimit())
	providertest.Golden(t, td(name+".golden"), renderResult(t, res))
	if p := srv.Last(t).Path; p != "/v1/responses" {
		t.Errorf("path %s", p)
	}
	return res, r20Request(t, srv.Last(t).Body)
}

// mgdStream replays a stream recording, checks its rate limits (on the
// first meta event; nil when the recording has none), golden and the stream invariants, and returns the
// events, the folded answer and the request the adapter sent.
func mgdStream(t *testing.T, name string, req *provider.Request, lim *mgdLimits) ([]*provider.Event, folded, map[string]any) {
	t.Helper()
	srv := providertest.ReplayFile(t, td(name+".http"))
	d := &mgdDate{}
	s, err := newTestProvider(t, kOpenAI, srv.URL, WithHTTPClient(&http.Client{Transport: d})).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, _, err := collect(t, s)
	if err != nil {
		t.Fatal(err)
	}
	var limits int
	var out strings.Builder
	for _, ev := range evs {
		if ev.Kind == provider.EventMeta && ev.Meta.GetRateLimit() != nil {
			limits++
			lim.check(t, d, ev.Meta.GetRateLimit())
		}
		out.WriteString(renderEvent(t, ev) + "\n")
	}
	out.WriteString("eof\n")
	if want := map[bool]int{true: 1}[lim != nil]; limits != want {
		t.Errorf("%d rate limits, want %d", limits, want)
	}
	providertest.Golden(t, td(name+".golden"), []byte(out.String()))
	checkStreamInvariants(t, evs)
	if p := srv.Last(t).Path; p != "/v1/responses" {
		t.Errorf("path %s", p)
	}
	return evs, accFold(t, evs), r20Request(t, srv.Last(t).Body)
}
