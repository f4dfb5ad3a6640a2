package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// bedrockBaseURL is the base URL of AWS Bedrock's OpenAI-compatible
// endpoint, as its documentation gives it.
const bedrockBaseURL = "https://bedrock-runtime.us-west-2.amazonaws.com/openai/v1"

// newHostProvider is a provider configured for baseURL whose requests go
// to the replay server srvURL: host-dependent behaviour is exercised
// against a recording.
func newHostProvider(t *testing.T, baseURL, srvURL string) *Provider {
	t.Helper()
	target, err := url.Parse(srvURL)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.URL.Scheme, r.URL.Host, r.Host = target.Scheme, target.Host, ""
		return http.DefaultTransport.RoundTrip(r)
	})}
	p, err := New(testKey, WithBaseURL(baseURL), WithHTTPClient(client))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// messageParts returns a message's reasoning and text, each joined, and
// the kinds of its parts in order.
func messageParts(m *llmrelayv1.Message) (reasoning, text string, kinds []string) {
	for _, p := range m.GetParts() {
		switch k := p.Kind.(type) {
		case *llmrelayv1.Part_Reasoning:
			reasoning += k.Reasoning.GetText()
			kinds = append(kinds, "reasoning")
		case *llmrelayv1.Part_Text:
			text += k.Text
			kinds = append(kinds, "text")
		default:
			kinds = append(kinds, "other")
		}
	}
	return reasoning, text, kinds
}

const (
	bedrockReasoning = "The user asks which is larger, 3.11 or 3.9. Compare as decimals: 3.9 = 3.90." +
		"3.90 > 3.11, so 3.9 is larger."
	bedrockText    = "3.9 is larger: 3.9 = 3.90, which is more than 3.11."
	bedrockContent = "<reasoning>The user asks which is larger, 3.11 or 3.9. Compare as decimals: 3.9 = 3.90.</reasoning>" +
		"<reasoning>3.90 > 3.11, so 3.9 is larger.</reasoning>" + bedrockText
)

// TestRound15BedrockReasoningUnary: Bedrock's gpt-oss answer with its
// reasoning inline as two <reasoning> blocks. It was all text, tags
// included; now one reasoning part (the blocks' texts joined) and the
// answer's text. Served from another host the same content stays text:
// the rule is Bedrock's.
func TestRound15BedrockReasoningUnary(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("dialect_bedrock_gptoss_reasoning.http"))
	res, err := newHostProvider(t, bedrockBaseURL, srv.URL).Generate(context.Background(), chatRequests(t)["chat_plain"])
	if err != nil {
		t.Fatal(err)
	}
	checkResultInvariants(t, res)
	providertest.Golden(t, td("dialect_bedrock_gptoss_reasoning.golden"), renderResult(t, res))
	r, txt, kinds := messageParts(res.Message)
	if r != bedrockReasoning || txt != bedrockText || strings.Join(kinds, ",") != "reasoning,text" {
		t.Errorf("parts %v: reasoning %q, text %q", kinds, r, txt)
	}
	m := res.Meta
	if m.GetResponseId() != "chatcmpl-5d0c4f1e-9b62-4a87-8e13-c2f7a90b6d41" || m.GetResolvedModel() != "openai.gpt-oss-20b-1:0" ||
		m.GetProviderRequestId() != "3f6b2a90-8c41-4e7d-b5a2-1d9e07c4f386" || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP {
		t.Errorf("meta %v", m)
	}
	if u := m.GetUsage(); u.GetInputTokens() != 83 || u.GetOutputTokens() != 61 {
		t.Errorf("usage %v", u)
	}
	if got := srv.Last(t).Path; got != "/openai/v1/chat/completions" {
		t.Errorf("path %q", got)
	}

	plain := providertest.ReplayFile(t, td("dialect_bedrock_gptoss_reasoning.http"))
	res, err = newTestProvider(t, kOpenAI, plain.URL).Generate(context.Background(), chatRequests(t)["chat_plain"])
	if err != nil {
		t.Fatal(err)
	}
	if r, txt, _ := messageParts(res.Message); r != "" || txt != bedrockContent {
		t.Errorf("another host: reasoning %q, text %q", r, txt)
	}
}

