package openai

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// A Responses request's input is not its messages one for one: an
// assistant message becomes a message item per run of text (per item id or
// phase), a function_call item per tool call and a reasoning item per
// reasoning part, a tool message a function_call_output item per result,
// and reasoning items the API could not pair are left out. OpenAI names a
// refused input item by its index ("Invalid 'input[95].call_id': string
// too long. Expected a string with maximum length 64, but got a string
// with length 116 instead.", AnswerDotAI/fastllm#45; "Missing required
// parameter: 'input[0].arguments'."), which only the adapter can turn
// back into the request's message and part: respInputField does, and the
// gateway then shifts messages[k] past the model's configured context as
// for any adapter's path.

// respFrom is where an input item came from: messages[msg], its part
// (-1: the message as a whole), and for a message item the part each of
// its content entries is (-1: none, the empty text sent for no parts); for
// a function_call_output with a list output, the part of the tool result
// each output item is (-1: the result's content).
type respFrom struct {
	msg, part int
	content   []int
}

// respItemFrom is an input item's origin, type, call id and item id, as
// sent.
type respItemFrom struct {
	typ, callID, id string
	respFrom
}

// messageFrom is the origin of a system or user message item: its
// content entries are its parts one for one (encodeInputContent), or the
// one empty text of a message without parts.
func messageFrom(i int, parts []*llmrelayv1.Part) respFrom {
	f := respFrom{msg: i, part: -1, content: make([]int, len(parts))}
	for j := range parts {
		f.content[j] = j
	}
	return f
}

// respFroms is the origin of each item of the input as sent.
func respFroms(in []respInputItem) []respItemFrom {
	out := make([]respItemFrom, len(in))
	for k := range in {
		out[k] = respItemFrom{typ: in[k].Type, callID: in[k].CallID, id: in[k].ID, respFrom: in[k].from}
	}
	return out
}

// extraSetsInput reports whether extra_body replaces the input: its items
// are then not the ones encoded.
func extraSetsInput(extra string) bool {
	if extra == "" {
		return false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(extra), &m) != nil {
		return true // not knowable: no mapping
	}
	_, ok := m["input"]
	return ok
}

// respInputField makes the field of an error of the provider that names
// an input item (param input[k]…) the request's: messages[i], the part
// the item or its content entry was built from, and the part's field
// where the item's field is one ("input[3].call_id" of a function_call
// item is messages[2].parts[1].tool_call.call_id). A path it cannot place
// (an index past the input, an input extra_body replaced) is left as the
// provider gave it; the provider's message keeps its own path. It
// returns err.
func respInputField(err error, froms []respItemFrom) error {
	var pe *provider.Error
	if err == nil || !errors.As(err, &pe) {
		return err
	}
	if pe.Kind == provider.KindNotFound && pe.HTTPStatus == http.StatusNotFound && (pe.Param == "input" || strings.HasPrefix(pe.Param, "input[")) {
		// OpenAI answers an input item it does not have ("Item with id
		// 'rs_…' not found. Items are not persisted when `store` is set to
		// false. …", param input) with 404, the status of an unknown
		// model: the request is what is wrong, as its type,
		// invalid_request_error, says; no model is missing.
		pe.Kind = provider.KindInvalidRequest
	}
	if froms == nil {
		return err
	}
	if pe.Param == "input" {
		// The whole input, the item named in the message instead.
		if f := inputItemInMessage(pe.Message, froms); f != "" {
			pe.Param = f
		}
		return err
	}
	if !strings.HasPrefix(pe.Param, "input[") {
		return err
	}
	idx, rest, ok := strings.Cut(pe.Param[len("input["):], "]")
	if !ok || idx == "" || len(idx) > 9 || strings.Trim(idx, "0123456789") != "" {
		return err
	}
	k, aerr := strconv.Atoi(idx)
	if aerr != nil || k >= len(froms) {
		return err
	}
	if f := froms[k].field(rest); f != "" {
		pe.Param = f
	}
	return err
}

