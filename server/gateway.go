package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server/auth"
	"github.com/llmrelay/llmrelay/server/catalog"
	"github.com/llmrelay/llmrelay/server/interceptor"
	"github.com/llmrelay/llmrelay/server/mcp"
	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/telemetry"
)

// gateway implements llmrelayv1.GatewayServiceServer.
type gateway struct {
	llmrelayv1.UnimplementedGatewayServiceServer
	state atomic.Pointer[state]
	log   *slog.Logger
	now   func() time.Time
	// limits (read at start) and the memory budget of provider responses
	// all calls share.
	limits config.Limits
	pool   *provider.Pool
	// tel is tracing and metrics; nil when both are off.
	tel *telemetry.Telemetry
	// drain is closed when the server starts shutting down: agent runs
	// send go_away at their next round.
	drain     chan struct{}
	drainOnce sync.Once
	// retryClock is the retry policy's clock (WithRetryClock), kept for
	// the pipelines a reload builds.
	retryClock pipeline.Clock
}

// startDrain tells the running agent loops that the server shuts down.
func (g *gateway) startDrain() { g.drainOnce.Do(func() { close(g.drain) }) }

func (g *gateway) draining() bool {
	select {
	case <-g.drain:
		return true
	default:
		return false
	}
}

// state is what a configuration (re)load produces; calls take it once and
// keep it, so a reload never changes a call in flight.
type state struct {
	catalog *catalog.Catalog
	redact  *pipeline.Redactor
	// auth holds the callers (not enabled: no authentication).
	auth *auth.Store
	// clients are the providers' HTTP clients (their connection pools).
	clients []*http.Client
	// callBound is defaults.max_call_duration.
	callBound time.Duration
	// mcp are the configured MCP servers by name; allowMCPURLs the URL
	// prefixes a request may name itself.
	mcp          map[string]configuredMCP
	allowMCPURLs []string
	// maxToolTimeout is agent.max_tool_timeout: the longest an agent run
	// waits for a round's tool results.
	maxToolTimeout time.Duration
	// keepRecentToolMedia is agent.keep_recent_tool_media: the runs'
	// default for the setup's keep_recent_tool_media (0: all sent).
	keepRecentToolMedia int
}

// closeIdle closes the idle upstream connections of the state's clients.
func (st *state) closeIdle() {
	for _, c := range st.clients {
		c.CloseIdleConnections()
	}
}

type configuredMCP struct {
	server mcp.Server
	hosted bool
}

// generation is the common input of Chat, StreamChat, Tools, StreamTools.
type generation struct {
	// req is the request message, checked field by field (checkFields);
	// nil when it was checked already (an agent run's later rounds).
	req             proto.Message
	model           string
	messages        []*llmrelayv1.Message
	tools           []*llmrelayv1.Tool
	options         *llmrelayv1.GenerationOptions
	providerOptions *llmrelayv1.ProviderOptions
	call            *llmrelayv1.CallOptions
	wantTools       bool
	// hostedMCP are MCP servers passed to the provider (agent runs on the
	// Responses API only).
	hostedMCP []mcp.Server
	// agentRound: the call is one round of an agent run, whose span (in
	// ctx) is the round's, not an RPC's.
	agentRound bool
	// setupMessages and setupTools: an agent round's conversation and
	// tools begin with the setup's (this many), the request fields
	// setup.messages and setup.tools.
	setupMessages, setupTools int
}

// prepared is a validated call, ready for the pipeline.
type prepared struct {
	st     *state
	model  *catalog.Model
	call   *pipeline.Call
	meta   *llmrelayv1.ResponseMeta
	start  time.Time
	cancel context.CancelFunc
	// route is the deployments to try in order; tried, the ones that failed.
	route       []*catalog.Deployment
	tried       []string
	rawExplicit *bool
	// messages is the conversation as the caller sent it; each deployment
	// gets it adapted to its provider type (foreign reasoning signatures out).
	messages     []*llmrelayv1.Message
	providerType string
	// info is the RPC's log record: it names the deployment actually used.
	info *interceptor.Info
	// output checks a structured answer; nil when none is asked for.
	output *outputCheck
	// agentRound: see generation.agentRound.
	agentRound bool
	// contextLen is how many of messages are the model's configured
	// context, before the caller's (requestField).
	contextLen int
	// setupMessages, setupTools: generation's, for an agent round.
	setupMessages, setupTools int
	// caller is the authenticated caller (nil without auth); the call's
	// tokens count against its budget. admitWarning says when its limits
	// could not be checked (meta.warnings).
	caller       *auth.Caller
	admitWarning string
	// callStore and recordStore are where call and its Record point: one
	// allocation per call instead of three.
	callStore   pipeline.Call
	recordStore pipeline.Record
	// filtered is what the streams a route discarded for their content
	// filter's stop cost (streamRoute): added to the call's end.
	filtered filteredSpent
}

// use points the call at deployment d.
func (p *prepared) use(d *catalog.Deployment) {
	p.call.Provider = d.Provider.Impl
	p.call.Deployment = d.Name
	p.call.Fallback = len(p.tried) > 0
	p.meta.Provider = d.Provider.Name
	p.providerType = d.Provider.Type
	p.info.SetTarget(p.model.Name, d.Provider.Name)
	if r := p.call.Request; r != nil {
		// A fresh request per deployment: adapters may keep it while we
		// move on to the next one.
		c := *r
		c.Model = d.UpstreamModel
		c.Messages, p.meta.Warnings = foreignReasoning(p.messages, d.Provider.Type)
		// The conversation's reasoning state goes whole to each
		// deployment: one that refused it (pipeline.SignatureRetryReason)
		// is not the next one, which may be the account that signed it.
		c.DropSignatures = false
		p.call.Request = &c
	}
	if e := p.call.Embed; e != nil && e.Model != d.UpstreamModel {
		c := *e
		c.Model = d.UpstreamModel
		p.call.Embed = &c
	}
	p.call.PreserveRaw = d.Provider.PreserveRaw
	if p.model.PreserveRaw != nil {
		p.call.PreserveRaw = *p.model.PreserveRaw
	}
	if p.rawExplicit != nil {
		p.call.PreserveRaw = *p.rawExplicit
	}
	p.call.Record.Capture = nil
}

// fallback reports whether a failed deployment should give way to the next:
// for failures that retrying could fix (after the retry policy gave up)
// or that are the deployment's own (its quota, key or model:
// pipeline.FallbackWorthy), and a content filter's refusal of the prompt
// where the model opts in (content_filter_fallback), while the caller
// still waits.
func (p *prepared) fallback(ctx context.Context, i int, err error) bool {
	if i+1 >= len(p.route) || ctx.Err() != nil {
		return false
	}
	if !pipeline.FallbackWorthy(err) && !(p.model.ContentFilterFallback && contentFiltered(err)) {
		return false
	}
	p.tried = append(p.tried, p.call.Deployment)
	return true
}

// contentFiltered reports whether err is a provider's content filter
// refusing the call (provider.KindContentFilter).
func contentFiltered(err error) bool {
	var pe *provider.Error
	return errors.As(err, &pe) && pe.Kind == provider.KindContentFilter
}

