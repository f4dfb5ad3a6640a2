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

// tmc/langchaingo's httprr traces (testdata/README.md, "Real recordings
// from tmc/langchaingo's httprr traces"): the raw responses of the live
// API with their real headers. The expectations are read off the
// recordings by hand.

// langchaingoRecordings are the recordings the tests below replay.
var langchaingoRecordings = []string{
	"real_lcg_google_parallel_function_calls_signature_1", "real_lcg_google_parallel_function_calls_signature_2",
	"real_lcg_google_implicit_caching_streaming_1", "real_lcg_google_implicit_caching_streaming_2",
	"real_lcg_google_truncation_streaming", "real_lcg_google_error_unregistered_caller",
}

// lcgParallelSig is the thoughtSignature of the first call of
// real_lcg_google_parallel_function_calls_signature_1, whole.
const lcgParallelSig = "EvEDCu4DAXLI2nydi2N0Mxujaa/L1LYsZvsSULj8hUcTLsvKsKKXpw3BSFrFDTxRHbg75/F+AWDKgtEkcIHR5G9H9tJYAp0VUBh2fvphY0jfIF+sL54kdsNGCgIcNgaoOGdcqGp61hszHL5TAaDyilP1jQcjL06d6uMzVyJ9ONMvvcXKdo1OqMbLjbQQ7MxFc9jzdl4q9s8O7CUWNMp4ngqKffw/2AOFrrq+I7FIC3bdYh3OKrWsI2HzxtG53WnoAZ+KrSTludUtswESuIY0a2vI04PtRBvIKrF9sUnMsadXgL9VstvL/dsLRXQd7yc7ANmVNQhpWgkQZtikySfKLgdkaZtORMj/0OYH+3Iy9N7ozkrzfaI/DnDFeUPM/OqMt9069hdpYkgiH2TzTs2sslrugm4SuuNgPk1nwjaq51BibcgHHnysX2iydAjyctJgW+kJ7a+ELrG2CLGz17AID8xgrioG42n+54xmI8wQnuN3QVEd556cC00JDC4jTH6mAC0oCJIsonaoq7gNQhiEC8FqdNKDa0DkDuN684lduqMU4vNLZYzzDwxMGa1+bkPrbkj+j3ijaB1Mt8iQKlT0fNX00SSv/XMHjgTmE7ZfGvpg9TnuiYt9UbhX3vMKFnvqQuVatJUdQdxgh8rGAvGgfUtQVMo="

func lcgTemperatureRequest() *provider.Request {
	maxTok := int32(1024)
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-3-flash-preview",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("What's the temperature in Paris and London?"))},
		Tools: []*llmrelayv1.Tool{{
			Name: "get_temperature", Description: "Get the current temperature for a location",
			Parameters: `{"type":"object","properties":{"location":{"type":"string","description":"The city name, e.g. Paris"}},"required":["location"]}`,
		}},
		Options: &llmrelayv1.GenerationOptions{MaxTokens: &maxTok},
	}
}

