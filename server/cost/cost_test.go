package cost

import (
	"math"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
)

func price(n int64) *config.Price { return &config.Price{Nanos: n} }

func TestOf(t *testing.T) {
	t.Parallel()
	full := New(&config.Prices{Currency: "EUR", Input: price(2_500_000_000), CachedInput: price(1_250_000_000),
		CacheWrite: price(3_750_000_000), Output: price(10_000_000_000), Reasoning: price(12_000_000_000)})
	flash := New(&config.Prices{Input: price(75_000_000), Output: price(300_000_000)})
	for _, tc := range []struct {
		name  string
		table *Table
		usage *llmrelayv1.Usage
		want  int64
	}{
		// 1000 plain input at 2.5/M = 2500000 nanos; 200 cached at 1.25/M = 250000;
		// 100 written at 3.75/M = 375000; 300 plain output at 10/M = 3000000;
		// 100 reasoning at 12/M = 1200000.
		{"every class", full, &llmrelayv1.Usage{InputTokens: 1300, CachedInputTokens: 200, CacheCreationInputTokens: 100, OutputTokens: 400, ReasoningTokens: 100}, 7_325_000},
		// $0.075/M is 75 nanos a token: exact.
		{"cheap model exact", flash, &llmrelayv1.Usage{InputTokens: 7, OutputTokens: 3}, 7*75 + 3*300},
		// Unset class prices fall back: cached at input, reasoning at output.
		{"fallback prices", flash, &llmrelayv1.Usage{InputTokens: 10, CachedInputTokens: 4, OutputTokens: 5, ReasoningTokens: 5}, 10*75 + 5*300},
		// 1 token at 0.0000005/M = 0.0005 nanos rounds to 0; 1000 tokens to 1 (0.5 half up).
		{"rounding down", New(&config.Prices{Input: price(500), Output: price(0)}), &llmrelayv1.Usage{InputTokens: 1}, 0},
		{"rounding half up", New(&config.Prices{Input: price(500), Output: price(0)}), &llmrelayv1.Usage{InputTokens: 1000}, 1},
		{"inconsistent counts clamp", flash, &llmrelayv1.Usage{InputTokens: 1, CachedInputTokens: 5, OutputTokens: -3}, 5 * 75},
		{"huge", New(&config.Prices{Input: price(1e15), Output: price(1e15)}), &llmrelayv1.Usage{InputTokens: math.MaxInt32, OutputTokens: math.MaxInt32}, 2 * math.MaxInt32 * 1e9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := tc.table.Of(tc.usage)
			if got.GetAmountNanos() != tc.want || got.GetCurrency() != tc.table.Currency {
				t.Errorf("cost = %v, want %d %s", got, tc.want, tc.table.Currency)
			}
		})
	}
	if flash.Currency != "USD" {
		t.Errorf("default currency = %q", flash.Currency)
	}
	if (*Table)(nil).Of(&llmrelayv1.Usage{InputTokens: 1}) != nil || flash.Of(nil) != nil || New(nil) != nil {
		t.Error("no table or no usage should cost nothing (nil)")
	}
}

func TestSum(t *testing.T) {
	t.Parallel()
	usd := func(n int64) *llmrelayv1.Cost { return &llmrelayv1.Cost{Currency: "USD", AmountNanos: n} }
	s, err := Sum(nil, usd(5))
	if err != nil || s.GetAmountNanos() != 5 {
		t.Fatalf("nil + 5 = %v, %v", s, err)
	}
	if s, err = Sum(s, usd(7)); err != nil || s.GetAmountNanos() != 12 || s.GetCurrency() != "USD" {
		t.Fatalf("5 + 7 = %v, %v", s, err)
	}
	if s, err = Sum(s, nil); err != nil || s.GetAmountNanos() != 12 {
		t.Fatalf("12 + nil = %v, %v", s, err)
	}
	if _, err := Sum(s, &llmrelayv1.Cost{Currency: "EUR", AmountNanos: 1}); err == nil {
		t.Error("USD + EUR added")
	}
	if s, _ := Sum(usd(math.MaxInt64), usd(1)); s.GetAmountNanos() != math.MaxInt64 {
		t.Errorf("overflow = %d", s.GetAmountNanos())
	}
}