func (g *gateway) startTime(ctx context.Context) time.Time {
	if info := interceptor.InfoFrom(ctx); info != nil && !info.Start.IsZero() {
		return info.Start
	}
	return g.now()
}

func requestIDOf(ctx context.Context) string {
	if info := interceptor.InfoFrom(ctx); info != nil {
		return info.RequestID
	}
	return ""
}

// resolve finds the model and the capability a call needs.
func (g *gateway) resolve(ctx context.Context, st *state, name string, proto llmrelayv1.Protocol, capKey string) (*catalog.Model, *catalog.Capability, error) {
	if name == "" {
		return nil, nil, invalidField("model", "required (ListModels shows the models)")
	}
	if c := auth.CallerFrom(ctx); c != nil {
		// Before the lookup: a caller learns nothing of models it may not use.
		if err := c.CheckModel(name); err != nil {
			return nil, nil, err
		}
	}
	m, ok := st.catalog.Lookup(name)
	if !ok {
		return nil, nil, notFoundModel(name)
	}
	interceptor.InfoFrom(ctx).SetTarget(m.Name, m.Provider.Name)
	c, ok := m.Capabilities[proto]
	if !ok {
		return m, nil, missingCapability(m.Name, capKey)
	}
	return m, c, nil
}

func (g *gateway) prepareGeneration(ctx context.Context, in generation) (context.Context, *prepared, error) {
	st := g.state.Load()
	if err := g.labelsGate(ctx, in.call); err != nil {
		return ctx, nil, err
	}
	if in.req != nil {
		if err := checkFields(in.req.ProtoReflect()); err != nil {
			return ctx, nil, err
		}
	}
	if err := validateCall(in.call); err != nil {
		return ctx, nil, err
	}
	kinds, err := validateMessages(in.messages)
	if err != nil {
		return ctx, nil, err
	}
	protocol, capKey := llmrelayv1.Protocol_PROTOCOL_CHAT, "chat"
	switch {
	case in.wantTools:
		if err := validateTools(in.tools); err != nil {
			return ctx, nil, err
		}
		protocol, capKey = llmrelayv1.Protocol_PROTOCOL_TOOLS, "tools"
	case kinds.audio:
		protocol, capKey = llmrelayv1.Protocol_PROTOCOL_AUDIO, "audio"
	case kinds.documents:
		protocol, capKey = llmrelayv1.Protocol_PROTOCOL_DOCUMENTS, "documents"
	case kinds.images:
		protocol, capKey = llmrelayv1.Protocol_PROTOCOL_VISION, "vision"
	}
	m, capab, err := g.resolve(ctx, st, in.model, protocol, capKey)
	if err != nil {
		return ctx, nil, err
	}
	// Every other kind of input needs its capability too; the capability
	// chosen above decides the format.
	for _, need := range [...]struct {
		has   bool
		proto llmrelayv1.Protocol
		key   string
	}{
		{kinds.images, llmrelayv1.Protocol_PROTOCOL_VISION, "vision"},
		{kinds.documents, llmrelayv1.Protocol_PROTOCOL_DOCUMENTS, "documents"},
		{kinds.audio, llmrelayv1.Protocol_PROTOCOL_AUDIO, "audio"},
	} {
		if _, ok := m.Capabilities[need.proto]; need.has && !ok {
			return ctx, nil, missingCapability(m.Name, need.key)
		}
	}
	if kinds.documents || kinds.audio {
		if err := checkFiles(in.messages, capab.Format.Name); err != nil {
			return ctx, nil, err
		}
	}
	if kinds.toolMedia {
		if err := checkToolResultParts(in.messages, capab.Format.Name); err != nil {
			return ctx, nil, err
		}
	}
	if err := checkToolParts(in.messages, capab.Format.Name); err != nil {
		return ctx, nil, err
	}
	opts := catalog.Merge(capab.Options, in.options)
	dropped, err := catalog.Validate(m.Name, capab.Format, m.Reasoning, in.wantTools, opts, in.call.GetIgnoreInvalidOptions())
	if err != nil {
		return ctx, nil, err
	}
	// After the merge: a configured tool choice must name an offered tool
	// as much as a requested one.
	if err := validateOptions(opts, in.tools); err != nil {
		return ctx, nil, err
	}
	output, err := newOutputCheck(opts)
	if err != nil {
		return ctx, nil, err
	}
	pOpts, pDropped, err := checkProviderOptions(m, in.providerOptions, in.call.GetIgnoreInvalidOptions())
	if err != nil {
		return ctx, nil, err
	}
	if err := catalog.ValidateProviderOptions(m.Name, capab.Format.Name, opts, pOpts); err != nil {
		return ctx, nil, err
	}
	dropped = append(dropped, pDropped...)
	var hosted []provider.HostedMCP
	if len(in.hostedMCP) > 0 {
		if capab.Format.Name != "openai-responses" {
			return ctx, nil, invalidField("mcp_servers", "hosted MCP servers need the OpenAI Responses API; model %s uses %s", m.Name, capab.Format.Name)
		}
		for _, s := range in.hostedMCP {
			hosted = append(hosted, provider.HostedMCP{Label: mcpLabel(s.Name), URL: s.URL, AllowedTools: s.AllowedTools, Headers: s.Headers})
		}
	}
	msgs := in.messages
	if len(m.Context) > 0 {
		// The model's prompt context first; a new slice, both are shared.
		msgs = append(append(make([]*llmrelayv1.Message, 0, len(m.Context)+len(in.messages)), m.Context...), in.messages...)
	}
	p := g.newPrepared(ctx, st, m, protocol, capab)
	p.meta.DroppedOptions = dropped
	p.output = output
	p.agentRound = in.agentRound
	p.call.Op = pipeline.OpGenerate
	p.call.Request = &provider.Request{
		Protocol: protocol, Model: m.UpstreamModel, Format: capab.Format.Name, Reasoning: m.Reasoning,
		NativeStructuredOutput: m.NativeStructuredOutput, Messages: msgs, Tools: in.tools, Options: opts, ProviderOptions: pOpts, HostedMCP: hosted,
	}
	p.messages = msgs
	p.contextLen = len(msgs) - len(in.messages)
	p.setupMessages, p.setupTools = in.setupMessages, in.setupTools
	ctx, p.cancel = g.callContext(ctx, in.call, st.callBound)
	if in.call != nil {
		p.rawExplicit = in.call.PreserveRaw
	}
	return ctx, p, nil
}

// mcpLabel makes a server name an OpenAI server_label (letters, digits, _ and -).
func mcpLabel(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return '_'
	}, name)
}

