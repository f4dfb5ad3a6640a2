package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// DroppedItemWarning is the warning of a provider item (Part.provider_item)
// of messages[i].parts[j] that a format has no place for: it is not sent.
// Items of another provider type never reach an adapter (the gateway drops
// them); an item without a provider, or one of the deployment's type sent
// to a format of that type that cannot carry it (an OpenAI Responses item
// to Chat Completions), is dropped here.
func DroppedItemWarning(i, j int, it *llmrelayv1.ProviderItem, format string) string {
	from := ""
	if it.GetProvider() != "" {
		from = " from " + it.GetProvider()
	}
	return fmt.Sprintf("messages[%d].parts[%d]: provider item %s%s not sent: %s has no place for it", i, j, it.GetType(), from, format)
}

// ItemJSON is a provider item's JSON as the contract carries it: the
// item as sent, compacted (a body's indentation is not the item's), with
// any byte sequence that is not UTF-8 replaced by U+FFFD, as a JSON
// decoder reads it (protobuf strings are UTF-8). ok is false when b is
// not one JSON object.
func ItemJSON(b []byte) (string, bool) {
	var c bytes.Buffer
	if err := json.Compact(&c, b); err != nil || c.Len() == 0 || c.Bytes()[0] != '{' {
		return "", false
	}
	if utf8.Valid(c.Bytes()) {
		return c.String(), true
	}
	return strings.ToValidUTF8(c.String(), "\uFFFD"), true
}
