// Package auth authenticates callers by bearer token and holds each
// caller's allowed models and rate limits. It decides; the server maps its
// *Error to a gRPC status (server/errors.go).
package auth

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	grpcauth "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/auth"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
)

// Kind is why a call was refused.
type Kind int

// The kinds of refusal.
const (
	// Unauthenticated: no token, or one that matches no caller.
	Unauthenticated Kind = iota + 1
	// PermissionDenied: the caller may not use the model.
	PermissionDenied
	// RateLimited: the caller's request or token rate is used up.
	RateLimited
	// LimiterUnavailable: the shared rate-limit store (Redis) cannot be
	// reached and the configuration says to refuse calls then.
	LimiterUnavailable
)

// Error is a refused call. Messages name the caller and the limit, never
// the token.
type Error struct {
	Kind   Kind
	Msg    string
	Caller string
	Model  string
	// Limit names the exhausted limit (requests_per_minute,
	// tokens_per_minute, spend); RetryAfter is when it has room again.
	Limit      string
	RetryAfter time.Duration
	// Budget is the spend budget a "spend" refusal is about ("5.00 USD
	// per day").
	Budget string
}

func (e *Error) Error() string { return e.Msg }

// Caller is an authenticated caller.
type Caller struct {
	Name     string
	models   []string
	requests *bucket
	tokens   *bucket
	// inflight counts the caller's RPCs in flight (shared with the
	// caller of the same name after a reload); maxInflight bounds it
	// (0: no bound).
	inflight    *atomic.Int64
	maxInflight int64
	// reqLimit and tokLimit are the per-minute limits (0: none); shared,
	// when set, counts them in Redis instead of the local buckets.
	reqLimit, tokLimit int64
	shared             *redisLimiter
	// spend is the caller's money budget (nil: none).
	spend *budget
}

// Admit checks the caller's request rate (taking one request), token
// budget and spend budget. warning is set when the limits could not be checked and the
// call goes through anyway (the shared store is down, on_error: open).
func (c *Caller) Admit(ctx context.Context, now time.Time) (warning string, err error) {
	if c.shared != nil {
		return c.shared.admit(ctx, c, now)
	}
	if err := c.AdmitRequest(now); err != nil {
		return "", err
	}
	if err := c.AdmitTokens(now); err != nil {
		return "", err
	}
	return "", c.AdmitSpend(now)
}

// Enter counts one more RPC of the caller in flight, or refuses it at the
// caller's max_concurrent_calls; every nil Enter needs one Leave.
func (c *Caller) Enter() error {
	if n := c.inflight.Add(1); c.maxInflight > 0 && n > c.maxInflight {
		c.inflight.Add(-1)
		return &Error{Kind: RateLimited, Caller: c.Name, Limit: "max_concurrent_calls",
			Msg: fmt.Sprintf("caller %s has max_concurrent_calls (%d) calls in flight", c.Name, c.maxInflight)}
	}
	return nil
}

// Leave counts one RPC of the caller done.
func (c *Caller) Leave() { c.inflight.Add(-1) }

// Allows reports whether the caller may use model.
func (c *Caller) Allows(model string) bool { return config.ModelAllowed(c.models, model) }

// CheckModel returns a PermissionDenied error unless the caller may use model.
func (c *Caller) CheckModel(model string) error {
	if c.Allows(model) {
		return nil
	}
	return &Error{Kind: PermissionDenied, Caller: c.Name, Model: model,
		Msg: fmt.Sprintf("caller %s may not use model %s", c.Name, model)}
}

// AdmitRequest takes one request from the caller's request rate.
func (c *Caller) AdmitRequest(now time.Time) error {
	if c.requests == nil {
		return nil
	}
	if ok, wait := c.requests.take(1, now); !ok {
		return c.limited("requests_per_minute", wait)
	}
	return nil
}

