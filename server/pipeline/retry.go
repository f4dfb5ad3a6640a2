package pipeline

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// RetryPolicy is the one retry policy of the gateway.
type RetryPolicy struct {
	// MaxAttempts counts the first attempt; 1 disables retries.
	MaxAttempts int
	// BaseDelay and MaxDelay bound the exponential backoff with full jitter:
	// attempt n waits rand[0, min(MaxDelay, BaseDelay·2^(n-1))).
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// MaxRetryAfter is the longest Retry-After waited out here; a longer
	// one (an hour-long quota reset) ends the call at once, with RetryInfo,
	// instead of holding it silently.
	MaxRetryAfter time.Duration
	// FirstContent makes each stream attempt report its first content
	// event to its response body (withFirstContent), which bounds the
	// silence before it by stream_first_token_timeout: set where that
	// bound is configured (TransportConfig.FirstTokenTimeout); off, an
	// attempt costs no report.
	FirstContent bool
}

// DefaultRetryPolicy is used where the configuration sets none.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 3, BaseDelay: 500 * time.Millisecond, MaxDelay: 8 * time.Second, MaxRetryAfter: 60 * time.Second}

// Clock is what the retry interceptor needs of time; tests inject a fake.
type Clock interface {
	Now() time.Time
	// Sleep waits d or until ctx is done (then it returns ctx.Err()).
	Sleep(ctx context.Context, d time.Duration) error
}

// RealClock is the wall clock.
type RealClock struct{}

func (RealClock) Now() time.Time { return time.Now() }

