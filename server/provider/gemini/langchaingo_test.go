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
	"real_lcg_google_text_signature_streaming_1", "real_lcg_google_text_signature_streaming_2",
	"real_lcg_google_thinking_streaming", "real_lcg_google_chain_int_enums",
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

// TestLangchaingoTextSignatureRoundTrip: gemini-3-flash-preview streamed
// with includeThoughts: a thought summary, eighteen text chunks, then the
// thoughtSignature on an empty text part with finishReason STOP. The answer,
// sent back with the next user turn, must go out as langchaingo's second
// request did (the live API answered it): the model turn carries the whole
// text and, on it, the signature.
func TestLangchaingoTextSignatureRoundTrip(t *testing.T) {
	t.Parallel()
	const first = "real_lcg_google_text_signature_streaming_1"
	p, _ := replay(t, first)
	req := generateCases(t)["plain"]
	req.Model = "gemini-3-flash-preview"
	req.Messages = []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Calculate 23 * 17. Show your work."))}
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	defer s.Close()
	evs, end := drain(t, s)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("stream ended with %v", end)
	}
	providertest.Golden(t, filepath.Join("testdata", first+".golden"), renderStream(t, evs, end))
	answer := foldMessage(t, evs)
	want := msg(llmrelayv1.Role_ROLE_ASSISTANT,
		&llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Text: lcgThought}}},
		text(lcgAnswerText),
		&llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Signature: lcgTextSig}}})
	if !proto.Equal(answer, want) {
		t.Errorf("answer\n got %v\nwant %v", answer, want)
	}
	f := foldEvents(evs)
	if u := (&llmrelayv1.Usage{InputTokens: 14, OutputTokens: 418 + 399, TotalTokens: 831, ReasoningTokens: 399}); !proto.Equal(f.usage, u) {
		t.Errorf("usage %v, want %v", f.usage, u)
	}
	if m := f.meta; m.GetResponseId() != "ZzB1aZjZNoaOjMcPxvPuwQ4" || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}

	req2 := generateCases(t)["plain"]
	req2.Model = "gemini-3-flash-preview"
	req2.Messages = []*llmrelayv1.Message{
		msg(llmrelayv1.Role_ROLE_USER, text("Calculate 23 * 17. Show your work.")),
		answer,
		msg(llmrelayv1.Role_ROLE_USER, text("Now divide that result by 23")),
	}
	next, srv := replay(t, "real_lcg_google_text_signature_streaming_2")
	res2, err := next.Generate(context.Background(), req2)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", "real_lcg_google_text_signature_streaming_2.golden"), renderResult(t, res2))
	// The second answer, unary: its one text part carries the signature.
	want2 := msg(llmrelayv1.Role_ROLE_ASSISTANT, text(lcgDivideText),
		&llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Signature: lcgDivideSig}}})
	if !proto.Equal(res2.Message, want2) {
		t.Errorf("second answer\n got %v\nwant %v", res2.Message, want2)
	}
	if m := res2.Meta; m.GetResponseId() != "cDB1aeaBOsK9jMcPn7nf8Ag" || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP ||
		!proto.Equal(m.GetUsage(), &llmrelayv1.Usage{InputTokens: 442, OutputTokens: 331 + 252, TotalTokens: 1025, ReasoningTokens: 252}) || len(m.GetWarnings()) != 0 {
		t.Errorf("second meta %v", m)
	}
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
	if len(sent.Contents) != 3 || sent.Contents[1].Role != "model" || len(sent.Contents[1].Parts) != 2 {
		t.Fatalf("contents %s, want user, model with two parts, user", body)
	}
	// langchaingo sent the model turn as the one text part with the
	// signature on it; ours carries the same part, preceded by the thought
	// summary marked as a thought (unsigned, as it came).
	for i, want := range []string{
		`{"text":` + jsonString(t, lcgThought) + `,"thought":true}`,
		`{"text":` + jsonString(t, lcgAnswerText) + `,"thoughtSignature":"` + lcgTextSig + `"}`,
	} {
		if !jsonTextEqual(t, sent.Contents[1].Parts[i], want) {
			t.Errorf("model part %d: %s, want %s", i, sent.Contents[1].Parts[i], want)
		}
	}
	if len(sent.Contents[2].Parts) != 1 || !jsonTextEqual(t, sent.Contents[2].Parts[0], `{"text":"Now divide that result by 23"}`) {
		t.Errorf("last user turn %s", body)
	}
}

