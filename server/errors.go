package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/auth"
	"github.com/llmrelay/llmrelay/server/catalog"
	"github.com/llmrelay/llmrelay/server/extract"
	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
)

// ErrorDomain is the ErrorInfo domain of every error.
const ErrorDomain = "llmrelay.dev"

// requestError is a problem with the caller's request, found by the
// gateway before any provider call.
type requestError struct {
	code   codes.Code
	reason llmrelayv1.ErrorReason
	field  string
	msg    string
	model  string
	// resourceType names what a NotFound did not find ("model",
	// "mcp_server"), resource its name: the status's ResourceInfo.
	resourceType, resource string
}

func (e *requestError) Error() string { return e.msg }

func invalidField(field, format string, args ...any) error {
	return &requestError{code: codes.InvalidArgument, reason: llmrelayv1.ErrorReason_ERROR_REASON_INVALID_REQUEST,
		field: field, msg: field + ": " + fmt.Sprintf(format, args...)}
}

// Reasons of the gateway's own limits and refusals.
var (
	reasonPermissionDenied   = reasonString(llmrelayv1.ErrorReason_ERROR_REASON_PERMISSION_DENIED)
	reasonResourceExhausted  = reasonString(llmrelayv1.ErrorReason_ERROR_REASON_RESOURCE_EXHAUSTED)
	reasonShuttingDown       = reasonString(llmrelayv1.ErrorReason_ERROR_REASON_SHUTTING_DOWN)
	reasonLimiterUnavailable = reasonString(llmrelayv1.ErrorReason_ERROR_REASON_RATE_LIMITER_UNAVAILABLE)
)

// reasonString is the ErrorInfo reason: the enum value name without prefix.
func reasonString(r llmrelayv1.ErrorReason) string {
	return r.String()[len("ERROR_REASON_"):]
}

type kindMapping struct {
	code   codes.Code
	reason llmrelayv1.ErrorReason
}

// kindTable is the one mapping from provider failures to gRPC codes.
var kindTable = map[provider.Kind]kindMapping{
	provider.KindInvalidRequest:   {codes.InvalidArgument, llmrelayv1.ErrorReason_ERROR_REASON_INVALID_REQUEST},
	provider.KindContextLength:    {codes.InvalidArgument, llmrelayv1.ErrorReason_ERROR_REASON_CONTEXT_LENGTH_EXCEEDED},
	provider.KindUnauthenticated:  {codes.Unauthenticated, llmrelayv1.ErrorReason_ERROR_REASON_UPSTREAM_UNAUTHENTICATED},
	provider.KindPermissionDenied: {codes.PermissionDenied, llmrelayv1.ErrorReason_ERROR_REASON_UPSTREAM_PERMISSION_DENIED},
	provider.KindNotFound:         {codes.NotFound, llmrelayv1.ErrorReason_ERROR_REASON_MODEL_NOT_FOUND},
	provider.KindRateLimited:      {codes.ResourceExhausted, llmrelayv1.ErrorReason_ERROR_REASON_UPSTREAM_RATE_LIMITED},
	provider.KindUnavailable:      {codes.Unavailable, llmrelayv1.ErrorReason_ERROR_REASON_UPSTREAM_UNAVAILABLE},
	provider.KindConnection:       {codes.Unavailable, llmrelayv1.ErrorReason_ERROR_REASON_UPSTREAM_UNAVAILABLE},
	provider.KindTimeout:          {codes.DeadlineExceeded, llmrelayv1.ErrorReason_ERROR_REASON_UPSTREAM_TIMEOUT},
	provider.KindContentFilter:    {codes.InvalidArgument, llmrelayv1.ErrorReason_ERROR_REASON_CONTENT_FILTERED},
	provider.KindBadResponse:      {codes.Unavailable, llmrelayv1.ErrorReason_ERROR_REASON_UPSTREAM_BAD_RESPONSE},
	provider.KindUnsupported:      {codes.Unimplemented, llmrelayv1.ErrorReason_ERROR_REASON_UNSUPPORTED_OPERATION},
	provider.KindCanceled:         {codes.Canceled, llmrelayv1.ErrorReason_ERROR_REASON_CANCELLED},
	provider.KindUnknown:          {codes.Unavailable, llmrelayv1.ErrorReason_ERROR_REASON_UPSTREAM_UNAVAILABLE},
	// A 409 still there after the retries: Aborted, the canonical code of
	// HTTP 409 (google.rpc.Code).
	provider.KindConflict: {codes.Aborted, llmrelayv1.ErrorReason_ERROR_REASON_UPSTREAM_UNAVAILABLE},
	// The provider's own refusal of a capability its model lacks
	// (Ollama's "<model> does not support tools"): what the gateway's
	// capability check answers when the configuration says so.
	provider.KindCapability: {codes.FailedPrecondition, llmrelayv1.ErrorReason_ERROR_REASON_CAPABILITY_NOT_SUPPORTED},
}