// TestRound15BedrockReasoningStream: the same answer streamed, each block
// whole in a delta of its own (as Bedrock sends them); it folds to the
// unary answer's parts. (Tags split across deltas: provider's
// TestThinkBlocksSplitterAgreesWithUnary.)
func TestRound15BedrockReasoningStream(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, td("dialect_bedrock_gptoss_reasoning_stream.http"))
	s, err := newHostProvider(t, bedrockBaseURL, srv.URL).Stream(context.Background(), chatRequests(t)["chat_plain"])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, rendered, err := collect(t, s)
	providertest.Golden(t, td("dialect_bedrock_gptoss_reasoning_stream.golden"), rendered)
	if err != nil {
		t.Fatal(err)
	}
	checkStreamInvariants(t, evs)
	var r, txt strings.Builder
	for _, ev := range evs {
		switch ev.Kind {
		case provider.EventReasoning:
			r.WriteString(ev.Reasoning.Text)
		case provider.EventText:
			txt.WriteString(ev.Text)
		}
	}
	if r.String() != bedrockReasoning || txt.String() != bedrockText {
		t.Errorf("reasoning %q, text %q", r.String(), txt.String())
	}
	f := accFold(t, evs)
	if f.Meta.GetProviderRequestId() != "c2d94e17-5a08-4b3f-a6e1-8f70b3c5d922" || f.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP ||
		f.Meta.GetResponseId() != "chatcmpl-a81e37c2-64f0-4b9d-9c55-0e2d7b4f1a68" {
		t.Errorf("meta %v", f.Meta)
	}
}

// TestRound15BedrockReasoningStreamCut: the recorded stream with every
// content delta cut into pieces of n bytes, so that the tags fall across
// chunks: the same reasoning and text come out.
func TestRound15BedrockReasoningStreamCut(t *testing.T) {
	t.Parallel()
	rec := providertest.Load(t, td("dialect_bedrock_gptoss_reasoning_stream.http"))
	for _, n := range []int{1, 3, 7} {
		var body bytes.Buffer
		for _, line := range strings.Split(string(rec.Body), "\n\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				continue
			}
			var c map[string]any
			if json.Unmarshal([]byte(data), &c) != nil {
				body.WriteString(line + "\n\n") // [DONE]
				continue
			}
			delta := c["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)
			content, _ := delta["content"].(string)
			if content == "" {
				body.WriteString(line + "\n\n")
				continue
			}
			for i := 0; i < len(content); i += n {
				delta["content"] = content[i:min(i+n, len(content))]
				b, err := json.Marshal(c)
				if err != nil {
					t.Fatal(err)
				}
				body.WriteString("data: " + string(b) + "\n\n")
			}
		}
		srv := providertest.Replay(t, providertest.Recording{Status: rec.Status, Header: rec.Header, Body: body.Bytes()})
		s, err := newHostProvider(t, bedrockBaseURL, srv.URL).Stream(context.Background(), chatRequests(t)["chat_plain"])
		if err != nil {
			t.Fatal(err)
		}
		evs, _, err := collect(t, s)
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		checkStreamInvariants(t, evs)
		var r, txt strings.Builder
		for _, ev := range evs {
			switch ev.Kind {
			case provider.EventReasoning:
				r.WriteString(ev.Reasoning.Text)
			case provider.EventText:
				txt.WriteString(ev.Text)
			}
		}
		if r.String() != bedrockReasoning || txt.String() != bedrockText {
			t.Errorf("pieces of %d: reasoning %q, text %q", n, r.String(), txt.String())
		}
	}
}