// AdmitTokens refuses a call while the caller's token budget is used up.
func (c *Caller) AdmitTokens(now time.Time) error {
	if c.tokens == nil {
		return nil
	}
	if ok, wait := c.tokens.positive(now); !ok {
		return c.limited("tokens_per_minute", wait)
	}
	return nil
}

// AdmitSpend refuses a call while the caller is at or over its spend
// budget, until the budget's window ends.
func (c *Caller) AdmitSpend(now time.Time) error {
	if c.spend == nil {
		return nil
	}
	if ok, wait := c.spend.room(now); !ok {
		return c.overBudget(wait)
	}
	return nil
}

// Spend charges what a finished call used: n tokens against the token
// budget, and cost (nil: the model has no prices, nothing to charge)
// against the spend budget. A cost in another currency than the budget's
// is not charged: the configuration refuses a caller with a budget who
// may use a model priced in another currency, so there is none.
func (c *Caller) Spend(n int64, cost *llmrelayv1.Cost, now time.Time) {
	if c == nil {
		return
	}
	var nanos int64
	if c.spend != nil && cost.GetAmountNanos() > 0 && cost.GetCurrency() == c.spend.currency {
		nanos = cost.GetAmountNanos()
	}
	if c.tokLimit == 0 || n < 0 {
		n = 0
	}
	if n == 0 && nanos == 0 {
		return
	}
	if c.shared != nil {
		c.shared.spend(c, n, nanos, now)
		return
	}
	if c.tokens != nil && n > 0 {
		c.tokens.spend(float64(n), now)
	}
	if nanos > 0 {
		c.spend.charge(nanos, now)
	}
}

func (c *Caller) limited(limit string, wait time.Duration) error {
	return &Error{Kind: RateLimited, Caller: c.Name, Limit: limit, RetryAfter: wait,
		Msg: fmt.Sprintf("caller %s is over its %s limit; retry in %v", c.Name, limit, wait.Round(time.Millisecond))}
}

// Store maps token hashes to callers.
type Store struct {
	byHash map[[sha256.Size]byte]*Caller
	// byCert maps client certificate identities (URI or DNS SAN, subject
	// common name) to callers.
	byCert  map[string]*Caller
	callers []*Caller
	shared  *redisLimiter
}

// Close releases the shared store's connections (after waiting for the
// token counts still on their way), unless next, the store replacing s,
// goes on using them.
func (s *Store) Close(next *Store) error {
	if s == nil || s.shared == nil || (next != nil && next.shared == s.shared) {
		return nil
	}
	return s.shared.close()
}

// New builds the callers of a configuration. prev, the store of the
// configuration being replaced (nil at start), lends its rate-limit state
// to callers of the same name and limits, so a reload does not refill
// them.
func New(cfg config.Auth, prev *Store, log *slog.Logger) (*Store, error) {
	s := &Store{byHash: map[[sha256.Size]byte]*Caller{}, byCert: map[string]*Caller{}}
	if cfg.Redis != nil && cfg.Enabled() {
		if prev != nil && prev.shared != nil && prev.shared.cfg == *cfg.Redis {
			s.shared = prev.shared // the same store: keep the connections
		} else {
			r, err := newRedisLimiter(*cfg.Redis, log)
			if err != nil {
				return nil, err
			}
			s.shared = r
		}
	}
	old := map[string]*Caller{}
	if prev != nil {
		for _, c := range prev.callers {
			old[c.Name] = c
		}
	}
	for _, t := range cfg.Tokens {
		var h [sha256.Size]byte
		if t.ClientCertificate == "" {
			var err error
			if h, err = t.Hash(); err != nil {
				return nil, err
			}
			if other, dup := s.byHash[h]; dup {
				return nil, fmt.Errorf("auth tokens %s and %s are the same token", other.Name, t.Name)
			}
		} else if other, dup := s.byCert[t.ClientCertificate]; dup {
			return nil, fmt.Errorf("auth callers %s and %s have the same client_certificate", other.Name, t.Name)
		}
		c := &Caller{Name: t.Name, models: t.Models,
			requests: newBucket(t.RequestsPerMinute), tokens: newBucket(t.TokensPerMinute),
			inflight: &atomic.Int64{}, maxInflight: int64(t.MaxConcurrentCalls),
			reqLimit: int64(t.RequestsPerMinute), tokLimit: int64(t.TokensPerMinute), shared: s.shared,
			spend: newBudget(t.Spend)}
		if o := old[t.Name]; o != nil {
			c.requests = o.requests.keepIfSame(c.requests)
			c.tokens = o.tokens.keepIfSame(c.tokens)
			c.spend = o.spend.keepIfSame(c.spend)
			c.inflight = o.inflight
		}
		if t.ClientCertificate != "" {
			s.byCert[t.ClientCertificate] = c
		} else {
			s.byHash[h] = c
		}
		s.callers = append(s.callers, c)
	}
	return s, nil
}

