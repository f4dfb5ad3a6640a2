package openai

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// Round 26: M-Lai-ai/LLM-Provider-reference's published curl captures of
// OpenAI-compatible streams (testdata/README.md, "Round 26").

// TestRound26DeepInfraSpacedStream: DeepInfra's /v1/openai endpoint
// (Llama 3.1 70B, November 2024) writes its chunks with Python's
// json.dumps spacing (", " and ": "), "tool_calls": null in every delta,
// the role on every delta, an empty content before the finishing chunk
// (empty delta) and the usage with estimated_cost in exponent notation.
func TestRound26DeepInfraSpacedStream(t *testing.T) {
	t.Parallel()
	req := r22Ask("meta-llama/Meta-Llama-3.1-70B-Instruct", "what is Coca Cola.")
	evs, f, _ := mgbStream(t, "real_mlai_deepinfra_llama31_stream", "https://api.deepinfra.com/v1/openai", "", req)
	r26NoWarnings(t, evs)
	r22Meta(t, f.Meta, "chatcmpl-RXE8YP4fhWBTFLGpZWdMCq34", "", "meta-llama/Meta-Llama-3.1-70B-Instruct", 1732684855,
		&llmrelayv1.Usage{InputTokens: 48, OutputTokens: 189, TotalTokens: 237}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "stop")
	if _, answer := r21cParts(t, f.Message); answer != "Coca Cola is a carbonated soft drinkWould you like to know more about our company or products?" {
		t.Errorf("answer %q", answer)
	}
	r22Ext(t, f.Meta, map[string]any{"usage_details": map[string]any{"estimated_cost": 9.24e-05}})
}

// TestRound26GrokBetaLengthStream: xAI's grok-beta (November 2024) asked
// for 200 tokens: the usage, with its running completion count, on every
// chunk, no finish_reason key until the last text chunk carries "length"
// beside the 200th token's text. The answer is LENGTH, the usage the
// last chunk's.
func TestRound26GrokBetaLengthStream(t *testing.T) {
	t.Parallel()
	req := r22Ask("grok-beta", "what is Coca Cola")
	evs, f, _ := mgbStream(t, "real_mlai_xai_grok_beta_length_stream", "https://api.x.ai/v1", "", req)
	r26NoWarnings(t, evs)
	r22Meta(t, f.Meta, "e409f4cc-6be8-4920-8de4-9849e7c66cd9", "", "grok-beta", 1732551988,
		&llmrelayv1.Usage{InputTokens: 38, OutputTokens: 200, TotalTokens: 238}, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "length")
	if _, answer := r21cParts(t, f.Message); answer != "Coca-Cola is a Vanilla Coke, and many others tailored" {
		t.Errorf("answer %q", answer)
	}
}