// gatewayQuota is the QuotaFailure of one of the gateway's own limits:
// subject is whose limit it is ("caller:<name>", "gateway"), limit its
// key (ErrorInfo.metadata.limit).
func gatewayQuota(subject, limit, msg string) *errdetails.QuotaFailure {
	if subject == "caller:" {
		subject = "gateway"
	}
	return &errdetails.QuotaFailure{Violations: []*errdetails.QuotaFailure_Violation{{
		Subject: subject, QuotaId: limit, Description: msg, ApiService: ErrorDomain,
	}}}
}

// upstreamQuota is the QuotaFailure of a provider's rate limit or spent
// quota (every ResourceExhausted status carries one, as google.rpc's
// guidance for RESOURCE_EXHAUSTED asks): the subject is the provider
// (deployment) whose quota it is. The provider's own violations (Gemini's
// QuotaFailure, the limit OpenAI's error type and message name) are
// carried as it sent them, under that subject when they name none, with
// the rate-limit state's requests or tokens limit when one names its
// metric alone. Without them, each limit its rate-limit state shows
// exhausted (nothing remaining) is a violation with its metric and
// value: requests and tokens, and the further limits of the rate-limit
// windows (RateLimit.windows: Anthropic's input_tokens and
// output_tokens, whose exhaustion the tokens headers, the most
// restrictive of the two, only repeat); without one, a
// violation with the provider's code and message.
func upstreamQuota(pe *provider.Error, meta *llmrelayv1.ResponseMeta, redact *pipeline.Redactor) *errdetails.QuotaFailure {
	name := pe.Provider
	if meta.GetProvider() != "" {
		name = meta.GetProvider()
	}
	subject := "provider:" + name
	rl := meta.GetRateLimit()
	if rl == nil {
		rl = pe.Meta.GetRateLimit()
	}
	q := &errdetails.QuotaFailure{}
	for _, pv := range pe.Quota {
		v := proto.Clone(pv).(*errdetails.QuotaFailure_Violation)
		if v.Subject == "" {
			v.Subject = subject
		}
		if v.QuotaValue == 0 && v.QuotaId == "" {
			// A limit named without its value (OpenAI's error type
			// alone): the rate-limit state's, which is of the per-minute
			// limits (a violation with a QuotaId names its window).
			switch v.QuotaMetric {
			case "requests":
				v.QuotaValue = rl.GetRequestsLimit()
			case "tokens":
				v.QuotaValue = rl.GetTokensLimit()
			}
		}
		v.Subject, v.Description, v.ApiService = clean(redact, v.Subject), cleanShort(redact, v.Description), clean(redact, v.ApiService)
		v.QuotaMetric, v.QuotaId = clean(redact, v.QuotaMetric), clean(redact, v.QuotaId)
		if len(v.QuotaDimensions) > 0 {
			dims := make(map[string]string, len(v.QuotaDimensions))
			for k, d := range v.QuotaDimensions {
				dims[clean(redact, k)] = clean(redact, d)
			}
			v.QuotaDimensions = dims
		}
		q.Violations = append(q.Violations, v)
	}
	if len(q.Violations) > 0 {
		return q
	}
	msg := cleanShort(redact, pe.Message)
	if rl == nil {
		rl = &llmrelayv1.RateLimit{}
	}
	exhausted := func(metric string, limit, remaining *int64) {
		if remaining == nil || *remaining > 0 {
			return
		}
		v := &errdetails.QuotaFailure_Violation{Subject: subject, QuotaMetric: metric, Description: msg}
		if limit != nil {
			v.QuotaValue = *limit
		}
		q.Violations = append(q.Violations, v)
	}
	exhausted("requests", rl.RequestsLimit, rl.RequestsRemaining)
	split := len(q.Violations)
	for _, metric := range []string{"input_tokens", "output_tokens"} {
		w := budgetWindow(metric, meta, pe.Meta)
		exhausted(metric, w.Limit, w.Remaining)
	}
	if len(q.Violations) == split {
		// No input or output limit exhausted: the tokens limit itself.
		exhausted("tokens", rl.TokensLimit, rl.TokensRemaining)
	}
	if len(q.Violations) == 0 {
		q.Violations = append(q.Violations, &errdetails.QuotaFailure_Violation{Subject: subject, QuotaId: clean(redact, pe.Code), Description: msg})
	}
	return q
}