func (RealClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ErrRetryAfterBeyondDeadline marks a rate-limit or unavailability error
// given up on at once because the provider's requested delay does not fit
// in the caller's deadline.
var ErrRetryAfterBeyondDeadline = errors.New("the provider's retry delay exceeds the deadline")

// ErrBackoffInterrupted marks a failure whose retry was cut short: the
// call's context ended during the backoff wait. The server reports the
// context's end (DeadlineExceeded, Canceled) with this failure's details.
var ErrBackoffInterrupted = errors.New("the call ended while waiting to retry")

// ErrRetryAfterTooLong marks one given up on because the provider's
// requested delay is longer than RetryPolicy.MaxRetryAfter.
var ErrRetryAfterTooLong = errors.New("the provider's retry delay exceeds max_retry_after")

// Retryable reports whether a failed attempt may be retried: connection
// errors before any response byte, transport timeouts, streams cut before
// their final event, and the HTTP statuses the official OpenAI and
// Anthropic SDKs retry: 408, 409 (a lock timeout), 429 and 5xx, but for
// 501 and 505, which say the same to every attempt; and 499, Gemini's
// CANCELLED (provider.StatusProviderCancelled). An error inside a 2xx
// answer whose code is such a status (provider.InBandStatus) is read by
// the same table. A provider's
// x-should-retry header overrides the status, as in those SDKs; an
// adapter's RetryDiscouraged read from the body does too, inside a 2xx
// answer as well. Never a
// cancellation or our own deadline, never an exhausted quota (unless the
// provider says to retry).
func Retryable(err error) bool {
	var pe *provider.Error
	if !errors.As(err, &pe) {
		return false
	}
	status := pe.HTTPStatus
	if status < 300 {
		// An error inside a 2xx answer (OpenAI's in-body and stream
		// error events, Ollama's): the status its code names, read as
		// an answer's status is (an in-band 501 is not retried, as an
		// HTTP 501 is not); without one, its kind says what it is.
		status = provider.InBandStatus(pe)
	}
	if pe.ShouldRetry == provider.RetryDiscouraged {
		// The header's verdict, or the adapter's own from the body (a
		// request too large for the whole rate limit, OpenAI's, in a
		// 429 or a stream's error event alike): no attempt can succeed.
		return false
	}
	if status != 0 && pe.ShouldRetry == provider.RetryAdvised {
		return true
	}
	switch {
	case status == http.StatusTooManyRequests:
		return !provider.QuotaSpent(pe.Code)
	case status == http.StatusRequestTimeout, status == http.StatusConflict:
		return true
	case status == provider.StatusProviderCancelled:
		// Gemini's CANCELLED: its backend gave up, not the gateway.
		return true
	case status == http.StatusNotImplemented, status == http.StatusHTTPVersionNotSupported:
		return false
	case status >= 500:
		// 500, 502, 503, 504, 529 (Anthropic overloaded), a proxy's
		// 520-524 (Cloudflare in front of a provider).
		return true
	case status == 0:
		switch pe.Kind {
		case provider.KindConnection:
			return true
		case provider.KindTimeout:
			// A transport timeout (connect, first byte, idle) is retryable;
			// the caller's own deadline is not, and is caught by the
			// context check before any retry.
			return !errors.Is(err, context.DeadlineExceeded)
		case provider.KindUnavailable:
			// An error event at the start of a stream (e.g. overloaded).
			return true
		case provider.KindRateLimited:
			return !provider.QuotaSpent(pe.Code)
		case provider.KindBadResponse:
			// A stream cut before its final event is transient; output
			// that does not parse would only fail again.
			return errors.Is(err, provider.ErrStreamCut)
		}
	}
	return false
}

// FallbackWorthy reports whether a deployment's failure, once its retries
// gave up, should give way to the model's next deployment: what Retryable
// allows, and what is the deployment's fault rather than the request's,
// which another deployment (another account, key, region or provider)
// may not share: a rate limit or exhausted quota (429, in the body too),
// 402 (payment required, e.g. OpenRouter credits), 401 and 403 (this
// deployment's key), 404 (its model), by status or by the kind the
// adapter read from the body, a 5xx or 429 whose x-should-retry said
// not to retry here, a redirect not followed and a web page instead of
// an answer (its base_url), and a prompt longer than the deployment's
// context window (KindContextLength, at any status): the window is the
// deployment's (its model, Ollama's num_ctx), and the next deployment's
// may be larger, as LiteLLM's context_window_fallbacks assume; an old
// Ollama's 500 for it fell back and a new one's 400 did not. So are the
// other refusals of what the deployment's model is, not of the request:
// an operation it does not do (KindUnsupported: Azure's
// OperationNotSupported, a chat deployment asked for embeddings; a
// provider without the API), a capability it lacks (KindCapability:
// Ollama's "<model> does not support tools"), embeddings "dimensions" it
// cannot give (the
// adapter names the field: ada-002 and vLLM's models without matryoshka
// take none; a size past the model's). So is a request too large for the
// deployment (provider.TooLarge: a 413, with the provider's JSON or a
// proxy's page, Google's payload limit): the limit is the endpoint's or
// the proxy's in front of it (Anthropic's 32 MB, nginx's
// client_max_body_size), and another deployment's may be larger; not
// retried (the same body meets the same limit). Never another invalid
// request (400, 422), a cancellation or our own deadline.
func FallbackWorthy(err error) bool {
	if Retryable(err) {
		return true
	}
	var pe *provider.Error
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Kind {
	case provider.KindRateLimited, provider.KindUnauthenticated, provider.KindPermissionDenied, provider.KindNotFound:
		// As the adapter read it: Gemini answers a bad key with 400
		// API_KEY_INVALID, OpenAI an exhausted quota in a 200's body.
		return true
	case provider.KindContextLength, provider.KindUnsupported, provider.KindCapability:
		// Never retried (the same input overflows the same window, the
		// same model lacks the same operation or capability), but the
		// window and the model are this deployment's.
		return true
	}
	if provider.TooLarge(pe) {
		return true
	}
	if pe.Param == "dimensions" {
		// Embeddings dimensions the deployment's model refused (the
		// gateway checked the caller's are at least 1).
		return true
	}
	if errors.Is(pe, provider.ErrNotAnAnswer) {
		return true // a web page where the API should be: this deployment's setup
	}
	switch s := pe.HTTPStatus; {
	case s == http.StatusTooManyRequests, s == http.StatusPaymentRequired, s == http.StatusUnauthorized,
		s == http.StatusForbidden, s == http.StatusNotFound:
		return true
	case s >= 300 && s < 400:
		// A redirect the transport did not follow (to another host):
		// where this deployment's base_url leads, not the request.
		return true
	case s >= 500:
		return pe.ShouldRetry == provider.RetryDiscouraged // what Retryable refused only for the header
	}
	return false
}

// ReasonFor is the failure class recorded in RetryReason.reason.
func ReasonFor(err error) (reason string, status int32, message string) {
	var pe *provider.Error
	if errors.As(err, &pe) {
		if pe.SignatureRefused {
			return SignatureRetryReason, int32(pe.HTTPStatus), pe.Message
		}
		if pe.HTTPStatus >= 300 {
			return "http_" + strconv.Itoa(pe.HTTPStatus), int32(pe.HTTPStatus), pe.Message
		}
		if pe.Kind == provider.KindBadResponse && errors.Is(pe, provider.ErrStreamCut) {
			// A stream's body (read only from a 2xx answer) ended before
			// its final event: the provider answered, as for a body that
			// broke (below); upstream_status is 0 only when no status
			// was received.
			return "stream_cut", answeredStatus(pe), pe.Message
		}
		var tt *TransportTimeout
		if errors.As(pe, &tt) {
			// The bound that ran out. Silence inside an answer
			// (idle_timeout, stream_first_token_timeout) came after its
			// head: the provider answered, as for a body that broke.
			if tt.Setting == "idle_timeout" || tt.Setting == "stream_first_token_timeout" {
				return pe.Kind.String(), answeredStatus(pe), tt.Error()
			}
			return pe.Kind.String(), 0, tt.Error()
		}
		if errors.Is(pe, provider.ErrBrokeMidAnswer) {
			// The provider answered (a 2xx, its headers read) before the
			// connection broke in its body: upstream_status is 0 only
			// when none was received. The reason stays the kind's.
			return pe.Kind.String(), answeredStatus(pe), pe.Message
		}
		if pe.Kind == provider.KindBadResponse || pe.InAnswer || pe.HTTPStatus >= 200 {
			// Read from a 2xx answer: output that does not parse (only
			// an answer's body is parsed), an error event or object
			// inside it (an in-band error's HTTPStatus is the answer's
			// 200, or InAnswer). The provider's status was received:
			// upstream_status says it, as for a cut; the reason stays
			// the kind's, and the metric labels it by its reason.
			return pe.Kind.String(), answeredStatus(pe), pe.Message
		}
		return pe.Kind.String(), 0, pe.Message
	}
	return "error", 0, err.Error()
}

// answeredStatus is the 2xx status of an answer whose body failed: the
// error's own when it carries one, else 200.
func answeredStatus(pe *provider.Error) int32 {
	if pe.HTTPStatus >= 200 && pe.HTTPStatus < 300 {
		return int32(pe.HTTPStatus)
	}
	return http.StatusOK
}

type retrier struct {
	policy RetryPolicy
	clock  Clock
	rand   func(n int64) int64
}

// Retry returns the retry interceptors. The stream interceptor retries
// only until the stream's first event has been read from the provider, so
// nothing is ever retried once an event may have reached the client.
func Retry(policy RetryPolicy, clock Clock) (Interceptor, StreamInterceptor) {
	if policy.MaxAttempts < 1 {
		policy.MaxAttempts = 1
	}
	r := &retrier{policy: policy, clock: clock, rand: rand.Int64N}
	unary := func(ctx context.Context, c *Call, next Handler) (*provider.Result, error) {
		// Attempts count across the deployments of a routed call.
		base := c.Record.Attempts
		var rl *llmrelayv1.RateLimit // the latest the deployment reported
		for attempt := 1; ; attempt++ {
			c.Record.Attempts = base + int32(attempt)
			start := r.clock.Now()
			res, err := next(ctx, c)
			if err == nil {
				return res, nil
			}
			rl = carryRateLimit(err, rl)
			if !r.again(ctx, c, attempt, start, err) {
				return nil, err
			}
		}
	}
	stream := func(ctx context.Context, c *Call, next StreamHandler) (provider.Stream, error) {
		base := c.Record.Attempts
		var rl *llmrelayv1.RateLimit
		for attempt := 1; ; attempt++ {
			c.Record.Attempts = base + int32(attempt)
			start := r.clock.Now()
			// The attempt's body bounds the silence before its first
			// content by stream_first_token_timeout: the read-ahead
			// says when that content came.
			actx, fc := ctx, (*firstContent)(nil)
			if r.policy.FirstContent {
				actx, fc = withFirstContent(ctx)
			}
			s, err := next(actx, c)
			if err == nil {
				// Read ahead to the first event the client would see: a
				// failure before it is still retryable, since nothing has
				// been relayed yet (meta and usage events are relayed only
				// with or after content).
				p, rerr := readAhead(s, fc)
				if rerr == nil {
					return p, nil
				}
				_ = s.Close() // the stream failed; its close error adds nothing
				err = rerr
			}
			rl = carryRateLimit(err, rl)
			if !r.again(ctx, c, attempt, start, err) {
				return nil, err
			}
		}
	}
	return unary, stream
}

// carryRateLimit keeps a deployment's rate-limit state across its
// attempts: a failure that reports none (a connection reset, a timeout,
// a proxy's page without the headers) gets the latest an earlier attempt
// reported, which is still the provider's latest word on the limits
// (its resets are times, not durations), and the failure's meta is the
// only place the caller sees it; a 429 followed by a reset lost it. It
// returns the state to carry on: the failure's own when it reports one.
func carryRateLimit(err error, last *llmrelayv1.RateLimit) *llmrelayv1.RateLimit {
	var pe *provider.Error
	if !errors.As(err, &pe) {
		return last
	}
	if rl := pe.Meta.GetRateLimit(); rl != nil {
		return rl
	}
	if last != nil {
		if pe.Meta == nil {
			pe.Meta = &llmrelayv1.ResponseMeta{}
		}
		pe.Meta.RateLimit = proto.CloneOf(last)
	}
	return last
}

// again records a failed attempt and waits before the next one; false
// means give up and return err.
func (r *retrier) again(ctx context.Context, c *Call, attempt int, start time.Time, err error) bool {
	rr := c.RecordFailure(err, r.clock.Now().Sub(start))
	if ctx.Err() == nil && c.dropSignatures(err) {
		// A request repaired, not the same one again: at once, and even
		// where the policy's attempts are spent (max_attempts 1), but
		// once (the repaired request carries no state to refuse).
		return true
	}
	var pe *provider.Error
	if errors.As(err, &pe) && pe.RetryAfter == 0 && pe.ShouldRetry != provider.RetryDiscouraged {
		// Before the give-up checks: the client's RetryInfo needs it too.
		// Not when the provider (or the adapter, from the body) says no
		// attempt can succeed: a delay would say that waiting helps.
		pe.RetryAfter = exhaustedReset(pe, r.clock.Now())
		if pe.RetryAfter > 0 {
			// The reset the provider's rate-limit state names is the
			// delay it asks for (RetryReason.requested_delay), whatever
			// the gateway does next.
			rr.RequestedDelay = durationpb.New(pe.RetryAfter)
		}
	}
	if attempt >= r.policy.MaxAttempts || !Retryable(err) || ctx.Err() != nil {
		return false
	}
	if c.CanFallBack && pe != nil && (pe.Kind == provider.KindRateLimited || pe.HTTPStatus == http.StatusTooManyRequests) {
		// Another deployment (account, key, region) does not share this
		// one's limit: the route moves on at once (FallbackWorthy).
		return false
	}
	if tt := (*TransportTimeout)(nil); c.CanFallBack && errors.As(err, &tt) {
		// The deployment hung (no headers within its bound, or silence
		// inside the answer): another attempt here may cost the whole
		// bound again (three 120 s waits for a stream's headers took six
		// of max_call_duration's ten minutes before the next deployment
		// was tried); the next deployment is tried at once, as
		// LiteLLM's stream_timeout is meant to abort a hanging provider
		// and try another model.
		return false
	}
	if c.CanFallBack && pe != nil && pe.RetryAfter > r.policy.MaxDelay {
		// The provider asks for a longer wait than the gateway's own
		// longest backoff (a 503 or 529 with a Retry-After of 30 s):
		// the deployment says it is away for that long, and the next
		// one is tried at once instead of waiting it out here (a 429
		// moves on whatever its delay, above).
		return false
	}
	delay := r.backoff(attempt)
	if pe != nil && pe.RetryAfter > 0 {
		delay = pe.RetryAfter
	}
	if pe != nil && pe.RetryAfter > 0 && r.policy.MaxRetryAfter > 0 && pe.RetryAfter > r.policy.MaxRetryAfter {
		pe.Err = errors.Join(pe.Err, ErrRetryAfterTooLong)
		return false
	}
	if dl, ok := ctx.Deadline(); ok && r.clock.Now().Add(delay).After(dl) {
		// Sleeping would only end in DeadlineExceeded: give up now, and
		// let the caller see the provider's delay (RetryInfo).
		if pe != nil && pe.RetryAfter > 0 {
			pe.Err = errors.Join(pe.Err, ErrRetryAfterBeyondDeadline)
		}
		return false
	}
	rr.Delay = durationpb.New(delay)
	if r.clock.Sleep(ctx, delay) != nil {
		// The call ended (its deadline, the caller) while waiting: that,
		// not this attempt's failure, is why no attempt follows; the
		// last attempt has no delay.
		rr.Delay = nil
		if pe != nil {
			pe.Err = errors.Join(pe.Err, ErrBackoffInterrupted)
		}
		return false
	}
	return true
}

// SignatureRetryReason is RetryReason.reason for an attempt whose
// conversation the provider refused for reasoning state it did not sign
// (provider.Error.SignatureRefused).
const SignatureRetryReason = "reasoning_signature_refused"

// dropSignatures points the call at its request without reasoning state
// (provider.Request.DropSignatures) when err is the provider's refusal of
// that state (provider.Error.SignatureRefused) and the request still
// carries some; it reports whether it did. Reasoning state is signed per
// account and platform (a Gemini API key's project, Anthropic's API or
// Bedrock or Vertex AI, an OpenAI organization or Azure resource), while
// a route spreads a conversation over deployments of one provider type:
// the gateway cannot tell which deployment signed a part (Reasoning.provider
// names the provider type), so the refusal is the only sign, and the
// request each provider documents for history it did not produce is the
// repair. The request is copied: adapters may keep the one they were given.
func (c *Call) dropSignatures(err error) bool {
	var pe *provider.Error
	if c.Op != OpGenerate || c.Request == nil || c.Request.DropSignatures || !errors.As(err, &pe) || !pe.SignatureRefused ||
		!provider.CarriesReasoningState(c.Request.Messages) {
		return false
	}
	req := *c.Request
	req.DropSignatures = true
	c.Request = &req
	return true
}

// RecordFailure appends the call's last attempt, failed with err after d,
// to Record.RetryReasons ("one entry per failed attempt") and returns the
// entry. Retry records every attempt it sees fail; the server records a
// stream that fails after Retry handed it over (mid-stream), which no
// retry follows.
func (c *Call) RecordFailure(err error, d time.Duration) *llmrelayv1.RetryReason {
	reason, status, msg := ReasonFor(err)
	rr := &llmrelayv1.RetryReason{
		Attempt: c.Record.Attempts, Reason: reason, UpstreamStatus: status, Message: msg,
		Duration: durationpb.New(d), Deployment: c.Deployment,
	}
	var pe *provider.Error
	if errors.As(err, &pe) {
		rr.ProviderRequestId = pe.RequestID
		if rr.ProviderRequestId == "" {
			rr.ProviderRequestId = pe.Meta.GetProviderRequestId()
		}
		if pe.RetryAfter > 0 {
			// What the provider asked for (Retry-After, retry-after-ms,
			// RetryInfo), recorded whether or not it is waited out: a
			// fallback moves on at once, a delay beyond max_retry_after
			// or the deadline is given up on (Delay is what was waited).
			rr.RequestedDelay = durationpb.New(pe.RetryAfter)
		}
	}
	c.Record.RetryReasons = append(c.Record.RetryReasons, rr)
	return rr
}

// exhaustedReset is the retry delay a rate-limit error without Retry-After
// still states: its rate-limit state (x-ratelimit-*, anthropic-ratelimit-*
// headers) shows a limit with nothing remaining and when it resets, and no
// attempt can succeed before then. With several exhausted limits, the
// latest reset; 0 when the error is not a rate limit, or shows no
// exhausted limit with a future reset. The delay is counted from the
// provider's clock when it answered (pe.Date, the base of its relative
// resets: "6m0s" is six minutes exactly), from now when the error has
// none (an error event inside a stream).
func exhaustedReset(pe *provider.Error, now time.Time) time.Duration {
	if pe.Kind != provider.KindRateLimited && pe.HTTPStatus != http.StatusTooManyRequests {
		return 0
	}
	if !pe.Date.IsZero() {
		now = pe.Date
	}
	rl := pe.Meta.GetRateLimit()
	if rl == nil {
		return 0
	}
	var d time.Duration
	for _, l := range []struct {
		remaining *int64
		reset     *timestamppb.Timestamp
	}{{rl.RequestsRemaining, rl.GetRequestsResetTime()}, {rl.TokensRemaining, rl.GetTokensResetTime()}} {
		if l.remaining == nil || *l.remaining > 0 || l.reset == nil {
			continue
		}
		if x := l.reset.AsTime().Sub(now); x > d {
			d = x
		}
	}
	return d
}

func (r *retrier) backoff(attempt int) time.Duration {
	ceil := r.policy.BaseDelay << (attempt - 1)
	if ceil <= 0 || ceil > r.policy.MaxDelay {
		ceil = r.policy.MaxDelay
	}
	if ceil <= 0 {
		return 0
	}
	return time.Duration(r.rand(int64(ceil)))
}

// maxReadAhead bounds the events buffered before the first one a client
// would see.
const maxReadAhead = 64

// readAhead reads events up to and including the first content event
// (text, refusal, reasoning, tool call: contentEvent), io.EOF, or
// maxReadAhead events. A
// read error before that is returned, carrying what the events read so far
// reported (rate limits, response id, resolved model, usage) in its
// provider.Error.Meta; the caller may retry. The first content event is
// reported to fc (nil: nobody asks), here or when the stream reads on.
func readAhead(s provider.Stream, fc *firstContent) (*peeked, error) {
	p := &peeked{Stream: s, fc: fc}
	for len(p.buf) < maxReadAhead {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			p.tailErr = err
			return p, nil
		}
		if err != nil {
			keepReported(err, p.buf)
			return nil, err
		}
		p.buf = append(p.buf, ev)
		if contentEvent(ev) {
			fc.markContent(ev)
			p.fc = nil
			return p, nil
		}
	}
	return p, nil
}

