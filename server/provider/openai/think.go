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

// flushThink releases what the think splitter holds, a prefilled block
// never closed first (provider.ThinkSplitter.FlushPrefilled: text) then
// the rest (Flush). Not inlined: handle and delta, whose frames an idle
// stream's stack keeps, call it (server's TestIdleStreamStack).
//
//go:noinline
func (s *chatStream) flushThink() {
	if t := s.think.FlushPrefilled(); t != "" {
		s.push(&provider.Event{Kind: provider.EventText, Text: t})
	}
	s.pushThink(s.think.Flush())
}