// budgetWindow is the first rate-limit window of budget (RateLimit.windows)
// of the first of metas whose rate limit has one, an empty one when none
// has.
func budgetWindow(budget string, metas ...*llmrelayv1.ResponseMeta) *llmrelayv1.RateLimitWindow {
	for _, m := range metas {
		for _, w := range m.GetRateLimit().GetWindows() {
			if w.GetBudget() == budget {
				return w
			}
		}
	}
	return &llmrelayv1.RateLimitWindow{}
}

// upstreamResource is the ResourceInfo of a provider's NotFound: the
// model the deployment asked it for (the meta's resolved model, which a
// failed call holds as the upstream model it requested; the caller's
// model name without a meta), its owner the provider (the subject
// upstreamQuota gives a provider's quota).
func upstreamResource(pe *provider.Error, meta *llmrelayv1.ResponseMeta, name string, redact *pipeline.Redactor) *errdetails.ResourceInfo {
	model := meta.GetResolvedModel()
	if model == "" {
		model = meta.GetRequestedModel()
	}
	return &errdetails.ResourceInfo{ResourceType: "model", ResourceName: cleanShort(redact, model), Owner: clean(redact, "provider:"+name),
		Description: cleanShort(redact, pe.Message)}
}

// upstreamHelp is the provider's links about a failure (google.rpc.Help),
// nil when it gave none.
func upstreamHelp(pe *provider.Error, redact *pipeline.Redactor) *errdetails.Help {
	if len(pe.Help) == 0 {
		return nil
	}
	h := &errdetails.Help{}
	for _, l := range pe.Help {
		h.Links = append(h.Links, &errdetails.Help_Link{Description: cleanShort(redact, l.GetDescription()), Url: clean(redact, l.GetUrl())})
	}
	return h
}

// toStatus is the only place errors become gRPC statuses. meta, when not
// nil, is the failed call's meta (attached as FailedCallMeta); redact
// removes secrets from messages; log receives internal errors.
// clean is provider text on its way into a status: secrets redacted, and
// valid UTF-8 (details are protobuf strings; a provider's non-UTF-8 error
// body would otherwise make WithDetails fail and drop every detail).
func clean(redact *pipeline.Redactor, s string) string {
	return strings.ToValidUTF8(redact.String(s), "\uFFFD")
}

// callBound returns the gateway's bound when it is what ended ctx.
func callBound(ctx context.Context) *callBoundError {
	var cb *callBoundError
	if ctx.Err() != nil && errors.As(context.Cause(ctx), &cb) {
		return cb
	}
	return nil
}

