package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

const testKey = "test-key"

// authHeaders are the request headers shown in request goldens.
var authHeaders = []string{"Authorization", "api-key", "Content-Type", "Accept", "OpenAI-Organization", "OpenAI-Project", "X-Custom"}

func td(name string) string { return filepath.Join("testdata", name) }

// kind selects the constructor of a test provider.
type kind int

const (
	kOpenAI kind = iota
	kAzure
	kAzureV1Entra
)

func newTestProvider(t testing.TB, k kind, baseURL string, extra ...Option) *Provider {
	t.Helper()
	var (
		p   *Provider
		err error
	)
	switch k {
	case kOpenAI:
		p, err = New(testKey, append([]Option{WithBaseURL(baseURL + "/v1")}, extra...)...)
	case kAzure:
		p, err = NewAzure(testKey, append([]Option{WithBaseURL(baseURL)}, extra...)...)
	case kAzureV1Entra:
		p, err = NewAzure("", append([]Option{WithBaseURL(baseURL), WithAzureV1Routes(true),
			WithEntraToken(func(context.Context) (string, error) { return "test-entra-token", nil })}, extra...)...)
	}
	if err != nil {
		t.Fatalf("new provider: %v", err)
	}
	return p
}

// protoCompact renders a message as compact, stable JSON.
func protoCompact(t testing.TB, m proto.Message) string {
	t.Helper()
	raw, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		t.Fatalf("protojson: %v", err)
	}
	var c bytes.Buffer
	if err := json.Compact(&c, raw); err != nil {
		t.Fatalf("compact: %v", err)
	}
	return c.String()
}

// renderResult renders a Result for a golden file.
func renderResult(t testing.TB, res *provider.Result) []byte {
	t.Helper()
	var b strings.Builder
	b.WriteString("{")
	if res.Message != nil {
		b.WriteString(`"message":` + protoCompact(t, res.Message) + ",")
	}
	if res.Embeddings != nil {
		b.WriteString(`"embeddings":[`)
		for i, e := range res.Embeddings {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(protoCompact(t, e))
		}
		b.WriteString("],")
	}
	b.WriteString(`"meta":` + protoCompact(t, res.Meta) + "}")
	return providertest.IndentJSON([]byte(b.String()))
}

// collect reads a stream to its end and renders every event, then the
// terminal result ("eof" or the error).
func collect(t testing.TB, s provider.Stream) ([]*provider.Event, []byte, error) {
	t.Helper()
	var (
		evs []*provider.Event
		out bytes.Buffer
	)
	for i := 0; ; i++ {
		if i > 10000 {
			t.Fatal("stream does not end")
		}
		ev, err := s.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				out.WriteString("eof\n")
				return evs, out.Bytes(), nil
			}
			out.WriteString(renderErr(err) + "\n")
			return evs, out.Bytes(), err
		}
		evs = append(evs, ev)
		out.WriteString(renderEvent(t, ev) + "\n")
	}
}

func renderEvent(t testing.TB, ev *provider.Event) string {
	switch ev.Kind {
	case provider.EventReasoning:
		return renderReasoning(ev)
	case provider.EventMeta:
		return "meta " + protoCompact(t, ev.Meta)
	case provider.EventText:
		if ev.Phase != "" {
			return fmt.Sprintf("text %q phase=%s", ev.Text, ev.Phase)
		}
		return fmt.Sprintf("text %q", ev.Text)
	case provider.EventRefusal:
		return fmt.Sprintf("refusal %q", ev.Text)
	case provider.EventToolCall:
		return fmt.Sprintf("tool_call id=%s index=%d name=%q args=%q", ev.ToolCall.CallID, ev.ToolCall.Index, ev.ToolCall.Name, ev.ToolCall.Arguments)
	case provider.EventToolCallEnd:
		return fmt.Sprintf("tool_call_end id=%s index=%d", ev.ToolCall.CallID, ev.ToolCall.Index)
	case provider.EventToolCallCut:
		return fmt.Sprintf("tool_call_cut id=%s index=%d", ev.ToolCall.CallID, ev.ToolCall.Index)
	case provider.EventUsage:
		return "usage " + protoCompact(t, ev.Usage)
	case provider.EventProviderItem:
		return fmt.Sprintf("provider_item type=%s json=%s", ev.Item.Type, ev.Item.JSON)
	default:
		return fmt.Sprintf("unknown event kind %d", ev.Kind)
	}
}

func renderErr(err error) string {
	var pe *provider.Error
	if !errors.As(err, &pe) {
		return "error (not a *provider.Error) " + err.Error()
	}
	return fmt.Sprintf("error provider=%s kind=%s http=%d code=%q request_id=%s retry_after=%s message=%q",
		pe.Provider, pe.Kind, pe.HTTPStatus, pe.Code, pe.RequestID, pe.RetryAfter, pe.Message)
}