// TestLangchaingoParallelCallsRoundTrip: gemini-3-flash-preview, unary,
// two parallel calls without ids, only the first signed, finishMessage,
// 32 candidate + 108 thought tokens; then the answer, sent back with both
// results, must go out as langchaingo's second request did (the live API
// answered it): the model turn the two calls in order with the signature
// on the first only, then one user turn with both functionResponses.
func TestLangchaingoParallelCallsRoundTrip(t *testing.T) {
	t.Parallel()
	const first = "real_lcg_google_parallel_function_calls_signature_1"
	const respID = "8wV1acOiB8aPjMcPjKTaoQI"
	p, _ := replay(t, first)
	res, err := p.Generate(context.Background(), lcgTemperatureRequest())
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", first+".golden"), renderResult(t, res))
	paris := toolCallPart(generatedID(respID, 0, "", ""), "get_temperature", `{"location":"Paris"}`)
	paris.GetToolCall().Signature = lcgParallelSig
	london := toolCallPart(generatedID(respID, 1, "", ""), "get_temperature", `{"location":"London"}`)
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, paris, london); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	if m.GetResponseId() != respID || m.GetResolvedModel() != "gemini-3-flash-preview" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetProviderFinishReason() != "STOP" || m.GetToolCallCount() != 2 {
		t.Errorf("meta %v", m)
	}
	if got, _ := m.GetExtended().AsMap()[extFinishMessage].(string); got != "Model generated function call(s)." {
		t.Errorf("finish message %q", got)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 69, OutputTokens: 32 + 108, TotalTokens: 209, ReasoningTokens: 108}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if len(m.GetWarnings()) != 0 {
		t.Errorf("warnings %q", m.GetWarnings())
	}

	// The follow-up.
	const second = "real_lcg_google_parallel_function_calls_signature_2"
	req := lcgTemperatureRequest()
	req.Messages = append(req.Messages, res.Message, msg(llmrelayv1.Role_ROLE_TOOL,
		toolResultPart(paris.GetToolCall().GetCallId(), "22°C"), toolResultPart(london.GetToolCall().GetCallId(), "22°C")))
	next, srv := replay(t, second)
	res2, err := next.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", second+".golden"), renderResult(t, res2))
	var sent struct {
		Contents []struct {
			Role  string            `json:"role"`
			Parts []json.RawMessage `json:"parts"`
		} `json:"contents"`
	}
	body := srv.Last(t).Body
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatalf("request body: %v", err)
	}
	if len(sent.Contents) != 3 || sent.Contents[1].Role != "model" || sent.Contents[2].Role != "user" ||
		len(sent.Contents[1].Parts) != 2 || len(sent.Contents[2].Parts) != 2 {
		t.Fatalf("contents %s, want user, model with two parts, user with two", body)
	}
	// As langchaingo sent them (key order aside).
	for i, want := range []string{
		`{"functionCall":{"args":{"location":"Paris"},"name":"get_temperature"},"thoughtSignature":"` + lcgParallelSig + `"}`,
		`{"functionCall":{"args":{"location":"London"},"name":"get_temperature"}}`,
	} {
		if !jsonTextEqual(t, sent.Contents[1].Parts[i], want) {
			t.Errorf("model part %d: %s, want %s", i, sent.Contents[1].Parts[i], want)
		}
	}
	for i, part := range sent.Contents[2].Parts {
		var fr struct {
			FunctionResponse *struct {
				ID       string         `json:"id"`
				Name     string         `json:"name"`
				Response map[string]any `json:"response"`
			} `json:"functionResponse"`
		}
		if err := json.Unmarshal(part, &fr); err != nil || fr.FunctionResponse == nil || fr.FunctionResponse.Name != "get_temperature" ||
			fr.FunctionResponse.ID != "" || len(fr.FunctionResponse.Response) != 1 {
			t.Errorf("user part %d: %s", i, part)
			continue
		}
		for _, v := range fr.FunctionResponse.Response {
			if v != "22°C" {
				t.Errorf("user part %d: %s, want the result 22°C", i, part)
			}
		}
	}

	// The answer: "°" in the text, no thought tokens.
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("The current temperature is 22°C in both Paris and London.")); !proto.Equal(res2.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res2.Message, want)
	}
	m2 := res2.Meta
	if m2.GetResponseId() != "-gV1aaiOBr-OjMcP4Zj2MA" || m2.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP ||
		!proto.Equal(m2.GetUsage(), &llmrelayv1.Usage{InputTokens: 183, OutputTokens: 15, TotalTokens: 198}) || len(m2.GetWarnings()) != 0 {
		t.Errorf("meta %v", m2)
	}
}

// jsonTextEqual reports whether two JSON texts hold the same value.
func jsonTextEqual(t *testing.T, a json.RawMessage, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return jsonEqual(x, y)
}