// foreignReasoning returns the conversation for a provider type: reasoning
// parts another provider type produced keep only their text (dropped when
// they have none), since a provider cannot verify another's signatures;
// provider items another provider type produced are dropped, since only
// their provider knows them. Each change is a warning naming the part.
// The input is not modified; unchanged messages are shared.
func foreignReasoning(msgs []*llmrelayv1.Message, providerType string) ([]*llmrelayv1.Message, []string) {
	var out []*llmrelayv1.Message
	var warnings []string
	for i, m := range msgs {
		var parts []*llmrelayv1.Part
		for j, part := range m.GetParts() {
			r := part.GetReasoning()
			foreign := r != nil && r.GetProvider() != "" && r.GetProvider() != providerType &&
				(r.GetSignature() != "" || r.GetId() != "" || r.GetRedacted())
			it := part.GetProviderItem()
			foreignItem := it != nil && it.GetProvider() != "" && it.GetProvider() != providerType
			if (foreign || foreignItem) && parts == nil {
				parts = append(make([]*llmrelayv1.Part, 0, len(m.GetParts())), m.GetParts()[:j]...)
			}
			switch {
			case foreignItem:
				warnings = append(warnings, fmt.Sprintf("messages[%d].parts[%d]: provider item %s from %s dropped for %s", i, j, it.GetType(), it.GetProvider(), providerType))
			case foreign && r.GetText() != "" && !r.GetRedacted():
				parts = append(parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Reasoning{Reasoning: &llmrelayv1.Reasoning{Text: r.GetText(), Provider: r.GetProvider()}}})
				warnings = append(warnings, fmt.Sprintf("messages[%d].parts[%d]: reasoning from %s sent to %s without its signature", i, j, r.GetProvider(), providerType))
			case foreign:
				warnings = append(warnings, fmt.Sprintf("messages[%d].parts[%d]: reasoning from %s dropped for %s (no readable text)", i, j, r.GetProvider(), providerType))
			case parts != nil:
				parts = append(parts, part)
			}
		}
		if parts != nil && out == nil {
			out = append(make([]*llmrelayv1.Message, 0, len(msgs)), msgs[:i]...)
		}
		switch {
		case parts != nil:
			c := proto.CloneOf(m)
			c.Parts = parts
			out = append(out, c)
		case out != nil:
			out = append(out, m)
		}
	}
	if out == nil {
		return msgs, nil
	}
	return out, warnings
}

func (g *gateway) newPrepared(ctx context.Context, st *state, m *catalog.Model, protocol llmrelayv1.Protocol, capab *catalog.Capability) *prepared {
	// One look-up each of the call's Info and admission: every ctx.Value
	// walks the context chain.
	info := interceptor.InfoFrom(ctx)
	caller, warning := auth.AdmittedFrom(ctx)
	var start time.Time // startTime
	id, name := "", ""
	if info != nil {
		start, id = info.Start, info.RequestID
	}
	if start.IsZero() {
		start = g.now()
	}
	if caller != nil {
		name = caller.Name
	}
	p := &prepared{
		st: st, model: m, start: start, info: info, caller: caller,
		route: m.Route(rand.IntN),
		meta: &llmrelayv1.ResponseMeta{
			RequestId: id, Provider: m.Provider.Name, Protocol: protocol,
			RequestedModel: m.Name, Format: capab.Format.Name, Caller: name,
		},
		admitWarning: warning,
	}
	p.call, p.callStore.Record = &p.callStore, &p.recordStore
	if g.tel.Tracing() {
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
			p.meta.TraceId = sc.TraceID().String()
		}
	}
	return p
}

// callContext is the context of a call's provider requests: its timeouts
// (withCallTimeout), and its share of the response memory budget, returned
// by cancel.
func (g *gateway) callContext(ctx context.Context, call *llmrelayv1.CallOptions, bound time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := withCallTimeout(ctx, call, bound)
	if g.pool == nil {
		return ctx, cancel
	}
	b := g.pool.NewBudget(g.limits.MaxResponseBytes)
	return provider.WithBudget(ctx, b), func() { cancel(); b.Release() }
}

// callBoundError is the cause of a call's context when one of the
// gateway's bounds ended it: its max_call_duration, or the request's
// call.timeout (callTimeout set), which the gateway enforces; not the
// caller's own deadline, which the caller knows.
type callBoundError struct {
	bound       time.Duration
	callTimeout bool
}

func (e *callBoundError) Error() string {
	if e.callTimeout {
		return fmt.Sprintf("the gateway ended the call at the request's call.timeout (%v)", e.bound)
	}
	return fmt.Sprintf("the gateway ended the call at its max_call_duration (%v)", e.bound)
}

// metadataKey is the ErrorInfo metadata key that carries the bound.
func (e *callBoundError) metadataKey() string {
	if e.callTimeout {
		return "callTimeout"
	}
	return "maxCallDuration"
}

func (e *callBoundError) Is(target error) bool { return target == context.DeadlineExceeded }

// withCallTimeout bounds the call by call.timeout, when set, and by the
// gateway's max_call_duration (bound), whichever ends first, and by the
// caller's own deadline less callerDeadlineMargin when that comes first.
func withCallTimeout(ctx context.Context, call *llmrelayv1.CallOptions, bound time.Duration) (context.Context, context.CancelFunc) {
	var (
		d     time.Duration
		cause error
	)
	if t := call.GetTimeout(); t != nil && t.AsDuration() > 0 && (bound <= 0 || t.AsDuration() < bound) {
		// Its cause names it: the status says which limit ended the
		// call, as for max_call_duration.
		d, cause = t.AsDuration(), &callBoundError{bound: t.AsDuration(), callTimeout: true}
	} else if bound > 0 {
		d, cause = bound, &callBoundError{bound: bound}
	}
	if dl, ok := ctx.Deadline(); ok {
		remaining := time.Until(dl)
		if ctx.Value(earlyDeadlineKey{}) != nil {
			// Already the caller's deadline less the margin (an Agent
			// run's): not less again.
			if d <= 0 || remaining < d {
				return ctx, func() {}
			}
		} else if early := remaining - callerDeadlineMargin(remaining); d <= 0 || early < d {
			return context.WithTimeoutCause(ctx, early, errCallerDeadline)
		}
	}
	if d <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeoutCause(ctx, d, cause)
}

// callerDeadlineMargin is how long before the caller's own deadline (its
// grpc-timeout) the gateway ends a call: 5% of the time remaining when
// the call starts, at least 20ms and at most 250ms. A call the gateway
// ended at the deadline itself never told the caller why: the caller's
// gRPC library gives up at that instant with a bare DEADLINE_EXCEEDED
// ("context deadline exceeded"), and the gateway's status (its reason,
// the upstream's request id, the attempts and retry reasons of
// FailedCallMeta, a stream's partial meta) arrives after it, if at all;
// the server's deadline, counted from when the request arrived, is even
// later than the caller's by the request's transit. Ended before it, the
// status travels back in time. Envoy does the same for the same reason
// (its route's grpc_timeout_header_offset: "more likely that Envoy will
// handle the timeout instead of having the call canceled by the
// client").
func callerDeadlineMargin(remaining time.Duration) time.Duration {
	return min(max(remaining/20, 20*time.Millisecond), 250*time.Millisecond)
}

