package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// resumeRequest builds the request that continues a paused turn: the
// conversation, then the paused answer as the last (assistant) message,
// and returns the last wire message's content blocks.
func resumeRequest(t *testing.T, answer *llmrelayv1.Message) []map[string]any {
	t.Helper()
	req := plainRequest()
	req.Messages = append(req.Messages, answer)
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	body, _, warnings, err := p.buildRequest(req, false)
	if err != nil {
		t.Fatalf("buildRequest: %v", err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings %q", warnings)
	}
	var w struct {
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatal(err)
	}
	last := w.Messages[len(w.Messages)-1]
	if last.Role != "assistant" {
		t.Fatalf("last message %s, want the paused assistant turn", last.Role)
	}
	return last.Content
}

// recordedBlocks is the content of the fixture's answer as sent: the
// unary body's content, or the stream's content_block_start blocks with
// their input_json_delta text as input.
func recordedBlocks(t *testing.T, name string, stream bool) []map[string]any {
	t.Helper()
	body := providertest.Load(t, "testdata/"+name+".http").Body
	if !stream {
		var m struct {
			Content []map[string]any `json:"content"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		return m.Content
	}
	var blocks []map[string]any
	inputs := map[int]*strings.Builder{}
	for _, line := range strings.Split(string(body), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type         string         `json:"type"`
			Index        int            `json:"index"`
			ContentBlock map[string]any `json:"content_block"`
			Delta        struct {
				Type        string `json:"type"`
				PartialJSON string `json:"partial_json"`
			} `json:"delta"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		switch {
		case ev.Type == "content_block_start":
			blocks = append(blocks, ev.ContentBlock)
		case ev.Type == "content_block_delta" && ev.Delta.Type == "input_json_delta":
			if inputs[ev.Index] == nil {
				inputs[ev.Index] = &strings.Builder{}
			}
			inputs[ev.Index].WriteString(ev.Delta.PartialJSON)
		}
	}
	for i, in := range inputs {
		var v any
		if err := json.Unmarshal([]byte(in.String()), &v); err != nil {
			t.Fatalf("block %d input %q: %v", i, in.String(), err)
		}
		blocks[i]["input"] = v
	}
	return blocks
}

// TestPauseTurnResumes: an answer paused by pause_turn (a server tool
// loop at its limit: web search) continues only when the next request
// holds its blocks, server_tool_use and web_search_tool_result included,
// in order (the API reference, "handling stop reasons"). Before, the
// server blocks were dropped with a warning and the turn could not be
// resumed through the gateway. Unary and streamed: every server block
// goes back as the provider sent it (streamed: with its input rebuilt
// from the input_json_delta pieces), the text blocks as text, in the
// recorded order.
func TestPauseTurnResumes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		stream bool
	}{{"pause_turn", false}, {"pause_turn_stream", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var answer *llmrelayv1.Message
			if tc.stream {
				evs, err := r14Stream(t, tc.name, plainRequest())
				if err != nil {
					t.Fatal(err)
				}
				answer = accumulate(t, evs)
			} else {
				answer = r14Generate(t, tc.name, plainRequest()).Message
			}
			sent := resumeRequest(t, answer)
			rec := recordedBlocks(t, tc.name, tc.stream)
			if len(sent) != len(rec) {
				t.Fatalf("sent %d blocks, recorded %d:\n%v\n%v", len(sent), len(rec), sent, rec)
			}
			for i := range rec {
				if sent[i]["type"] != rec[i]["type"] {
					t.Errorf("block %d: sent %v, recorded %v", i, sent[i]["type"], rec[i]["type"])
					continue
				}
				if rec[i]["type"] == "text" {
					continue // text goes back as text (citations are meta)
				}
				g, _ := json.Marshal(sent[i])
				w, _ := json.Marshal(rec[i])
				if string(g) != string(w) {
					t.Errorf("block %d:\n sent %s\n recorded %s", i, g, w)
				}
			}
		})
	}
}

// TestProviderItemRequest: a provider item goes back verbatim in its place
// among the parts of an assistant message; one of a type this format does
// not know is dropped with a warning naming the part.
func TestProviderItemRequest(t *testing.T) {
	t.Parallel()
	item := func(typ, js string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ProviderItem{ProviderItem: &llmrelayv1.ProviderItem{Provider: "anthropic", Type: typ, Json: js}}}
	}
	req := plainRequest()
	req.Messages = append(req.Messages, msgOf(llmrelayv1.Role_ROLE_ASSISTANT,
		text("Searching."),
		item("server_tool_use", `{"type":"server_tool_use","id":"srvtoolu_01Q7zNw3","name":"web_search","input":{"query":"q"}}`),
		item("web_search_call", `{"type":"web_search_call","id":"ws_1"}`),
		item("compaction", `{"type":"compaction","content":null,"encrypted_content":"Eh4K"}`),
		text("Found.")),
		msgOf(llmrelayv1.Role_ROLE_USER, text("More.")))
	p, err := New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	body, _, warnings, err := p.buildRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || warnings[0] != "messages[2].parts[2]: provider item web_search_call from anthropic not sent: the Anthropic Messages format has no place for it" {
		t.Errorf("warnings %q", warnings)
	}
	want := `{"role":"assistant","content":[{"type":"text","text":"Searching."},` +
		`{"type":"server_tool_use","id":"srvtoolu_01Q7zNw3","name":"web_search","input":{"query":"q"}},` +
		`{"type":"compaction","content":null,"encrypted_content":"Eh4K"},{"type":"text","text":"Found."}]}`
	if !strings.Contains(string(body), want) {
		t.Errorf("body %s\nwant it to hold %s", body, want)
	}
}
