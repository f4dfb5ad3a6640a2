package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/sse"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// streamSeeds are the recordings FuzzStream starts from, round 19's
// among them (a tool_use block still open at max_tokens, empty
// partial_json, service_tier in a message_delta's usage, omitted
// thinking).
var streamSeeds = []string{
	"plain_stream", "tools_stream", "noargs_stream", "malformed_args_stream", "thinking_stream", "stream_overloaded", "stream_cut",
	"tools19_max_tokens_open_block_stream", "tools19_empty_partial_json_stream", "max_tokens_whole_args_stream",
	"real_langsmith_haiku_max_tokens_stream", "real_reasoning19_sonnet_5_omitted_thinking_stream",
	"real_oi_multiple_tool_calling_streaming", "real_message_start_prepopulated_stream", "surrogate19_split_stream",
	"surr19b_partial_json_stream",
}

// refStream is what a reference decoder reads of a Messages stream: the
// text of its text blocks, and each client tool_use block's arguments
// (its start input when not the empty {}, then its partial_json, "{}"
// when it had none), by call id (a made one for a block without an id,
// provider.MadeCallID).
type refStream struct {
	text string
	args map[string]string
	// sure: the body decoded whole and named each call once.
	sure bool
}

type refBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Input json.RawMessage `json:"input"`
}

func readRefStream(body []byte) refStream {
	ref := refStream{args: map[string]string{}}
	var text strings.Builder
	type call struct {
		id   string
		args strings.Builder
		got  bool
	}
	var calls []*call
	byIndex := map[int]*call{}
	made := map[string]bool{}
	start := func(idx int, b *refBlock) bool {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			taken := func(id string) bool {
				for _, c := range calls {
					if c.id == id {
						return true
					}
				}
				return false
			}
			id := b.ID
			switch {
			case id == "" || made[id]:
				// Keyed by a made id (a block without one, or sent with
				// the one made for an earlier block).
				id = provider.MadeCallID(len(calls), taken)
				made[id] = true
			case taken(id):
				return false
			}
			c := &call{id: id}
			if a := provider.ArgumentsText(b.Input, "{}"); a != "{}" {
				c.args.WriteString(a)
				c.got = true
			}
			calls = append(calls, c)
			byIndex[idx] = c
		}
		return true
	}
	rd := sse.NewReader(bytes.NewReader(body))
	for {
		ev, err := rd.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return ref
			}
			break
		}
		var e struct {
			Type    string `json:"type"`
			Message *struct {
				Content []refBlock `json:"content"`
			} `json:"message"`
			Index        *int      `json:"index"`
			ContentBlock *refBlock `json:"content_block"`
			Delta        *struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				PartialJSON string `json:"partial_json"`
			} `json:"delta"`
		}
		if json.Unmarshal(ev.Data, &e) != nil {
			return ref
		}
		if e.Type == "" {
			e.Type = string(ev.Type)
		}
		switch e.Type {
		case "message_start":
			if e.Message != nil {
				for i := range e.Message.Content {
					if !start(i, &e.Message.Content[i]) {
						return ref
					}
				}
			}
		case "content_block_start":
			if e.Index != nil && e.ContentBlock != nil && !start(*e.Index, e.ContentBlock) {
				return ref
			}
		case "content_block_delta":
			if e.Index == nil || e.Delta == nil {
				continue
			}
			switch e.Delta.Type {
			case "text_delta":
				text.WriteString(e.Delta.Text)
			case "input_json_delta":
				if c := byIndex[*e.Index]; c != nil && e.Delta.PartialJSON != "" {
					c.args.WriteString(e.Delta.PartialJSON)
					c.got = true
				}
			}
		case "message_stop":
			// What follows is not read (the adapter's stream ends here).
			goto done
		}
	}
done:
	for _, c := range calls {
		if !c.got {
			c.args.WriteString("{}")
		}
		ref.args[c.id] = c.args.String()
	}
	ref.text, ref.sure = text.String(), true
	return ref
}

// FuzzStream: whatever the body, the stream ends with EOF or a
// *provider.Error, its events keep the invariants of every adapter
// (providertest.CheckEvents: call ids unique, one end per call and no
// fragment after it, no negative usage, nothing after the stream's end)
// and the usage total is the sum of its parts; a complete stream relays
// the text and each call's arguments a reference decoder reads in the
// same body, nothing lost, added or repeated.
func FuzzStream(f *testing.F) {
	for _, name := range streamSeeds {
		f.Add(providertest.Load(f, "testdata/"+name+".http").Body)
	}
	f.Add([]byte("data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":null},\"usage\":{\"output_tokens\":-5}}\n\n"))
	f.Add([]byte("data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":null}}\n\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"x\"}}\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		s := streamFromBody(body)
		evs, complete, err := providertest.Drain(t, s, len(body)+8)
		if err != nil {
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *provider.Error", err)
			}
		}
		calls := providertest.CheckEvents(t, evs, providertest.EventCheck{Complete: complete, EndEveryCall: true})
		// reasoning is the number of reasoning blocks seen: each event's
		// index is an earlier block's or the next one.
		reasoning := 0
		for _, ev := range evs {
			switch ev.Kind {
			case provider.EventReasoning:
				switch idx := ev.Reasoning.Index; {
				case idx == reasoning:
					reasoning++
				case idx < 0 || idx > reasoning:
					t.Fatalf("reasoning index %d with %d blocks seen", idx, reasoning)
				}
			case provider.EventUsage:
				if u := ev.Usage; u.TotalTokens != u.InputTokens+u.OutputTokens && u.TotalTokens != 1<<31-1 {
					t.Fatalf("bad usage %v", u)
				}
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Recv(); err == nil {
			t.Fatal("Recv after Close succeeded")
		}
		if !complete {
			return
		}
		ref := readRefStream(body)
		if !ref.sure {
			return
		}
		if got := providertest.Text(evs); !providertest.SameSplitText(got, ref.text) {
			t.Errorf("text %q, sent %q", got, ref.text)
		}
		if len(calls) != len(ref.args) {
			t.Errorf("%d calls relayed, %d sent", len(calls), len(ref.args))
		}
		for _, c := range calls {
			// partial_json pieces cut between the halves of a pair are
			// joined (the reference decodes each piece alone).
			if want, ok := ref.args[c.ID]; !ok || !providertest.SameSplitText(c.Arguments.String(), want) {
				t.Errorf("call %s: arguments %q, sent %q", c.ID, c.Arguments.String(), want)
			}
		}
	})
}
