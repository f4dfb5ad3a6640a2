// Package builtin is the offline provider of the embedded default
// configuration: deterministic answers for every RPC, with no keys and no
// network, going through the same pipeline and metadata as real providers.
// It is for trying the API and for tests; it is not a model.
//
// Behaviour (also in the README):
//   - Chat: replies "You said: <text of the last user message>" (plus
//     "[N image(s)]" when images were sent, and "[file <mime type>, <N>
//     bytes]" (or "url <url>", "id <file id>") for each file of the user
//     messages). Tokens are whitespace-separated words: input counts the
//     words of all messages and of text/* files, output the reply's.
//     max_tokens cuts the reply to that many words (finish reason length),
//     and tool calls too: those that fit (a word for the name, the
//     arguments' words) stay whole, the next is cut to half its
//     arguments (arguments_valid false; a stream ends it as cut);
//     a stop sequence ends it before the sequence (meta.stop_sequence
//     names it). seed is accepted: every answer is deterministic.
//   - Tools: when the last message holds tool results, replies with a text
//     summary of them. Otherwise it calls the named function (tool_choice),
//     or the first two offered tools in parallel (the first one if only one
//     is offered, or with parallel_tool_calls false); tool_choice none
//     gives a text reply. Arguments fill the
//     schema's required properties (all properties if none is required):
//     strings with the last user text, numbers 1, booleans true, arrays [],
//     objects {}, enums their first value.
//   - response_format JSON_SCHEMA: the reply is a value filled from the
//     schema (properties in schema order, strings the last user text,
//     numbers their minimum or 1, booleans true, enums their first value,
//     arrays minItems items); JSON_OBJECT: {"answer": "You said: <text>"}.
//     Members are separated by ", " so max_tokens cuts the JSON like words.
//   - Streams send the reply word by word and each call's arguments in two
//     fragments, the fragments of parallel calls interleaved.
//   - Embed: unit vectors of the requested dimensions (default 8), derived
//     from SHA-256 of each input, so equal inputs give equal vectors.
package builtin

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// DefaultDimensions is the embedding size when a call sets none.
const DefaultDimensions = 8

// MaxDimensions bounds requested embedding sizes.
const MaxDimensions = 4096

// Provider is the built-in provider.
type Provider struct {
	now func() time.Time
}

var (
	_ provider.Provider = (*Provider)(nil)
	_ provider.Embedder = (*Provider)(nil)
)

// Option configures the provider.
type Option func(*Provider)

// WithClock sets the clock used for create times.
func WithClock(now func() time.Time) Option { return func(p *Provider) { p.now = now } }

// New returns the built-in provider.
func New(opts ...Option) *Provider {
	p := &Provider{now: time.Now}
	for _, o := range opts {
		o(p)
	}
	return p
}

type answer struct {
	text   string
	calls  []*llmrelayv1.ToolCall
	finish llmrelayv1.FinishReason
	raw    string
	usage  *llmrelayv1.Usage
	id     string
	// stopSequence is the stop sequence that ended the reply.
	stopSequence string
	// cut is the call id of the tool call max_tokens cut.
	cut string
}

// middle is the character boundary at or before the middle of s: each
// half is UTF-8, as a proto string must be.
func middle(s string) int {
	cut := len(s) / 2
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return cut
}

// firstStop is where the earliest of the stop sequences starts in text,
// and which one it is ("" when none occurs).
func firstStop(text string, stops []string) (int, string) {
	at, seq := -1, ""
	for _, s := range stops {
		if s == "" {
			continue
		}
		if i := strings.Index(text, s); i >= 0 && (at < 0 || i < at) {
			at, seq = i, s
		}
	}
	return at, seq
}

// Generate answers deterministically.
func (p *Provider) Generate(ctx context.Context, req *provider.Request) (*provider.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, provider.TransportError("builtin", err)
	}
	a := p.answer(req)
	msg := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT}
	if a.text != "" {
		msg.Parts = append(msg.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: a.text}})
	}
	for _, c := range a.calls {
		msg.Parts = append(msg.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: c}})
	}
	meta := p.meta(a, req.Model)
	meta.Warnings = extraBodyWarning(req.ProviderOptions)
	res := &provider.Result{Message: msg, Meta: meta}
	capture(ctx, req, res)
	return res, nil
}