// Enabled reports whether callers must authenticate.
func (s *Store) Enabled() bool { return s != nil && len(s.callers) > 0 }

// Authenticate finds the caller of the bearer token in ctx's metadata
// (authorization: Bearer <token>) or, for an RPC without one, of the
// verified client certificate of its connection.
func (s *Store) Authenticate(ctx context.Context) (*Caller, error) {
	tok, err := grpcauth.AuthFromMD(ctx, "bearer")
	if err != nil {
		if c := s.certCaller(ctx); c != nil {
			return c, nil
		}
		msg := "missing or malformed authorization metadata: want \"authorization: Bearer <token>\""
		if len(s.byCert) > 0 {
			msg += " or the client certificate of a configured caller"
		}
		return nil, &Error{Kind: Unauthenticated, Msg: msg}
	}
	// The lookup is by the token's hash, so its timing tells nothing
	// about the token, and the configuration never holds it in clear.
	if c, ok := s.byHash[sha256.Sum256([]byte(tok))]; ok {
		return c, nil
	}
	return nil, &Error{Kind: Unauthenticated, Msg: "the bearer token matches no configured caller"}
}

// certCaller is the caller whose client_certificate names the connection's
// verified client certificate: its URI subject alternative names (SPIFFE
// IDs) first, then its DNS names, then its subject's common name. nil
// without mutual TLS or a match; an unverified certificate never counts.
func (s *Store) certCaller(ctx context.Context) *Caller {
	if len(s.byCert) == 0 {
		return nil
	}
	p, ok := peer.FromContext(ctx)
	if !ok {
		return nil
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(info.State.VerifiedChains) == 0 || len(info.State.VerifiedChains[0]) == 0 {
		return nil
	}
	leaf := info.State.VerifiedChains[0][0]
	for _, u := range leaf.URIs {
		if c := s.byCert[u.String()]; c != nil {
			return c
		}
	}
	for _, d := range leaf.DNSNames {
		if c := s.byCert[d]; c != nil {
			return c
		}
	}
	if cn := leaf.Subject.CommonName; cn != "" {
		return s.byCert[cn]
	}
	return nil
}

type callerKey struct{}

type admitted struct {
	c       *Caller
	warning string
}

// WithCaller returns ctx carrying c and the warning of its admission.
func WithCaller(ctx context.Context, c *Caller, warning string) context.Context {
	return context.WithValue(ctx, callerKey{}, admitted{c, warning})
}

// CallerFrom returns the authenticated caller, or nil (no auth configured).
func CallerFrom(ctx context.Context) *Caller {
	a, _ := ctx.Value(callerKey{}).(admitted)
	return a.c
}

// AdmittedFrom is CallerFrom and WarningFrom in one look-up of the
// context chain (a miss walks all of it, and without auth every call
// misses).
func AdmittedFrom(ctx context.Context) (*Caller, string) {
	a, _ := ctx.Value(callerKey{}).(admitted)
	return a.c, a.warning
}

// WarningFrom is the caller's admission warning ("" when the limits were
// checked).
func WarningFrom(ctx context.Context) string {
	a, _ := ctx.Value(callerKey{}).(admitted)
	return a.warning
}
