package server

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// TestValidateProviderItems: a provider item belongs in an assistant
// message, names its type and is one JSON object; anything else is
// InvalidArgument naming the field.
func TestValidateProviderItems(t *testing.T) {
	t.Parallel()
	item := func(typ, js string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ProviderItem{ProviderItem: &llmrelayv1.ProviderItem{Provider: "openai", Type: typ, Json: js}}}
	}
	user := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "q"}}}}
	for name, tc := range map[string]struct {
		role  llmrelayv1.Role
		part  *llmrelayv1.Part
		field string
	}{
		"valid":          {llmrelayv1.Role_ROLE_ASSISTANT, item("web_search_call", ` {"type":"web_search_call","id":"ws_7c"}`), ""},
		"user message":   {llmrelayv1.Role_ROLE_USER, item("web_search_call", `{"type":"web_search_call"}`), "messages[1].parts[0].provider_item"},
		"no type":        {llmrelayv1.Role_ROLE_ASSISTANT, item("", `{"type":"web_search_call"}`), "messages[1].parts[0].provider_item.type"},
		"not JSON":       {llmrelayv1.Role_ROLE_ASSISTANT, item("web_search_call", `{"type":`), "messages[1].parts[0].provider_item.json"},
		"an array":       {llmrelayv1.Role_ROLE_ASSISTANT, item("web_search_call", `[{"type":"web_search_call"}]`), "messages[1].parts[0].provider_item.json"},
		"two objects":    {llmrelayv1.Role_ROLE_ASSISTANT, item("web_search_call", `{}{}`), "messages[1].parts[0].provider_item.json"},
		"empty":          {llmrelayv1.Role_ROLE_ASSISTANT, item("web_search_call", ``), "messages[1].parts[0].provider_item.json"},
		"a JSON string":  {llmrelayv1.Role_ROLE_ASSISTANT, item("web_search_call", `"{}"`), "messages[1].parts[0].provider_item.json"},
		"tool messages":  {llmrelayv1.Role_ROLE_TOOL, item("web_search_call", `{}`), "messages[1].parts[0].provider_item"},
		"system message": {llmrelayv1.Role_ROLE_SYSTEM, item("web_search_call", `{}`), "messages[1].parts[0].provider_item"},
	} {
		_, err := validateMessages([]*llmrelayv1.Message{user, {Role: tc.role, Parts: []*llmrelayv1.Part{tc.part}}})
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.field != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.field+": ")):
			t.Errorf("%s: %v, want an error at %s", name, err, tc.field)
		}
	}
}

// foldSink folds the events a relay sends as a StreamTools client would.
type foldSink struct{ acc fold.Accumulator }

func (s *foldSink) start(e *llmrelayv1.StreamStart) error { s.acc.AddStart(e); return nil }
func (s *foldSink) text(t, phase, item string, begins bool) error {
	s.acc.AddItemText(t, phase, item, begins)
	return nil
}
func (s *foldSink) refusal(t, item string) error                   { s.acc.AddItemRefusal(t, item); return nil }
func (s *foldSink) reasoning(d *llmrelayv1.ReasoningDelta) error   { return s.acc.AddReasoning(d) }
func (s *foldSink) providerItem(it *llmrelayv1.ProviderItem) error { return s.acc.AddProviderItem(it) }
func (s *foldSink) toolDelta(d *llmrelayv1.ToolCallDelta) error    { return s.acc.AddToolCallDelta(d) }
func (s *foldSink) toolDone(d *llmrelayv1.ToolCallDone) error      { return s.acc.AddToolCallDone(d) }
func (s *foldSink) usage(u *llmrelayv1.Usage) error                { s.acc.AddUsage(u); return nil }
func (s *foldSink) end(e *llmrelayv1.StreamEnd) error              { s.acc.AddEnd(e); return nil }
func (s *foldSink) tools() bool                                    { return true }

// TestRelayProviderItem: a provider item is relayed whole, in order with
// the deltas, tagged with the deployment's provider type; the folded
// message holds it in its place.
func TestRelayProviderItem(t *testing.T) {
	g, p, _ := relayFixture(t)
	const js = `{"type":"web_search_call","id":"ws_0c2","status":"completed"}`
	s := &eventsStream{events: []*provider.Event{
		{Kind: provider.EventText, Text: "Searching."},
		{Kind: provider.EventProviderItem, Item: &provider.ProviderItem{Type: "web_search_call", JSON: js}},
		{Kind: provider.EventText, Text: "Found.", BeginsPart: true},
		{Kind: provider.EventMeta, Meta: &llmrelayv1.ResponseMeta{FinishReason: llmrelayv1.FinishReason_FINISH_REASON_STOP}},
	}}
	sink := &foldSink{}
	if err := g.relayStream(context.Background(), p, sink, s); err != nil {
		t.Fatal(err)
	}
	parts := sink.acc.Message().GetParts()
	if len(parts) != 3 || parts[0].GetText() != "Searching." || parts[2].GetText() != "Found." ||
		!proto.Equal(parts[1].GetProviderItem(), &llmrelayv1.ProviderItem{Provider: "openai", Type: "web_search_call", Json: js}) {
		t.Errorf("parts %v", parts)
	}
}
