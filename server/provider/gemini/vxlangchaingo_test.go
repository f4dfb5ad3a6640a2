package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// vxcontrol/langchaingo's httprr traces (testdata/README.md, "Real
// recordings from vxcontrol/langchaingo's httprr traces"): the raw
// responses of the live API with their real headers. The expectations are
// read off the recordings by hand.

// vxlangchaingoRecordings are the recordings the tests below replay.
var vxlangchaingoRecordings = []string{
	"real_vxlcg_google_candidate_count", "real_vxlcg_google_max_tokens_1",
	"real_vxlcg_google_tools_1", "real_vxlcg_google_tools_2",
	"real_vxlcg_google_structured_output_streaming", "real_vxlcg_google_call_int_enums",
	"real_vxlcg_google_system_message", "real_vxlcg_google_structured_output_array",
	"real_vxlcg_google_chat_sequence",
}

// vxlcgCandidateSig is the thoughtSignature on the text part of
// real_vxlcg_google_candidate_count, whole.
const vxlcgCandidateSig = "EqwECqkEAWkUfROQDyZ0hgRKzp/A307o/CI27aIHz3I2CxuCfAhrOJSp1dVlLuOCdyWDEoprO9RexY8yW6/HWXaArEha63w6WDsY/2jg6tTRSNIpFAPnwfc2fg9+DXHUct/5IHZVsTZ1DaUdMMg8EMww0QVUM4pgO8/p2vR3dd1Xye0s4QhL6hxWjMrbmtFcOPB4UGGCU2YTMpn8m8WFZB9gyKVWY5DP9G5u8sDzzWWIAuBqVqR1SD25i9pl7VjMO8lxUNb2nxuWVh0jUB3qikaYI9RhI+q+0mHairp4QGkPrQwmVOtjJnOW0olHUuR75GEuFLAxuCWBFAtxSe9PQNZcucBMi47n7wp2RCvEXLOGhmD7HO3FXgfMnrUqKkPJHwtpYZ/ovUHh04Lo6hUpSPMrbaDydFsIbipDK8HUkt5WO3g9BSdRu481s28hR313IDN9Axc5cFweAO7UcTJ1tRBkYooTY3c8yuXzccXH9PrPicBADbVef1q7FIX01HKZMQM1kPdgt9DTAn544JzU5Biut9/UJw7PquwGJ9PhZYrgK4b0BjVWeN7kXTq+YEGS52iAh9DsrI3zygJ/5fnYwpbFVfPHnOseQCdEa1P/71hMI9wODQ4bzZn7+PZOjCwlYXY3BcGp+0TMTUG5TV8bu1Q289a6KdROXvpsxz6+ihFQ1ZlGCXKBU7qEmuDmyZy+s+2E3YtECBEJ/jTY5E9Otgb94cWC3SXHBDirdx7Y2w=="

const vxlcgAfrica = "Here are five countries in Africa:\n\n1. Nigeria\n2. Kenya\n3. Egypt\n4. South Africa\n5. Ghana"

func vxlcgAfricaRequest() *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemini-3.8-flash",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Name five countries in Africa"))},
	}
}

// vxlcgSignedText is the message of an answer whose one text part carries a
// thoughtSignature: the text, then the signature as a text-less reasoning.
func vxlcgSignedText(s, sig string) *llmrelayv1.Message {
	return msg(llmrelayv1.Role_ROLE_ASSISTANT, text(s),
		&llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Signature: sig}}})
}