// withCallerDeadline is ctx ended callerDeadlineMargin before the caller's
// own deadline, when it has one (ctx and a no-op otherwise), marked so
// that the calls made within it (withCallTimeout) do not take the margin
// again: an Agent run, whose status the caller's library would otherwise
// reach first as well, while the run waits for the client's tool results
// or a model round.
func withCallerDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok || ctx.Value(earlyDeadlineKey{}) != nil {
		return ctx, func() {}
	}
	remaining := time.Until(dl)
	ctx, cancel := context.WithTimeoutCause(ctx, remaining-callerDeadlineMargin(remaining), errCallerDeadline)
	return context.WithValue(ctx, earlyDeadlineKey{}, true), cancel
}

// earlyDeadlineKey marks a context withCallerDeadline made.
type earlyDeadlineKey struct{}

// errCallerDeadline is the cause of a call's context that the caller's
// own deadline ended (less callerDeadlineMargin): DeadlineExceeded, as
// the caller's would be, with no bound of the gateway's to name.
var errCallerDeadline = fmt.Errorf("the caller's deadline: %w", context.DeadlineExceeded)

// validateCall checks the call options.
func validateCall(call *llmrelayv1.CallOptions) error {
	if d := call.GetTimeout(); d != nil && (d.CheckValid() != nil || d.AsDuration() < 0) {
		return invalidField("call.timeout", "must be a valid, non-negative duration")
	}
	return nil
}

// providerOptionsType is the provider_options case each provider type takes.
var providerOptionsType = map[string]string{"openai": "openai", "azure": "openai", "anthropic": "anthropic", "gemini": "gemini", "ollama": "ollama"}

func checkProviderOptions(m *catalog.Model, po *llmrelayv1.ProviderOptions, ignore bool) (*llmrelayv1.ProviderOptions, []*llmrelayv1.DroppedOption, error) {
	if po == nil {
		return nil, nil, nil
	}
	if err := validateHeaderValues(po); err != nil {
		return nil, nil, err
	}
	if err := provider.CheckExtraBody(po.GetExtraBody()); err != nil {
		// The field path names it: not "provider_options.extra_body:
		// extra_body: ...".
		return nil, nil, invalidField("provider_options.extra_body", "%s", strings.TrimPrefix(strings.TrimPrefix(err.Error(), "extra_body: "), "extra_body."))
	}
	var given string
	switch po.GetProvider().(type) {
	case *llmrelayv1.ProviderOptions_Openai:
		given = "openai"
	case *llmrelayv1.ProviderOptions_Anthropic:
		given = "anthropic"
	case *llmrelayv1.ProviderOptions_Gemini:
		given = "gemini"
	case *llmrelayv1.ProviderOptions_Ollama:
		given = "ollama"
	}
	want := providerOptionsType[m.Provider.Type]
	if given == "" || given == want {
		return po, nil, nil
	}
	reason := "model " + m.Name + " is served by a " + m.Provider.Type + " provider"
	if !ignore {
		return nil, nil, &catalog.OptionError{Model: m.Name, Option: "provider_options." + given, Reason: reason}
	}
	out := proto.CloneOf(po)
	out.Provider = nil
	return out, []*llmrelayv1.DroppedOption{{Option: "provider_options." + given, Reason: reason}}, nil
}

// reported is what a failed call's provider reported before or with its
// failure (provider.Error.Meta, and its Extended details such as Azure's
// content filter verdicts under meta.extended), as a result for
// finishMeta; nil when it reported nothing.
func reported(err error) *provider.Result {
	var pe *provider.Error
	if !errors.As(err, &pe) || (pe.Meta == nil && len(pe.Extended) == 0) {
		return nil
	}
	meta := &llmrelayv1.ResponseMeta{}
	if pe.Meta != nil {
		meta = proto.CloneOf(pe.Meta)
	}
	for k, v := range pe.Extended {
		provider.SetExtended(meta, k, v)
	}
	return &provider.Result{Meta: meta}
}

// finishMeta completes the meta with what the server and the transport
// layer know. res may be nil (failed call).
func (g *gateway) finishMeta(p *prepared, res *provider.Result) *llmrelayv1.ResponseMeta {
	meta := p.meta
	if res != nil && res.Meta != nil {
		// The adapter's layers first, then the gateway's own fields on top
		// (the result's meta belongs to this call: no copy needed).
		provider.MergeMeta(res.Meta, meta)
		meta = res.Meta
	}
	rec := p.call.Record
	meta.Attempts = rec.Attempts
	meta.RetryReasons = rec.RetryReasons
	for _, r := range meta.RetryReasons {
		// The provider's own error text: valid UTF-8 for the proto string
		// (secrets go with every other field below).
		r.Message = clean(p.st.redact, r.Message)
	}
	if p.admitWarning != "" {
		meta.Warnings = append(meta.Warnings, p.admitWarning)
	}
	meta.RequestDuration = durationpb.New(rec.RequestDuration)
	meta.TotalDuration = durationpb.New(g.now().Sub(p.start))
	if meta.ResolvedModel == "" {
		if p.call.Request != nil {
			meta.ResolvedModel = p.call.Request.Model
		} else if p.call.Embed != nil {
			meta.ResolvedModel = p.call.Embed.Model
		}
	}
	if len(p.model.Deployments) > 1 || len(p.tried) > 0 {
		meta.Routing = &llmrelayv1.Routing{Deployment: p.call.Deployment, Tried: p.tried}
	}
	if c := rec.Capture; c != nil {
		meta.Raw = rawData(c)
	}
	meta.Cost = p.model.Prices.Of(meta.GetUsage())
	p.caller.Spend(int64(meta.GetUsage().GetTotalTokens()), meta.GetCost(), g.now())
	// Everything above may hold what a provider sent (ids, model names,
	// error texts, extended values, raw bodies): the key it may echo goes
	// here, for every field at once.
	redactProto(p.st.redact, meta)
	if len(meta.Warnings) > 0 {
		// Anomalies the adapters handled (e.g. a tool call without a
		// call_id, keyed by its item id instead) are worth an operator's look.
		g.log.Warn("provider anomalies", slog.String("request_id", meta.RequestId), slog.String("provider", meta.Provider),
			slog.Any("warnings", meta.Warnings))
	}
	return meta
}

func rawData(c *provider.Capture) *llmrelayv1.RawData {
	s := c.Snapshot()
	return &llmrelayv1.RawData{
		Request: s.Request, Response: s.Response,
		RequestMethod: s.Method, RequestUrl: s.URL,
		RequestHeaders: s.RequestHeaders, ResponseHeaders: s.ResponseHeaders,
		RequestTruncated: s.RequestCut, ResponseTruncated: s.ResponseCut, ResponseStatus: int32(s.Status),
	}
}

// normalizeToolFinish counts the calls and applies the cross-provider rule
// (tool calls turn a normal stop into TOOL_CALLS, never a LENGTH or a
// CONTENT_FILTER).
func normalizeToolFinish(meta *llmrelayv1.ResponseMeta, n int32) {
	meta.ToolCallCount = n
	meta.FinishReason = provider.ToolCallsFinish(meta.FinishReason, int(n))
}