// extraBodyWarning says that extra_body was not sent: the builtin
// provider has no request body to merge it into (every other adapter
// merges it), and a caller testing against it must not think it applied.
func extraBodyWarning(po *llmrelayv1.ProviderOptions) []string {
	if po.GetExtraBody() == "" {
		return nil
	}
	return []string{"provider_options.extra_body ignored: the builtin provider has no request body"}
}

func (p *Provider) meta(a answer, model string) *llmrelayv1.ResponseMeta {
	return &llmrelayv1.ResponseMeta{
		ResponseId:           a.id,
		CreateTime:           timestamppb.New(p.now().Truncate(time.Second)),
		ResolvedModel:        model,
		Usage:                a.usage,
		FinishReason:         a.finish,
		ProviderFinishReason: a.raw,
		ProviderRequestId:    "builtin-req-" + a.id[len("builtin-"):],
		ToolCallCount:        int32(len(a.calls)),
		StopSequence:         a.stopSequence,
	}
}

// capture records a JSON rendering of the call as the raw exchange, since
// there is no HTTP: the request as normalized, the result as returned.
func capture(ctx context.Context, req *provider.Request, res *provider.Result) {
	c := provider.CaptureFrom(ctx)
	if c == nil {
		return
	}
	in, err := json.Marshal(map[string]any{"model": req.Model, "messages": protoList(req.Messages), "tools": protoList(req.Tools)})
	if err != nil {
		in = []byte(err.Error())
	}
	c.StartRequest("CALL", "builtin:generate", map[string]string{}, in)
	c.StartResponse(200, map[string]string{})
	if res != nil {
		out, err := protojson.Marshal(&llmrelayv1.ChatResponse{Message: res.Message, Meta: res.Meta})
		if err != nil {
			out = []byte(err.Error())
		}
		c.AppendResponse(out)
	}
}

func protoList[T proto.Message](list []T) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(list))
	for _, m := range list {
		b, err := protojson.Marshal(m)
		if err != nil {
			b, _ = json.Marshal(err.Error())
		}
		out = append(out, b)
	}
	return out
}