// TestVxlcgCandidateCount: gemini-3.8-flash asked with candidateCount 1
// sends one candidate (index 0): its signed text whole, STOP, 6 in,
// 28 + 117 thought tokens out, no warning.
func TestVxlcgCandidateCount(t *testing.T) {
	t.Parallel()
	const name = "real_vxlcg_google_candidate_count"
	p, _ := replay(t, name)
	res, err := p.Generate(context.Background(), vxlcgAfricaRequest())
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
	if want := vxlcgSignedText(vxlcgAfrica, vxlcgCandidateSig); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	if m.GetResponseId() != "CLSzarn1CpfynsEPg8aW8A0" || m.GetResolvedModel() != "gemini-3.8-flash" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 6, OutputTokens: 28 + 117, TotalTokens: 151, ReasoningTokens: 117}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if len(m.GetWarnings()) != 0 {
		t.Errorf("warnings %q", m.GetWarnings())
	}
}

// TestVxlcgSecondCandidate: the same recording with a second candidate
// (index 1) put before the first, as a candidateCount of 2 set through
// extra_body brings. The answer is candidate 0's alone, and a warning says
// the other was dropped; streamed, candidate 1's chunk (which comes first,
// so it is the chunk's candidates[0]) is not mixed into the text. Before,
// the unary answer dropped candidate 1 without a word and the stream took
// whatever candidate came first in a chunk.
func TestVxlcgSecondCandidate(t *testing.T) {
	t.Parallel()
	rec := providertest.Load(t, filepath.Join("testdata", "real_vxlcg_google_candidate_count.http"))
	var body map[string]json.RawMessage
	if err := json.Unmarshal(rec.Body, &body); err != nil {
		t.Fatal(err)
	}
	var cands []json.RawMessage
	if err := json.Unmarshal(body["candidates"], &cands); err != nil || len(cands) != 1 {
		t.Fatalf("candidates %s: %v", body["candidates"], err)
	}
	const other = `{"content": {"parts": [{"text": "Morocco, Ethiopia, Ghana, Senegal and Kenya."}], "role": "model"}, "finishReason": "STOP", "index": 1}`
	two, err := json.Marshal([]json.RawMessage{json.RawMessage(other), cands[0]})
	if err != nil {
		t.Fatal(err)
	}
	body["candidates"] = two
	unary := rec
	if unary.Body, err = json.Marshal(body); err != nil {
		t.Fatal(err)
	}
	p, err := New(testKey, WithBaseURL(providertest.Replay(t, unary).URL+"/v1beta"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Generate(context.Background(), vxlcgAfricaRequest())
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if want := vxlcgSignedText(vxlcgAfrica, vxlcgCandidateSig); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	if w := res.Meta.GetWarnings(); len(w) != 1 || !strings.Contains(w[0], "only candidate 0 is returned") {
		t.Errorf("warnings %q, want one on the dropped candidate", w)
	}

	// Streamed: candidate 1's chunk, then candidate 0's.
	delete(body, "candidates")
	var sse bytes.Buffer
	for _, c := range []json.RawMessage{json.RawMessage(other), cands[0]} {
		body["candidates"] = json.RawMessage(`[` + string(c) + `]`)
		chunk, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		sse.WriteString("data: " + string(chunk) + "\r\n\r\n")
	}
	streamed := providertest.Recording{Status: 200, Header: rec.Header.Clone(), Body: sse.Bytes()}
	streamed.Header.Set("Content-Type", "text/event-stream")
	p, err = New(testKey, WithBaseURL(providertest.Replay(t, streamed).URL+"/v1beta"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Stream(context.Background(), vxlcgAfricaRequest())
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs, end := drain(t, s)
	if end != io.EOF {
		t.Fatalf("stream end %v", end)
	}
	var got strings.Builder
	warnings := 0
	for _, ev := range evs {
		switch ev.Kind {
		case provider.EventText:
			got.WriteString(ev.Text)
		case provider.EventMeta:
			for _, w := range ev.Meta.GetWarnings() {
				if strings.Contains(w, "only candidate 0 is streamed") {
					warnings++
				}
			}
		}
	}
	if got.String() != vxlcgAfrica || warnings != 1 {
		t.Errorf("streamed text %q with %d candidate warnings, want candidate 0's text and one", got.String(), warnings)
	}
}

// TestVxlcgMaxTokens: maxOutputTokens 24 all spent on thinking: the
// candidate's content is an empty object, finishReason MAX_TOKENS, no
// candidatesTokenCount. An empty answer with a LENGTH finish, 14 in and
// 21 thought tokens out.
func TestVxlcgMaxTokens(t *testing.T) {
	t.Parallel()
	const name = "real_vxlcg_google_max_tokens_1"
	p, _ := replay(t, name)
	maxTok := int32(24)
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemini-3.8-flash",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("I'm a pomeranian"), text("Describe my taxonomy, health and care"))},
		Options:  &llmrelayv1.GenerationOptions{MaxTokens: &maxTok},
	}
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
	if len(res.Message.GetParts()) != 0 || res.Message.GetRole() != llmrelayv1.Role_ROLE_ASSISTANT {
		t.Errorf("message %v, want an empty assistant message", res.Message)
	}
	m := res.Meta
	if m.GetResponseId() != "CrSzauu5IPjwnsEP-8Hj8Ao" || m.GetResolvedModel() != "gemini-3.8-flash" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_LENGTH || m.GetProviderFinishReason() != "MAX_TOKENS" {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 14, OutputTokens: 21, TotalTokens: 35, ReasoningTokens: 21}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
}

const vxlcgToolsSig = "EpMCCpACAWkUfROIbM6et02PJv+PlAIYFa9wX2wwZhwOfuCBBpe0DT+IlMRRtGZ3/U2gJxmwFuNbJXTLg2oyFc6ckzEKOACjJNj+UU9Y2hmFZx44PEWmbAop4kJyA9PdWPdIV3N7YWAWLn1WvDNqOrl0Vgq+9JSdTlgOLoRTPeUsnvk+bs0E7knErtM6w25/4F1qjndnvj68KPzkGsVmoEcyVIz7rd27GJ5pamzGKxRVnQ3O8Un5q/zMl/qfSaBeHryW3Ny0QzZ6DYiyLzwpD5Q+29CsrNE1GObGWodkI502zXP/NVR5pYvgl1AA7Pv2kQlHLQ7yDK4npTQ4jYnLsE80j+u3irQVxqiiDLXoBJOrkhPlHpo="

const vxlcgToolsAnswerSig = "Es4BCssBAWkUfROsma55Q6z9/Tjvk+6zNHc2QPsAnDMgCzMPfQQkfgPErAoEu2S3DiZz2niJk/31O4ZVYzoTYu+C6Nj/6AvamoDc9dnDT3O5Lfvv8aNFJxLIT+sSaciIVRGgZuEvGrsOrhe7Zga9qF42Ezixi9fbuO/DjZbtZ4gFkbQpLD73jeEoLAoZtJ0C3jT5KpSGScCLuURKH3FD7uyURVMLOdhsm/yalprokWFWYzVHogo/aTj/0xUWRJEc0ridO2qeejFk/KHfJu7MHrc="

func vxlcgWeatherRequest() *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_TOOLS, Model: "gemini-3.8-flash",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("What is the weather like in Chicago?"))},
		Tools: []*llmrelayv1.Tool{{
			Name: "getCurrentWeather", Description: "Get the current weather in a given location",
			Parameters: `{"type":"object","properties":{"location":{"type":"string","description":"The city and state, e.g. San Francisco, CA"}},"required":["location"]}`,
		}},
	}
}