// The recorded texts and signatures of
// real_lcg_google_text_signature_streaming_1 and _2, whole.
const (
	lcgThought    = "**Exploring Multiplication Methods**\n\nI've started exploring different methods to calculate 23 x 17. I'm focusing on three approaches: standard long multiplication, a mental math friendly distributive property approach, and a more algebraic difference of squares method. The goal is to show the work, as required. I'll evaluate the efficiency and clarity of each approach.\n\n\n"
	lcgTextSig    = "EvEKCu4KAXLI2nzruhYXPiwd5NEBTL3oR3Oz4AfPbqqG0K3XrZVTeb6QABgsdYUYltRMMmuQbUl/Bs7fGjQF4AIoAxTBiI+Ra65laI2nm0Ez6Ulh2sBxb6aidvhgl3M6phSvDLlrzzGc69t6mcfsygChhRp9lg3Yxpd/ki736AtjOgmrXklqJ0mniMOia9bnDkeQudt1oAn3Mm16vk2EYEfkSL4r5tXjPMadzs6uN1kcb8YfTMY+1TRg6z75Eon+Qh96shSTvXKOoZlmTXWaiYjFOAQP3WKzdChOZKM9sepXAoCL66czKqqqsPxIwk58ZaGfOrTF/qQXpWVvHKcq808fsWY3i3BEMenJgBkLozpku/NYP50ZhKtcVGcq+ygLseMgbS/cSeFC+ayVpj2eZvJKkCCvPQLVZoCL7gW97wshdwE6iaNOGwi7JtbxQMhzHOv2O8eL/bcgXRcWP1K33gGf0t6A6wkCT+nU0IgGXorDFqOK1t9rrKAtaIz7wBxT5uYGIvo4CDH3RMDhSu2B7XqTsQWrPoiUkzo8lCccUfM8U5MzUDBZT5P+Db2l1mKNqEdhZe7lELue50wZVCYFndKCJi6CiMzSeBXjni8zVGeIhm5lIyIiUyrhOIDQKteZ4tVaLfNtEi1c9JqD6rmwHrsscKmznVzq2N4vcE9z7gzs0VFDG+hLSIPdQdRm742smoFejASVssOotMuA7oHGeI7yI9FQcQ2dlSZVi7ldrDwWi/H7IpSqxEEYIP/2OJI6pXhZbq4/7FOpTu+RUjBD1ob+Ys1lYqdvwd59z4/NskQmIglIx+OtSyXb07H4BWIuyl5qIwwKfTgJRxG4XhwmPJqsE7WJmvz1cittXkzbC/IAkAq/vp/LIVRR8LHo4DrEV71MpTUqTL+vopdAv9hU13TPe/PrZUzyQsILQ241tAfWeB0saHadC3Ryw6+CCmb6dO94+0wFpIMgj2fm8xzODpwn0+6MFMz3npgiFkPMqY6wWcQ7u8ktEMNq7xkq8qp3I7jGczWRAZhmfjADNgz1sdk9u5nSNTuXRlUqpyDIfCV3hMvGrVoWgeJ3+K0VVVq6/fq1VCJ9LGoq0jx+oqXgH+lKbY4Xa126epp8oFmyKmh5ICfzBlsquggWlFwXvskjisHa2eU2eLv88PesMcPHv2HUusS3SzeuprsMfSM56/Xd4hGfj5fxgwq0U8Im3jsFPg42TPUcx/tdgYpqBbv1aw2LkztxqbXccMXHIdmEYDtC6g4vLlA7NJDcGMbVBN2vbNTtymPwKTBw7ibxfRzAifh01gXeUhIPEN0aLYgU9zsaFUJ8NT3VX/KSuHslkwD95yoIXPyZfcpTYqqddQiYVwH5+Dh7j910BYTxBMkNY0lwu4ka5ne0rL0AMQmT+Si2BpngVI8B3RjObE/ra9Hbrs8aJ6ndY9xw0ObZ7a40ZJX/1woYghBbTyL7s1k2kR36n7nDxChv2cAk0NslcKjfVISXozTCNNX0YhTZyzJJHre84ZoNaXQXoPb7WFYB4q+IiUUTAaENiRP5janjH2FedFQdA/ITn14IXk76GUmt0/wYGaz08fDUP+G0PxwrxUWJQRhA6NMdUR/p79kNlD+8TRYI3xFZGKgbp1UkXQv5dr5JntnjLYlZ+ZbY2063hQ8ZWooRcAY1G0ipCRMajDZ54933sSCZoGetFEC4ajmFv4HDPYqOcDc+zCoKc+YuVLfD4CX8KVUyC8x4SShRTC/Qx+PktaPFWfWcGRqPz9yWF1PbGasUb6zdyj5bjJRPd+HCamCnyY6qagyut4s35iPW8RNX5A+iklIJajFqRY/3d3RaXgGjLu/2tETty1XDXhN5HB6RpQ=="
	lcgDivideText = "To divide **391** by **23**, you can use the relationship from the previous multiplication or perform long division.\n\n### Method 1: Using the Inverse Relationship\nSince you just calculated that **23 \u00d7 17 = 391**, division is the inverse operation:\n$$391 \\div 23 = 17$$\n\n---\n\n### Method 2: Long Division\n1.  **How many times does 23 go into 39?**\n    *   23 goes into 39 **1** time.\n    *   $1 \\times 23 = 23$\n    *   $39 - 23 = 16$\n\n2.  **Bring down the 1:**\n    *   This makes the new number **161**.\n\n3.  **How many times does 23 go into 161?**\n    *   From our previous work, we know $23 \\times 7 = 161$.\n    *   So, 23 goes into 161 exactly **7** times.\n    *   $161 - 161 = 0$\n\n**Work Layout:**\n```text\n      17\n    ____\n 23 ) 391\n    - 23\n    ----\n      161\n    - 161\n    ----\n        0\n```\n\n**Final Answer:**\n391 \u00f7 23 = **17**"
	lcgDivideSig  = "ErkFCrYFAXLI2nwARUuse1ZKkCjqYbwfQO8G9FNB2AsCElhjJX8ttqDDtoJPeUvpXWq26w5zfsFOocm9PzOwghFhs6mesD9ezY1WOTOTfRFx+2PeAZkUjPWVyIRWd20p6g6bnjc5Dl39Gvtx1fmbZATp+eCmtzcRLKfYeYvGeUiGpzKbAbEM+QU5nV7Xg4TnhysQhUlmI5ou1AH8J8vRBn+b9McUO/wKqBYGTOqBbnxqawyYCBiwSjPfOjRkQLPPiXzBqtx9U7Ob5KGLuhNRO3FwqACOkv2vrmY34PPztJJ6fPmVIq4iZOuzpg6T8YOmU9romHOF2Ou+nNaDrcJgMIDEryYDWmo2m6+zzdHi4l0qubD5v8l+IsAl2nXUxwuN5YvCTMxwX4M07NMyXiqFNT36mszRCJnANcm47jEmy4i6cXUCLyYVpvXrZFtpTfwZgEH4Mux73n/yt+h5ctiJfdL2rKOJzr5xWoRs56fRfPeQK2JQdjUABBS6ydskWYvM0AQ4Q4kVLO9JvGNakgvK2eDlacbOkZIDfeM8MN5sFPugdb2kBVEzwEnA4jgTFC5vtpTTUmuGpxVxDWEYfoYLu5uhZzGpvKNWe1K9iiBXwWSm/8sfl3TkEUFtykuRXt0+Q7CU+kGCIZ2v73Nvqmcxk8mPHvE94v2zLLM/EGtmsE5Y+sthnRGGA8WMiiAahHHg2aMUDAIUdEuRpWWdebPP3qySZ5ED2smDpCQA3oOohsaqG5xOzLn/tZGgIhK72EXEx8B35NWqAXqxPF2B/Sr5aeAaLc8mTNeo/DT5Hq3ItRIbxBW0csJbOvIdstJINen0nWZwX2Nj/izzPmuK0/C55e7TWv/OcJf2ygb+RvSYE1x/01iTjNALVMEImZ+OyHnhEPL5aWYYjk/G+XwddGPj2l1rMg8eitFAzCwjrQ=="
)

