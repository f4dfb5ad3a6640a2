package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// StreamAnswer is (in Error.Err) a 2xx answer to a non-streaming request
// that is an event stream: a server or proxy that ignored "stream": false
// (or never sent it: Ollama's native API streams unless told not to) and
// answered with the events its streaming endpoint sends. ReadBody returns
// it, read whole, as a KindBadResponse Error; the pipeline gives it to the
// adapter's own stream reader (WithAnswer) and folds the events into the
// answer (FoldStream), with StreamAnswerWarning. Nothing is sent again.
type StreamAnswer struct {
	// ContentType is the media type the stream reader is given: the
	// answer's own, or text/event-stream for a body that is plainly
	// server-sent events under another label.
	ContentType string
	resp        *http.Response
	body        []byte
	// tail is the read error that ended the body (the idle timeout, a
	// connection broken after the events), nil for a clean end: the
	// stream reader reads it after the events.
	tail error
}

// failingReader returns err.
type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

func (a *StreamAnswer) Error() string {
	return "the non-streaming request was answered with an event stream (" + a.ContentType + ")"
}

// StreamAnswerWarning is the warning of an answer folded from the event
// stream a non-streaming request got.
const StreamAnswerWarning = "the provider answered the non-streaming request with an event stream; its events were folded into this answer"

// StreamAnswerOf is the StreamAnswer err carries, nil when none.
func StreamAnswerOf(err error) *StreamAnswer {
	var a *StreamAnswer
	if errors.As(err, &a) {
		return a
	}
	return nil
}

// streamMediaType is the media type of an event stream's answer as its
// stream reader needs it, "" when body is not one: a body labelled with
// an NDJSON type (Ollama's application/x-ndjson, which its unary answers
// never have); or a body that begins as server-sent events do (a "data:", "event:", "id:" or "retry:" field, a ":" comment),
// which no JSON value does, whatever its label. Cheap for a JSON answer:
// its first byte, and one header lookup.
func streamMediaType(h http.Header, body []byte) string {
	t := bytes.TrimLeft(body, " \t\r\n\ufeff")
	if len(t) == 0 {
		return ""
	}
	if t[0] != '{' && t[0] != '[' {
		if sseStart(t) {
			return "text/event-stream"
		}
		return ""
	}
	mt, _, _ := strings.Cut(h.Get("Content-Type"), ";")
	switch mt = strings.ToLower(strings.TrimSpace(mt)); mt {
	case "application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines":
		// Even one line: a stream's first line alone (Ollama's done
		// false) is a cut stream, not an answer.
		return mt
	}
	return ""
}

// JSONThenDoneWarning is the warning of a unary answer whose JSON came
// framed as an event stream's: labelled text/event-stream with the
// stream terminator "data: [DONE]" after it.
const JSONThenDoneWarning = "the provider sent its JSON answer with an event stream's terminator after it (data: [DONE]); the answer is the JSON before it"

// jsonThenDone is the JSON answer of a body labelled text/event-stream
// that is the whole answer's JSON object with an event stream's
// terminator glued after it ({…}\n\ndata: [DONE]: a server that framed
// its non-streaming answer as a stream, decolua/9router#3492); ok false
// for any other body.
func jsonThenDone(h http.Header, body []byte) (answer []byte, ok bool) {
	t := bytes.TrimSpace(body)
	if len(t) == 0 || t[0] != '{' || !bytes.HasSuffix(t, []byte("[DONE]")) {
		return nil, false
	}
	if mt, _, _ := strings.Cut(h.Get("Content-Type"), ";"); !strings.EqualFold(strings.TrimSpace(mt), "text/event-stream") {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	var v json.RawMessage
	if dec.Decode(&v) != nil {
		return nil, false
	}
	rest := bytes.TrimSpace(t[dec.InputOffset():])
	rest, isData := bytes.CutPrefix(rest, []byte("data:"))
	if !isData || string(bytes.TrimSpace(rest)) != "[DONE]" {
		return nil, false
	}
	return v, true
}

// sseStart reports whether b begins with a server-sent events field or
// comment.
func sseStart(b []byte) bool {
	if b[0] == ':' {
		return true
	}
	for _, f := range [...]string{"data:", "event:", "id:", "retry:"} {
		if bytes.HasPrefix(b, []byte(f)) {
			return true
		}
	}
	return false
}

// streamAnswerError is ReadBody's error for an event stream's answer.
func streamAnswerError(providerName string, resp *http.Response, body []byte, mediaType string) *Error {
	a := &StreamAnswer{ContentType: mediaType, resp: resp, body: body}
	e := BadResponse(providerName, "expected a JSON answer, got an event stream (%s)", mediaType)
	e.Err = a
	return e
}

// replayKey is the context key of WithAnswer.
type replayKey struct{}

type replay struct {
	a     *StreamAnswer
	taken atomic.Bool
}

// replaying counts the WithAnswer contexts not yet released: Do looks in
// a request's context only while one is (an atomic load per request, not
// a walk up every request's context chain).
var replaying atomic.Int64

// WithAnswer is ctx under which the next provider request Do sends is not
// sent: a's answer, already read, is its response (once). The pipeline
// opens the adapter's stream under it, so the adapter's stream reader
// reads the events the non-streaming request got. release must be called
// once the stream is open (or failed to open).
func WithAnswer(ctx context.Context, a *StreamAnswer) (_ context.Context, release func()) {
	replaying.Add(1)
	var once sync.Once
	return context.WithValue(ctx, replayKey{}, &replay{a: a}), func() { once.Do(func() { replaying.Add(-1) }) }
}

// answeredFor is the response WithAnswer holds for req, nil when none.
func answeredFor(req *http.Request) *http.Response {
	if replaying.Load() == 0 {
		return nil
	}
	r, ok := req.Context().Value(replayKey{}).(*replay)
	if !ok || !r.taken.CompareAndSwap(false, true) {
		return nil
	}
	resp := *r.a.resp
	resp.Header = r.a.resp.Header.Clone()
	resp.Header.Set("Content-Type", r.a.ContentType)
	resp.Body = io.NopCloser(bytes.NewReader(r.a.body))
	resp.ContentLength = int64(len(r.a.body))
	if r.a.tail != nil {
		resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(r.a.body), failingReader{r.a.tail}))
		resp.ContentLength = -1
	}
	resp.Request = req
	return &resp
}