// noFinishWarning is the warning of an answer that ended without a finish
// reason: the provider said neither that it stopped nor why (an OpenAI
// choice with finish_reason null, Anthropic's stop_reason null, a Gemini
// candidate without finishReason, a Responses answer without status, a
// chat stream ended by [DONE] alone). The answer is relayed, as the
// provider framed it complete, but it may be a cut one: the caller is
// told rather than given a silent complete answer.
const noFinishWarning = "the provider gave no finish reason: the answer may be incomplete"

// warnNoFinish adds noFinishWarning to the meta of a complete answer (its
// tool calls counted) whose finish reason is still unspecified.
func warnNoFinish(meta *llmrelayv1.ResponseMeta) {
	if meta.GetFinishReason() == llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED && !slices.Contains(meta.Warnings, noFinishWarning) {
		meta.Warnings = append(meta.Warnings, noFinishWarning)
	}
}

// emptyAnswerWarning is the warning of an answer the provider ended as
// complete (finish STOP, or none) that holds no text, refusal, tool call or
// provider item: a model that answered nothing (Claude's empty end_turn
// after tool results, a Gemini candidate with empty text) looks like a
// successful answer otherwise. Reasoning alone does not count as an
// answer; a provider item does (a Gemini image model's generated image is
// its whole answer: provider/gemini/testdata/real_image_gemini_3_1_flash_image.http).
// A finish that says why (LENGTH, CONTENT_FILTER, OTHER) needs no warning.
const emptyAnswerWarning = "the provider ended the answer normally but it is empty (no text, refusal or tool call)"

// warnEmpty adds emptyAnswerWarning to meta when the answer said nothing
// and its finish reason claims a normal end; it names the output tokens
// the provider counted beyond reasoning, which the answer does not show.
func warnEmpty(meta *llmrelayv1.ResponseMeta, said bool) {
	if said || meta.ToolCallCount > 0 {
		return
	}
	switch meta.GetFinishReason() {
	case llmrelayv1.FinishReason_FINISH_REASON_STOP, llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED:
	default:
		return
	}
	w := emptyAnswerWarning
	if u := meta.GetUsage(); u.GetOutputTokens() > u.GetReasoningTokens() {
		w += fmt.Sprintf("; the provider counted %d output tokens besides reasoning", u.GetOutputTokens()-u.GetReasoningTokens())
	}
	meta.Warnings = append(meta.Warnings, w)
}

// says reports whether msg holds text, a refusal, a tool call or a
// provider item.
func says(msg *llmrelayv1.Message) bool {
	for _, p := range msg.GetParts() {
		if p.GetText() != "" || p.GetRefusal() != "" || p.GetToolCall() != nil || p.GetProviderItem() != nil {
			return true
		}
	}
	return false
}

func countToolCalls(msg *llmrelayv1.Message) int32 {
	n := int32(0)
	for _, p := range msg.GetParts() {
		if p.GetToolCall() != nil {
			n++
		}
	}
	return n
}

// runUnary calls the provider and returns the message and the meta.
func (g *gateway) runUnary(ctx context.Context, p *prepared) (*llmrelayv1.Message, *llmrelayv1.ResponseMeta, error) {
	defer p.cancel()
	res, err := g.unaryRoute(ctx, p)
	if err != nil {
		meta := g.finishMeta(p, reported(err))
		return nil, nil, g.account(ctx, p, meta, toStatus(ctx, err, meta, p.st.redact, g.log))
	}
	if res.Message == nil {
		res.Message = &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT}
	}
	meta := g.finishMeta(p, res)
	normalizeToolFinish(meta, countToolCalls(res.Message))
	warnNoFinish(meta)
	warnEmpty(meta, says(res.Message))
	for _, part := range res.Message.GetParts() {
		if r := part.GetReasoning(); r != nil {
			r.Provider = p.providerType
		}
		if it := part.GetProviderItem(); it != nil {
			it.Provider = p.providerType
		}
	}
	if err := p.checkOutput(meta, res.Message); err != nil {
		return nil, nil, g.account(ctx, p, meta, toStatus(ctx, err, meta, p.st.redact, g.log))
	}
	g.account(ctx, p, meta, nil)
	return res.Message, meta, nil
}

// checkOutput validates a complete structured answer, records the report
// in the meta and, in ERROR mode, returns the error for an invalid one.
func (p *prepared) checkOutput(meta *llmrelayv1.ResponseMeta, msg *llmrelayv1.Message) error {
	v := p.output.check(msg, meta.GetFinishReason(), meta.GetToolCallCount())
	if v == nil {
		return nil
	}
	meta.OutputValidation = v
	meta.Warnings = append(meta.Warnings, p.output.warnings()...)
	if v.Valid || p.output.report {
		return nil
	}
	return &outputError{errors: v.Errors, message: msg}
}

// unaryRoute calls the route's deployments in turn until one answers.
func (g *gateway) unaryRoute(ctx context.Context, p *prepared) (*provider.Result, error) {
	var spent embedSpent // the usage of the deployments an embeddings call left
	var filtered filteredSpent
	for i, d := range p.route {
		p.use(d)
		p.call.CanFallBack = i+1 < len(p.route)
		var (
			res *provider.Result
			err error
		)
		if p.call.Embed != nil {
			// Embeddings go in as many requests as the provider's
			// per-request limit needs, all on this deployment (one model,
			// one vector space); a fallback starts over.
			res, err = g.embedSplit(ctx, p, d)
			res, err = spent.carry(p.call.Deployment, res, err)
		} else {
			res, err = d.Provider.Pipeline.Unary(ctx, p.call)
			if err == nil && i+1 < len(p.route) && p.model.ContentFilterFallback && stoppedByFilter(res) {
				recorded := len(p.call.Record.RetryReasons)
				if p.fallback(ctx, i, g.filterStop(p, res)) {
					filtered.add(d.Name, res.Meta.GetUsage())
					g.tel.Metrics().Fallback(p.model.Name, d.Name)
					continue
				}
				// The call ended meanwhile: the answer stands.
				p.call.Record.RetryReasons = p.call.Record.RetryReasons[:recorded]
			}
		}
		if err == nil || !p.fallback(ctx, i, err) {
			res, err = filtered.carry(res, err)
			return res, p.requestField(err)
		}
		g.tel.Metrics().Fallback(p.model.Name, d.Name)
	}
	return nil, errors.New("model has no deployment")
}

// stoppedByFilter reports whether a unary answer ended because the
// provider's content filter stopped it (finish reason content_filter:
// Azure's filtered completion, Gemini's SAFETY): with the model's
// content_filter_fallback, a deployment after it answers instead, as
// LiteLLM's content_policy_fallbacks treat such an answer.
func stoppedByFilter(res *provider.Result) bool {
	return res != nil && res.Meta.GetFinishReason() == llmrelayv1.FinishReason_FINISH_REASON_CONTENT_FILTER
}

// filteredSpent is what the answers a route discarded for their content
// filter's stop (content_filter_fallback) cost: billed all the same, so
// added to the usage of whatever ends the call, with a warning.
type filteredSpent struct {
	usage *llmrelayv1.Usage
	from  []string
}