// EndedBeforeContent reads s, a stream Retry handed over, as its
// read-ahead did: up to its first content event (contentEvent), its end
// or maxReadAhead events, all of which the read-ahead already holds, so
// nothing waits on the provider. It returns a stream that replays them
// (and a read error, unchanged) and, when s ended (io.EOF) before any
// content, the events it sent: a stream the gateway may still discard,
// since nothing of it was relayed.
func EndedBeforeContent(s provider.Stream) (provider.Stream, []*provider.Event) {
	p := &peeked{Stream: s}
	for len(p.buf) < maxReadAhead {
		ev, err := s.Recv()
		if err != nil {
			p.tailErr = err
			break
		}
		p.buf = append(p.buf, ev)
		if contentEvent(ev) {
			return p, nil
		}
	}
	if errors.Is(p.tailErr, io.EOF) {
		return p, slices.Clone(p.buf)
	}
	return p, nil
}

// contentEvent reports whether ev is one the client sees as the answer
// begun: not meta or usage, and not a reasoning block's announcement
// (its id alone, no text, signature or redacted data: the OpenAI
// Responses API's reasoning item added, which comes at once and is
// followed by the model's silent thinking, minutes of it). The
// announcement is relayed with what follows it; a failure in the silence
// after it is still one before the answer, retried.
func contentEvent(ev *provider.Event) bool {
	if ev == nil || ev.Kind == provider.EventMeta || ev.Kind == provider.EventUsage {
		return false
	}
	if r := &ev.Reasoning; ev.Kind == provider.EventReasoning && r.Text == "" && r.Signature == "" && !r.Redacted {
		return false
	}
	return true
}