// lcgAnswerText is the streamed answer joined, as langchaingo sent it back.
const lcgAnswerText = "To calculate **23 \u00d7 17**, you can use several methods. Here are two ways to show the work:\n\n### Method 1: Standard Long Multiplication\n1.  **Multiply 23 by 7 (the ones digit):**\n    *   7 \u00d7 3 = 21 (Write down 1, carry the 2)\n    *   7 \u00d7 2 = 14\n    *   14 + 2 (carried) = 16\n    *   Result: **161**\n\n2.  **Multiply 23 by 10 (the tens digit):**\n    *   Place a 0 in the ones column.\n    *   1 \u00d7 3 = 3\n    *   1 \u00d7 2 = 2\n    *   Result: **230**\n\n3.  **Add the two results together:**\n    *   161 + 230 = **391**\n\n**Work Layout:**\n```text\n      23\n    x 17\n    ----\n     161  (7 \u00d7 23)\n    +230  (10 \u00d7 23)\n    ----\n     391\n```\n\n***\n\n### Method 2: Difference of Squares (Mental Math Trick)\nSince 23 and 17 are both the same distance (3) from 20, you can use the algebraic formula $(a + b)(a - b) = a^2 - b^2$.\n\n1.  Rewrite the numbers: $(20 + 3) \\times (20 - 3)$\n2.  Apply the formula: $20^2 - 3^2$\n3.  Calculate the squares: $400 - 9$\n4.  Final result: **391**\n\n**Final Answer:**\n23 \u00d7 17 = **391**"

