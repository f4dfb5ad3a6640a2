package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Prices are a model's prices per million tokens, in Currency. Input and
// Output are required; cached input, cache writes and reasoning tokens
// cost the input (cached input, cache writes) or output (reasoning) price
// when unset.
type Prices struct {
	// Currency is an ISO 4217 code; default USD.
	Currency    string `yaml:"currency"`
	Input       *Price `yaml:"input"`
	CachedInput *Price `yaml:"cached_input"`
	CacheWrite  *Price `yaml:"cache_write"`
	Output      *Price `yaml:"output"`
	Reasoning   *Price `yaml:"reasoning"`
}

// Price is a price per million tokens, read exactly from its decimal text
// (0.075 is 75000000 nano-units, with no float rounding on the way).
type Price struct {
	// Nanos is the price per million tokens in billionths of the currency.
	Nanos int64
}

// maxPriceNanos bounds a price (1,000,000 currency units per million
// tokens), so that no cost computation overflows.
const maxPriceNanos = 1_000_000 * 1_000_000_000

// UnmarshalYAML implements yaml.Unmarshaler.
func (p *Price) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: a price must be a decimal number", n.Line)
	}
	v, err := parseNanos(n.Value, maxPriceNanos)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			err = fmt.Errorf("more than %d per million tokens", maxPriceNanos/1_000_000_000)
		}
		return fmt.Errorf("line %d: price %q: %w", n.Line, n.Value, err)
	}
	p.Nanos = v
	return nil
}

// errTooLarge is parseNanos's error for an amount over its bound.
var errTooLarge = errors.New("too large")

// parseNanos reads a non-negative decimal with at most nine fractional
// digits as an integer number of billionths, at most max (below 2^63).
func parseNanos(s string, max int64) (int64, error) {
	whole, frac, _ := strings.Cut(strings.TrimSpace(s), ".")
	if whole == "" && frac == "" || strings.HasPrefix(whole, "-") || strings.HasPrefix(whole, "+") {
		return 0, fmt.Errorf("want a non-negative decimal number like 2.50")
	}
	if len(frac) > 9 {
		return 0, fmt.Errorf("at most nine decimals")
	}
	var w, f uint64
	var err error
	if whole != "" {
		if w, err = strconv.ParseUint(whole, 10, 64); err != nil {
			return 0, fmt.Errorf("want a non-negative decimal number like 2.50")
		}
	}
	if frac != "" {
		if f, err = strconv.ParseUint(frac, 10, 64); err != nil {
			return 0, fmt.Errorf("want a non-negative decimal number like 2.50")
		}
		f *= uint64(math.Pow10(9 - len(frac)))
	}
	if w > uint64(max)/1e9 || w*1e9+f > uint64(max) {
		return 0, errTooLarge
	}
	return int64(w*1e9 + f), nil
}

func (p *Prices) validate(where string) []error {
	var errs []error
	if p.Currency != "" && !isCurrencyCode(p.Currency) {
		errs = append(errs, fmt.Errorf("%s.currency: %q is not an ISO 4217 code like USD", where, p.Currency))
	}
	if p.Input == nil {
		errs = append(errs, fmt.Errorf("%s.input: required (per million input tokens)", where))
	}
	if p.Output == nil {
		errs = append(errs, fmt.Errorf("%s.output: required (per million output tokens)", where))
	}
	return errs
}

// isCurrencyCode reports whether c looks like an ISO 4217 code (three
// capital letters).
func isCurrencyCode(c string) bool {
	return len(c) == 3 && !strings.ContainsFunc(c, func(r rune) bool { return r < 'A' || r > 'Z' })
}

// CurrencyCode is the currency with its default.
func (p *Prices) CurrencyCode() string {
	if p.Currency == "" {
		return "USD"
	}
	return p.Currency
}

// Amount is a sum of money read exactly from its decimal text, like a
// Price ("5.00" is 5000000000 nano-units).
type Amount struct {
	// Nanos is the amount in billionths of the currency.
	Nanos int64
}

// maxAmountNanos bounds an amount (a billion currency units), so that
// charging calls against it cannot overflow an int64.
const maxAmountNanos = 1_000_000_000 * 1_000_000_000

// UnmarshalYAML implements yaml.Unmarshaler.
func (a *Amount) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: an amount must be a decimal number", n.Line)
	}
	v, err := parseNanos(n.Value, maxAmountNanos)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			err = fmt.Errorf("more than %d", maxAmountNanos/1_000_000_000)
		}
		return fmt.Errorf("line %d: amount %q: %w", n.Line, n.Value, err)
	}
	a.Nanos = v
	return nil
}

// String is the amount as a decimal with at least two places ("5.00",
// "0.125").
func (a Amount) String() string {
	s := fmt.Sprintf("%d.%09d", a.Nanos/1e9, a.Nanos%1e9)
	for strings.HasSuffix(s, "0") && len(s)-strings.IndexByte(s, '.') > 3 {
		s = s[:len(s)-1]
	}
	return s
}