// TestLangchaingoImplicitCachingStream: gemini-2.5-flash asked twice, with
// a 7006-token system instruction, to say "hello" (streamed, one SSE event
// each). The second answer found the prefix in Google's implicit cache:
// cachedContentTokenCount 6121 and cacheTokensDetails; the first has none.
func TestLangchaingoImplicitCachingStream(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, responseID string
		cached           int32
	}{
		{"real_lcg_google_implicit_caching_streaming_1", "VEp3adqaOMbg_uMP4onTkAE", 0},
		{"real_lcg_google_implicit_caching_streaming_2", "dEp3afP4OfCf_uMP38ec8Aw", 6121},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, _ := replay(t, tc.name)
			s, err := p.Stream(context.Background(), generateCases(t)["plain"])
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			defer s.Close()
			evs, end := drain(t, s)
			if !errors.Is(end, io.EOF) {
				t.Fatalf("stream ended with %v", end)
			}
			providertest.Golden(t, filepath.Join("testdata", tc.name+".golden"), renderStream(t, evs, end))
			f := foldEvents(evs)
			if f.text != "hello" || len(f.calls) != 0 {
				t.Errorf("text %q, calls %v", f.text, f.calls)
			}
			want := &llmrelayv1.Usage{InputTokens: 7006, OutputTokens: 1 + 17, TotalTokens: 7024, ReasoningTokens: 17, CachedInputTokens: tc.cached}
			if !proto.Equal(f.usage, want) {
				t.Errorf("usage %v, want %v", f.usage, want)
			}
			m := f.meta
			if m.GetResponseId() != tc.responseID || m.GetResolvedModel() != "gemini-2.5-flash" ||
				m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" || len(m.GetWarnings()) != 0 {
				t.Errorf("meta %v", m)
			}
			details, _ := m.GetExtended().AsMap()["usage_details"].(map[string]any)
			if got, _ := details["cacheTokensDetails.TEXT"].(float64); int32(got) != tc.cached {
				t.Errorf("usage details %v, want cacheTokensDetails.TEXT %d", details, tc.cached)
			}
		})
	}
}

// TestLangchaingoTruncationStream: gemini-2.5-flash with maxOutputTokens
// 200 spent 189 on thinking: one SSE event with the start of the text and
// finishReason MAX_TOKENS, serviceTier standard; duplicated security
// headers from the front end (nginx) as recorded.
func TestLangchaingoTruncationStream(t *testing.T) {
	t.Parallel()
	const name = "real_lcg_google_truncation_streaming"
	p, _ := replay(t, name)
	s, err := p.Stream(context.Background(), generateCases(t)["plain"])
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	defer s.Close()
	evs, end := drain(t, s)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("stream ended with %v", end)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderStream(t, evs, end))
	f := foldEvents(evs)
	if f.text != "The water cycle, also known as" || len(f.calls) != 0 {
		t.Errorf("text %q, calls %v", f.text, f.calls)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 9, OutputTokens: 7 + 189, TotalTokens: 205, ReasoningTokens: 189}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
	if m := f.meta; m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH || m.GetProviderFinishReason() != "MAX_TOKENS" ||
		m.GetServiceTier() != "standard" || m.GetResponseId() != "FB2IauKaKPLnnsEP2viZiQw" || m.GetResolvedModel() != "gemini-2.5-flash" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
}

// TestLangchaingoUnregisteredCaller: a request without an API key, 403
// PERMISSION_DENIED with Google's message, unary and streamed.
func TestLangchaingoUnregisteredCaller(t *testing.T) {
	t.Parallel()
	const msgText = "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."
	check := func(what string, err error) {
		t.Helper()
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("%s: err = %v, want *provider.Error", what, err)
		}
		if pe.Provider != "gemini" || pe.Kind != provider.KindPermissionDenied || pe.HTTPStatus != 403 || pe.Code != "PERMISSION_DENIED" ||
			pe.Message != msgText || pe.RetryAfter != 0 {
			t.Errorf("%s: got %+v", what, pe)
		}
		if !strings.Contains(err.Error(), msgText) {
			t.Errorf("%s: error text %q lost the provider's message", what, err)
		}
	}
	p, _ := replay(t, "real_lcg_google_error_unregistered_caller")
	_, err := p.Generate(context.Background(), generateCases(t)["plain"])
	check("Generate", err)
	p, _ = replay(t, "real_lcg_google_error_unregistered_caller")
	s, err := p.Stream(context.Background(), generateCases(t)["plain"])
	if err == nil {
		_, err = drain(t, s)
		s.Close()
	}
	check("Stream", err)
}