// jsonString is s as a JSON string literal.
func jsonString(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The thought summaries and the answer of real_lcg_google_thinking_streaming,
// each joined.
const (
	lcgThinkingSummary = "**Sequencing the Numbers**\n\nI'm analyzing the user's request, focusing on identifying the pattern in the sequence: 2, 6, 12, 20, 30. The explicit request for \"reasoning\" is a crucial prompt to ensure I present the explanation. I'm aiming to articulate a method for generating the numbers.\n\n\n**Unveiling the Pattern**\n\nI've determined the next number is 42. I noticed the differences between consecutive terms form an arithmetic progression (4, 6, 8, 10), increasing by 2 each time. Thus, the next difference is 12, adding it to 30. Now I plan to structure the response, starting with the answer then including the step-by-step reasoning.\n\n\n**Discovering the Formula**\n\nI'm now investigating alternative representations. I've realized the sequence consists of products of consecutive integers: 2 = 1\\*2, 6 = 2\\*3, 12 = 3\\*4, and so on. This pattern, (n\\*(n+1)), is the formula I am honing to present a concise, insightful explanation.\n\n\n**Formulating the Explanation**\n\nI'm now building a detailed, well-structured explanation. I plan to present both the \"difference\" method and the consecutive integers multiplication method. I will begin by stating the answer clearly. I also want to make sure I show the step by step reasoning for each method. I think this will provide a complete answer.\n\n\n"
	lcgThinkingAnswer  = "Of course! The next number in the sequence is **42**.\n\nHere are a couple of ways to see the reasoning:\n\n### Method 1: Look at the difference between the numbers\n\n1.  Find the difference between each consecutive number in the sequence:\n    *   6 - 2 = **4**\n    *   12 - 6 = **6**\n    *   20 - 12 = **8**\n    *   30 - 20 = **10**\n\n2.  Notice that the difference is increasing by **2** each time (4, 6, 8, 10...).\n\n3.  The next difference in this pattern would be **12**.\n\n4.  Add that difference to the last number in the original sequence:\n    *   30 + 12 = **42**\n\n### Method 2: Look at the multiplication pattern\n\nThis sequence is formed by multiplying consecutive integers.\n\n*   1 x 2 = **2**\n*   2 x 3 = **6**\n*   3 x 4 = **12**\n*   4 x 5 = **20**\n*   5 x 6 = **30**\n\nFollowing this pattern, the next step is:\n\n*   6 x 7 = **42**"
)

// TestLangchaingoThinkingStream: gemini-2.5-pro with includeThoughts and a
// 1000-token budget: four chunks of thought summaries (usage without
// candidatesTokenCount, the thought count growing 69 to 816), then twelve
// text chunks, every chunk with the same four safetyRatings; no signature
// anywhere.
func TestLangchaingoThinkingStream(t *testing.T) {
	t.Parallel()
	const name = "real_lcg_google_thinking_streaming"
	p, _ := replay(t, name)
	req := generateCases(t)["plain"]
	req.Model = "gemini-2.5-pro"
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	defer s.Close()
	evs, end := drain(t, s)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("stream ended with %v", end)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderStream(t, evs, end))
	want := msg(llmrelayv1.Role_ROLE_ASSISTANT,
		&llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Text: lcgThinkingSummary}}},
		text(lcgThinkingAnswer))
	if got := foldMessage(t, evs); !proto.Equal(got, want) {
		t.Errorf("message\n got %v\nwant %v", got, want)
	}
	f := foldEvents(evs)
	if u := (&llmrelayv1.Usage{InputTokens: 34, OutputTokens: 281 + 816, TotalTokens: 1131, ReasoningTokens: 816}); !proto.Equal(f.usage, u) {
		t.Errorf("usage %v, want %v", f.usage, u)
	}
	m := f.meta
	if m.GetResponseId() != "2zB1afLeH82MjMcPn6aWsAY" || m.GetResolvedModel() != "gemini-2.5-pro" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	ratings, _ := m.GetExtended().AsMap()[extSafetyRatings].([]any)
	if len(ratings) != 4 {
		t.Errorf("safety ratings %v, want the four recorded", m.GetExtended().AsMap()[extSafetyRatings])
	}
}