// filterStop records the answer res of the call's deployment, stopped by
// its content filter, as a failed attempt (its retry reason
// content_filter, with its provider request id) and returns that
// failure, which the route's fallback takes (contentFiltered).
func (g *gateway) filterStop(p *prepared, res *provider.Result) error {
	pe := &provider.Error{Provider: p.providerType, Kind: provider.KindContentFilter, Code: "content_filter",
		Message:   "the provider's content filter stopped the answer (finish reason content_filter); discarded for the next deployment (content_filter_fallback)",
		RequestID: res.Meta.GetProviderRequestId(), Meta: res.Meta}
	p.call.RecordFailure(pe, g.now().Sub(p.call.Record.AttemptStart))
	return pe
}

// add counts a discarded answer of deployment with its usage.
func (f *filteredSpent) add(deployment string, u *llmrelayv1.Usage) {
	f.from = append(f.from, deployment)
	if proto.Size(u) > 0 {
		f.usage = addUsage(f.usage, u)
	}
}

// carry adds the discarded answers' usage to the call's outcome.
func (f *filteredSpent) carry(res *provider.Result, err error) (*provider.Result, error) {
	if len(f.from) == 0 {
		return res, err
	}
	var meta *llmrelayv1.ResponseMeta
	var pe *provider.Error
	switch {
	case err == nil && res != nil:
		if res.Meta == nil {
			res.Meta = &llmrelayv1.ResponseMeta{}
		}
		meta = res.Meta
	case errors.As(err, &pe):
		if pe.Meta == nil {
			pe.Meta = &llmrelayv1.ResponseMeta{}
		}
		meta = pe.Meta
	default:
		return res, err
	}
	f.carryMeta(meta)
	return res, err
}

// carryMeta adds the discarded answers' usage and the warning naming them
// to meta.
func (f *filteredSpent) carryMeta(meta *llmrelayv1.ResponseMeta) {
	if len(f.from) == 0 {
		return
	}
	w := fmt.Sprintf("the answer of %s was stopped by its content filter and discarded for the next deployment (content_filter_fallback)", strings.Join(f.from, ", "))
	if f.usage != nil {
		meta.Usage = addUsage(meta.Usage, f.usage)
		w += fmt.Sprintf("; usage includes its %d tokens", f.usage.GetTotalTokens())
	}
	meta.Warnings = append(meta.Warnings, w)
}

// setupField names an agent round's field under setup where it is one of
// the setup's: its options, a message it sent, one of the client's tools.
// A message the run added, or an MCP server's tool, is no field of the
// setup: left as the call named it.
func (p *prepared) setupField(pe *provider.Error) {
	if !p.agentRound || pe.Param == "" {
		return
	}
	f := pe.Param
	within := func(list string, n int) bool {
		rest, ok := strings.CutPrefix(f, list+"[")
		if !ok {
			return false
		}
		idx, _, ok := strings.Cut(rest, "]")
		k, err := strconv.Atoi(idx)
		return ok && err == nil && k < n
	}
	if strings.HasPrefix(f, "options.") || strings.HasPrefix(f, "provider_options.") ||
		within("messages", p.setupMessages) || within("tools", p.setupTools) {
		pe.Param = "setup." + f
	}
}

// messageParamRE matches a field path into the conversation.
var messageParamRE = regexp.MustCompile(`^messages\[(\d{1,9})\](.*)$`)

// requestField makes a provider error's field path the request's: a
// provider's own wire path as requestFieldOf translates it, and a path
// into the conversation (messages[k]…, counted over the conversation the
// adapter was given) shifted past the model's configured context, which
// the caller did not send. A field of the context itself is no field of
// the request: the message says where it is instead.
func (p *prepared) requestField(err error) error {
	if err == nil {
		return nil // no allocation on the hot path (pe escapes to errors.As)
	}
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Param == "" {
		return err
	}
	if pe.HTTPStatus != 0 {
		// The provider's own path (the adapters name request fields):
		// the request's, where the encoding tells it.
		if f := requestFieldOf(p.call.Request, pe.Param); f != "" {
			pe.Param = f
		}
	}
	defer p.setupField(pe)
	if p.contextLen == 0 {
		return err
	}
	m := messageParamRE.FindStringSubmatch(pe.Param)
	if m == nil {
		return err
	}
	k, perr := strconv.Atoi(m[1])
	if perr != nil {
		return err
	}
	if k < p.contextLen {
		pe.Message = fmt.Sprintf("in the model's configured context (context[%d]%s): %s", k, m[2], pe.Message)
		pe.Param = ""
		return err
	}
	pe.Param = "messages[" + strconv.Itoa(k-p.contextLen) + "]" + m[2]
	if strings.HasPrefix(pe.Message, m[0]) {
		pe.Message = pe.Param + pe.Message[len(m[0]):]
	}
	return err
}

// streamRoute opens a stream on the route's deployments in turn; a stream
// falls back only before its first event (the pipeline reads it ahead).
func (g *gateway) streamRoute(ctx context.Context, p *prepared) (provider.Stream, error) {
	for i, d := range p.route {
		p.use(d)
		p.call.CanFallBack = i+1 < len(p.route)
		s, err := d.Provider.Pipeline.Stream(ctx, p.call)
		if err == nil && i+1 < len(p.route) && p.model.ContentFilterFallback {
			// A stream that ended, its content filter's stop, before any
			// content relayed nothing: it gives way as a unary answer does.
			var evs []*provider.Event
			s, evs = pipeline.EndedBeforeContent(s)
			if res := filteredEnd(evs); res != nil {
				recorded := len(p.call.Record.RetryReasons)
				if p.fallback(ctx, i, g.filterStop(p, res)) {
					_ = s.Close() // it ended; its close adds nothing
					p.filtered.add(d.Name, res.Meta.GetUsage())
					g.tel.Metrics().Fallback(p.model.Name, d.Name)
					continue
				}
				// The call ended meanwhile: the stream stands.
				p.call.Record.RetryReasons = p.call.Record.RetryReasons[:recorded]
			}
		}
		if err == nil || !p.fallback(ctx, i, err) {
			if err != nil {
				_, err = p.filtered.carry(nil, err)
			}
			return s, p.requestField(err)
		}
		g.tel.Metrics().Fallback(p.model.Name, d.Name)
	}
	return nil, errors.New("model has no deployment")
}

// filteredEnd is the result of a stream that ended before any content
// with the events evs (pipeline.EndedBeforeContent), when its finish was
// the content filter's stop (stoppedByFilter): its meta and usage as its
// events reported them. Nil for any other.
func filteredEnd(evs []*provider.Event) *provider.Result {
	if len(evs) == 0 {
		return nil
	}
	meta := &llmrelayv1.ResponseMeta{}
	var usage *llmrelayv1.Usage
	for _, ev := range evs {
		switch {
		case ev == nil:
		case ev.Kind == provider.EventMeta && ev.Meta != nil:
			provider.MergeMeta(meta, ev.Meta)
		case ev.Kind == provider.EventUsage && ev.Usage != nil:
			usage = ev.Usage // the latest, as the relay keeps it
		}
	}
	if usage != nil {
		meta.Usage = proto.CloneOf(usage)
	}
	res := &provider.Result{Meta: meta}
	if !stoppedByFilter(res) {
		return nil
	}
	return res
}

