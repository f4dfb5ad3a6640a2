package openai

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

var ignoredItem = regexp.MustCompile(`ignored output item of type "([^"]+)"(?: \(id ([^;)]+))?`)

// r23Hosted checks msg's provider items against an expectation written
// when hosted items were dropped with a warning each ("ignored output
// item of type %q (id …; …)"): each such warning is now a provider item
// of that type (and id), in order, whose JSON is the item; the warning
// stays (as "output item of type … ; kept as a provider item") only
// where got has it (a failed or unfinished item, one the client was to
// act on). It returns msg without its items and the warnings expected.
func r23Hosted(t *testing.T, msg *llmrelayv1.Message, got, want []string) (*llmrelayv1.Message, []string) {
	t.Helper()
	var items []*llmrelayv1.ProviderItem
	rest := &llmrelayv1.Message{Role: msg.GetRole(), Name: msg.GetName()}
	for _, p := range msg.GetParts() {
		if it := p.GetProviderItem(); it != nil {
			items = append(items, it)
			continue
		}
		rest.Parts = append(rest.Parts, p)
	}
	var out []string
	k := 0
	for _, w := range want {
		m := ignoredItem.FindStringSubmatch(w)
		if m == nil {
			out = append(out, w)
			continue
		}
		if k >= len(items) {
			t.Errorf("no provider item for %q", w)
			continue
		}
		it := items[k]
		k++
		var v struct {
			Type string `json:"type"`
			ID   string `json:"id"`
		}
		if err := json.Unmarshal([]byte(it.GetJson()), &v); err != nil || v.Type != m[1] || it.GetType() != m[1] || (m[2] != "" && v.ID != m[2]) {
			t.Errorf("provider item %d %s %s, want type %s id %q (%v)", k-1, it.GetType(), it.GetJson(), m[1], m[2], err)
		}
		kept := strings.Replace(w, "ignored output item", "output item", 1) + "; kept as a provider item"
		if slices.Contains(got, kept) {
			out = append(out, kept)
		}
	}
	if k != len(items) {
		t.Errorf("%d provider items, %d expected", len(items), k)
	}
	return rest, out
}

// r23Parts returns msg's parts without its provider items, which must be
// of the types want, in order (hosted items the answer holds since round
// 23; before, each was a warning).
func r23Parts(t *testing.T, msg *llmrelayv1.Message, want ...string) []*llmrelayv1.Part {
	t.Helper()
	var got []string
	var rest []*llmrelayv1.Part
	for _, p := range msg.GetParts() {
		if it := p.GetProviderItem(); it != nil {
			got = append(got, it.GetType())
			var v struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal([]byte(it.GetJson()), &v); err != nil || v.Type != it.GetType() {
				t.Errorf("provider item %s is not its item: %s", it.GetType(), it.GetJson())
			}
			continue
		}
		rest = append(rest, p)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("provider items %q, want %q", got, want)
	}
	return rest
}

// TestProviderItemsInRequests: Chat Completions has no place for a
// provider item: dropped with a warning naming the part, the rest of the
// turn sent. The Responses format sends one back as it is, in its place;
// one claiming a type of its own (a message) is not sent.
func TestProviderItemsInRequests(t *testing.T) {
	t.Parallel()
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	item := func(typ, js string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ProviderItem{ProviderItem: &llmrelayv1.ProviderItem{Provider: "openai", Type: typ, Json: js}}}
	}
	const ws = `{"id":"ws_0e1","type":"web_search_call","status":"completed","action":{"type":"search","query":"q"}}`
	req := r21Request("gpt-5", "q")
	req.Messages = append(req.Messages, msgOf(llmrelayv1.Role_ROLE_ASSISTANT, item("web_search_call", ws), text("found"),
		item("message", `{"type":"message","role":"assistant","content":[]}`)), msgOf(llmrelayv1.Role_ROLE_USER, text("more")))

	body, warnings, err := p.buildChatRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(body), "ws_0e1") || len(warnings) != 2 ||
		warnings[0] != "messages[1].parts[0]: provider item web_search_call from openai not sent: Chat Completions has no place for it" {
		t.Errorf("chat: %q\n%s", warnings, body)
	}

	body, warnings, err = p.buildResponsesRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Input []json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		t.Fatal(err)
	}
	if len(in.Input) != 4 || string(in.Input[1]) != ws || !strings.Contains(string(in.Input[2]), `"text":"found"`) {
		t.Errorf("responses input %s", body)
	}
	if len(warnings) != 1 || warnings[0] != "messages[1].parts[2]: provider item message from openai not sent: the OpenAI Responses format has no place for it" {
		t.Errorf("responses warnings %q", warnings)
	}
}