func toStatus(ctx context.Context, err error, meta *llmrelayv1.ResponseMeta, redact *pipeline.Redactor, log *slog.Logger) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil && errors.Is(context.Cause(ctx), errShuttingDown) {
		// Whatever the cancellation looked like below (a cut provider
		// call, a canceled context), the call ended because the server
		// is going away.
		err = errShuttingDown
	}
	var details []protoadapt.MessageV1
	info := &errdetails.ErrorInfo{Domain: ErrorDomain, Metadata: map[string]string{}}
	if meta != nil {
		if meta.GetProvider() != "" {
			info.Metadata["provider"] = meta.GetProvider()
		}
		if meta.GetRequestedModel() != "" {
			info.Metadata["model"] = meta.GetRequestedModel()
		}
	}
	var (
		code codes.Code
		msg  string
		pe   *provider.Error
		re   *requestError
		oe   *catalog.OptionError
		se   *extract.SyntaxError
		ie   *extract.InputError
		out  *outputError
		ae   *auth.Error
		le   *limitError
	)
	var answer *llmrelayv1.Message
	switch {
	case errors.Is(err, errShuttingDown):
		code, msg = codes.Unavailable, errShuttingDown.Error()
		info.Reason = reasonShuttingDown
	case errors.As(err, &le):
		code, msg = le.code, le.msg
		info.Reason = reasonResourceExhausted
		if le.code == codes.InvalidArgument {
			info.Reason = reasonString(llmrelayv1.ErrorReason_ERROR_REASON_INVALID_REQUEST)
		}
		info.Metadata["limit"] = le.limit
		if le.code == codes.ResourceExhausted {
			details = append(details, gatewayQuota("gateway", le.limit, le.msg))
		}
		if le.field != "" {
			details = append(details, &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: le.field, Description: le.msg}}})
		}
		meta = nil
	case errors.As(err, &ae):
		msg = ae.Msg
		switch ae.Kind {
		case auth.PermissionDenied:
			code, info.Reason = codes.PermissionDenied, reasonPermissionDenied
			info.Metadata["model"] = ae.Model
		case auth.RateLimited:
			code, info.Reason = codes.ResourceExhausted, reasonResourceExhausted
			info.Metadata["limit"] = ae.Limit
			if ae.Budget != "" {
				info.Metadata["budget"] = ae.Budget
			}
			if ae.RetryAfter > 0 {
				details = append(details, &errdetails.RetryInfo{RetryDelay: durationpb.New(ae.RetryAfter)})
			}
			details = append(details, gatewayQuota("caller:"+ae.Caller, ae.Limit, ae.Msg))
		case auth.LimiterUnavailable:
			code, info.Reason = codes.Unavailable, reasonLimiterUnavailable
		default:
			code, info.Reason = codes.Unauthenticated, reasonString(llmrelayv1.ErrorReason_ERROR_REASON_UNAUTHENTICATED)
		}
		if ae.Caller != "" {
			info.Metadata["caller"] = ae.Caller
		}
		meta = nil // no provider was called
	case errors.As(err, &re):
		code, msg = re.code, re.msg
		info.Reason = reasonString(re.reason)
		if re.model != "" {
			info.Metadata["model"] = re.model
		}
		if re.field != "" {
			details = append(details, &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: re.field, Description: re.msg}}})
		}
		if re.resourceType != "" {
			// What was not found, as google.rpc's NOT_FOUND carries it;
			// the gateway's own configuration: no owner.
			details = append(details, &errdetails.ResourceInfo{ResourceType: re.resourceType, ResourceName: clean(redact, re.resource), Description: clean(redact, re.msg)})
		}
		meta = nil // no provider was called
	case errors.As(err, &oe):
		code, msg = codes.InvalidArgument, oe.Error()
		info.Reason = reasonString(llmrelayv1.ErrorReason_ERROR_REASON_INVALID_OPTION)
		info.Metadata["model"], info.Metadata["option"] = oe.Model, oe.Option
		details = append(details, &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: oe.RequestField(), Description: oe.Error()}}})
		meta = nil
	case errors.As(err, &se):
		code, msg = codes.InvalidArgument, se.Error()
		info.Reason = reasonString(llmrelayv1.ErrorReason_ERROR_REASON_INVALID_REQUEST)
		info.Metadata["offset"] = strconv.FormatInt(se.Offset, 10)
		details = append(details, &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "json",
			Description: fmt.Sprintf("not valid JSON at byte offset %d: %s", se.Offset, se.Msg)}}})
		meta = nil
	case errors.As(err, &ie):
		code, msg = codes.InvalidArgument, ie.Error()
		info.Reason = reasonString(llmrelayv1.ErrorReason_ERROR_REASON_INVALID_REQUEST)
		details = append(details, &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: ie.Field, Description: ie.Error()}}})
		meta = nil
	case errors.As(err, &out):
		// The provider worked; the answer is not what response_format asked
		// for. Not retryable as such: the caller decides (same tokens again).
		code, msg = codes.FailedPrecondition, out.Error()
		info.Reason = reasonString(llmrelayv1.ErrorReason_ERROR_REASON_OUTPUT_VALIDATION_FAILED)
		info.Metadata["violations"] = strconv.Itoa(len(out.errors))
		answer = out.message
	case errors.As(err, &pe):
		m, ok := kindTable[pe.Kind]
		if !ok {
			m = kindTable[provider.KindUnknown]
		}
		// Our own deadline or the caller's cancellation win over what the
		// transport saw.
		// So do they when they ended the wait before a retry: the call
		// ended for them, not for the attempt that failed before.
		interrupted := errors.Is(pe, pipeline.ErrBackoffInterrupted)
		// A body read that broke (ErrBrokeMidAnswer) may be the
		// cancellation closing the connection under it.
		broke := errors.Is(pe, provider.ErrBrokeMidAnswer)
		if ctx.Err() != nil && (pe.Kind == provider.KindTimeout || pe.Kind == provider.KindCanceled || pe.Kind == provider.KindConnection || broke || interrupted) {
			if errors.Is(ctx.Err(), context.Canceled) {
				m = kindTable[provider.KindCanceled]
			} else {
				m = kindTable[provider.KindTimeout]
			}
		}
		code = m.code
		info.Reason = reasonString(m.reason)
		var le *provider.LimitError
		if errors.As(pe, &le) {
			// A limit of the gateway stopped reading the answer.
			code, info.Reason = codes.ResourceExhausted, reasonResourceExhausted
			info.Metadata["limit"] = le.Limit
			details = append(details, gatewayQuota("gateway", le.Limit, le.Msg))
		} else if code == codes.ResourceExhausted {
			details = append(details, upstreamQuota(pe, meta, redact))
		}
		name := pe.Provider
		if meta != nil && meta.GetProvider() != "" {
			name = meta.GetProvider()
		}
		msg = name + ": " + pe.Message
		var tt *pipeline.TransportTimeout
		if ctx.Err() == nil && errors.As(pe, &tt) {
			// Which bound of the transport ran out: the setting to raise
			// ("timeout talking to provider" named none).
			msg = name + ": " + tt.Error()
		}
		if cb := callBound(ctx); cb != nil && code == codes.DeadlineExceeded {
			msg = name + ": " + cb.Error()
			info.Metadata[cb.metadataKey()] = cb.bound.String()
		}
		if interrupted && ctx.Err() != nil {
			why := "the call ended while waiting to retry after: " + pe.Message
			if callBound(ctx) != nil && code == codes.DeadlineExceeded {
				msg += " (" + why + ")" // after the bound's own words
			} else {
				msg = name + ": " + why
			}
		}
		if pe.Code != "" {
			info.Metadata["upstreamCode"] = clean(redact, pe.Code)
		}
		if pe.Type != "" {
			info.Metadata["upstreamType"] = clean(redact, pe.Type)
		}
		if pe.HTTPStatus >= 300 {
			// The status of an error answer. An error inside a 2xx
			// answer (a stream's error event, an error object in a 200,
			// a page instead of JSON) has none: the openai and ollama
			// adapters record the 200, the anthropic and gemini ones do
			// not, and "200" beside an error code reads as a success;
			// RetryReason.upstream_status says 0 for it too.
			info.Metadata["upstreamStatus"] = strconv.Itoa(pe.HTTPStatus)
		}
		if pe.RequestID != "" {
			info.Metadata["upstreamRequestId"] = clean(redact, pe.RequestID)
		}
		if pe.RetryAfter > 0 && pipeline.Retryable(pe) {
			// RetryInfo says that the same call may succeed after the
			// delay: only for a failure the retry policy would retry. A
			// Retry-After (or an exhausted limit's reset) beside a spent
			// quota (insufficient_quota), a refused request (400) or the
			// provider's x-should-retry: false would tell the caller to
			// wait for an answer that cannot change.
			details = append(details, &errdetails.RetryInfo{RetryDelay: durationpb.New(pe.RetryAfter)})
			switch {
			case errors.Is(pe, pipeline.ErrRetryAfterBeyondDeadline):
				msg += fmt.Sprintf(" (the provider asks to retry after %v, beyond the call's deadline)", pe.RetryAfter.Round(time.Millisecond))
			case errors.Is(pe, pipeline.ErrRetryAfterTooLong):
				msg += fmt.Sprintf(" (the provider asks to retry after %v, longer than the gateway waits: max_retry_after)", pe.RetryAfter.Round(time.Millisecond))
			}
		}
		if h := upstreamHelp(pe, redact); h != nil {
			details = append(details, h)
		}
		if code == codes.NotFound {
			// What the provider did not find (google.rpc's NOT_FOUND
			// carries ResourceInfo): the deployment's upstream model,
			// owned by the provider; the meta says which deployment.
			details = append(details, upstreamResource(pe, meta, name, redact))
		}
		if pe.Param != "" && code == codes.InvalidArgument {
			details = append(details, &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: cleanShort(redact, pe.Param), Description: cleanShort(redact, pe.Message)}}})
		}
		if meta != nil && meta.ProviderRequestId == "" {
			meta.ProviderRequestId = clean(redact, pe.RequestID)
		}
	case errors.Is(err, context.Canceled):
		code, msg = codes.Canceled, "call canceled"
		info.Reason = reasonString(llmrelayv1.ErrorReason_ERROR_REASON_CANCELLED)
	case errors.Is(err, context.DeadlineExceeded):
		code, msg = codes.DeadlineExceeded, "deadline exceeded"
		info.Reason = reasonString(llmrelayv1.ErrorReason_ERROR_REASON_UPSTREAM_TIMEOUT)
		if cb := callBound(ctx); cb != nil {
			msg = cb.Error()
			info.Metadata[cb.metadataKey()] = cb.bound.String()
		}
	default:
		if st, ok := status.FromError(err); ok {
			return st.Err()
		}
		log.ErrorContext(ctx, "internal error", slog.String("error", redact.String(err.Error())))
		code, msg = codes.Internal, "internal error"
		info.Reason = reasonString(llmrelayv1.ErrorReason_ERROR_REASON_INTERNAL)
	}
	msg, _ = cutAt(clean(redact, msg), maxStatusMessageBytes) // the trailer's bound (failedDetail)
	st := status.New(code, msg)
	details = append([]protoadapt.MessageV1{info}, details...)
	if meta != nil {
		details = append(details, protoadapt.MessageV1Of(failedDetail(meta, answer))) // bounded: it travels in the trailer
	}
	withDetails, derr := st.WithDetails(details...)
	if derr != nil {
		log.ErrorContext(ctx, "attach error details", slog.String("error", derr.Error()))
		return st.Err()
	}
	return withDetails.Err()
}

