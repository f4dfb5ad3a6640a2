package provider

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/llmrelay/llmrelay/internal/jsonscan"
)

// ArgumentsText is a tool call's arguments as the contract carries them:
// the value of a JSON string when the provider sent the arguments as a
// string, else the JSON it sent, compacted with its key order kept (or
// verbatim when it is not JSON). Absent or null arguments give ifNull
// (providers that always send an object mean "{}"; OpenAI's arguments are
// a string, absent means ""). The text is valid UTF-8 in every case: raw
// JSON may carry bytes that are not, and a proto string may not
// (fold.ValidArguments then tells whether it is a JSON object).
func ArgumentsText(raw json.RawMessage, ifNull string) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return ifNull
	}
	if t[0] == '"' {
		// A plain string, the common case, without reflection (jsonscan
		// decodes what it accepts as encoding/json does).
		sc := jsonscan.Scanner{B: t}
		var scratch []byte
		if s, _, ok := sc.String(&scratch, ""); ok && sc.End() {
			return s
		}
		var s string
		if json.Unmarshal(t, &s) == nil {
			return s // encoding/json already replaced invalid UTF-8
		}
	}
	var c bytes.Buffer
	if json.Compact(&c, t) == nil {
		t = c.Bytes()
	}
	return strings.ToValidUTF8(string(t), "\uFFFD")
}
