package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Gemini 3's thought signature on a text answer, from the Vercel AI SDK's
// recordings (testdata/README.md, "Session 19"): unary, the signature on
// the one text part; streamed, on an empty text part after the text. The
// next turn must carry the signature back on the model's text (Gemini 3
// validates it: "thought signatures … must be returned"; for text the API
// does not refuse a turn without it, but the model loses its reasoning
// context).

func init() {
	round17Recordings = append(round17Recordings,
		"real_reasoning19_gemini3_text_signature", "real_reasoning19_gemini3_text_signature_stream")
}

const (
	reasoning19UnarySig  = "EswFCskFAb4+9vu5+eCedpmcjHHK+yjyrSAIGVBHj03GrObE+hduQ213f7FDz0UD+aLw3SDPDBkaK69ObgjN0U84Q1yKpmpLk6GnphX0+DrmRFYKnw2TJ8c7/DKa3z5x"
	reasoning19StreamSig = "EpAICo0IAb4+9vuku3oDHR5EQSMfPm5IpmH06lgm9aGICNAJKKfpVXU3971qpSGSFiIVb60jKjMU182kVfRyl9bViwRtwI1o4nFI+BqC+kLUuUaG+hCfQZBYcCiq8rmQK+LQJxRey5s3kXIDNUcpyOk4I2Y/wFpbcnQC/8xzXHo8D0y7eZrayZwAsusgHwcww988h0JOA8zPXCaN/q7bDfnQqX4tHps3VezQBKlNQOGdbB/cb+Sr2qRPqoOYKrLhxJ+dWGqkbv4wYSF6rYLIXh8h95CkzmerYWkLg5O5fYuTyz0/cHZLnF0MJFCMZtwk8TWEc2+HVLDvS7lw/fFSqKmaIC/CBDSZA1N8VOPq9FZ+t1kJ2lwG5t6CfXcD2xz20eWpdf0p3G51XkTbF6Bghj1TZi0RiXJUgThyqB3gGSdE5nd0HAX2dU3YCVdwX31wNd6atyTeUx7itA39sP6EQteHbz8coTM77ueppUnU0bGUY85V7PCeQTFP47jIj0LuwCM8P3AE3Fj/QPstzMu42lW4kd95ngwaUKdo2QxFXB7/6mwFWWOLoDWgy1a1mgQYnk70GcLPnIcEwC+Yo+M3vb4F6VLIXtZhs+q9vubASDpCHxjcbFUmAoqdajCGh/q48VWFVBybiS5gYOPoR3dH+o+ugY3evyv1vO3fJqEeEj9lh7jgwJiy1CvjZlC+fzB75RGIeiI3R7gGeob6QjLjuSfvkSGbdZBlTShO3mQIxE7CKYyB7RNuYfaYW0E/4mTDEppuFsR6ub1JySylx+0klPfH2GP7pnVnWOZ1itHPXCexpAPfCoW5ulpgRxDUIvZUUvA2rRJoaCSWgRWx12OM9wzWEonLKEW122OPSUV3zEmHqjujJzHgkKoEMfGS/OAuIAusR8mv6VMKERLI2r5v4y/vqBXutwO0S7ztoU9qPJm60z4hDgkuSkjFCYh17U3Ah4LHUlBCO3BaOy/M68JtDHU3+hPmwMNjXByl68FacTWEOtjW4PoPoWFsWbUZ1uU4BtR6/aGsgARJPVQlZ9eRVke5JAQKk43jRVhzxHRkfunvRU7b1FAejU1J5byc2xes0saIwU0+tETySrKTe2ktkWvk/a4TgPnm8SGiV+pVZ91r3uTtjds6h+VA0lVMdqfY/vuYiNnYybR4J6r6U+DTpIAgNgyIx4r/N9zy+Z5nqNFFrwS85B+aWqVf8vaT/jW4u/vh8ZEuoJ1NhsGdefZjokyv+wm+G1N5ykmdo5qO5aR/oGbH/YSIFfALFAIgWK+6og1jjkjf2bVBVsmtns2/w+au7xvFpkjLT+klKwiuYjaTHMEBk4+Tb4Uq/VPO7ZbPPts9XwsWsv/P3FNrCXyy0/RCAUsr7SEP3u0kIsk9vG9i114="
)

