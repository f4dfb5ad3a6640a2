package server

import (
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server/pipeline"
)

// TestDuplicateCallIDs: the duplicate call_id check finds a repeated id
// wherever it is in the message (not only the first call's).
func TestDuplicateCallIDs(t *testing.T) {
	t.Parallel()
	call := func(id string) *llmrelayv1.Part {
		return &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: id, Name: "f"}}}
	}
	text := &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: "and"}}
	user := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "hi"}}}}
	assistant := func(parts ...*llmrelayv1.Part) []*llmrelayv1.Message {
		return []*llmrelayv1.Message{user, {Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: parts}}
	}
	for name, tc := range map[string]struct {
		parts []*llmrelayv1.Part
		field string // "" for valid
	}{
		"distinct":          {parts: []*llmrelayv1.Part{call("a"), text, call("b"), call("c")}},
		"first repeated":    {parts: []*llmrelayv1.Part{call("a"), call("b"), call("a")}, field: "messages[1].parts[2].tool_call.call_id"},
		"later repeated":    {parts: []*llmrelayv1.Part{call("a"), call("b"), text, call("c"), call("b")}, field: "messages[1].parts[4].tool_call.call_id"},
		"adjacent repeated": {parts: []*llmrelayv1.Part{call("a"), call("b"), call("c"), call("c")}, field: "messages[1].parts[3].tool_call.call_id"},
	} {
		_, err := validateMessages(assistant(tc.parts...))
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.field != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.field+": ")):
			t.Errorf("%s: %v, want an error at %s", name, err, tc.field)
		}
	}

	// Many distinct calls are valid (their cost is BenchmarkValidateManyCalls's).
	var parts []*llmrelayv1.Part
	for i := 0; i < 1000; i++ {
		parts = append(parts, call("c"+strconv.Itoa(i)))
	}
	if _, err := validateMessages(assistant(parts...)); err != nil {
		t.Fatal(err)
	}
	// The same id in two messages is two turns, not a duplicate.
	if _, err := validateMessages(append(assistant(call("a")), &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{call("a")}})); err != nil {
		t.Errorf("one id in two messages: %v", err)
	}
}

// TestRetryDefaultsAgree: the configuration checks base_delay against the
// built-in max_delay it names; the retry policy must use the same values.
func TestRetryDefaultsAgree(t *testing.T) {
	t.Parallel()
	if p := pipeline.DefaultRetryPolicy; p.BaseDelay != config.DefaultRetryBaseDelay || p.MaxDelay != config.DefaultRetryMaxDelay {
		t.Errorf("pipeline.DefaultRetryPolicy %v/%v, config's defaults %v/%v", p.BaseDelay, p.MaxDelay, config.DefaultRetryBaseDelay, config.DefaultRetryMaxDelay)
	}
}

// BenchmarkValidateManyCalls: validating an assistant message of small
// distinct calls as large as the default message limit (4 MiB, 300,000
// calls) stays linear; the first duplicate check was n²/2 string
// comparisons (800 KB of calls took 41 s of CPU, 4 MiB some 17 minutes).
func BenchmarkValidateManyCalls(b *testing.B) {
	user := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: "hi"}}}}
	parts := make([]*llmrelayv1.Part, 0, 300_000)
	for i := 0; i < 300_000; i++ {
		parts = append(parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: "c" + strconv.Itoa(i), Name: "f"}}})
	}
	msgs := []*llmrelayv1.Message{user, {Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: parts}}
	if n := proto.Size(&llmrelayv1.ChatRequest{Messages: msgs}); n < 4<<20 {
		b.Fatalf("the request is %d bytes: not the size of the default limit", n)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := validateMessages(msgs); err != nil {
			b.Fatal(err)
		}
	}
}