// FoldStream reads s to its end and folds its events into the answer the
// non-streaming call would have returned, as the gateway folds a stream
// it relays (package fold): text, refusals, reasoning and tool calls in
// their order, the meta events merged, the last usage. A Recv error is
// returned as it is (a cut stream, the provider's error event), with what
// the events before it reported (rate limits, request and response ids,
// usage) under what it reports itself, in its Meta: the failure's meta is
// the only place left for them. s is closed.
func FoldStream(s Stream) (*Result, error) {
	defer s.Close() //nolint:errcheck // a read stream's close reports nothing useful
	var (
		acc       fold.Accumulator
		meta      = &llmrelayv1.ResponseMeta{}
		usage     *llmrelayv1.Usage
		pieceKind EventKind
		pieceItem string
		done      = map[string]bool{}
	)
	complete := func(id string, cut bool) error {
		tc, idx := acc.ToolCall(id)
		if tc == nil || done[id] {
			return nil
		}
		if cut {
			tc.ArgumentsValid = false
		}
		done[id] = true
		return acc.AddToolCallDone(&llmrelayv1.ToolCallDone{Index: idx, ToolCall: tc})
	}
	closeOpen := func() error {
		for _, id := range acc.Open() {
			if err := complete(id, false); err != nil {
				return err
			}
		}
		return nil
	}
	broken := func(err error) error {
		e := BadResponse("", "the provider's stream broke its protocol: %v", err)
		e.Err = err
		return e
	}
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, keepFolded(err, meta, usage)
		}
		if ev == nil {
			continue
		}
		var ferr error
		switch ev.Kind {
		case EventMeta:
			if ev.Meta != nil {
				MergeMeta(meta, ev.Meta)
				if ev.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED {
					ferr = closeOpen()
				}
			}
		case EventText, EventRefusal:
			if ev.Text == "" {
				continue
			}
			item := ""
			if ev.ItemID != "" && (ev.Kind != pieceKind || ev.ItemID != pieceItem) {
				item = ev.ItemID
			}
			pieceKind, pieceItem = ev.Kind, ev.ItemID
			if ev.Kind == EventText {
				acc.AddItemText(ev.Text, ev.Phase, item, ev.BeginsPart)
			} else {
				acc.AddItemRefusal(ev.Text, item)
			}
		case EventReasoning:
			pieceKind = 0
			rd := ev.Reasoning
			ferr = acc.AddReasoning(rd.Proto())
		case EventProviderItem:
			if ev.Item == nil {
				continue
			}
			pieceKind = 0
			ferr = acc.AddProviderItem(&llmrelayv1.ProviderItem{Type: ev.Item.Type, Json: ev.Item.JSON})
		case EventToolCall:
			pieceKind = 0
			tc := ev.ToolCall
			ferr = acc.AddToolCallDelta(&llmrelayv1.ToolCallDelta{CallId: tc.CallID, Index: int32(tc.Index), Name: tc.Name,
				ArgumentsDelta: tc.Arguments, Signature: tc.Signature})
		case EventToolCallEnd, EventToolCallCut:
			ferr = complete(ev.ToolCall.CallID, ev.Kind == EventToolCallCut)
		case EventUsage:
			if ev.Usage != nil {
				usage = ev.Usage
			}
		}
		if ferr != nil {
			return nil, keepFolded(broken(ferr), meta, usage)
		}
	}
	if err := closeOpen(); err != nil {
		return nil, broken(err)
	}
	if usage != nil {
		meta.Usage = usage
	}
	meta.ToolCallCount = int32(acc.ToolCallCount()) // as a unary answer's parser counts them
	return &Result{Message: acc.Message(), Meta: meta}, nil
}

// keepFolded puts what the events read before err reported (meta and
// usage) into err's Meta, under what err's own Meta says.
func keepFolded(err error, meta *llmrelayv1.ResponseMeta, usage *llmrelayv1.Usage) error {
	var pe *Error
	if !errors.As(err, &pe) {
		return err
	}
	if usage != nil && pe.Meta.GetUsage() == nil {
		meta.Usage = usage
	}
	if pe.Meta != nil {
		MergeMeta(meta, pe.Meta)
	}
	if proto.Size(meta) > 0 {
		pe.Meta = meta
	}
	return err
}
