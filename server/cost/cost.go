// Package cost prices a call's token usage from the model's configured
// price table, exactly: integer nano-units of the currency, never floats.
package cost

import (
	"fmt"
	"math"
	"math/bits"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
)

// Table is one model's prices per million tokens, in nano-units.
type Table struct {
	Currency    string
	Input       int64
	CachedInput int64
	CacheWrite  int64
	Output      int64
	Reasoning   int64
}

// New builds the table of a model's configured prices; nil when the model
// has none. Unset cached-input and cache-write prices are the input
// price, an unset reasoning price the output price.
func New(p *config.Prices) *Table {
	if p == nil || p.Input == nil || p.Output == nil {
		return nil
	}
	t := &Table{Currency: p.CurrencyCode(), Input: p.Input.Nanos, Output: p.Output.Nanos}
	t.CachedInput, t.CacheWrite, t.Reasoning = t.Input, t.Input, t.Output
	if p.CachedInput != nil {
		t.CachedInput = p.CachedInput.Nanos
	}
	if p.CacheWrite != nil {
		t.CacheWrite = p.CacheWrite.Nanos
	}
	if p.Reasoning != nil {
		t.Reasoning = p.Reasoning.Nanos
	}
	return t
}

// Of is what usage u cost; nil without a table or usage. Usage is the
// normalized one: input tokens include cached and cache-write tokens,
// output tokens include reasoning tokens; each token is priced once, at
// its own class's price. The sum over the classes is divided by a million
// once and rounded half up to a nano-unit.
func (t *Table) Of(u *llmrelayv1.Usage) *llmrelayv1.Cost {
	if t == nil || u == nil {
		return nil
	}
	cached := nonNeg(u.GetCachedInputTokens())
	written := nonNeg(u.GetCacheCreationInputTokens())
	reasoning := nonNeg(u.GetReasoningTokens())
	plainIn := max(nonNeg(u.GetInputTokens())-cached-written, 0)
	plainOut := max(nonNeg(u.GetOutputTokens())-reasoning, 0)
	var hi, lo uint64
	add := func(tokens, price int64) {
		h, l := bits.Mul64(uint64(tokens), uint64(price))
		var c uint64
		lo, c = bits.Add64(lo, l, 0)
		hi += h + c
	}
	add(plainIn, t.Input)
	add(cached, t.CachedInput)
	add(written, t.CacheWrite)
	add(plainOut, t.Output)
	add(reasoning, t.Reasoning)
	var c uint64
	lo, c = bits.Add64(lo, 500_000, 0) // half up
	hi += c
	// The classes split the input and the output counts (int32 each) and
	// prices are at most 1e15 (config), so the sum is below 2^32·1e15:
	// hi < 1e6, Div64 cannot overflow, and the quotient (below 4.3e18)
	// fits an int64.
	q, _ := bits.Div64(hi, lo, 1_000_000)
	return &llmrelayv1.Cost{Currency: t.Currency, AmountNanos: int64(q)}
}

func nonNeg(v int32) int64 { return max(int64(v), 0) }

// Sum adds b to a (an agent run's calls); nil operands are zero. Amounts
// in different currencies cannot be added: that is an error.
func Sum(a, b *llmrelayv1.Cost) (*llmrelayv1.Cost, error) {
	switch {
	case b == nil:
		return a, nil
	case a == nil:
		return &llmrelayv1.Cost{Currency: b.GetCurrency(), AmountNanos: b.GetAmountNanos()}, nil
	case a.GetCurrency() != b.GetCurrency():
		return a, fmt.Errorf("cost: cannot add %s to %s", b.GetCurrency(), a.GetCurrency())
	}
	s := a.GetAmountNanos() + b.GetAmountNanos()
	if s < a.GetAmountNanos() {
		s = math.MaxInt64
	}
	return &llmrelayv1.Cost{Currency: a.GetCurrency(), AmountNanos: s}, nil
}