// TestVxlcgToolsRoundTrip: gemini-3.8-flash calls getCurrentWeather with
// a call id of the API's own ("call_670732"), signed, finishMessage; the
// id is kept. Sent back with the result, the model turn must carry the
// call as langchaingo's second request did (the live API answered it): the
// id, the arguments and the signature; then the answer, whose one text
// part (°) carries a signature.
func TestVxlcgToolsRoundTrip(t *testing.T) {
	t.Parallel()
	const first = "real_vxlcg_google_tools_1"
	p, _ := replay(t, first)
	res, err := p.Generate(context.Background(), vxlcgWeatherRequest())
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", first+".golden"), renderResult(t, res))
	call := toolCallPart("call_670732", "getCurrentWeather", `{"location":"Chicago, IL"}`)
	call.GetToolCall().Signature = vxlcgToolsSig
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, call); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	if m.GetResponseId() != "ZxzAaufaBLT5xN8P9dXLsQ0" || m.GetResolvedModel() != "gemini-3.8-flash" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetProviderFinishReason() != "STOP" || m.GetToolCallCount() != 1 {
		t.Errorf("meta %v", m)
	}
	if got, _ := m.GetExtended().AsMap()[extFinishMessage].(string); got != "Model generated function call(s)." {
		t.Errorf("finish message %q", got)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 71, OutputTokens: 17 + 40, TotalTokens: 128, ReasoningTokens: 40}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	if len(m.GetWarnings()) != 0 {
		t.Errorf("warnings %q", m.GetWarnings())
	}

	const second = "real_vxlcg_google_tools_2"
	req := vxlcgWeatherRequest()
	req.Messages = append(req.Messages, res.Message, msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_670732", "64 and sunny")))
	next, srv := replay(t, second)
	res2, err := next.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", second+".golden"), renderResult(t, res2))
	if want := vxlcgSignedText("The current weather in Chicago is 64°F and sunny.", vxlcgToolsAnswerSig); !proto.Equal(res2.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res2.Message, want)
	}
	if m := res2.Meta; m.GetResponseId() != "aRzAauTHFoPS28oP7OawiA0" || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP ||
		!proto.Equal(m.GetUsage(), &llmrelayv1.Usage{InputTokens: 144, OutputTokens: 14 + 25, TotalTokens: 183, ReasoningTokens: 25}) {
		t.Errorf("meta %v", m)
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
	if len(sent.Contents) != 3 || sent.Contents[1].Role != "model" || sent.Contents[2].Role != "user" ||
		len(sent.Contents[1].Parts) != 1 || len(sent.Contents[2].Parts) != 1 {
		t.Fatalf("contents %s, want user, model and user with one part each", body)
	}
	// The model turn as langchaingo sent it (key order aside).
	if want := `{"functionCall":{"args":{"location":"Chicago, IL"},"id":"call_670732","name":"getCurrentWeather"},"thoughtSignature":"` + vxlcgToolsSig + `"}`; !jsonTextEqual(t, sent.Contents[1].Parts[0], want) {
		t.Errorf("model part: %s, want %s", sent.Contents[1].Parts[0], want)
	}
	var fr struct {
		FunctionResponse *struct {
			ID       string         `json:"id"`
			Name     string         `json:"name"`
			Response map[string]any `json:"response"`
		} `json:"functionResponse"`
	}
	if err := json.Unmarshal(sent.Contents[2].Parts[0], &fr); err != nil || fr.FunctionResponse == nil ||
		fr.FunctionResponse.Name != "getCurrentWeather" || len(fr.FunctionResponse.Response) != 1 {
		t.Fatalf("user part: %s", sent.Contents[2].Parts[0])
	}
	for _, v := range fr.FunctionResponse.Response {
		if v != "64 and sunny" {
			t.Errorf("user part %s, want the result 64 and sunny", sent.Contents[2].Parts[0])
		}
	}
	// langchaingo sent no id in the functionResponse; ours pairs it with the
	// call by the API's own id, which the API takes (FunctionResponse.id).
	if fr.FunctionResponse.ID != "call_670732" {
		t.Errorf("functionResponse id %q, want the call's call_670732", fr.FunctionResponse.ID)
	}
}

