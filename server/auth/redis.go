package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/llmrelay/llmrelay/internal/config"
)

// redisLimiter counts the callers' requests and tokens in Redis, in
// one-minute windows, and their spending in the windows of their budgets,
// so that every replica naming the same Redis shares them. A call's
// admission is one pipelined round trip (INCR and EXPIRE of the request
// counter, GET of the token and spend counters); its tokens and cost are
// added when it ends (INCRBY and EXPIRE), off the response path.
type redisLimiter struct {
	cfg        config.Redis
	rdb        *redis.Client
	prefix     string
	timeout    time.Duration
	failClosed bool
	log        *slog.Logger
	lastWarn   atomic.Int64 // unix nanos of the last "unreachable" log line
	spends     sync.WaitGroup
}

func newRedisLimiter(cfg config.Redis, log *slog.Logger) (*redisLimiter, error) {
	opts := &redis.Options{Addr: cfg.Address, DB: cfg.DB, MaxRetries: -1}
	if strings.HasPrefix(cfg.Address, "/") {
		opts.Network = "unix"
	}
	if cfg.PasswordEnv != "" {
		opts.Password = os.Getenv(cfg.PasswordEnv)
		if opts.Password == "" {
			return nil, fmt.Errorf("auth.redis.password_env: environment variable %s is not set", cfg.PasswordEnv)
		}
	}
	timeout := cfg.Timeout.Duration
	if timeout <= 0 {
		timeout = 200 * time.Millisecond
	}
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = timeout, timeout, timeout
	prefix := cfg.KeyPrefix
	if prefix == "" {
		prefix = "llmrelay:"
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &redisLimiter{cfg: cfg, rdb: redis.NewClient(opts), prefix: prefix, timeout: timeout, failClosed: cfg.OnError == "closed", log: log}, nil
}

// window is the one-minute window of now, and how long until the next.
func window(now time.Time) (int64, time.Duration) {
	w := now.Unix() / 60
	return w, time.Unix((w+1)*60, 0).Sub(now)
}

func (r *redisLimiter) key(c *Caller, kind string, w int64) string {
	return fmt.Sprintf("%srl:%s:%s:%d", r.prefix, c.Name, kind, w)
}

// spendKey is the counter of the caller's spending in the budget window
// starting at start.
func (r *redisLimiter) spendKey(c *Caller, start int64) string {
	return fmt.Sprintf("%srl:%s:spend:%s:%d", r.prefix, c.Name, c.spend.per, start)
}

func (r *redisLimiter) admit(ctx context.Context, c *Caller, now time.Time) (string, error) {
	if c.reqLimit == 0 && c.tokLimit == 0 && c.spend == nil {
		return "", nil
	}
	w, rest := window(now)
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	pipe := r.rdb.Pipeline()
	var incr *redis.IntCmd
	var get *redis.StringCmd
	if c.reqLimit > 0 {
		k := r.key(c, "req", w)
		incr = pipe.Incr(ctx, k)
		pipe.ExpireNX(ctx, k, 2*time.Minute)
	}
	if c.tokLimit > 0 {
		get = pipe.Get(ctx, r.key(c, "tok", w))
	}
	var spent *redis.StringCmd
	var spendRest time.Duration
	if c.spend != nil {
		var start int64
		start, spendRest = spendWindow(c.spend.per, now)
		spent = pipe.Get(ctx, r.spendKey(c, start))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return r.unreachable(c, err)
	}
	if incr != nil && incr.Val() > c.reqLimit {
		return "", c.limited("requests_per_minute", rest)
	}
	if get != nil {
		used, err := get.Int64()
		if err != nil && !errors.Is(err, redis.Nil) {
			return r.unreachable(c, err)
		}
		if used >= c.tokLimit {
			return "", c.limited("tokens_per_minute", rest)
		}
	}
	if spent != nil {
		used, err := spent.Int64()
		if err != nil && !errors.Is(err, redis.Nil) {
			return r.unreachable(c, err)
		}
		if used >= c.spend.limit {
			return "", c.overBudget(spendRest)
		}
	}
	return "", nil
}

// unreachable applies auth.redis.on_error.
func (r *redisLimiter) unreachable(c *Caller, err error) (string, error) {
	if now := time.Now().UnixNano(); now-r.lastWarn.Load() > int64(10*time.Second) {
		r.lastWarn.Store(now)
		r.log.Warn("rate-limit store unreachable", slog.String("error", err.Error()), slog.Bool("fail_closed", r.failClosed))
	}
	if r.failClosed {
		return "", &Error{Kind: LimiterUnavailable, Caller: c.Name,
			Msg: "the rate-limit store cannot be reached and auth.redis.on_error is closed; retry later"}
	}
	return "rate limits and spend budget not enforced for this call: the rate-limit store cannot be reached (auth.redis.on_error: open)", nil
}

// spend adds a finished call's tokens (n) and cost (nanos) to the
// caller's counters, in the background.
func (r *redisLimiter) spend(c *Caller, n, nanos int64, now time.Time) {
	w, _ := window(now)
	tokKey := r.key(c, "tok", w)
	var spendKey string
	var spendTTL time.Duration
	if nanos > 0 {
		start, rest := spendWindow(c.spend.per, now)
		spendKey, spendTTL = r.spendKey(c, start), rest+time.Minute
	}
	r.spends.Add(1)
	go func() {
		defer r.spends.Done()
		ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
		defer cancel()
		pipe := r.rdb.Pipeline()
		if n > 0 {
			pipe.IncrBy(ctx, tokKey, n)
			pipe.ExpireNX(ctx, tokKey, 2*time.Minute)
		}
		if nanos > 0 {
			pipe.IncrBy(ctx, spendKey, nanos)
			pipe.ExpireNX(ctx, spendKey, spendTTL)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			r.log.Warn("rate-limit store: the tokens and cost of a call were not counted", slog.String("caller", c.Name),
				slog.Int64("tokens", n), slog.Int64("cost_nanos", nanos), slog.String("error", err.Error()))
		}
	}()
}

func (r *redisLimiter) close() error {
	r.spends.Wait()
	return r.rdb.Close()
}