// eventSink sends normalized events on a StreamChat or StreamTools stream.
type eventSink interface {
	start(*llmrelayv1.StreamStart) error
	// text sends a text delta and its phase (TextDelta.phase).
	text(t, phase, item string, begins bool) error
	refusal(t, item string) error
	reasoning(*llmrelayv1.ReasoningDelta) error
	providerItem(*llmrelayv1.ProviderItem) error
	// toolDelta and toolDone are only called by StreamTools.
	toolDelta(*llmrelayv1.ToolCallDelta) error
	toolDone(*llmrelayv1.ToolCallDone) error
	usage(*llmrelayv1.Usage) error
	end(*llmrelayv1.StreamEnd) error
	tools() bool
}

// runStream opens the provider stream (retrying only before its first
// event), relays events as they arrive, and ends with the folded meta. A
// slow client slows the upstream read: Send blocks, nothing is queued.
//
// Its frame is kept small, and the relay's state is in relayStream's: the
// upstream request is written and its answer awaited below streamRoute, at
// the deepest point of the call's goroutine, and a goroutine whose stack
// grew past 8 KiB once keeps 16 KiB while its stream is open
// (docs/decisions.md, "An open stream's goroutine stays within 8 KiB").
func (g *gateway) runStream(ctx context.Context, p *prepared, sink eventSink) error {
	defer p.cancel()
	defer g.tel.Metrics().StreamStarted(p.model.Name)()
	s, err := g.streamRoute(ctx, p)
	if err != nil {
		return g.streamFailed(ctx, p, err)
	}
	return g.relayStream(ctx, p, sink, s)
}

// notPrepared reports a call refused before it reached a provider.
//
//go:noinline
func (g *gateway) notPrepared(ctx context.Context, err error) error {
	return toStatus(ctx, err, nil, g.state.Load().redact, g.log)
}

//go:noinline
func (g *gateway) streamFailed(ctx context.Context, p *prepared, err error) error {
	meta := g.finishMeta(p, reported(err))
	return g.account(ctx, p, meta, toStatus(ctx, err, meta, p.st.redact, g.log))
}

//go:noinline
func (g *gateway) relayStream(ctx context.Context, p *prepared, sink eventSink, s provider.Stream) error {
	defer s.Close() //nolint:errcheck // closing a finished or failed stream reports nothing useful
	r := relay{g: g, ctx: ctx, p: p, sink: sink, meta: &llmrelayv1.ResponseMeta{}}
	if err := r.run(s); err != nil {
		return r.fail(ctx, err)
	}
	return nil
}

type relay struct {
	g       *gateway
	ctx     context.Context // the RPC's, for the call's accounting
	p       *prepared
	sink    eventSink
	meta    *llmrelayv1.ResponseMeta // merged from the provider's EventMeta
	started bool
	ttft    time.Duration
	acc     foldState
	usage   *llmrelayv1.Usage
	sendErr error
	// final is the meta of the finished stream, once built; accounted is
	// set once the call was accounted as a success (its end event next).
	final     *llmrelayv1.ResponseMeta
	accounted bool
	// tagged marks the reasoning blocks whose first delta went out.
	tagged map[int32]bool
	// pieceKind and pieceItem are the kind (EventText, EventRefusal; 0
	// after any other content) and message item id of the last text or
	// refusal delta sent: a delta's item_id goes out only when it begins
	// a new part (TextDelta.item_id).
	pieceKind provider.EventKind
	pieceItem string
	// said is set once a text or refusal delta or a provider item went out
	// (warnEmpty).
	said bool
}

func (r *relay) run(s provider.Stream) error {
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return r.finish()
		}
		if err != nil {
			return err
		}
		if err := r.handle(ev); err != nil {
			return err
		}
	}
}

func (r *relay) ensureStarted() error {
	if r.started {
		return nil
	}
	r.started = true
	start := &llmrelayv1.StreamStart{
		RequestId: r.p.meta.RequestId, Provider: r.p.meta.Provider, RequestedModel: r.p.meta.RequestedModel,
		ResolvedModel: firstNonEmpty(r.meta.ResolvedModel, r.p.call.Request.Model), ResponseId: r.meta.ResponseId,
		CreateTime: r.meta.CreateTime,
	}
	redactProto(r.p.st.redact, start) // the provider's id and model name
	// Through send like every event: a refusal by the send limit or a
	// client gone away is then told from the provider's failure (fail).
	return r.send(r.sink.start(start))
}

func (r *relay) firstToken() {
	if r.ttft == 0 {
		r.ttft = r.g.now().Sub(r.p.start)
	}
}

func (r *relay) handle(ev *provider.Event) error {
	if ev == nil {
		return nil
	}
	switch ev.Kind {
	case provider.EventMeta:
		if ev.Meta != nil {
			provider.MergeMeta(r.meta, ev.Meta)
		}
		if ev.Meta.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_UNSPECIFIED {
			return r.closeOpenCalls()
		}
		return nil
	case provider.EventText, provider.EventRefusal:
		if ev.Text == "" {
			return nil
		}
		r.firstToken()
		if err := r.ensureStarted(); err != nil {
			return err
		}
		item := ""
		if ev.ItemID != "" && (ev.Kind != r.pieceKind || ev.ItemID != r.pieceItem) {
			item = ev.ItemID
		}
		r.pieceKind, r.pieceItem = ev.Kind, ev.ItemID
		r.said = true
		if ev.Kind == provider.EventText {
			r.acc.text(ev.Text, ev.Phase, item, ev.BeginsPart)
			return r.send(r.sink.text(ev.Text, ev.Phase, item, ev.BeginsPart))
		}
		r.acc.refusal(ev.Text, item)
		return r.send(r.sink.refusal(ev.Text, item))
	case provider.EventReasoning:
		r.pieceKind = 0
		r.firstToken()
		if err := r.ensureStarted(); err != nil {
			return err
		}
		rd := ev.Reasoning
		d := rd.Proto()
		if !r.tagged[d.Index] {
			if r.tagged == nil {
				r.tagged = map[int32]bool{}
			}
			r.tagged[d.Index] = true
			d.Provider = r.p.providerType
		}
		if err := r.acc.acc.AddReasoning(d); err != nil {
			return r.broken(err)
		}
		return r.send(r.sink.reasoning(d))
	case provider.EventProviderItem:
		if ev.Item == nil {
			return nil // no item: nothing to relay
		}
		r.pieceKind = 0
		r.firstToken()
		if err := r.ensureStarted(); err != nil {
			return err
		}
		r.said = true // an item is something answered (warnEmpty)
		it := &llmrelayv1.ProviderItem{Provider: r.p.providerType, Type: ev.Item.Type, Json: ev.Item.JSON}
		if err := r.acc.acc.AddProviderItem(it); err != nil {
			return r.broken(err)
		}
		return r.send(r.sink.providerItem(it))
	case provider.EventToolCall:
		r.pieceKind = 0
		r.firstToken()
		if err := r.ensureStarted(); err != nil {
			return err
		}
		d := &llmrelayv1.ToolCallDelta{CallId: ev.ToolCall.CallID, Index: int32(ev.ToolCall.Index), Name: ev.ToolCall.Name,
			ArgumentsDelta: ev.ToolCall.Arguments, Signature: ev.ToolCall.Signature}
		if err := r.acc.toolDelta(d); err != nil {
			return r.broken(err)
		}
		if !r.sink.tools() {
			return nil // a chat stream has no tool events; the fold still keeps the call
		}
		return r.send(r.sink.toolDelta(d))
	case provider.EventToolCallEnd, provider.EventToolCallCut:
		return r.completeCall(ev.ToolCall.CallID, ev.Kind == provider.EventToolCallCut)
	case provider.EventUsage:
		if ev.Usage != nil {
			r.usage = ev.Usage
		}
		return nil
	default:
		return nil
	}
}