// A failed call's meta travels in the status, in the RPC's trailer
// (grpc-status-details-bin, base64), and clients and proxies bound their
// metadata: grpc-java 8 KiB by default, Envoy 60 KiB; a status over the
// bound is lost entirely (the caller sees a transport error instead of
// the call's code and reason). The FailedCallMeta detail is kept within
// maxFailedMetaBytes and the status message within maxStatusMessageBytes
// (provider texts in the other details within keptTextBytes), so that the
// whole status stays under grpc-java's default: the message goes twice
// (grpc-message, and inside grpc-status-details-bin), the details in
// base64 (a third more): 1 + 4/3 KiB for the message, 4 KiB for this
// detail, what is left for ErrorInfo and the others. meta.proto's
// FailedCallMeta comment is the contract of what goes first.
const (
	maxFailedMetaBytes    = 3 << 10
	maxStatusMessageBytes = 1 << 10
	// keptEntries is how many entries of a list a bounded meta keeps.
	keptEntries = 8
	// keptTextBytes is how much of a text a bounded meta keeps.
	keptTextBytes = 256
)

// failedDetail is the FailedCallMeta of a failed call, within
// maxFailedMetaBytes. meta and answer are not changed: the call's
// accounting, logs and traces use the whole meta.
func failedDetail(meta *llmrelayv1.ResponseMeta, answer *llmrelayv1.Message) *llmrelayv1.FailedCallMeta {
	f := &llmrelayv1.FailedCallMeta{Meta: meta, Message: answer}
	if proto.Size(f) <= maxFailedMetaBytes {
		return f
	}
	m := proto.CloneOf(meta)
	f = &llmrelayv1.FailedCallMeta{Meta: m, Message: answer}
	fits := func() bool { return proto.Size(f) <= maxFailedMetaBytes }
	if m.Raw != nil {
		m.Raw = nil
		f.Omitted = append(f.Omitted, "meta.raw")
		if fits() {
			return f
		}
	}
	if m.Extended != nil {
		m.Extended = nil
		f.Omitted = append(f.Omitted, "meta.extended")
		if fits() {
			return f
		}
	}
	if len(m.Warnings) > keptEntries {
		m.Warnings = m.Warnings[:keptEntries]
		f.Omitted = append(f.Omitted, "meta.warnings")
	}
	if ov := m.GetOutputValidation(); len(ov.GetErrors()) > keptEntries {
		ov.Errors = ov.Errors[:keptEntries]
		f.Omitted = append(f.Omitted, "meta.output_validation.errors")
	}
	if len(m.DroppedOptions) > keptEntries {
		m.DroppedOptions = m.DroppedOptions[:keptEntries]
		f.Omitted = append(f.Omitted, "meta.dropped_options")
	}
	if r := m.GetRouting(); len(r.GetTried()) > keptEntries {
		r.Tried = r.Tried[:keptEntries]
		f.Omitted = append(f.Omitted, "meta.routing.tried")
	}
	if rl := m.GetRateLimit(); len(rl.GetWindows()) > keptEntries {
		// One window per header family the provider sent: a proxy may
		// send any number of them (a Claude subscription's unified
		// windows are named by their headers). The first ones, which
		// hold the typed budgets.
		rl.Windows = rl.Windows[:keptEntries]
		f.Omitted = append(f.Omitted, "meta.rate_limit.windows")
	}
	cut := false
	for _, rr := range m.RetryReasons {
		if s, c := cutText(rr.Message); c {
			rr.Message, cut = s, true
		}
	}
	if cut {
		f.Omitted = append(f.Omitted, "meta.retry_reasons.message")
	}
	if fits() {
		return f
	}
	if f.Message != nil {
		f.Message = nil
		f.Omitted = append(f.Omitted, "message")
		if fits() {
			return f
		}
	}
	f.Meta = coreMeta(m)
	f.Omitted = append(f.Omitted, "meta")
	return f
}