func TestRound15BedrockHost(t *testing.T) {
	t.Parallel()
	for u, want := range map[string]bool{
		bedrockBaseURL: true,
		"https://bedrock-runtime.us-east-1.amazonaws.com/openai/v1":          true,
		"https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com/openai/v1": true,
		"https://bedrock-runtime.cn-north-1.amazonaws.com.cn/openai/v1":      true,
		"https://bedrock-mantle.us-east-1.api.aws/v1":                        true,
		"https://BEDROCK-RUNTIME.us-west-2.amazonaws.com/openai/v1":          true,
		"https://bedrock-runtime.us-west-2.example.com/openai/v1":            false,
		"https://bedrock.us-west-2.amazonaws.com":                            false,
		"https://api.openai.com/v1":                                          false,
		"https://my-bedrock-runtime.amazonaws.com.evil.test/v1":              false,
	} {
		if got := bedrockHost(u); got != want {
			t.Errorf("bedrockHost(%q) = %v, want %v", u, got, want)
		}
	}
}

// TestRound15DeepSeekInsufficientResource: DeepSeek's finish_reason
// "insufficient_system_resource", the server broke the answer off. It
// was a finish OTHER with the partial text, no word said; now an error of
// kind unavailable (retried while nothing has been relayed) with the
// answer's id, model and usage. The stream relays what came before,
// then the error.
func TestRound15DeepSeekInsufficientResource(t *testing.T) {
	t.Parallel()
	const msg = "the provider interrupted the answer: its inference system ran out of resources (finish_reason insufficient_system_resource)"
	check := func(t *testing.T, err error, reqID string) *provider.Error {
		t.Helper()
		if err == nil {
			t.Fatal("no error")
		}
		e := providerError(t, err)
		if e.Kind != provider.KindUnavailable || e.HTTPStatus != http.StatusOK || e.Code != "insufficient_system_resource" ||
			e.Message != msg || e.RequestID != reqID {
			t.Errorf("error %+v", e)
		}
		return e
	}
	t.Run("unary", func(t *testing.T) {
		t.Parallel()
		srv := providertest.ReplayFile(t, td("dialect_deepseek_insufficient_resource.http"))
		_, err := newTestProvider(t, kOpenAI, srv.URL).Generate(context.Background(), chatRequests(t)["chat_plain"])
		providertest.Golden(t, td("dialect_deepseek_insufficient_resource.golden"), []byte(renderErr(err)+"\n"))
		e := check(t, err, "b41c07e2d95f3a6810ce4f27a9d35b18")
		m := e.Meta
		if m.GetResponseId() != "0d6e5a83-27f1-4c1b-9a8e-5f3c2b7d4e61" || m.GetResolvedModel() != "deepseek-chat" ||
			m.GetProviderFinishReason() != "insufficient_system_resource" {
			t.Errorf("meta %v", m)
		}
		if u := m.GetUsage(); u.GetInputTokens() != 12 || u.GetOutputTokens() != 14 {
			t.Errorf("usage %v", u)
		}
	})
	t.Run("stream", func(t *testing.T) {
		t.Parallel()
		srv := providertest.ReplayFile(t, td("dialect_deepseek_insufficient_resource_stream.http"))
		s, err := newTestProvider(t, kOpenAI, srv.URL).Stream(context.Background(), chatRequests(t)["chat_plain"])
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		evs, rendered, err := collect(t, s)
		providertest.Golden(t, td("dialect_deepseek_insufficient_resource_stream.golden"), rendered)
		check(t, err, "e93a51c07b2d48f6a1c5d0e87f24b396")
		var txt strings.Builder
		var usage *llmrelayv1.Usage
		for _, ev := range evs {
			switch ev.Kind {
			case provider.EventText:
				txt.WriteString(ev.Text)
			case provider.EventUsage:
				usage = ev.Usage
			case provider.EventMeta:
				if fr := ev.Meta.GetFinishReason(); fr != llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED {
					t.Errorf("a finish %v was reported", fr)
				}
			}
		}
		if txt.String() != "Sure. The three primary colours" {
			t.Errorf("text %q", txt.String())
		}
		if usage.GetInputTokens() != 12 || usage.GetOutputTokens() != 5 {
			t.Errorf("usage %v", usage)
		}
	})
}