// TestVxlcgStructuredOutputStreaming: gemini-2.5-flash streamed with a
// JSON schema: the whole object in one SSE event with STOP; 8 in, 12 + 58
// thought tokens out. The request's generationConfig must carry the schema
// as langchaingo's did, which the API honoured: responseMimeType
// application/json and the schema as responseJsonSchema.
func TestVxlcgStructuredOutputStreaming(t *testing.T) {
	t.Parallel()
	const name = "real_vxlcg_google_structured_output_streaming"
	p, srv := replay(t, name)
	const schema = `{"type":"object","properties":{"country":{"type":"string"},"capital":{"type":"string"}},"required":["country","capital"]}`
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemini-2.5-flash",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("What is the capital of Japan?"))},
		Options: &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{
			Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: schema}},
	}
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	evs, end := drain(t, s)
	if end != io.EOF {
		t.Fatalf("stream end %v", end)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderStream(t, evs, end))
	var got strings.Builder
	var finish *llmrelayv1.ResponseMeta
	var usage *llmrelayv1.Usage
	ids := map[string]bool{}
	for _, ev := range evs {
		switch ev.Kind {
		case provider.EventText:
			got.WriteString(ev.Text)
		case provider.EventUsage:
			usage = ev.Usage
		case provider.EventMeta:
			if ev.Meta.GetResponseId() != "" {
				ids[ev.Meta.GetResponseId()+" "+ev.Meta.GetResolvedModel()] = true
			}
			if ev.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED {
				finish = ev.Meta
			}
			if len(ev.Meta.GetWarnings()) != 0 {
				t.Errorf("warnings %q", ev.Meta.GetWarnings())
			}
		}
	}
	if got.String() != `{"capital": "Tokyo", "country": "Japan"}` {
		t.Errorf("text %q", got.String())
	}
	if len(ids) != 1 || !ids["cxjAauvDE5WHxN8PtJ6x4Ak gemini-2.5-flash"] {
		t.Errorf("response id and model %v", ids)
	}
	if finish.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || finish.GetProviderFinishReason() != "STOP" {
		t.Errorf("finish %v", finish)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 8, OutputTokens: 12 + 58, TotalTokens: 78, ReasoningTokens: 58}); !proto.Equal(usage, want) {
		t.Errorf("usage %v, want %v", usage, want)
	}
	c := srv.Last(t)
	if !strings.HasSuffix(c.Path, "/models/gemini-2.5-flash:streamGenerateContent") || c.Query != "alt=sse" {
		t.Errorf("request %s?%s, want streamGenerateContent?alt=sse", c.Path, c.Query)
	}
	var sent struct {
		GenerationConfig map[string]json.RawMessage `json:"generationConfig"`
	}
	if err := json.Unmarshal(c.Body, &sent); err != nil {
		t.Fatalf("request body: %v", err)
	}
	if !jsonTextEqual(t, sent.GenerationConfig["responseMimeType"], `"application/json"`) ||
		!jsonTextEqual(t, sent.GenerationConfig["responseJsonSchema"], `{"properties":{"capital":{"type":"string"},"country":{"type":"string"}},"required":["country","capital"],"type":"object"}`) {
		t.Errorf("generationConfig %s", c.Body)
	}
}