// coreMeta is what a meta too large for the status keeps: its ids, model
// names, times, counts, usage and cost, texts cut at keptTextBytes (a
// provider's id or model name is its own to choose).
func coreMeta(m *llmrelayv1.ResponseMeta) *llmrelayv1.ResponseMeta {
	t := func(s string) string { c, _ := cutText(s); return c }
	core := &llmrelayv1.ResponseMeta{
		RequestId: t(m.RequestId), ProviderRequestId: t(m.ProviderRequestId), Provider: t(m.Provider), Protocol: m.Protocol,
		RequestedModel: t(m.RequestedModel), ResolvedModel: t(m.ResolvedModel), ResponseId: t(m.ResponseId), CreateTime: m.CreateTime,
		TotalDuration: m.TotalDuration, RequestDuration: m.RequestDuration, TimeToFirstToken: m.TimeToFirstToken, Attempts: m.Attempts,
		Usage: m.Usage, FinishReason: m.FinishReason, ProviderFinishReason: t(m.ProviderFinishReason), Format: t(m.Format),
		ToolCallCount: m.ToolCallCount, EmbeddingsCount: m.EmbeddingsCount, TraceId: t(m.TraceId), Cost: m.Cost, Caller: t(m.Caller),
		ServiceTier: t(m.ServiceTier),
	}
	if d := m.GetRouting().GetDeployment(); d != "" {
		core.Routing = &llmrelayv1.Routing{Deployment: t(d)}
	}
	return core
}

// cutText is s cut at keptTextBytes (on a rune boundary, "…" said), and
// whether it was.
func cutText(s string) (string, bool) {
	return cutAt(s, keptTextBytes)
}

// cutAt is s cut at max bytes (on a rune boundary, "…" said), and whether
// it was.
func cutAt(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…", true
}

// cleanShort is clean for a provider's text in a status detail: cut at
// keptTextBytes (the status message has it whole, up to its own bound).
func cleanShort(redact *pipeline.Redactor, s string) string {
	c, _ := cutText(clean(redact, s))
	return c
}