func (p *Provider) answer(req *provider.Request) answer {
	lastUser, images, inWords := "", 0, 0
	var files []string
	for _, m := range req.Messages {
		inWords++ // one per message, like the role markers of real tokenizers
		for _, part := range m.GetParts() {
			switch k := part.GetKind().(type) {
			case *llmrelayv1.Part_Text:
				inWords += len(strings.Fields(k.Text))
				if m.GetRole() == llmrelayv1.Role_ROLE_USER {
					lastUser = k.Text
				}
			case *llmrelayv1.Part_Image:
				if m.GetRole() == llmrelayv1.Role_ROLE_USER {
					images++
				}
			case *llmrelayv1.Part_File:
				if m.GetRole() == llmrelayv1.Role_ROLE_USER {
					files = append(files, describeFile(k.File))
				}
				if strings.HasPrefix(provider.MediaType(k.File), "text/") {
					inWords += len(strings.Fields(string(k.File.GetData())))
				}
			case *llmrelayv1.Part_ToolResult:
				inWords += len(strings.Fields(provider.ToolResultText(k.ToolResult)))
			case *llmrelayv1.Part_ToolCall:
				inWords += len(strings.Fields(k.ToolCall.GetArguments()))
			}
		}
	}
	// Deterministic binary encoding: the same request gives the same ids
	// in every build (protojson adds build-seeded random spaces).
	h := sha256.New()
	det := proto.MarshalOptions{Deterministic: true}
	var buf []byte
	for _, m := range req.Messages {
		buf, _ = det.MarshalAppend(buf[:0], m) // messages came from a decoded request; marshal cannot fail
		h.Write(buf)
	}
	for _, t := range req.Tools {
		buf, _ = det.MarshalAppend(buf[:0], t)
		h.Write(buf)
	}
	sum := hex.EncodeToString(h.Sum(nil))[:24]
	a := answer{id: "builtin-" + sum, finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, raw: "stop"}

	var last *llmrelayv1.Message
	if n := len(req.Messages); n > 0 {
		last = req.Messages[n-1]
	}
	choice := req.Options.GetToolChoice()
	switch {
	case last.GetRole() == llmrelayv1.Role_ROLE_TOOL:
		var parts []string
		for _, part := range last.GetParts() {
			if tr := part.GetToolResult(); tr != nil {
				// The result's text, then what its media are (never
				// their bytes), as for a user message's files.
				desc := provider.ToolResultText(tr)
				for _, rp := range tr.GetParts() {
					switch {
					case rp.GetImage() != nil:
						desc += fmt.Sprintf(" [image %s]", orUnknown(rp.GetImage().GetMimeType()))
					case rp.GetFile() != nil:
						desc += " " + describeFile(rp.GetFile())
					}
				}
				parts = append(parts, fmt.Sprintf("%s=%s", tr.GetCallId(), desc))
			}
		}
		a.text = fmt.Sprintf("Received %d tool result(s): %s", len(parts), strings.Join(parts, "; "))
	case len(req.Tools) > 0 && choice.GetMode() != llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE:
		var picked []*llmrelayv1.Tool
		if name := choice.GetFunctionName(); name != "" {
			for _, t := range req.Tools {
				if t.GetName() == name {
					picked = append(picked, t)
				}
			}
		}
		if len(picked) == 0 {
			picked = req.Tools[:min(2, len(req.Tools))]
		}
		if req.Options != nil && req.Options.ParallelToolCalls != nil && !req.Options.GetParallelToolCalls() {
			picked = picked[:1]
		}
		for i, t := range picked {
			args := argumentsFor(t, lastUser)
			a.calls = append(a.calls, &llmrelayv1.ToolCall{
				CallId: fmt.Sprintf("call_builtin_%s_%d", sum[:12], i), Name: t.GetName(),
				Arguments: args, ArgumentsValid: true,
			})
		}
		a.finish, a.raw = llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, "tool_calls"
	default:
		if js, ok := structuredAnswer(req.Options.GetResponseFormat(), lastUser); ok {
			a.text = js
			break
		}
		a.text = "You said: " + lastUser
		if images > 0 {
			a.text += fmt.Sprintf(" [%d image(s)]", images)
		}
		for _, f := range files {
			a.text += " " + f
		}
	}
	// A stop sequence ends the reply before it (as OpenAI's do, the
	// sequence itself not included); the earliest one found wins.
	if cut, seq := firstStop(a.text, req.Options.GetStop()); seq != "" && len(a.calls) == 0 {
		a.text, a.stopSequence = a.text[:cut], seq
	}
	if max := req.Options.GetMaxTokens(); req.Options != nil && req.Options.MaxTokens != nil && a.text != "" {
		words := strings.SplitAfter(a.text, " ")
		if int(max) < len(words) {
			a.text = strings.TrimRight(strings.Join(words[:max], ""), " ")
			a.finish, a.raw = llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "length"
		}
	}
	// max_tokens cuts tool calls too, as it cuts a model's: the calls
	// that fit (a word for the name, the arguments' words) stay whole,
	// the first that does not is cut to half its arguments (no longer
	// valid) and the rest are not made.
	if req.Options != nil && req.Options.MaxTokens != nil && len(a.calls) > 0 {
		budget := int(req.Options.GetMaxTokens())
		for i, c := range a.calls {
			cost := 1 + len(strings.Fields(c.GetArguments()))
			if cost <= budget {
				budget -= cost
				continue
			}
			c.Arguments, c.ArgumentsValid = c.GetArguments()[:middle(c.GetArguments())], false
			a.calls = a.calls[:i+1]
			a.cut = c.GetCallId()
			a.finish, a.raw = llmrelayv1.FinishReason_FINISH_REASON_LENGTH, "length"
			break
		}
	}
	out := len(strings.Fields(a.text))
	for _, c := range a.calls {
		out += 1 + len(strings.Fields(c.GetArguments()))
	}
	a.usage = &llmrelayv1.Usage{InputTokens: int32(inWords), OutputTokens: int32(out), TotalTokens: int32(inWords + out)}
	return a
}

