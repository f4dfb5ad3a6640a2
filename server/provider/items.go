package provider

import (
	"fmt"

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
