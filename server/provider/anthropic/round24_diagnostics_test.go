package anthropic

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// r24SSE frames events written "type|data" as an SSE body.
func r24SSE(evs ...string) []byte {
	var b strings.Builder
	for _, e := range evs {
		typ, data, _ := strings.Cut(e, "|")
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ, data)
	}
	return []byte(b.String())
}

// TestRound24CacheDiagnostics: the cache diagnostics beta
// (cache-diagnosis-2026-04-07; Anthropic's "Cache diagnostics" page: asked
// for with diagnostics.previous_message_id, the API "attaches a diagnostics
// object to the response describing the first point of divergence") is
// kept as sent in meta.extended.diagnostics, unary and streamed (on
// message_start's message, and on message_delta should it come there, the
// later replacing the earlier). It was dropped. null, which DigitalOcean's
// relay sends on every answer (real_do_system_update_*), sets nothing.
// Hand-built: the object's inner shape (cache_miss_reason with its type and
// the input tokens past the divergence) as langchain4j's
// AnthropicCacheDiagnostics reads it; the adapter keeps it whatever it is.
func TestRound24CacheDiagnostics(t *testing.T) {
	t.Parallel()
	const diag = `{"cache_miss_reason":{"type":"system_changed","cache_missed_input_tokens":5120}}`
	for _, tc := range []struct{ field, want string }{
		{`"diagnostics":` + diag + `,`, diag},
		{`"diagnostics":null,`, ""},
		{``, ""},
	} {
		body := `{"id":"msg_01R24CacheDiagnosticsUnary0","type":"message","role":"assistant","model":"claude-opus-4-8",` + tc.field +
			`"content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":5131,"output_tokens":2}}`
		res, err := parseResponse([]byte(body), http.Header{})
		if err != nil {
			t.Fatalf("%s: %v", tc.field, err)
		}
		got := ""
		if v, ok := res.Meta.GetExtended().GetFields()["diagnostics"]; ok {
			got = valueJSON(t, v)
		}
		if !sameJSON(t, got, tc.want) {
			t.Errorf("unary %s: diagnostics %s, want %s", tc.field, got, tc.want)
		}
	}
	later := `{"cache_miss_reason":{"type":"messages_changed","cache_missed_input_tokens":812}}`
	for _, tc := range []struct{ name, start, delta, want string }{
		{"on message_start", `,"diagnostics":` + diag, ``, diag},
		{"on message_delta", `,"diagnostics":null`, `,"diagnostics":` + later, later},
		{"both, the later kept", `,"diagnostics":` + diag, `,"diagnostics":` + later, later},
		{"null", `,"diagnostics":null`, `,"diagnostics":null`, ""},
	} {
		body := r24SSE(
			`message_start|{"type":"message_start","message":{"id":"msg_01R24CacheDiagnosticsStream","type":"message","role":"assistant","content":[],"model":"claude-opus-4-8","stop_reason":null,"usage":{"input_tokens":5131,"output_tokens":1}`+tc.start+`}}`,
			`content_block_start|{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`content_block_delta|{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}`,
			`content_block_stop|{"type":"content_block_stop","index":0}`,
			`message_delta|{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}`+tc.delta+`}`,
			`message_stop|{"type":"message_stop"}`)
		evs, err := collect(streamFromBody(body))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		f := foldEvents(t, evs)
		got := ""
		if v, ok := f.meta.GetExtended().GetFields()["diagnostics"]; ok {
			got = valueJSON(t, v)
		}
		if !sameJSON(t, got, tc.want) {
			t.Errorf("stream %s: diagnostics %s, want %s", tc.name, got, tc.want)
		}
	}
}