// argumentsFor fills a tool's JSON schema deterministically.
func argumentsFor(t *llmrelayv1.Tool, text string) string {
	var schema any
	if t.GetParameters() != "" {
		if err := json.Unmarshal([]byte(t.GetParameters()), &schema); err != nil {
			return "{}" // the server refuses such a schema before any provider sees it
		}
	}
	// A boolean schema (true/false) has no properties to fill.
	params, _ := schema.(map[string]any)
	props, _ := params["properties"].(map[string]any)
	var names []string
	if req, ok := params["required"].([]any); ok && len(req) > 0 {
		for _, r := range req {
			if s, ok := r.(string); ok {
				names = append(names, s)
			}
		}
	} else {
		for k := range props {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	out := make(map[string]any, len(names))
	for _, n := range names {
		schema, _ := props[n].(map[string]any)
		out[n] = valueFor(schema, text)
	}
	b, err := json.Marshal(out) // map keys come out sorted
	if err != nil {
		return "{}"
	}
	return string(b)
}

func valueFor(schema map[string]any, text string) any {
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	typ, _ := schema["type"].(string)
	switch typ {
	case "integer", "number":
		return 1
	case "boolean":
		return true
	case "array":
		return []any{}
	case "object":
		return map[string]any{}
	default:
		if text == "" {
			return "example"
		}
		return text
	}
}

// Stream streams the same answer as Generate.
func (p *Provider) Stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, provider.TransportError("builtin", err)
	}
	a := p.answer(req)
	meta := p.meta(a, req.Model)
	meta.Warnings = extraBodyWarning(req.ProviderOptions)
	finish := &llmrelayv1.ResponseMeta{FinishReason: meta.FinishReason, ProviderFinishReason: meta.ProviderFinishReason, StopSequence: meta.StopSequence}
	meta.FinishReason, meta.ProviderFinishReason, meta.Usage, meta.ToolCallCount, meta.StopSequence = 0, "", nil, 0, ""
	events := []*provider.Event{{Kind: provider.EventMeta, Meta: meta}}
	for _, w := range strings.SplitAfter(a.text, " ") {
		if w != "" {
			events = append(events, &provider.Event{Kind: provider.EventText, Text: w})
		}
	}
	// Two fragments per call, the calls' fragments interleaved.
	for half := 0; half < 2; half++ {
		for i, c := range a.calls {
			args := c.GetArguments()
			cut := middle(args)
			d := provider.ToolCallDelta{CallID: c.GetCallId(), Index: i}
			if half == 0 {
				d.Name, d.Arguments = c.GetName(), args[:cut]
			} else {
				d.Arguments = args[cut:]
			}
			events = append(events, &provider.Event{Kind: provider.EventToolCall, ToolCall: d})
		}
	}
	for _, c := range a.calls {
		kind := provider.EventToolCallEnd
		if c.GetCallId() == a.cut {
			kind = provider.EventToolCallCut
		}
		events = append(events, &provider.Event{Kind: kind, ToolCall: provider.ToolCallDelta{CallID: c.GetCallId()}})
	}
	events = append(events,
		&provider.Event{Kind: provider.EventUsage, Usage: a.usage},
		&provider.Event{Kind: provider.EventMeta, Meta: finish})
	capture(ctx, req, &provider.Result{Message: nil, Meta: meta})
	return &stream{ctx: ctx, events: events}, nil
}

type stream struct {
	ctx    context.Context
	events []*provider.Event
	closed bool
}

