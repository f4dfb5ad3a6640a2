package anthropic

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
)

// TestUnaryRepeatedToolUseIDCallids19: an answer with two tool_use blocks
// of one id is refused as a bad response, as the stream refuses it
// ("tool_use blocks 1 and 2 have the same id"), instead of returning two
// calls the gateway would key as one. Distinct ids are kept as sent.
func TestUnaryRepeatedToolUseIDCallids19(t *testing.T) {
	t.Parallel()
	body := func(id2 string) []byte {
		return []byte(`{"id":"msg_01RepeatedIdQ7","type":"message","role":"assistant","model":"m","content":[` +
			`{"type":"text","text":"Two lookups."},` +
			`{"type":"tool_use","id":"toolu_01A","name":"get_weather","input":{"city":"Paris"}},` +
			`{"type":"tool_use","id":"` + id2 + `","name":"get_weather","input":{"city":"Rome"}}],` +
			`"stop_reason":"tool_use","usage":{"input_tokens":3,"output_tokens":5}}`)
	}
	_, err := parseResponse(body("toolu_01A"), http.Header{})
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindBadResponse || !strings.Contains(pe.Message, "tool_use blocks 1 and 2 have the same id toolu_01A") {
		t.Fatalf("repeated id: err %v", err)
	}
	res, err := parseResponse(body("toolu_01B"), http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range res.Message.GetParts() {
		if tc := p.GetToolCall(); tc != nil {
			ids = append(ids, tc.GetCallId()+" "+tc.GetArguments())
		}
	}
	if got := strings.Join(ids, "|"); got != `toolu_01A {"city":"Paris"}|toolu_01B {"city":"Rome"}` || len(res.Meta.GetWarnings()) != 0 {
		t.Errorf("distinct ids: %q, warnings %q", got, res.Meta.GetWarnings())
	}
}
