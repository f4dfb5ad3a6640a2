package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/llmrelay/llmrelay/server/provider"
)

// isItemBlock reports whether an answer's content block of this type is
// a provider item (Part.provider_item): a block the contract has no type
// for that must go back unchanged in later turns. These are the blocks of
// tools Anthropic runs itself (server_tool_use, mcp_tool_use and every
// `*_tool_result`: web_search, web_fetch, code_execution,
// bash_code_execution, text_editor_code_execution, tool_search,
// advisor, mcp), container_upload and compaction (anthropic-sdk-python
// src/anthropic/types/beta/beta_content_block.py). A turn paused by
// pause_turn continues only when the next request holds them.
func isItemBlock(typ string) bool {
	switch typ {
	case "server_tool_use", "mcp_tool_use", "container_upload", "compaction":
		return true
	}
	return typ != "tool_result" && strings.HasSuffix(typ, "_tool_result")
}

// itemNote says, for a warning, what a server tool block reports that a
// caller reading only the normalized answer would miss: a failed server
// tool, or the files its code execution wrote ("" for other blocks).
func itemNote(b *contentBlock) string {
	if !strings.HasSuffix(b.Type, "_tool_result") {
		return ""
	}
	if failure := serverToolFailure(b); failure != "" {
		return fmt.Sprintf("type %q (result of %s, a tool the provider ran itself, which failed: %s); kept as a provider item", b.Type, b.ToolUseID, failure)
	}
	if files := serverToolFiles(b); files != "" {
		return fmt.Sprintf("type %q (result of %s, a tool the provider ran itself, which wrote %s); kept as a provider item (fetch the files through the Files API)", b.Type, b.ToolUseID, files)
	}
	if stop := subInferenceStop(b); stop != "" {
		return fmt.Sprintf("type %q (result of %s, a tool the provider ran itself, whose own answer stopped at %q: it may be incomplete, and the answer after it rests on it); kept as a provider item", b.Type, b.ToolUseID, stop)
	}
	return ""
}

// subInferenceStop is the stop reason of a server tool's result written
// by a model of its own (the advisor's advisor_result and
// advisor_redacted_result: "the advisor sub-inference's stop reason (same
// values as the top-level message stop_reason). max_tokens indicates the
// advisor's output was truncated at the tool's max_tokens value or the
// advisor model's policy cap", Anthropic's SDK reference) when it did not
// end whole: "" for end_turn and stop_sequence (a whole answer) and for a
// result without one (recorded results say end_turn,
// testdata/real_pyd_anthropic_advisor_tool_stream).
func subInferenceStop(b *contentBlock) string {
	var c struct {
		StopReason *string `json:"stop_reason"`
	}
	if json.Unmarshal(b.Content, &c) != nil || c.StopReason == nil {
		return ""
	}
	switch stop := *c.StopReason; stop {
	case "", "end_turn", "stop_sequence":
		return ""
	default:
		return provider.Shorten(strings.ToValidUTF8(stop, "\uFFFD"), 64)
	}
}

// rawContent returns the `content` blocks of a message body as sent, for
// the provider items (decoded only when an answer has one).
func rawContent(body []byte) ([]json.RawMessage, error) {
	var v struct {
		Content []json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, err
	}
	return v.Content, nil
}

// itemState is a streamed provider item block: its content_block_start
// block as sent, the input_json_delta text of a server or MCP tool call,
// and the compaction_delta pieces of a compaction block.
type itemState struct {
	start      json.RawMessage
	input      strings.Builder
	gotInput   bool
	content    strings.Builder
	gotContent bool
	encrypted  *string
}

// item rebuilds the block at its end: the start block with `input`
// replaced by the input_json_delta text when fragments came (the start
// holds {}), and a compaction's `content` by its deltas joined and its
// `encrypted_content` by the last one sent, as the SDKs accumulate them.
// Keys keep their values as sent; their order is the encoder's.
func (it *itemState) item(typ string) (provider.ProviderItem, error) {
	if !it.gotInput && !it.gotContent && it.encrypted == nil {
		js, ok := provider.ItemJSON(it.start)
		if !ok {
			return provider.ProviderItem{}, fmt.Errorf("the block is not a JSON object")
		}
		return provider.ProviderItem{Type: typ, JSON: js}, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(it.start, &fields); err != nil {
		return provider.ProviderItem{}, err
	}
	if it.gotInput {
		in := it.input.String()
		if strings.TrimSpace(in) == "" {
			in = "{}"
		}
		if !json.Valid([]byte(in)) {
			return provider.ProviderItem{}, fmt.Errorf("its input_json_delta text is not JSON")
		}
		fields["input"] = json.RawMessage(in)
	}
	if it.gotContent {
		prev := ""
		if c, ok := fields["content"]; ok && string(bytes.TrimSpace(c)) != "null" {
			// A string the deltas continue; anything else would be lost
			// under them, so the block is not rebuilt.
			if err := json.Unmarshal(c, &prev); err != nil {
				return provider.ProviderItem{}, fmt.Errorf("its content is not text the deltas could continue: %w", err)
			}
		}
		b, err := json.Marshal(prev + it.content.String())
		if err != nil {
			return provider.ProviderItem{}, err
		}
		fields["content"] = b
	}
	if it.encrypted != nil {
		b, err := json.Marshal(*it.encrypted)
		if err != nil {
			return provider.ProviderItem{}, err
		}
		fields["encrypted_content"] = b
	}
	out, err := json.Marshal(fields)
	if err != nil {
		return provider.ProviderItem{}, err
	}
	js, _ := provider.ItemJSON(out) // an object: marshalled from a map
	return provider.ProviderItem{Type: typ, JSON: js}, nil
}