func (s *stream) Recv() (*provider.Event, error) {
	if s.closed {
		return nil, provider.ErrStreamClosed("builtin")
	}
	if err := s.ctx.Err(); err != nil {
		return nil, provider.TransportError("builtin", err)
	}
	if len(s.events) == 0 {
		return nil, io.EOF
	}
	ev := s.events[0]
	s.events = s.events[1:]
	return ev, nil
}

func (s *stream) Close() error { s.closed = true; return nil }

// Embed returns deterministic unit vectors.
func (p *Provider) Embed(ctx context.Context, req *provider.EmbedRequest) (*provider.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, provider.TransportError("builtin", err)
	}
	dims := DefaultDimensions
	if req.Dimensions != nil {
		dims = int(*req.Dimensions)
	}
	if dims < 1 || dims > MaxDimensions {
		return nil, &provider.Error{Provider: "builtin", Kind: provider.KindInvalidRequest, Param: "dimensions",
			Message: fmt.Sprintf("dimensions must be between 1 and %d, got %d", MaxDimensions, dims)}
	}
	res := &provider.Result{Meta: &llmrelayv1.ResponseMeta{ResolvedModel: req.Model, CreateTime: timestamppb.New(p.now().Truncate(time.Second)),
		Warnings: extraBodyWarning(req.ProviderOptions)}}
	words := 0
	h := sha256.New()
	for i, in := range req.Inputs {
		words += len(strings.Fields(in))
		res.Embeddings = append(res.Embeddings, &llmrelayv1.Embedding{Index: int32(i), Values: vector(in, dims)})
		h.Write([]byte(in))
		h.Write([]byte{0})
	}
	id := hex.EncodeToString(h.Sum(nil))[:24]
	res.Meta.ResponseId = "builtin-" + id
	res.Meta.ProviderRequestId = "builtin-req-" + id
	res.Meta.EmbeddingsCount = int32(len(res.Embeddings))
	res.Meta.Usage = &llmrelayv1.Usage{InputTokens: int32(words), TotalTokens: int32(words)}
	if c := provider.CaptureFrom(ctx); c != nil {
		in, _ := json.Marshal(map[string]any{"model": req.Model, "input": req.Inputs, "dimensions": dims}) // strings and ints always marshal
		c.StartRequest("CALL", "builtin:embed", map[string]string{}, in)
		c.StartResponse(200, map[string]string{})
		out, err := protojson.Marshal(&llmrelayv1.EmbedResponse{Embeddings: res.Embeddings})
		if err != nil {
			out = []byte(err.Error())
		}
		c.AppendResponse(out)
	}
	return res, nil
}

// vector expands SHA-256(input) in counter mode into dims values in
// [-1, 1], normalized to unit length.
func vector(in string, dims int) []float32 {
	out := make([]float32, dims)
	var norm float64
	var block [32]byte
	for i := 0; i < dims; i++ {
		if i%8 == 0 {
			var ctr [4]byte
			binary.BigEndian.PutUint32(ctr[:], uint32(i/8))
			block = sha256.Sum256(append([]byte(in), ctr[:]...))
		}
		u := binary.BigEndian.Uint32(block[(i%8)*4:])
		v := float64(u)/float64(math.MaxUint32)*2 - 1
		out[i] = float32(v)
		norm += v * v
	}
	if norm > 0 {
		s := 1 / math.Sqrt(norm)
		for i := range out {
			out[i] = float32(float64(out[i]) * s)
		}
	}
	return out
}

// describeFile is the echo of a file part: its type and size, URL or id,
// never its content.
func orUnknown(mt string) string {
	if mt == "" {
		return "unknown"
	}
	return mt
}

func describeFile(f *llmrelayv1.File) string {
	mt := f.GetMimeType()
	if mt == "" {
		mt = "unknown"
	}
	switch src := f.GetSource().(type) {
	case *llmrelayv1.File_Url:
		return fmt.Sprintf("[file %s, url %s]", mt, src.Url)
	case *llmrelayv1.File_FileId:
		return fmt.Sprintf("[file %s, id %s]", mt, src.FileId)
	}
	return fmt.Sprintf("[file %s, %d bytes]", mt, len(f.GetData()))
}
