package auth

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
)

func spendToken(limit int64, per string) config.Token {
	return config.Token{Name: "team", SHA256: hashOf("x"), Spend: &config.Spend{Limit: &config.Amount{Nanos: limit}, Per: per}}
}

func usd(nanos int64) *llmrelayv1.Cost { return &llmrelayv1.Cost{Currency: "USD", AmountNanos: nanos} }

func overBudget(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Kind != RateLimited || e.Limit != "spend" {
		t.Fatalf("want a spend refusal, got %v", err)
	}
	return e
}

func TestSpendWindows(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 2, 14, 22, 45, 30, 0, time.UTC)
	for _, c := range []struct {
		per   string
		start time.Time
		rest  time.Duration
	}{
		{"hour", time.Date(2026, 2, 14, 22, 0, 0, 0, time.UTC), 14*time.Minute + 30*time.Second},
		{"day", time.Date(2026, 2, 14, 0, 0, 0, 0, time.UTC), time.Hour + 14*time.Minute + 30*time.Second},
		{"month", time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), 14*24*time.Hour + time.Hour + 14*time.Minute + 30*time.Second},
	} {
		// Another zone's clock reads the same UTC windows.
		start, rest := spendWindow(c.per, now.In(time.FixedZone("x", 5*3600)))
		if start != c.start.Unix() || rest != c.rest {
			t.Errorf("%s: start %v rest %v, want %v %v", c.per, time.Unix(start, 0).UTC(), rest, c.start, c.rest)
		}
	}
}

// A caller is refused once its charged costs reach the budget, until the
// window ends; calls without a cost, or with a cost in another currency,
// charge nothing; a reload with the same budget keeps the spending.
func TestSpendBudgetInProcess(t *testing.T) {
	t.Parallel()
	s, err := New(config.Auth{Tokens: []config.Token{spendToken(5_000_000_000, "day")}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := s.callers[0]
	now := time.Date(2026, 3, 1, 18, 0, 0, 0, time.UTC)
	c.Spend(100, nil, now)                                               // no prices
	c.Spend(0, &llmrelayv1.Cost{Currency: "EUR", AmountNanos: 9e9}, now) // not the budget's currency
	c.Spend(0, usd(4_999_999_999), now)                                  // just under
	if w, err := c.Admit(context.Background(), now); err != nil || w != "" {
		t.Fatalf("under the budget: %q %v", w, err)
	}
	c.Spend(0, usd(1), now)
	e := overBudget(t, c.AdmitSpend(now))
	if e.RetryAfter != 6*time.Hour || e.Budget != "5.00 USD per day" || e.Caller != "team" {
		t.Errorf("refusal %+v", e)
	}
	if _, err := c.Admit(context.Background(), now); err == nil {
		t.Error("Admit let a caller over its budget through")
	}
	s2, _ := New(config.Auth{Tokens: []config.Token{spendToken(5_000_000_000, "day")}}, s, nil)
	overBudget(t, s2.callers[0].AdmitSpend(now))
	s3, _ := New(config.Auth{Tokens: []config.Token{spendToken(6_000_000_000, "day")}}, s, nil)
	if err := s3.callers[0].AdmitSpend(now); err != nil {
		t.Errorf("a new budget starts afresh: %v", err)
	}
	if err := c.AdmitSpend(now.Add(6 * time.Hour)); err != nil {
		t.Errorf("the next day: %v", err)
	}
}

// TestSharedSpendAcrossReplicas: the cost charged on one replica counts
// on the other, per budget window.
func TestSharedSpendAcrossReplicas(t *testing.T) {
	sock := startRedis(t)
	r := config.Redis{Address: sock}
	tok := spendToken(1_000_000_000, "hour")
	a, b := replica(t, r, tok), replica(t, r, tok)
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 18, 20, 0, 0, time.UTC)
	a.Spend(0, usd(600_000_000), now)
	a.shared.spends.Wait()
	if w, err := b.Admit(ctx, now); err != nil || w != "" {
		t.Fatalf("under the budget: %q %v", w, err)
	}
	b.Spend(0, nil, now) // a model without prices: nothing charged
	b.Spend(0, usd(400_000_000), now)
	b.shared.spends.Wait()
	for _, c := range []*Caller{a, b} {
		_, err := c.Admit(ctx, now)
		if e := overBudget(t, err); e.RetryAfter != 40*time.Minute || e.Budget != "1.00 USD per hour" {
			t.Errorf("refusal %+v", e)
		}
	}
	if _, err := a.Admit(ctx, now.Add(40*time.Minute)); err != nil {
		t.Errorf("the next hour: %v", err)
	}
	ttl, err := a.shared.rdb.TTL(ctx, a.shared.spendKey(a, time.Date(2026, 3, 1, 18, 0, 0, 0, time.UTC).Unix())).Result()
	if err != nil || ttl <= 0 || ttl > 41*time.Minute {
		t.Errorf("the spend counter's expiry: %v %v, want the rest of the hour and a minute", ttl, err)
	}
}

// A spend budget alone still consults the store, and its outage follows
// auth.redis.on_error.
func TestSpendRedisUnreachable(t *testing.T) {
	t.Parallel()
	dead := filepath.Join(t.TempDir(), "nothing.sock")
	tok := spendToken(1, "month")
	timeout := config.Duration{Duration: 50 * time.Millisecond}
	open := replica(t, config.Redis{Address: dead, Timeout: timeout}, tok)
	if w, err := open.Admit(context.Background(), time.Now()); err != nil || w == "" {
		t.Errorf("fail open: warning %q, err %v", w, err)
	}
	closed := replica(t, config.Redis{Address: dead, OnError: "closed", Timeout: timeout}, tok)
	if _, err := closed.Admit(context.Background(), time.Now()); kindOf(t, err) != LimiterUnavailable {
		t.Errorf("fail closed: %v", err)
	}
}