// TestLangchaingoIntEnums: gemini-2.0-flash answering the older Go SDK
// (genai-go), which asked for $alt=json;enum-encoding=int: finishReason 1,
// the safety ratings' categories and probabilities and the usage details'
// modalities as numbers. The whole answer was lost to a decoding error
// (bad_response: cannot unmarshal number into finishReason); it is now read
// with finishReason 1 as STOP.
func TestLangchaingoIntEnums(t *testing.T) {
	t.Parallel()
	const name = "real_lcg_google_chain_int_enums"
	p, _ := replay(t, name)
	req := generateCases(t)["plain"]
	req.Model = "gemini-2.0-flash"
	// gemini-2.0-flash does not think: it refuses a thinkingConfig.
	req.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_UNSPECIFIED
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("The capital of France is **Paris**.\n")); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	if m.GetResponseId() != "QeVPaLzQBrbTnvgP7ti42Qo" || m.GetResolvedModel() != "gemini-2.0-flash" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if !proto.Equal(m.GetUsage(), &llmrelayv1.Usage{InputTokens: 6, OutputTokens: 9, TotalTokens: 15}) {
		t.Errorf("usage %v", m.GetUsage())
	}
	ext := m.GetExtended().AsMap()
	if got, _ := ext[extAvgLogprobs].(float64); got != -0.023476632104979619 {
		t.Errorf("avgLogprobs %v", ext[extAvgLogprobs])
	}
	if ratings, _ := ext[extSafetyRatings].([]any); len(ratings) != 4 {
		t.Errorf("safety ratings %v, want the four recorded", ext[extSafetyRatings])
	}
}