// TestVxlcgCallIntEnums: gemini-2.0-flash answering the older genai-go
// (0.19) with integer enums, a candidate without index: "finishReason": 1
// is STOP, the answer is that candidate (an absent index is 0) with no
// warning, the four numeric safety ratings and avgLogprobs are kept.
func TestVxlcgCallIntEnums(t *testing.T) {
	t.Parallel()
	const name = "real_vxlcg_google_call_int_enums"
	p, _ := replay(t, name)
	temp, topP, topK, maxTok := 0.5, 0.95, int32(3), int32(2048)
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemini-2.0-flash",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("What is 2 + 2?"))},
		Options:  &llmrelayv1.GenerationOptions{Temperature: &temp, TopP: &topP, TopK: &topK, MaxTokens: &maxTok},
	}
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("2 + 2 = 4\n")); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	if m.GetResponseId() != "lTFXaK3YO4WT1dkP_cOosQU" || m.GetResolvedModel() != "gemini-2.0-flash" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 8, OutputTokens: 8, TotalTokens: 16}); !proto.Equal(m.GetUsage(), want) {
		t.Errorf("usage %v, want %v", m.GetUsage(), want)
	}
	ext := m.GetExtended().AsMap()
	if got, _ := ext[extAvgLogprobs].(float64); got != -0.00014923886919859797 {
		t.Errorf("avgLogprobs %v", ext[extAvgLogprobs])
	}
	if ratings, _ := ext[extSafetyRatings].([]any); len(ratings) != 4 {
		t.Errorf("safety ratings %v, want the four recorded", ext[extSafetyRatings])
	}
}

