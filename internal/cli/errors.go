package cli

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// exitCode classifies an error: usage, a status from the server (by its
// ErrorInfo reason first: UPSTREAM_* and CONTENT_FILTERED are the
// provider's doing), the transport, or anything else.
func exitCode(err error) int {
	var ue *usageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	st, ok := status.FromError(err)
	if !ok {
		return ExitFailure
	}
	if info := errorInfo(st); info != nil && (strings.HasPrefix(info.GetReason(), "UPSTREAM_") || info.GetReason() == "CONTENT_FILTERED") {
		return ExitProvider
	}
	switch st.Code() {
	case codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition, codes.OutOfRange, codes.Unimplemented,
		codes.Unauthenticated, codes.PermissionDenied:
		// The gateway refused the request, the caller's token included.
		return ExitInvalidRequest
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted:
		// No answer, or the gateway's own limits: try again later.
		return ExitUnavailable
	}
	return ExitFailure
}

func errorInfo(st *status.Status) *errdetails.ErrorInfo {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info
		}
	}
	return nil
}

// describe renders an error in words: for a status, its code, message and
// every detail on its own indented line.
func describe(err error) string {
	st, ok := status.FromError(err)
	if !ok {
		return err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", st.Code(), st.Message())
	line := func(format string, args ...any) {
		b.WriteString("\n  ")
		fmt.Fprintf(&b, format, args...)
	}
	if st.Code() == codes.Unavailable && len(st.Details()) == 0 && strings.Contains(st.Message(), "while dialing") {
		// grpc-go's own status: nothing listens at --addr.
		line("no server answered: start one (llmrelay serve), name its address with --addr or $LLMRELAY_ADDR, or run the call in process with --local")
	}
	// The gateway's own (a provider's rejected key is UPSTREAM_UNAUTHENTICATED).
	if info := errorInfo(st); st.Code() == codes.Unauthenticated && info.GetReason() == "UNAUTHENTICATED" {
		line("the server wants a caller token: --token TOKEN or $LLMRELAY_TOKEN")
	}
	if st.Code() == codes.NotFound && st.Message() == "unknown service" && len(st.Details()) == 0 {
		// grpc's health service, which does not say which it knows.
		line("the server reports health for \"\" (the whole server, the default), %s and %s",
			llmrelayv1.GatewayService_ServiceDesc.ServiceName, llmrelayv1.ExtractService_ServiceDesc.ServiceName)
	}
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			line("reason: %s (%s)", d.GetReason(), d.GetDomain())
			keys := make([]string, 0, len(d.GetMetadata()))
			for k := range d.GetMetadata() {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				line("%s: %s", k, d.GetMetadata()[k])
			}
		case *errdetails.BadRequest:
			for _, v := range d.GetFieldViolations() {
				// The server's descriptions often start with the field
				// itself ("messages: at least one ..."): name it once.
				line("invalid field %s: %s", v.GetField(), strings.TrimPrefix(v.GetDescription(), v.GetField()+": "))
			}
		case *errdetails.RetryInfo:
			line("retry after: %s", d.GetRetryDelay().AsDuration())
		case *errdetails.PreconditionFailure:
			for _, v := range d.GetViolations() {
				line("precondition %s %s: %s", v.GetType(), v.GetSubject(), v.GetDescription())
			}
		case *errdetails.ResourceInfo:
			line("resource %s %s: %s", d.GetResourceType(), d.GetResourceName(), d.GetDescription())
		case *errdetails.RequestInfo:
			line("request id: %s", d.GetRequestId())
		case *errdetails.Help:
			for _, l := range d.GetLinks() {
				line("help: %s %s", l.GetDescription(), l.GetUrl())
			}
		case *errdetails.LocalizedMessage:
			line("message (%s): %s", d.GetLocale(), d.GetMessage())
		case *llmrelayv1.FailedCallMeta:
			describeFailedMeta(line, d.GetMeta())
		case error:
			line("undecodable detail: %v", d)
		default:
			line("detail: %v", d)
		}
	}
	return b.String()
}

func describeFailedMeta(line func(string, ...any), m *llmrelayv1.ResponseMeta) {
	if m == nil {
		return
	}
	if m.GetRequestId() != "" {
		line("request id: %s", m.GetRequestId())
	}
	if m.GetProviderRequestId() != "" {
		line("provider request id: %s", m.GetProviderRequestId())
	}
	line("attempts: %d", m.GetAttempts())
	for _, r := range m.GetRetryReasons() {
		where := ""
		if r.GetDeployment() != "" {
			where = " on " + r.GetDeployment()
		}
		msg := ""
		if r.GetMessage() != "" {
			msg = ": " + r.GetMessage()
		}
		line("attempt %d%s failed (%s)%s", r.GetAttempt(), where, r.GetReason(), msg)
	}
}
