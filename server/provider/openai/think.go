package openai

import "github.com/llmrelay/llmrelay/server/provider"

// pushThink queues the events of a released reasoning and text pair.
func (s *chatStream) pushThink(reasoning, text string) {
	if reasoning != "" {
		s.push(&provider.Event{Kind: provider.EventReasoning, Reasoning: provider.ReasoningDelta{Text: reasoning}})
	}
	if text != "" {
		s.push(&provider.Event{Kind: provider.EventText, Text: text})
	}
}
