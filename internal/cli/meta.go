package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// metaSummary is the one-line --meta summary of a call.
func metaSummary(m *llmrelayv1.ResponseMeta) string {
	if m == nil {
		return "meta: none received"
	}
	u := m.GetUsage()
	parts := []string{
		fmt.Sprintf("meta: %s via %s", m.GetRequestedModel(), m.GetProvider()),
		fmt.Sprintf("tokens %d in, %d out, %d total", u.GetInputTokens(), u.GetOutputTokens(), u.GetTotalTokens()),
	}
	timing := "time " + roundDuration(m.GetTotalDuration().AsDuration())
	if m.GetTimeToFirstToken() != nil {
		timing += ", first token " + roundDuration(m.GetTimeToFirstToken().AsDuration())
	}
	parts = append(parts, timing, fmt.Sprintf("attempts %d", m.GetAttempts()))
	if id := m.GetProviderRequestId(); id != "" {
		parts = append(parts, "provider request id "+id)
	}
	if c := m.GetCost(); c != nil {
		parts = append(parts, "cost "+formatNanos(c.GetAmountNanos())+" "+c.GetCurrency())
	}
	if fr := m.GetFinishReason(); fr != llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED {
		parts = append(parts, "finish "+strings.TrimPrefix(fr.String(), "FINISH_REASON_"))
	}
	if m.GetRequestId() != "" {
		parts = append(parts, "request id "+m.GetRequestId())
	}
	return strings.Join(parts, " | ")
}

func roundDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	default:
		return d.Round(time.Microsecond).String()
	}
}

// formatNanos renders billionths of a currency unit as an exact decimal.
func formatNanos(n int64) string {
	sign := ""
	if n < 0 {
		sign, n = "-", -n
	}
	frac := strings.TrimRight(fmt.Sprintf("%09d", n%1_000_000_000), "0")
	s := sign + strconv.FormatInt(n/1_000_000_000, 10)
	if frac != "" {
		s += "." + frac
	}
	return s
}

// notices writes to w what a reader of the streamed answer would otherwise
// not learn: the options ignore_invalid_options dropped, the warnings of
// the call, and an answer that the token limit cut or a content filter
// stopped. (-json shows them in the response; --meta adds the summary.)
func notices(w io.Writer, cmd string, m *llmrelayv1.ResponseMeta) {
	for _, d := range m.GetDroppedOptions() {
		fmt.Fprintf(w, "llmrelay %s: option %s dropped (ignore_invalid_options): %s\n", cmd, d.GetOption(), d.GetReason())
	}
	for _, warning := range m.GetWarnings() {
		fmt.Fprintf(w, "llmrelay %s: warning: %s\n", cmd, warning)
	}
	switch m.GetFinishReason() {
	case llmrelayv1.FinishReason_FINISH_REASON_LENGTH:
		fmt.Fprintf(w, "llmrelay %s: the answer was cut at the output token limit (finish reason LENGTH; -o max_tokens=N raises it)\n", cmd)
	case llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER:
		fmt.Fprintf(w, "llmrelay %s: the provider's content filter stopped the answer (finish reason CONTENT_FILTER, provider's reason %q)\n", cmd, m.GetProviderFinishReason())
	}
}