// keepReported folds the meta and usage events of a stream that failed
// before its first content event into the failure's provider.Error.Meta,
// under what the error itself reports: the client never sees these events,
// and the FailedCallMeta is the only place left for them.
func keepReported(err error, evs []*provider.Event) {
	var pe *provider.Error
	if !errors.As(err, &pe) {
		return
	}
	meta := &llmrelayv1.ResponseMeta{}
	for _, ev := range evs {
		switch {
		case ev == nil:
		case ev.Kind == provider.EventMeta && ev.Meta != nil:
			provider.MergeMeta(meta, ev.Meta)
		case ev.Kind == provider.EventUsage && ev.Usage != nil:
			meta.Usage = proto.CloneOf(ev.Usage)
		}
	}
	if pe.Meta != nil {
		if pe.Meta.Usage != nil {
			meta.Usage = nil // the error's usage replaces the events', as a later usage event would
		}
		provider.MergeMeta(meta, pe.Meta)
	}
	if proto.Size(meta) > 0 {
		pe.Meta = meta
	}
}

// peeked replays the events read ahead by Retry, then reads on.
type peeked struct {
	provider.Stream
	buf     []*provider.Event
	tailErr error
	// fc is told of the first content event where the read-ahead
	// stopped before it (maxReadAhead events without one); nil once
	// told or when nobody asks.
	fc *firstContent
}

func (p *peeked) Recv() (*provider.Event, error) {
	if len(p.buf) > 0 {
		ev := p.buf[0]
		p.buf[0] = nil
		p.buf = p.buf[1:]
		return ev, nil
	}
	if p.tailErr != nil {
		return nil, p.tailErr
	}
	ev, err := p.Stream.Recv()
	if p.fc != nil && err == nil {
		p.fc.markContent(ev)
		if p.fc.seen.Load() {
			p.fc = nil
		}
	}
	return ev, err
}