// TestEnumNumbers: finishReason and blockReason as names or numbers (as
// generative_service.proto numbers them: LANGUAGE is 6, the later values
// 7 to 17 in the order they were added; the table stopped at OTHER, so a
// relayed "finishReason": 8 was a finish of OTHER instead of a content
// filter); a number the enum's definition does not name is kept as its
// text, a value of another kind its JSON text.
func TestEnumNumbers(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{`"STOP"`: "STOP", `1`: "STOP", `2`: "MAX_TOKENS", `3`: "SAFETY", `5`: "OTHER", `0`: "FINISH_REASON_UNSPECIFIED",
		`"MALFORMED_FUNCTION_CALL"`: "MALFORMED_FUNCTION_CALL", `6`: "LANGUAGE", `8`: "PROHIBITED_CONTENT", `10`: "MALFORMED_FUNCTION_CALL",
		`12`: "UNEXPECTED_TOOL_CALL", `13`: "TOO_MANY_TOOL_CALLS", `17`: "IMAGE_RECITATION", `18`: "18", `null`: ""} {
		var c candidate
		if err := json.Unmarshal([]byte(`{"finishReason":`+in+`}`), &c); err != nil || string(c.FinishReason) != want {
			t.Errorf("finishReason %s: %q, %v; want %q", in, c.FinishReason, err, want)
		}
	}
	for in, want := range map[string]string{`"PROHIBITED_CONTENT"`: "PROHIBITED_CONTENT", `1`: "SAFETY", `2`: "OTHER", `3`: "BLOCKLIST",
		`4`: "PROHIBITED_CONTENT", `5`: "IMAGE_SAFETY", `6`: "6"} {
		var pf promptFeedback
		if err := json.Unmarshal([]byte(`{"blockReason":`+in+`}`), &pf); err != nil || string(pf.BlockReason) != want {
			t.Errorf("blockReason %s: %q, %v; want %q", in, pf.BlockReason, err, want)
		}
	}
	// A value of another kind (a shape the API may adopt later) is kept
	// as its JSON text, a finish of OTHER, rather than failing the answer
	// (enums19); JSON that is not JSON still fails.
	for _, in := range []string{`true`, `1.5`, `{}`, `{"reason": "STOP"}`} {
		var c candidate
		want := strings.ReplaceAll(in, " ", "")
		if err := json.Unmarshal([]byte(`{"finishReason":`+in+`}`), &c); err != nil || string(c.FinishReason) != want ||
			finishReason(string(c.FinishReason)) != llmrelayv1.FinishReason_FINISH_REASON_OTHER {
			t.Errorf("finishReason %s: %q, %v; want %q", in, c.FinishReason, err, want)
		}
	}
	var c candidate
	if err := json.Unmarshal([]byte(`{"finishReason":"unterminated}`), &c); err == nil {
		t.Error("finishReason \"unterminated: no error")
	}
	// A number the definition does not name: a finish of OTHER, the number
	// as the provider's reason.
	if finishReason("18") != llmrelayv1.FinishReason_FINISH_REASON_OTHER {
		t.Errorf("finishReason(18) = %v", finishReason("18"))
	}
}