// folded is a stream folded into the shape of a Generate result.
type folded struct {
	Message *llmrelayv1.Message
	Meta    *llmrelayv1.ResponseMeta
}

// fold concatenates text and refusal deltas, tool-call fragments per
// CallID (in Index order), keeps the last usage and merges the metas.
func foldEvents(t testing.TB, evs []*provider.Event) folded {
	t.Helper()
	var text, refusal strings.Builder
	type call struct {
		id, name string
		args     strings.Builder
	}
	var calls []*call
	byID := map[string]*call{}
	meta := &llmrelayv1.ResponseMeta{}
	var usage *llmrelayv1.Usage
	for _, ev := range evs {
		switch ev.Kind {
		case provider.EventMeta:
			proto.Merge(meta, ev.Meta)
		case provider.EventText:
			text.WriteString(ev.Text)
		case provider.EventRefusal:
			refusal.WriteString(ev.Text)
		case provider.EventToolCall:
			if ev.ToolCall.CallID == "" {
				t.Fatalf("tool call delta without CallID: %+v", ev.ToolCall)
			}
			c := byID[ev.ToolCall.CallID]
			if c == nil {
				if ev.ToolCall.Index != len(calls) {
					t.Fatalf("call %s: index %d, want %d", ev.ToolCall.CallID, ev.ToolCall.Index, len(calls))
				}
				c = &call{id: ev.ToolCall.CallID}
				byID[c.id] = c
				calls = append(calls, c)
			} else if ev.ToolCall.Name != "" {
				t.Fatalf("call %s: name on a later delta", c.id)
			}
			if ev.ToolCall.Name != "" {
				c.name = ev.ToolCall.Name
			}
			c.args.WriteString(ev.ToolCall.Arguments)
		case provider.EventUsage:
			usage = ev.Usage
		}
	}
	msg := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT}
	if text.Len() > 0 {
		msg.Parts = append(msg.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: text.String()}})
	}
	if refusal.Len() > 0 {
		msg.Parts = append(msg.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Refusal{Refusal: refusal.String()}})
	}
	for _, c := range calls {
		args := c.args.String()
		msg.Parts = append(msg.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
			CallId: c.id, Name: c.name, Arguments: args, ArgumentsValid: json.Valid([]byte(args)) && strings.HasPrefix(strings.TrimSpace(args), "{")}}})
	}
	meta.Usage = usage
	meta.ToolCallCount = int32(len(calls))
	return folded{Message: msg, Meta: meta}
}

// providerError asserts err is a *provider.Error and returns it.
func providerError(t testing.TB, err error) *provider.Error {
	t.Helper()
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *provider.Error", err, err)
	}
	return pe
}

func renderReasoning(ev *provider.Event) string {
	r := ev.Reasoning
	out := fmt.Sprintf("reasoning index=%d", r.Index)
	if r.ID != "" {
		out += " id=" + r.ID
	}
	if r.Redacted {
		out += " redacted"
	}
	if r.Text != "" {
		out += fmt.Sprintf(" text=%q", r.Text)
	}
	if r.Signature != "" {
		out += fmt.Sprintf(" signature=%q", r.Signature)
	}
	return out
}

// recordedStream is a real stream replayed with its golden and the
// expectations written by hand from the recording (fantasy_test.go,
// langchaingo_test.go, crewai_test.go: one table per source).
type recordedStream struct {
	name, req string
	k         kind
	check     func(t *testing.T, f folded)
}

// runRecordedStreams replays each case's recording through the adapter,
// checks its golden and the stream invariants, and runs its check on the
// answer folded as the server relays it.
func runRecordedStreams(t *testing.T, cases []recordedStream) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			s, err := newTestProvider(t, tc.k, srv.URL).Stream(context.Background(), chatRequests(t)[tc.req])
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			evs, rendered, err := collect(t, s)
			providertest.Golden(t, td(tc.name+".golden"), rendered)
			if err != nil {
				t.Fatal(err)
			}
			checkStreamInvariants(t, evs)
			checkRedactedReasoning(t, evs)
			tc.check(t, accFold(t, evs))
		})
	}
}

// recordedUnary is a real unary answer replayed as recordedStream is.
type recordedUnary struct {
	name, req string
	k         kind
	check     func(t *testing.T, res *provider.Result)
}

// runRecordedUnary replays each case's recording through Generate, checks
// its golden and the result invariants, and runs its check.
func runRecordedUnary(t *testing.T, cases []recordedUnary) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, td(tc.name+".http"))
			res, err := newTestProvider(t, tc.k, srv.URL).Generate(context.Background(), chatRequests(t)[tc.req])
			if err != nil {
				t.Fatal(err)
			}
			checkResultInvariants(t, res)
			providertest.Golden(t, td(tc.name+".golden"), renderResult(t, res))
			tc.check(t, res)
		})
	}
}
