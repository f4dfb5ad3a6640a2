package openai

import (
	"context"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

const r24GoogleCompat = "https://generativelanguage.googleapis.com/v1beta/openai"

// r24GeminiThought is the reasoning of the thought fixtures: the three
// thought summaries, without the "<thought>" that opens the first.
var r24GeminiThought = strings.Join([]string{
	"**Defining the Greeting**\n\nI've determined the input, \"你好,\" is a basic greeting. I've analyzed its context as the commencement of a dialogue, which dictates a polite response is needed. My next step will be selecting a suitable reply to continue the conversation.\n\n\n",
	"**Selecting a Response**\n\nI've decided \"你好！\" is the direct and suitable answer. I'm now exploring how to smoothly transition the response into offering assistance, considering phrases like \"很高兴能帮助你\" for a welcoming tone. I'm also planning to be more proactive in offering help and guiding the dialogue.\n\n\n",
	"**Finalizing the Greeting**\n\nI've refined the response to \"你好！有什么我可以帮助你的吗？\" after considering various options. This is direct yet friendly, transitioning smoothly to offering assistance. I believe this balanced approach sets a positive tone for user interaction and encourages further communication. I'm now ready to proceed based on this finalized opening.\n\n\n",
}, "")

// TestRound24GeminiCompatThoughtTags: Google's OpenAI-compatible endpoint
// asked for thought summaries (extra_body google.thinking_config
// include_thoughts, sent through provider_options.extra_body) writes them
// into the content: the first thought delta opens with "<thought>", each
// thought delta is marked extra_content.google.thought, and the answer's
// first delta opens with "</thought>" (dialect_gemini_compat_thought_stream,
// the chunks of a published capture; the unary form hand-built from it).
// **Bug:** the tags and the thoughts were relayed as the answer's text.
// Now the block is the answer's reasoning and the text after it the text,
// unary and streamed alike.
func TestRound24GeminiCompatThoughtTags(t *testing.T) {
	t.Parallel()
	const answer = "你好！有什么我可以帮助你的吗？"
	req := r22Ask("gemini-2.5-flash", "你好")

	srv := providertest.ReplayFile(t, td("dialect_gemini_compat_thought_stream.http"))
	s, err := newHostProvider(t, r24GoogleCompat, srv.URL).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	evs, rendered, err := collect(t, s)
	if err != nil {
		t.Fatal(err)
	}
	providertest.Golden(t, td("dialect_gemini_compat_thought_stream.golden"), rendered)
	f := accFold(t, evs)
	if r, a := r21cParts(t, f.Message); r != r24GeminiThought || a != answer {
		t.Errorf("streamed reasoning %q, text %q", r, a)
	}
	if len(f.Meta.GetWarnings()) != 0 {
		t.Errorf("warnings %v", f.Meta.GetWarnings())
	}
	wantFinish(t, f.Meta, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")

	srv = providertest.ReplayFile(t, td("dialect_gemini_compat_thought.http"))
	res, err := newHostProvider(t, r24GoogleCompat, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	providertest.Golden(t, td("dialect_gemini_compat_thought.golden"), renderResult(t, res))
	parts := res.Message.GetParts()
	if len(parts) != 2 || parts[0].GetReasoning().GetText() != r24GeminiThought || parts[1].GetText() != answer {
		t.Errorf("unary parts %v", parts)
	}

	// Elsewhere the tags are not markup: another server's "<thought>" is
	// its text (no server but Google's is known to write them).
	srv = providertest.ReplayFile(t, td("dialect_gemini_compat_thought.http"))
	res, err = newHostProvider(t, "https://api.example.com/v1", srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if parts := res.Message.GetParts(); len(parts) != 1 || !strings.HasPrefix(parts[0].GetText(), "<thought>**Defining") {
		t.Errorf("another host's parts %v", parts)
	}
}