// The refusals of the whole input (param "input") that name one item in
// their message, as OpenAI words them: a call without its output ("No
// tool output found for function call call_uK3eDRSXx9p45csFRjvXDNPq.",
// router-for-me/CLIProxyAPI#2368), an output without its call ("No tool
// call found for function call output with call_id
// call_SjdIRQnfceiXp0D5eZCcjlxW.",
// testdata/real_responses_err_400_no_tool_call.http), a reasoning item
// without the item it led to ("Item 'rs_…' of type 'reasoning' was
// provided without its required following item."), an item sent by its
// id alone that the API does not have ("Item with id 'rs_…' not found.
// Items are not persisted when `store` is set to false. …", 404,
// router-for-me/CLIProxyAPI#2381). typ "" is an item of any type; an
// item named by its id (byID) is quoted, followed by after.
var inputItemMessages = []struct {
	prefix, typ, field, after string
	byID                      bool
}{
	{"No tool output found for function call ", "function_call", ".call_id", "", false},
	{"No tool call found for function call output with call_id ", "function_call_output", ".call_id", "", false},
	{"Item '", "reasoning", "", " of type 'reasoning'", true},
	{"Item with id '", "", ".id", " not found", true},
}

// inputItemInMessage is the request field of the one input item msg
// names, "" when it names none of ours or more than one.
func inputItemInMessage(msg string, froms []respItemFrom) string {
	for _, m := range inputItemMessages {
		rest, ok := strings.CutPrefix(msg, m.prefix)
		if !ok {
			continue
		}
		var key string
		if m.byID {
			id, after, ok := strings.Cut(rest, "'")
			if !ok || !strings.HasPrefix(after, m.after) {
				return ""
			}
			key = id
		} else {
			key, _, _ = strings.Cut(rest, " ")
			key = strings.TrimSuffix(key, ".")
		}
		if key == "" {
			return ""
		}
		found := -1
		for k, f := range froms {
			if (m.typ != "" && f.typ != m.typ) || (m.byID && f.id != key) || (!m.byID && f.callID != key) {
				continue
			}
			if found >= 0 {
				return "" // more than one: not certain which
			}
			found = k
		}
		if found < 0 {
			return ""
		}
		return froms[found].field(m.field)
	}
	return ""
}

// field is the request field of this item's path rest (".call_id",
// ".content[0].text", "" for the item), "" for a field this item type
// does not have as sent (the provider's path is then about another
// input than ours, and left as it is).
func (f respItemFrom) field(rest string) string {
	msg := "messages[" + strconv.Itoa(f.msg) + "]"
	part := func(j int) string { return msg + ".parts[" + strconv.Itoa(j) + "]" }
	name, _, _ := strings.Cut(strings.TrimPrefix(rest, "."), ".")
	name, _, _ = strings.Cut(name, "[")
	if f.typ == "message" {
		first := -1
		for _, j := range f.content {
			if j >= 0 {
				first = j
				break
			}
		}
		switch name {
		case "", "type", "role", "status":
			return msg
		case "content":
			c, _, ok := strings.Cut(strings.TrimPrefix(rest, ".content["), "]")
			if n, err := strconv.Atoi(c); ok && err == nil && n >= 0 && n < len(f.content) && f.content[n] >= 0 {
				return part(f.content[n])
			}
			return msg
		case "id", "phase":
			// An assistant message's item id and phase are its parts'.
			if first < 0 {
				return msg
			}
			if name == "id" {
				return part(first) + ".item_id"
			}
			return part(first) + ".phase"
		}
		return ""
	}
	if f.part < 0 {
		return ""
	}
	var p string
	fields := map[string]string{"": "", "type": "", "status": ""}
	switch f.typ {
	case "function_call":
		p = part(f.part) + ".tool_call"
		fields["call_id"], fields["name"], fields["arguments"] = ".call_id", ".name", ".arguments"
	case "function_call_output":
		p = part(f.part) + ".tool_result"
		fields["call_id"], fields["output"] = ".call_id", ".content"
		if name == "output" && f.content != nil {
			// A result with parts: its output items are the content (-1)
			// and the parts (encodeResultOutput).
			c, _, ok := strings.Cut(strings.TrimPrefix(rest, ".output["), "]")
			n, err := strconv.Atoi(c)
			switch {
			case !ok || err != nil || n < 0 || n >= len(f.content):
				return p
			case f.content[n] < 0:
				return p + ".content"
			}
			return p + ".parts[" + strconv.Itoa(f.content[n]) + "]"
		}
	case "reasoning":
		p = part(f.part) + ".reasoning"
		fields["id"], fields["encrypted_content"], fields["summary"] = ".id", ".signature", ".text"
	default:
		return ""
	}
	sub, ok := fields[name]
	if !ok {
		return ""
	}
	return p + sub
}
