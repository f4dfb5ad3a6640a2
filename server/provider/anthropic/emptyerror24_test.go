package anthropic

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound24EmptyErrorResult: an error tool result without content went
// as a tool_result with is_error and no content, which the API refuses
// ("content cannot be empty if `is_error` is true", as
// bytedance/trae-agent#230 quotes it): the next model call of a tool loop
// failed. It goes with a content saying there was no message, warned.
// An empty result that is not an error still goes without content.
func TestRound24EmptyErrorResult(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, "testdata/real_pyd_anthropic_document_url_input.http")
	req := plainRequest()
	req.Tools = []*llmrelayv1.Tool{weatherTool(t)}
	req.Messages = append(req.Messages,
		msgOf(llmrelayv1.Role_ROLE_ASSISTANT, toolCallPart("toolu_01EmptyErrA", "get_weather", `{"city":"Oslo"}`),
			toolCallPart("toolu_01EmptyOkB", "get_weather", `{"city":"Bergen"}`)),
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01EmptyErrA", "", true), toolResultPart("toolu_01EmptyOkB", "", false)))
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	var blocks []map[string]any
	if err := json.Unmarshal(body.Messages[len(body.Messages)-1].Content, &blocks); err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 || blocks[0]["content"] != emptyErrorResult || blocks[0]["is_error"] != true {
		t.Errorf("error result sent as %v", blocks)
	}
	if _, ok := blocks[1]["content"]; ok || len(blocks) != 2 {
		t.Errorf("empty result that is no error sent as %v", blocks[1])
	}
	if !slices.ContainsFunc(res.Meta.GetWarnings(), func(w string) bool { return strings.Contains(w, "an error tool result without content") }) {
		t.Errorf("no warning: %q", res.Meta.GetWarnings())
	}
}
