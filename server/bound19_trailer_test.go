package server

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestFailedDetailBound: a FailedCallMeta goes in the status within
// maxFailedMetaBytes, shedding in the contract's order (meta.proto) only
// what it must, and says what it left out; the caller's meta is not
// changed (the accounting and logs use it whole).
func TestFailedDetailBound(t *testing.T) {
	base := func() *llmrelayv1.ResponseMeta {
		return &llmrelayv1.ResponseMeta{RequestId: "req-1", ProviderRequestId: "prov-1", Provider: "up", RequestedModel: "m", ResolvedModel: "gpt-4o",
			Attempts: 3, Usage: &llmrelayv1.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15},
			RetryReasons: []*llmrelayv1.RetryReason{{Attempt: 1, Reason: "http_503", Message: strings.Repeat("overloaded ", 10)}}}
	}
	answer := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: strings.Repeat("a", 600)}}}}
	bigAnswer := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: strings.Repeat("a", 6000)}}}}
	ext, _ := structpb.NewStruct(map[string]any{"grounding": strings.Repeat("g", 1000)})
	for _, tc := range []struct {
		name    string
		meta    func() *llmrelayv1.ResponseMeta
		answer  *llmrelayv1.Message
		omitted []string
		check   func(*llmrelayv1.FailedCallMeta) error
	}{
		{name: "fits", meta: func() *llmrelayv1.ResponseMeta {
			m := base()
			m.Raw = &llmrelayv1.RawData{Response: []byte(`{"error":{"message":"bad"}}`)}
			return m
		}, answer: answer, check: func(f *llmrelayv1.FailedCallMeta) error {
			if f.GetMeta().GetRaw() == nil || f.GetMessage() == nil {
				return fmt.Errorf("raw or answer dropped though it fits")
			}
			return nil
		}},
		{name: "raw", meta: func() *llmrelayv1.ResponseMeta {
			m := base()
			m.Raw = &llmrelayv1.RawData{Response: make([]byte, 5000)}
			m.Extended = ext
			return m
		}, answer: answer, omitted: []string{"meta.raw"}, check: func(f *llmrelayv1.FailedCallMeta) error {
			if f.GetMeta().GetExtended() == nil || f.GetMessage() == nil {
				return fmt.Errorf("more than raw dropped")
			}
			return nil
		}},
		{name: "lists", meta: func() *llmrelayv1.ResponseMeta {
			m := base()
			m.Extended = ext
			for i := range 200 {
				m.Warnings = append(m.Warnings, fmt.Sprintf("warning %d of many", i))
			}
			m.RetryReasons[0].Message = strings.Repeat("é", 400)
			return m
		}, answer: answer, omitted: []string{"meta.extended", "meta.warnings", "meta.retry_reasons.message"}, check: func(f *llmrelayv1.FailedCallMeta) error {
			m := f.GetMeta()
			if len(m.GetWarnings()) != keptEntries || m.GetWarnings()[0] != "warning 0 of many" || f.GetMessage() == nil ||
				!strings.HasSuffix(m.GetRetryReasons()[0].GetMessage(), "é…") {
				return fmt.Errorf("warnings %d, answer %v, reason %q", len(m.GetWarnings()), f.GetMessage() != nil, m.GetRetryReasons()[0].GetMessage())
			}
			return nil
		}},
		// A proxy's hundred unified-limit header families: the first
		// windows kept, the rate limit's typed budgets and the rest of
		// the meta with them.
		{name: "windows", meta: func() *llmrelayv1.ResponseMeta {
			m := base()
			m.RateLimit = &llmrelayv1.RateLimit{RequestsRemaining: proto.Int64(0)}
			for i := range 100 {
				m.RateLimit.Windows = append(m.RateLimit.Windows, &llmrelayv1.RateLimitWindow{Budget: "unified",
					Header: fmt.Sprintf("anthropic-ratelimit-unified-w%d", i), Status: "rejected"})
			}
			return m
		}, answer: answer, omitted: []string{"meta.rate_limit.windows"}, check: func(f *llmrelayv1.FailedCallMeta) error {
			rl := f.GetMeta().GetRateLimit()
			if len(rl.GetWindows()) != keptEntries || rl.GetWindows()[0].GetHeader() != "anthropic-ratelimit-unified-w0" || rl.RequestsRemaining == nil ||
				f.GetMessage() == nil || len(f.GetMeta().GetRetryReasons()) != 1 {
				return fmt.Errorf("meta %v, answer %v", f.GetMeta(), f.GetMessage() != nil)
			}
			return nil
		}},
		{name: "answer", meta: base, answer: bigAnswer, omitted: []string{"message"}, check: func(f *llmrelayv1.FailedCallMeta) error {
			if f.GetMeta().GetAttempts() != 3 || len(f.GetMeta().GetRetryReasons()) != 1 {
				return fmt.Errorf("meta %v", f.GetMeta())
			}
			return nil
		}},
		{name: "core", meta: func() *llmrelayv1.ResponseMeta {
			m := base()
			for i := range 40 {
				m.RetryReasons = append(m.RetryReasons, &llmrelayv1.RetryReason{Attempt: int32(i + 2), Reason: "http_503", Message: strings.Repeat("x", 200)})
			}
			m.ResponseId = strings.Repeat("r", 10000) // a provider's, its own to choose
			return m
		}, omitted: []string{"meta"}, check: func(f *llmrelayv1.FailedCallMeta) error {
			m := f.GetMeta()
			if m.GetRequestId() != "req-1" || m.GetProviderRequestId() != "prov-1" || m.GetAttempts() != 3 || m.GetUsage().GetTotalTokens() != 15 ||
				len(m.GetRetryReasons()) != 0 || len(m.GetResponseId()) > keptTextBytes+len("…") {
				return fmt.Errorf("core meta %v", m)
			}
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta := tc.meta()
			before := proto.CloneOf(meta)
			f := failedDetail(meta, tc.answer)
			if n := proto.Size(f); n > maxFailedMetaBytes {
				t.Fatalf("%d bytes", n)
			}
			if !slices.Equal(f.GetOmitted(), tc.omitted) {
				t.Errorf("omitted %q, want %q", f.GetOmitted(), tc.omitted)
			}
			if err := tc.check(f); err != nil {
				t.Error(err)
			}
			if !proto.Equal(meta, before) {
				t.Error("the caller's meta was changed")
			}
		})
	}
}
