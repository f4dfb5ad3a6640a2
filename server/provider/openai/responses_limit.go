package openai

import (
	"encoding/json"
	"fmt"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// Servers that serve /v1/responses over their own generation loop report
// "completed" whatever stopped it: Ollama's converter
// (ollama/ollama openai/responses.go, ToResponse and
// ResponsesStreamConverter.processCompletion, status "completed" and
// incomplete_details null always, the request's max_output_tokens echoed)
// and llama.cpp's (tools/server/server-task.cpp, to_json_oaicompat_resp
// and to_json_oaicompat_resp_stream: status "completed", no
// incomplete_details) both drop the runner's "length" stop. Both count
// every generated token in output_tokens (Ollama's eval_count, llama.cpp's
// n_decoded) and stop at exactly the limit (num_predict, n_predict: the
// request's max_output_tokens), so a "completed" answer whose output_tokens
// equal the limit was cut by it. OpenAI and Azure report such an answer
// "incomplete" (max_output_tokens) themselves, and are believed. LiteLLM's
// proxy says "incomplete" without a reason for a cut and for a filtered
// answer alike (limitCutHidden): the same count tells them apart.

// limitOf is the output token limit of a response: the one it echoes
// (max_output_tokens, as Ollama and OpenAI echo the request's; null for
// none), else, when it has no such field (llama.cpp's), the one the
// request asked for (asked); 0 for none.
func limitOf(w *respResponse, asked int32) int64 {
	if w.MaxOutputTokens == nil {
		return int64(asked)
	}
	return echoedLimit(w.MaxOutputTokens)
}

// echoedLimit is the limit a response's max_output_tokens echoes: 0 for
// null or a value that is not a positive integer.
func echoedLimit(raw json.RawMessage) int64 {
	var n flexInt
	if !isPresent(raw) || json.Unmarshal(raw, &n) != nil || n <= 0 {
		return 0
	}
	return int64(n)
}

// limitCutHidden reports whether a response the server says "completed"
// used exactly its output token limit (limitOf): cut by the limit, which
// servers other than OpenAI and Azure may not say (see above). ""
// when not, else the warning that says so.
func (p *Provider) limitCutHidden(w *respResponse, asked int32) string {
	if p.openAI || p.azure || w.Usage == nil || (w.IncompleteDetails != nil && w.IncompleteDetails.Reason != "") {
		return ""
	}
	switch w.Status {
	case "completed":
		limit := limitOf(w, asked)
		if limit <= 0 || int64(w.Usage.OutputTokens) != limit {
			return ""
		}
		return fmt.Sprintf("the response is reported %q but used all %d output tokens allowed (max_output_tokens): "+
			"it was cut by the token limit (Ollama's and llama.cpp's /v1/responses report %q whatever stopped the answer)",
			w.Status, limit, w.Status)
	case "incomplete":
		// LiteLLM's proxy serving /v1/responses over a Chat Completions
		// model says "incomplete" for a "length" and a "content_filter"
		// finish alike, with incomplete_details and max_output_tokens
		// null (litellm/responses/litellm_completion_transformation/
		// transformation.py, transform_chat_completion_response_to_
		// responses_api_response and _map_chat_completion_finish_reason_
		// to_responses_status): its echo says nothing, the request's
		// limit is the one.
		limit := echoedLimit(w.MaxOutputTokens)
		if limit <= 0 {
			limit = int64(asked)
		}
		if limit <= 0 || int64(w.Usage.OutputTokens) != limit {
			return ""
		}
		return fmt.Sprintf("the response is reported %q without a reason and used all %d output tokens allowed (max_output_tokens): "+
			"it was cut by the token limit", w.Status, limit)
	}
	return ""
}

// limitCutFinish is the finish of a response limitCutHidden found cut:
// the provider's own status kept as its finish reason, LENGTH as the
// normalized one (tool calls do not make it TOOL_CALLS: the last one may
// be partial).
func limitCutFinish(w *respResponse) (string, llmrelayv1.FinishReason) {
	return w.Status, llmrelayv1.FinishReason_FINISH_REASON_LENGTH
}

// cutByLimit is what cut the last call of a response limitCutHidden found
// cut (cutCallWarning).
const cutByLimit = "the token limit"
