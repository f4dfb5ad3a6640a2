package auth

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/redistest"
)

func startRedis(t *testing.T) string { return redistest.Start(t) }

func replica(t *testing.T, r config.Redis, tok config.Token) *Caller {
	t.Helper()
	s, err := New(config.Auth{Tokens: []config.Token{tok}, Redis: &r}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(nil) })
	return s.callers[0]
}

// TestSharedLimitsAcrossReplicas: two stores (two replicas) on one Redis
// share the caller's request and token counts.
func TestSharedLimitsAcrossReplicas(t *testing.T) {
	sock := startRedis(t)
	r := config.Redis{Address: sock}
	tok := config.Token{Name: "team", SHA256: hashOf("x"), RequestsPerMinute: 3, TokensPerMinute: 100}
	a, b := replica(t, r, tok), replica(t, r, tok)
	ctx := context.Background()
	now := time.Unix(1_800_000_030, 0) // 30 s into a window
	for i, c := range []*Caller{a, b, a} {
		if w, err := c.Admit(ctx, now); err != nil || w != "" {
			t.Fatalf("request %d: %q %v", i, w, err)
		}
	}
	_, err := b.Admit(ctx, now)
	var e *Error
	if !errors.As(err, &e) || e.Limit != "requests_per_minute" || e.RetryAfter != 30*time.Second {
		t.Fatalf("fourth request across replicas: %+v", err)
	}
	// The next window starts afresh; tokens spent on one replica count on
	// the other.
	next := now.Add(time.Minute)
	a.Spend(150, nil, next)
	a.shared.spends.Wait()
	_, err = b.Admit(ctx, next)
	if !errors.As(err, &e) || e.Limit != "tokens_per_minute" {
		t.Fatalf("over the token budget across replicas: %+v", err)
	}
}

func TestRedisUnreachablePolicy(t *testing.T) {
	dead := filepath.Join(t.TempDir(), "nothing.sock")
	tok := config.Token{Name: "team", SHA256: hashOf("x"), RequestsPerMinute: 3}
	open := replica(t, config.Redis{Address: dead, Timeout: config.Duration{Duration: 50 * time.Millisecond}}, tok)
	w, err := open.Admit(context.Background(), time.Now())
	if err != nil || w == "" {
		t.Errorf("fail open: warning %q, err %v", w, err)
	}
	closed := replica(t, config.Redis{Address: dead, OnError: "closed", Timeout: config.Duration{Duration: 50 * time.Millisecond}}, tok)
	_, err = closed.Admit(context.Background(), time.Now())
	var e *Error
	if !errors.As(err, &e) || e.Kind != LimiterUnavailable {
		t.Errorf("fail closed: %v", err)
	}
}
