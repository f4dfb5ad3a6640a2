package openai

import (
	"fmt"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// cutBy says what stopped an answer mid-output, from its finish reason
// ("" when the answer ended on its own): the token limit (length,
// max_tokens) or a content filter (content_filter, Z.ai's sensitive). A
// tool call the answer stopped in has partial arguments even when they
// parse (a cut after a complete value: `{"a":1}` of `{"a":1,"b":2}`): a
// filter that stops the generation stops it where it is, a call being
// written included, as the token limit does. Azure's asynchronous filter
// blocking an answer after the model's own finish (stop, tool_calls: the
// finish made content_filter by tellBlock, the model's kept in
// provider_finish_reason) is no cut: the model finished its calls, and
// the finish says the answer was blocked.
func cutBy(finish string) string {
	switch mapFinishReason(finish) {
	case llmrelayv1.FinishReason_FINISH_REASON_LENGTH:
		return "the token limit"
	case llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER:
		return "a content filter"
	}
	return ""
}

// cutCallWarning is the warning of a call whose arguments the answer's end
// cut.
func cutCallWarning(id, cut string) string {
	return fmt.Sprintf("tool call %s was cut by %s; its arguments are partial", id, cut)
}

// cutLastCall flags the last part of a unary answer cut by cut (cutBy)
// when it is a tool call: the call being written when the answer stopped,
// arguments_valid false even when its arguments parse, as the stream
// reports it (chatStream.endCalls). It returns the warning, "" when
// nothing was flagged.
func cutLastCall(msg *llmrelayv1.Message, cut string) string {
	if cut == "" || msg == nil || len(msg.Parts) == 0 {
		return ""
	}
	tc := msg.Parts[len(msg.Parts)-1].GetToolCall()
	if tc == nil {
		return ""
	}
	tc.ArgumentsValid = false
	return cutCallWarning(tc.CallId, cut)
}

// cutChatLastCall flags the last call of a Chat Completions answer cut by
// cut (cutBy) unless text followed it: a call followed by text was
// whole when its arguments parse, and the text is what the limit stopped
// (only the call still open at the cut is cut). The stream knows whether
// content came after the call (callState.textAfter); the unary answer,
// whose content and tool_calls are separate fields, only whether it has
// content (hasText), which servers that parse calls out of the generated
// text give whole, what came after a call included. A call whose
// arguments do not parse is cut either way. It returns the warning, ""
// when nothing was flagged.
func cutChatLastCall(msg *llmrelayv1.Message, cut string, hasText bool) string {
	if n := len(msg.GetParts()); hasText && n > 0 && msg.Parts[n-1].GetToolCall().GetArgumentsValid() {
		return ""
	}
	return cutLastCall(msg, cut)
}

// incompleteCut is what cut a Responses call whose item or response is
// incomplete for a reason other than the token limit.
const incompleteCut = "an incomplete response"

// itemCut is what cut a function_call item ("" when it is whole): an item
// with status "incomplete" was being written when the response stopped.
func itemCut(it *respOutputItem) string {
	if it.Status == "incomplete" {
		return incompleteCut
	}
	return ""
}

// respCut is what stopped a response mid-output ("" when it is not
// incomplete): its last call, if still open, is cut.
func respCut(w *respResponse) string {
	if w.Status != "incomplete" {
		return ""
	}
	if w.IncompleteDetails != nil {
		switch w.IncompleteDetails.Reason {
		case "max_output_tokens":
			return "the token limit"
		case "content_filter":
			return "a content filter" // as a chat content_filter finish (cutBy)
		}
	}
	return incompleteCut
}