// reasoning19Request is a plain question to gemini-3-pro-preview.
func reasoning19Request() *provider.Request {
	return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gemini-3-pro-preview", Options: &llmrelayv1.GenerationOptions{},
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("How many r's are in strawberry?"))}}
}

// wantTextThenSignature checks an answer: the text, then a
// signature-only Reasoning part (the text part's signature).
func wantTextThenSignature(t *testing.T, m *llmrelayv1.Message, wantText, wantSig string) {
	t.Helper()
	parts := m.GetParts()
	if len(parts) != 2 || parts[0].GetText() != wantText {
		t.Fatalf("parts %v, want the text then its signature", parts)
	}
	r := parts[1].GetReasoning()
	if r == nil || r.GetText() != "" || r.GetSignature() != wantSig || r.GetRedacted() || r.GetId() != "" {
		t.Errorf("part 1 %v, want a signature-only reasoning part", parts[1])
	}
}

// wantSentBack builds the next turn from the answer and checks the model
// content sent: the parts given, as JSON.
func wantSentBack(t *testing.T, answer *llmrelayv1.Message, want string) {
	t.Helper()
	wire, warnings, err := buildRequest(&provider.Request{Model: "gemini-3-pro-preview", Options: &llmrelayv1.GenerationOptions{},
		Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("How many r's are in strawberry?")), answer,
			msg(llmrelayv1.Role_ROLE_USER, text("And in raspberry?"))}})
	if err != nil || len(warnings) != 0 {
		t.Fatal(err, warnings)
	}
	if len(wire.Contents) != 3 || wire.Contents[1].Role != "model" {
		t.Fatalf("contents %+v", wire.Contents)
	}
	got, err := json.Marshal(wire.Contents[1].Parts)
	if err != nil {
		t.Fatal(err)
	}
	if canonJSON(t, got) != canonJSON(t, []byte(want)) {
		t.Errorf("sent back\n%s\nwant\n%s", got, want)
	}
}

func TestReasoning19Gemini3TextSignature(t *testing.T) {
	t.Parallel()
	const name = "real_reasoning19_gemini3_text_signature"
	p, _ := replay(t, name)
	res, err := p.Generate(context.Background(), reasoning19Request())
	if err != nil {
		t.Fatal(err)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
	const answer = "There are **3** \"r\"s in strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y."
	wantTextThenSignature(t, res.Message, answer, reasoning19UnarySig)
	// 258 thought tokens are output tokens: 29 + 258.
	u := res.Meta.GetUsage()
	if u.GetInputTokens() != 9 || u.GetOutputTokens() != 287 || u.GetReasoningTokens() != 258 || u.GetTotalTokens() != 296 {
		t.Errorf("usage %v", u)
	}
	if res.Meta.GetResponseId() != "DniLab2dFPeSxN8PpqXY4Ag" || res.Meta.GetResolvedModel() != "gemini-3-pro-preview" ||
		res.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP {
		t.Errorf("meta %v", res.Meta)
	}
	// The part goes back as it came.
	wantSentBack(t, res.Message, `[{"text":`+jsonString(t, answer)+`,"thoughtSignature":"`+reasoning19UnarySig+`"}]`)
}

func TestReasoning19Gemini3TextSignatureStream(t *testing.T) {
	t.Parallel()
	const name = "real_reasoning19_gemini3_text_signature_stream"
	p, _ := replay(t, name)
	s, err := p.Stream(context.Background(), reasoning19Request())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, end := drain(t, s)
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderStream(t, evs, end))
	if !errors.Is(end, io.EOF) {
		t.Fatal(end)
	}
	m := foldMessage(t, evs)
	const answer = "There are **3** \"r\"s in strawberry.\n\nSt**r**awbe**rr**y"
	wantTextThenSignature(t, m, answer, reasoning19StreamSig)
	f := foldEvents(evs)
	if u := f.usage; u.GetInputTokens() != 9 || u.GetOutputTokens() != 325 || u.GetReasoningTokens() != 302 || u.GetTotalTokens() != 334 {
		t.Errorf("usage %v", u)
	}
	// The streamed text and the signature that closed it go back as one
	// signed text part (the signature signs the turn's text so far).
	wantSentBack(t, m, `[{"text":`+jsonString(t, answer)+`,"thoughtSignature":"`+reasoning19StreamSig+`"}]`)
}