func (r *relay) send(err error) error {
	if err != nil {
		r.sendErr = err
	}
	return err
}

// broken is the error of an event the accumulator refused (a fragment of
// a call the provider already ended, more calls than allowed): the
// provider broke its own protocol, which is UPSTREAM_BAD_RESPONSE, not a
// bug of ours.
func (r *relay) broken(err error) error {
	return &provider.Error{Provider: r.p.providerType, Kind: provider.KindBadResponse,
		Message: "the provider's stream broke its protocol: " + err.Error(), Err: err}
}

// completeCall sends the call's done event; cut: the token limit cut it
// (provider.EventToolCallCut), so its arguments are not valid even when
// they parse.
func (r *relay) completeCall(id string, cut bool) error {
	done, err := r.acc.doneCall(id, cut)
	if err != nil {
		return r.broken(err)
	}
	if done == nil || !r.sink.tools() {
		return nil
	}
	return r.send(r.sink.toolDone(done))
}

func (r *relay) closeOpenCalls() error {
	for _, id := range r.acc.open() {
		if err := r.completeCall(id, false); err != nil {
			return err
		}
	}
	return nil
}

func (r *relay) finalMeta() *llmrelayv1.ResponseMeta {
	if r.final != nil {
		return r.final
	}
	// Usage and timing before finishMeta: it prices the usage, counts it
	// against the caller's budget and redacts the whole meta.
	if r.usage != nil {
		r.meta.Usage = r.usage
	}
	r.p.filtered.carryMeta(r.meta) // the streams the route discarded
	if r.ttft > 0 {
		r.meta.TimeToFirstToken = durationpb.New(r.ttft)
	}
	r.final = r.g.finishMeta(r.p, &provider.Result{Meta: r.meta})
	return r.final
}

func (r *relay) finish() error {
	if err := r.ensureStarted(); err != nil {
		return err
	}
	if err := r.closeOpenCalls(); err != nil {
		return err
	}
	meta := r.finalMeta()
	normalizeToolFinish(meta, int32(r.acc.acc.ToolCallCount())) // counted, not the whole message rebuilt
	warnNoFinish(meta)
	warnEmpty(meta, r.said)
	if meta.Usage != nil {
		if err := r.send(r.sink.usage(meta.Usage)); err != nil {
			return err
		}
	}
	if r.p.output != nil {
		// The text deltas went out as they came; the check needs the
		// whole answer. In ERROR mode the status replaces the end event.
		if err := r.p.checkOutput(meta, r.acc.acc.Message()); err != nil {
			return err // accounted with its status on the error path
		}
	}
	r.g.account(r.ctx, r.p, meta, nil)
	r.accounted = true
	return r.send(r.sink.end(&llmrelayv1.StreamEnd{FinishReason: meta.FinishReason, Meta: meta}))
}

// fail ends the RPC with the mapped status and the partial meta; events
// already sent stay valid.
func (r *relay) fail(ctx context.Context, err error) error {
	if r.sendErr != nil {
		var le *limitError
		if !errors.As(r.sendErr, &le) {
			// The client went away or the transport broke: nothing more
			// can reach it; report the send error as it is. The call is
			// still accounted, as any other end: the provider produced
			// (and bills) the tokens it reported so far, which count
			// against the caller's budget, in the metrics and the cost.
			// Its attempt did not fail: the gateway stopped reading.
			if !r.accounted {
				r.g.account(ctx, r.p, r.finalMeta(), r.sendErr)
			}
			return r.sendErr
		}
		// An event over limits.max_send_message_bytes: the client is
		// still there and gets the limit's status with the call's meta
		// (attempts, ids, the usage so far), like any failure after the
		// first byte.
		if r.accounted {
			// The end event was too large: the call was accounted as a
			// success just before it; only its status changes.
			return r.limitStatus(ctx, le, r.final)
		}
		// The gateway ended the attempt: a failed attempt, as one ended
		// by limits.max_response_bytes is.
		rec := r.p.call.Record
		r.p.call.RecordFailure(&provider.Error{Provider: r.p.providerType, Kind: provider.KindResourceExhausted, Message: le.msg},
			r.g.now().Sub(rec.AttemptStart))
		meta := r.finalMeta()
		return r.g.account(ctx, r.p, meta, r.limitStatus(ctx, le, meta))
	}
	if pe := (*provider.Error)(nil); errors.As(err, &pe) {
		// The attempt failed after Retry handed the stream over: it is a
		// failed attempt like the ones Retry recorded (meta.retry_reasons
		// has one entry per failed attempt), though none follows it.
		rec := r.p.call.Record
		r.p.call.RecordFailure(err, r.g.now().Sub(rec.AttemptStart))
	}
	if rep := reported(err); rep != nil {
		// What the provider said with its failure (a failed response's
		// usage, say) comes after what its events said.
		if rep.Meta.Usage != nil {
			r.usage = rep.Meta.Usage
			rep.Meta.Usage = nil
		}
		provider.MergeMeta(r.meta, rep.Meta)
	}
	meta := r.finalMeta()
	return r.g.account(ctx, r.p, meta, toStatus(ctx, err, meta, r.p.st.redact, r.g.log))
}

// limitStatus is the status of an event refused for
// limits.max_send_message_bytes mid-stream: the limit's status (toStatus
// leaves a limit's meta out: the other limits refuse a call before it
// reaches a provider) with the failed call's meta, as every failure after
// a provider call has it. The meta is bounded as every FailedCallMeta is
// (failedDetail): when the end event was the one refused, its meta is
// what was too large, and the trailer must not carry it whole.
func (r *relay) limitStatus(ctx context.Context, le *limitError, meta *llmrelayv1.ResponseMeta) error {
	err := toStatus(ctx, le, meta, r.p.st.redact, r.g.log)
	withMeta, derr := status.Convert(err).WithDetails(protoadapt.MessageV1Of(failedDetail(meta, nil)))
	if derr != nil {
		// Cannot happen (the meta marshals: it went out in events); the
		// limit's status still says what happened.
		r.g.log.WarnContext(ctx, "failed call meta not attached", slog.String("error", derr.Error()))
		return err
	}
	return withMeta.Err()
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