// TestVxlcgSystemMessage: gemini-3.8-flash with a system instruction,
// answering in Spanish (¡, ñ, accents, Markdown, two spaces before a line
// break) in one signed text part; 18 in, 280 + 350 thought tokens. The
// system message must go out as langchaingo's systemInstruction did (the
// API followed it): its one text part, not a turn in contents.
func TestVxlcgSystemMessage(t *testing.T) {
	t.Parallel()
	const name = "real_vxlcg_google_system_message"
	p, srv := replay(t, name)
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemini-3.8-flash",
		Messages: []*llmrelayv1.Message{
			msg(llmrelayv1.Role_ROLE_SYSTEM, text("You are a Spanish teacher; answer in Spanish")),
			msg(llmrelayv1.Role_ROLE_USER, text("Name the 5 most common fruits")),
		},
	}
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
	parts := res.Message.GetParts()
	if len(parts) != 2 || !strings.HasPrefix(parts[0].GetText(), "¡Hola! Como tu profesor de español,") ||
		!strings.Contains(parts[0].GetText(), "**Un pequeño consejo de gramática:**  \nFíjate") ||
		!strings.HasSuffix(parts[0].GetText(), "(*¿Puedes responder en español?*)") ||
		len(parts[1].GetReasoning().GetSignature()) != 1872 || parts[1].GetReasoning().GetText() != "" {
		t.Errorf("message %v, want the text and its signature (1872 characters)", res.Message)
	}
	m := res.Meta
	if m.GetResponseId() != "PxzAaouNFdf4vdIP_4-K6Qw" || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || len(m.GetWarnings()) != 0 ||
		!proto.Equal(m.GetUsage(), &llmrelayv1.Usage{InputTokens: 18, OutputTokens: 280 + 350, TotalTokens: 648, ReasoningTokens: 350}) {
		t.Errorf("meta %v", m)
	}
	var sent struct {
		Contents          []json.RawMessage `json:"contents"`
		SystemInstruction struct {
			Parts []json.RawMessage `json:"parts"`
		} `json:"systemInstruction"`
	}
	body := srv.Last(t).Body
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatalf("request body: %v", err)
	}
	if len(sent.Contents) != 1 || !jsonTextEqual(t, sent.Contents[0], `{"parts":[{"text":"Name the 5 most common fruits"}],"role":"user"}`) ||
		len(sent.SystemInstruction.Parts) != 1 || !jsonTextEqual(t, sent.SystemInstruction.Parts[0], `{"text":"You are a Spanish teacher; answer in Spanish"}`) {
		t.Errorf("request %s", body)
	}
}

