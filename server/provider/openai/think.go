package openai

import "github.com/llmrelay/llmrelay/server/provider"

// pushThink queues the events of a released reasoning and text pair.
func (s *chatStream) pushThink(reasoning, text string) {
	if reasoning != "" {
		s.push(&provider.Event{Kind: provider.EventReasoning, Reasoning: provider.ReasoningDelta{Text: reasoning}})
	}
	if text != "" {
		s.push(&provider.Event{Kind: provider.EventText, Text: text, Phase: s.textPhase()})
	}
}

// textPhase is the phase of the content deltas' text (rareState.phase).
func (s *chatStream) textPhase() string {
	if s.rare == nil {
		return ""
	}
	return s.rare.phase
}

// flushThink releases what the think splitter holds, a prefilled block
// never closed first (provider.ThinkSplitter.FlushPrefilled: text) then
// the rest (Flush). Not inlined: handle and delta, whose frames an idle
// stream's stack keeps, call it (server's TestIdleStreamStack).
//
//go:noinline
func (s *chatStream) flushThink() {
	if t := s.think.FlushPrefilled(); t != "" {
		s.push(&provider.Event{Kind: provider.EventText, Text: t, Phase: s.textPhase()})
	}
	s.pushThink(s.think.Flush())
}

// beforeCalls is what a call's first event waits for: the content held
// back before it goes first, unless that content may be a prefilled think
// block (Prefill) the call came in the middle of (Together's tool parser
// cuts a call out of unparsed reasoning: testdata/
// real_maruel_together_qwen_thinking_sqrt_stream_1.http). Then the
// content stays held and the calls' events are held too (holdCall), so
// that a "</think>" after the call makes the content before and after it
// reasoning, and the calls come after the text that follows the block, as
// the unary answer of the same content has them.
//
//go:noinline
func (s *chatStream) beforeCalls() {
	if s.think.Prefilling() {
		s.rareOf().holdCalls = true
		return
	}
	s.flushThink()
}

// pushCall queues a call's event (or a finish reason's, which follows
// them), or holds it while calls are held (beforeCalls). Held arguments past maxPrefilledHold release the content
// held (as text) and the calls: the stream holds at most that much of
// them. Not inlined: delta's frame is the idle stream's.
//
//go:noinline
func (s *chatStream) pushCall(ev *provider.Event) {
	r := s.rare
	if r == nil || !r.holdCalls {
		s.push(ev)
		return
	}
	r.heldCalls = append(r.heldCalls, ev)
	r.heldCallBytes += len(ev.ToolCall.Arguments)
	if r.heldCallBytes > maxPrefilledHold {
		s.flushThink()
		s.releaseCalls()
	}
}

// releaseCalls queues the calls' events held (beforeCalls), in order,
// after what the think splitter released; later calls are relayed as
// they come.
func (s *chatStream) releaseCalls() {
	r := s.rare
	if r == nil || !r.holdCalls {
		return
	}
	r.holdCalls = false
	for _, ev := range r.heldCalls {
		s.push(ev)
	}
	clear(r.heldCalls)
	r.heldCalls, r.heldCallBytes = r.heldCalls[:0], 0
}

// finishThink releases, at a finish reason, what the think splitter holds
// and the calls held after it; but while calls are held in the middle of
// a prefilled think block, the block goes on: Together sends the finish
// "tool_calls" of a call cut out of the reasoning, then the rest of the
// reasoning, "</think>", the text and a second finish. The finish's own
// event is held after the calls (pushCall), so that no finish comes
// before the calls it names. What is still held at the end of the stream
// is released then (end).
//
//go:noinline
func (s *chatStream) finishThink() {
	if s.rare != nil && s.rare.holdCalls && s.think.Prefilling() {
		return
	}
	s.flushThink()
	s.releaseCalls()
}
