package builtin

import (
	"context"
	"errors"
	"io"
	"math"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

func user(s string) *llmrelayv1.Message {
	return &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: s}}}}
}

func tool(t *testing.T, name string, schema map[string]any) *llmrelayv1.Tool {
	t.Helper()
	s, err := jsonString(schema)
	if err != nil {
		t.Fatal(err)
	}
	return &llmrelayv1.Tool{Name: name, Parameters: s}
}

func fixed() time.Time { return time.Unix(1_750_000_000, 0) }

func TestDeterministic(t *testing.T) {
	t.Parallel()
	p := New(WithClock(fixed))
	req := &provider.Request{Model: "echo", Messages: []*llmrelayv1.Message{user("hi")}, Options: &llmrelayv1.GenerationOptions{}}
	a, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := p.Generate(context.Background(), req)
	if !proto.Equal(a.Message, b.Message) || !proto.Equal(a.Meta, b.Meta) {
		t.Error("same request, different answers")
	}
	// The same in every build (the hash is over the deterministic binary
	// encoding, not protojson, whose spacing is seeded per executable).
	if id := a.Meta.GetResponseId(); id != "builtin-a0fcd0ca330121a75874424e" {
		t.Errorf("response id %q changed", id)
	}
	req2 := &provider.Request{Model: "echo", Messages: []*llmrelayv1.Message{user("ho")}, Options: &llmrelayv1.GenerationOptions{}}
	c, _ := p.Generate(context.Background(), req2)
	if c.Meta.GetResponseId() == a.Meta.GetResponseId() {
		t.Error("different requests share a response id")
	}
}

func TestToolArguments(t *testing.T) {
	t.Parallel()
	p := New()
	weather := tool(t, "weather", map[string]any{"type": "object", "required": []any{"city", "unit", "days", "alerts"},
		"properties": map[string]any{
			"city": map[string]any{"type": "string"}, "unit": map[string]any{"type": "string", "enum": []any{"celsius", "fahrenheit"}},
			"days": map[string]any{"type": "integer"}, "alerts": map[string]any{"type": "boolean"}, "ignored": map[string]any{"type": "string"},
		}})
	other := tool(t, "other", nil)
	third := tool(t, "third", nil)
	cases := []struct {
		name   string
		choice *llmrelayv1.ToolChoice
		want   []string
	}{
		{"first two", nil, []string{`weather {"alerts":true,"city":"Rome","days":1,"unit":"celsius"}`, "other {}"}},
		{"named", &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: "third"}}, []string{"third {}"}},
		{"none", &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE}}, nil},
	}
	for _, tc := range cases {
		res, err := p.Generate(context.Background(), &provider.Request{Model: "echo", Messages: []*llmrelayv1.Message{user("Rome")},
			Tools: []*llmrelayv1.Tool{weather, other, third}, Options: &llmrelayv1.GenerationOptions{ToolChoice: tc.choice}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, part := range res.Message.GetParts() {
			if c := part.GetToolCall(); c != nil {
				got = append(got, c.GetName()+" "+c.GetArguments())
			}
		}
		if len(got) != len(tc.want) {
			t.Fatalf("%s: calls %v, want %v", tc.name, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: call %d = %s, want %s", tc.name, i, got[i], tc.want[i])
			}
		}
	}
}

func TestStreamMatchesGenerate(t *testing.T) {
	t.Parallel()
	p := New(WithClock(fixed))
	req := &provider.Request{Model: "echo", Messages: []*llmrelayv1.Message{user("one two three")}, Options: &llmrelayv1.GenerationOptions{}}
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	text := ""
	var usage *llmrelayv1.Usage
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case provider.EventText:
			text += ev.Text
		case provider.EventUsage:
			usage = ev.Usage
		}
	}
	if text != res.Message.GetParts()[0].GetText() || !proto.Equal(usage, res.Meta.GetUsage()) {
		t.Errorf("stream %q %v, unary %v %v", text, usage, res.Message, res.Meta.GetUsage())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var pe *provider.Error
	if _, err := s.Recv(); !errors.As(err, &pe) || pe.Kind != provider.KindCanceled {
		t.Errorf("Recv after Close: %v, want a canceled *provider.Error (not an internal error)", err)
	}
}

func TestEmbed(t *testing.T) {
	t.Parallel()
	p := New()
	d := int32(16)
	res, err := p.Embed(context.Background(), &provider.EmbedRequest{Model: "embed", Inputs: []string{"a", "b"}, Dimensions: &d})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Embeddings {
		var n float64
		for _, v := range e.GetValues() {
			n += float64(v) * float64(v)
		}
		if len(e.GetValues()) != 16 || math.Abs(n-1) > 1e-5 {
			t.Errorf("embedding %d: %d values, norm² %v", e.GetIndex(), len(e.GetValues()), n)
		}
	}
	for _, bad := range []int32{0, MaxDimensions + 1} {
		_, err := p.Embed(context.Background(), &provider.EmbedRequest{Inputs: []string{"a"}, Dimensions: &bad})
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.KindInvalidRequest || pe.Param != "dimensions" {
			t.Errorf("dimensions %d: %v", bad, err)
		}
	}
}

// extra_body cannot reach the builtin provider (it has no request body):
// said in the warnings of a unary answer, a stream's first meta and an
// embedding, never applied silently.
func TestExtraBodyWarned(t *testing.T) {
	t.Parallel()
	p := New(WithClock(fixed))
	po := &llmrelayv1.ProviderOptions{ExtraBody: `{"logit_bias":{"50256":-100}}`}
	const want = "provider_options.extra_body ignored: the builtin provider has no request body"
	req := &provider.Request{Model: "echo", Messages: []*llmrelayv1.Message{user("hi")}, Options: &llmrelayv1.GenerationOptions{}, ProviderOptions: po}
	res, err := p.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if w := res.Meta.GetWarnings(); len(w) != 1 || w[0] != want {
		t.Errorf("unary warnings %q", w)
	}
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ev, err := s.Recv()
	if err != nil || ev.Kind != provider.EventMeta {
		t.Fatalf("first event %v, %v", ev, err)
	}
	if w := ev.Meta.GetWarnings(); len(w) != 1 || w[0] != want {
		t.Errorf("stream warnings %q", w)
	}
	emb, err := p.Embed(context.Background(), &provider.EmbedRequest{Model: "embed", Inputs: []string{"a"}, ProviderOptions: po})
	if err != nil {
		t.Fatal(err)
	}
	if w := emb.Meta.GetWarnings(); len(w) != 1 || w[0] != want {
		t.Errorf("embed warnings %q", w)
	}
	plain, _ := p.Generate(context.Background(), &provider.Request{Model: "echo", Messages: []*llmrelayv1.Message{user("hi")}, Options: &llmrelayv1.GenerationOptions{}})
	if w := plain.Meta.GetWarnings(); len(w) != 0 {
		t.Errorf("warnings without extra_body: %q", w)
	}
}