// TestVxlcgStructuredOutputArray: gemini-2.5-flash, unary, with a schema
// whose one property is an array: the object as one text part, compact as
// sent; 6 in, 9 + 60 thought tokens. The schema goes out as
// responseJsonSchema, as langchaingo's did (the API honoured it).
func TestVxlcgStructuredOutputArray(t *testing.T) {
	t.Parallel()
	const name = "real_vxlcg_google_structured_output_array"
	p, srv := replay(t, name)
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemini-2.5-flash",
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("List three primary colors."))},
		Options: &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{
			Type:   llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA,
			Schema: `{"type":"object","properties":{"colors":{"type":"array","items":{"type":"string"}}},"required":["colors"]}`}},
	}
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text(`{"colors":["red","yellow","blue"]}`)); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	if m.GetResponseId() != "cRjAaqDTEsyp28oPp8WsuQ0" || m.GetResolvedModel() != "gemini-2.5-flash" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || len(m.GetWarnings()) != 0 ||
		!proto.Equal(m.GetUsage(), &llmrelayv1.Usage{InputTokens: 6, OutputTokens: 9 + 60, TotalTokens: 75, ReasoningTokens: 60}) {
		t.Errorf("meta %v", m)
	}
	var sent struct {
		GenerationConfig map[string]json.RawMessage `json:"generationConfig"`
	}
	body := srv.Last(t).Body
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatalf("request body: %v", err)
	}
	if !jsonTextEqual(t, sent.GenerationConfig["responseMimeType"], `"application/json"`) ||
		!jsonTextEqual(t, sent.GenerationConfig["responseJsonSchema"], `{"properties":{"colors":{"items":{"type":"string"},"type":"array"}},"required":["colors"],"type":"object"}`) {
		t.Errorf("generationConfig %s", body)
	}
}

// TestVxlcgChatSequence: gemini-3.8-flash asked after an earlier exchange
// whose model turn is plain text without a signature (from elsewhere); the
// answer (km², a Markdown list) in one signed text part; 15 in, 73 + 169
// thought tokens. The three turns must go out as langchaingo's did, which
// the API answered: the model turn's text alone, no signature made up.
func TestVxlcgChatSequence(t *testing.T) {
	t.Parallel()
	const name = "real_vxlcg_google_chat_sequence"
	p, srv := replay(t, name)
	req := &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemini-3.8-flash",
		Messages: []*llmrelayv1.Message{
			msg(llmrelayv1.Role_ROLE_USER, text("Name some countries")),
			msg(llmrelayv1.Role_ROLE_ASSISTANT, text("Spain and Lesotho")),
			msg(llmrelayv1.Role_ROLE_USER, text("Which if these is larger?")),
		},
	}
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
	parts := res.Message.GetParts()
	const answer = "**Spain** is much larger. \n\n* **Spain:** ~505,990 km² (195,360 sq mi)\n* **Lesotho:** ~30,355 km² (11,720 sq mi)\n\nSpain is more than 16 times the size of Lesotho."
	if len(parts) != 2 || parts[0].GetText() != answer || !strings.HasPrefix(parts[1].GetReasoning().GetSignature(), "EqMFCqAFAWkUfRPy") ||
		!strings.HasSuffix(parts[1].GetReasoning().GetSignature(), "HU+40IYe/xkHztE+") {
		t.Errorf("message %v", res.Message)
	}
	m := res.Meta
	if m.GetResponseId() != "PBzAar6wI6evxN8P0IKPiAk" || m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || len(m.GetWarnings()) != 0 ||
		!proto.Equal(m.GetUsage(), &llmrelayv1.Usage{InputTokens: 15, OutputTokens: 73 + 169, TotalTokens: 257, ReasoningTokens: 169}) {
		t.Errorf("meta %v", m)
	}
	var sent struct {
		Contents []json.RawMessage `json:"contents"`
	}
	body := srv.Last(t).Body
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatalf("request body: %v", err)
	}
	want := []string{
		`{"parts":[{"text":"Name some countries"}],"role":"user"}`,
		`{"parts":[{"text":"Spain and Lesotho"}],"role":"model"}`,
		`{"parts":[{"text":"Which if these is larger?"}],"role":"user"}`,
	}
	if len(sent.Contents) != len(want) {
		t.Fatalf("contents %s", body)
	}
	for i, w := range want {
		if !jsonTextEqual(t, sent.Contents[i], w) {
			t.Errorf("turn %d: %s, want %s", i, sent.Contents[i], w)
		}
	}
}
