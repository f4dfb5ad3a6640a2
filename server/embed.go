package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server/catalog"
	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
)

// extProviderRequestIDs is the meta.extended key listing the provider
// request ids of every upstream request of a split embeddings call, in
// input order (provider_request_id is the first's).
const extProviderRequestIDs = "provider_request_ids"

// embedBatchLimiter is an adapter that knows the most inputs its API takes
// in one embeddings request (the OpenAI adapter on Voyage AI's host: 1000).
type embedBatchLimiter interface{ MaxEmbedInputs() int }

// embedInputLimit is a provider's most inputs per upstream embeddings
// request: the configured max_embedding_inputs, else what the adapter
// knows of its API, else 0 (no limit below the gateway's own).
func embedInputLimit(pc config.Provider, impl provider.Provider) int {
	if pc.MaxEmbeddingInputs > 0 {
		return pc.MaxEmbeddingInputs
	}
	if l, ok := impl.(embedBatchLimiter); ok {
		return max(l.MaxEmbedInputs(), 0)
	}
	return 0
}

// embedSplit embeds the call's inputs on deployment d: in one request when
// they fit its provider's limit, else in parts of nearly equal size (none
// over the limit), requested one after the other through the pipeline (each
// part retried on its own; attempts, retry reasons and request time add up
// in the call's record). A request the provider refuses for its inputs
// together (provider.Error.BatchTooLarge: a cap on the tokens of a request,
// OpenAI's 300,000, or on its inputs, Azure's 16 of old) goes again in
// smaller parts (resplit), down to one input, with a warning; the refusal
// counts as a failed attempt. The answer is the parts' embeddings in input
// order, their usage summed, numeric extended values summed (Ollama's
// durations and counts), the first part's response id, model and
// provider_request_id and every part's request id in
// extended.provider_request_ids. A failed part fails the deployment; the
// usage of the parts embedded before it is added to the error's meta (it
// was spent).
func (g *gateway) embedSplit(ctx context.Context, p *prepared, d *catalog.Deployment) (*provider.Result, error) {
	whole := p.call.Embed
	limit := d.Provider.MaxEmbedInputs
	n := len(whole.Inputs)
	if limit <= 0 || n <= limit {
		res, err := d.Provider.Pipeline.Unary(ctx, p.call)
		if n < 2 || !batchTooLarge(err) {
			return res, err
		}
		return g.embedParts(ctx, p, d, resplit(inputRange{0, n}, err), err)
	}
	return g.embedParts(ctx, p, d, evenParts(inputRange{0, n}, limit), nil)
}

// evenParts splits r into parts of nearly equal size, none over limit.
func evenParts(r inputRange, limit int) []inputRange {
	n := r.end - r.start
	parts := (n + limit - 1) / limit
	size := (n + parts - 1) / parts
	var out []inputRange
	for start := r.start; start < r.end; start += size {
		out = append(out, inputRange{start, min(start+size, r.end)})
	}
	return out
}

// resplit is how a refused request's inputs go again: in parts of at most
// the number the provider said it takes (provider.Error.BatchLimit), or in
// as many parts as its counts need (BatchParts: the tokens asked over
// those allowed), else as two halves.
func resplit(r inputRange, err error) []inputRange {
	n := r.end - r.start
	var pe *provider.Error
	if errors.As(err, &pe) {
		if pe.BatchLimit > 0 && n > pe.BatchLimit {
			return evenParts(r, pe.BatchLimit)
		}
		if pe.BatchParts > 2 {
			return evenParts(r, max((n+pe.BatchParts-1)/pe.BatchParts, 1))
		}
	}
	return halves(r)
}

// inputRange is the inputs start to end-1 of an embeddings call.
type inputRange struct{ start, end int }

// halves splits r (of two inputs or more) in two, the first half the
// larger.
func halves(r inputRange) []inputRange {
	mid := r.start + (r.end-r.start+1)/2
	return []inputRange{{r.start, mid}, {mid, r.end}}
}

// batchTooLarge reports whether err is a provider's refusal of an
// embeddings request's inputs together (provider.Error.BatchTooLarge), or
// a plain 413 (an invalid request by its kind: not a rate limit, not an
// input past the model's length): a body over the size limit of the
// provider or of a proxy in front of it (nginx's client_max_body_size,
// whose page says nothing more), which the same inputs in smaller bodies
// pass.
func batchTooLarge(err error) bool {
	var pe *provider.Error
	return errors.As(err, &pe) && (pe.BatchTooLarge ||
		pe.HTTPStatus == http.StatusRequestEntityTooLarge && pe.Kind == provider.KindInvalidRequest)
}

// refusal is a batchTooLarge error's message, as the provider said it.
func refusal(err error) string {
	var pe *provider.Error
	if errors.As(err, &pe) {
		return pe.Message
	}
	return err.Error()
}

// embedParts requests the call's inputs in the ranges given, in order (see
// embedSplit); refused is the provider's refusal of the call's inputs in one
// request, which made these ranges (nil when the limit did).
func (g *gateway) embedParts(ctx context.Context, p *prepared, d *catalog.Deployment, ranges []inputRange, refused error) (*provider.Result, error) {
	whole := p.call.Embed
	defer func() { p.call.Embed = whole }()
	n := len(whole.Inputs)
	var (
		out    = &provider.Result{Embeddings: make([]*llmrelayv1.Embedding, 0, n), Meta: &llmrelayv1.ResponseMeta{}}
		ids    []any
		dims   = -1
		splits []string // the refusals that split a request, said in a warning
		said   int      // the most inputs a refusal said a request takes
	)
	note := func(r inputRange, err error) {
		splits = append(splits, fmt.Sprintf("inputs %d to %d (%s)", r.start, r.end-1, refusal(err)))
		var pe *provider.Error
		if errors.As(err, &pe) && pe.BatchLimit > 0 {
			said = pe.BatchLimit
		}
	}
	if refused != nil {
		note(inputRange{0, n}, refused)
	}
	for len(ranges) > 0 {
		r := ranges[0]
		ranges = ranges[1:]
		start, end := r.start, r.end
		// k parts were embedded; this one and those queued are left.
		k, parts := len(ids), len(ids)+1+len(ranges)
		part := *whole
		part.Inputs = whole.Inputs[start:end]
		p.call.Embed = &part
		res, err := d.Provider.Pipeline.Unary(ctx, p.call)
		if err != nil && end-start > 1 && batchTooLarge(err) {
			// Refused for its inputs together: its parts go next.
			note(r, err)
			ranges = append(resplit(r, err), ranges...)
			continue
		}
		if err != nil {
			return nil, partFailed(err, out.Meta.GetUsage(), k, parts, start, end)
		}
		// An answer refused here was billed, as were the parts before it.
		spent := func() *llmrelayv1.Usage {
			u := proto.Clone(out.Meta.GetUsage()).(*llmrelayv1.Usage)
			if pu := res.Meta.GetUsage(); pu != nil {
				u = addUsage(u, pu)
			}
			return u
		}
		if len(res.Embeddings) != end-start {
			return nil, partFailed(provider.BadResponse(d.Provider.Type, "request %d of %d (inputs %d to %d): %d embeddings for %d inputs", k+1, parts, start, end-1, len(res.Embeddings), end-start),
				spent(), k, parts, start, end)
		}
		for _, e := range res.Embeddings {
			if dims < 0 {
				dims = len(e.GetValues())
			} else if len(e.GetValues()) != dims {
				return nil, partFailed(provider.BadResponse(d.Provider.Type, "request %d of %d (inputs %d to %d): embeddings of %d values where the first request's have %d", k+1, parts, start, end-1, len(e.GetValues()), dims),
					spent(), k, parts, start, end)
			}
			e.Index += int32(start)
			out.Embeddings = append(out.Embeddings, e)
		}
		ids = append(ids, res.Meta.GetProviderRequestId())
		joinEmbedMeta(out.Meta, res.Meta, k == 0)
	}
	out.Meta.EmbeddingsCount = int32(len(out.Embeddings))
	provider.SetExtended(out.Meta, extProviderRequestIDs, ids)
	if len(splits) > 0 {
		w := fmt.Sprintf("sent again in smaller parts, the requests the provider refused for their inputs together: %s; %d requests embedded the call",
			strings.Join(splits, "; "), len(ids))
		if said > 0 {
			w += fmt.Sprintf(" (providers[].max_embedding_inputs: %d sends such calls in parts from the start)", said)
		}
		out.Meta.Warnings = append(out.Meta.Warnings, w)
	}
	if p.call.PreserveRaw {
		out.Meta.Warnings = append(out.Meta.Warnings, fmt.Sprintf("raw data is the last of the %d requests", len(ids)))
	}
	return out, nil
}

// embedSpent is the usage spent on the deployments an embeddings call
// fell back from: a split call's parts embedded before one failed were
// billed though their vectors are dropped (a fallback starts over). It is
// added to the usage of whatever ends the call, as the Agent adds a failed
// round's usage to the run's (docs/decisions.md, "A failed Agent round is
// in the run's meta"): the caller's budget and cost count what the
// providers bill.
type embedSpent struct {
	usage *llmrelayv1.Usage
	from  []string // the deployments it was spent on
}

// carry adds the usage spent before to a deployment's outcome: to the
// answer's meta, with a warning saying how much of it came from which
// deployments, or to the error's meta, where it is then carried on to
// the next deployment if the route falls back.
func (s *embedSpent) carry(deployment string, res *provider.Result, err error) (*provider.Result, error) {
	if err != nil {
		var pe *provider.Error
		if !errors.As(err, &pe) {
			return nil, err
		}
		billed := proto.Size(pe.Meta.GetUsage()) > 0 // on this deployment
		if s.usage != nil {
			if pe.Meta == nil {
				pe.Meta = &llmrelayv1.ResponseMeta{}
			}
			pe.Meta.Usage = addUsage(pe.Meta.Usage, s.usage)
			pe.Meta.Warnings = append(pe.Meta.Warnings, s.said())
		}
		if billed {
			s.from = append(s.from, deployment)
		}
		if proto.Size(pe.Meta.GetUsage()) > 0 {
			s.usage = proto.CloneOf(pe.Meta.Usage) // carried on if the route falls back
		}
		return nil, err
	}
	if s.usage == nil || res == nil {
		return res, nil
	}
	if res.Meta == nil {
		res.Meta = &llmrelayv1.ResponseMeta{}
	}
	res.Meta.Usage = addUsage(res.Meta.Usage, s.usage)
	res.Meta.Warnings = append(res.Meta.Warnings, s.said())
	return res, nil
}

// said is the warning of a meta whose usage includes the spent usage.
func (s *embedSpent) said() string {
	return fmt.Sprintf("usage includes %d tokens spent on %s before it failed (a fallback embeds every input again)",
		s.usage.GetTotalTokens(), strings.Join(s.from, ", "))
}

// joinEmbedMeta adds one part's meta to the sum of the parts before it.
func joinEmbedMeta(sum, part *llmrelayv1.ResponseMeta, first bool) {
	if first {
		sum.ResponseId, sum.CreateTime, sum.ResolvedModel = part.GetResponseId(), part.GetCreateTime(), part.GetResolvedModel()
		sum.ProviderRequestId = part.GetProviderRequestId()
	}
	if u := part.GetUsage(); u != nil {
		sum.Usage = addUsage(sum.Usage, u)
	}
	if rl := part.GetRateLimit(); rl != nil {
		sum.RateLimit = rl // the latest state
	}
	if t := part.GetServiceTier(); t != "" {
		sum.ServiceTier = t
	}
	for _, w := range part.GetWarnings() {
		if !slices.Contains(sum.Warnings, w) { // each part says the same of the same model
			sum.Warnings = append(sum.Warnings, w)
		}
	}
	if ext := part.GetExtended(); ext != nil {
		if sum.Extended == nil {
			sum.Extended = &structpb.Struct{Fields: map[string]*structpb.Value{}}
		}
		addValues(sum.Extended.Fields, ext.GetFields())
	}
}

// addUsage returns sum + u (sum may be nil): the parts of a split
// embeddings call, the model calls of an Agent run.
func addUsage(sum, u *llmrelayv1.Usage) *llmrelayv1.Usage {
	if sum == nil {
		sum = &llmrelayv1.Usage{}
	}
	sum.InputTokens += u.GetInputTokens()
	sum.OutputTokens += u.GetOutputTokens()
	sum.TotalTokens += u.GetTotalTokens()
	sum.CachedInputTokens += u.GetCachedInputTokens()
	sum.ReasoningTokens += u.GetReasoningTokens()
	sum.CacheCreationInputTokens += u.GetCacheCreationInputTokens()
	return sum
}

// addValues adds one part's extended values into sum: numbers are added
// (counts and durations of requests made one after the other), objects
// merged the same way, anything else is the latest part's.
func addValues(sum, part map[string]*structpb.Value) {
	for k, v := range part {
		prev, ok := sum[k]
		switch {
		case !ok:
			sum[k] = v
		case isNumber(prev) && isNumber(v):
			sum[k] = structpb.NewNumberValue(prev.GetNumberValue() + v.GetNumberValue())
		case prev.GetStructValue() != nil && v.GetStructValue() != nil:
			addValues(prev.GetStructValue().Fields, v.GetStructValue().GetFields())
		default:
			sum[k] = v
		}
	}
}

func isNumber(v *structpb.Value) bool {
	_, ok := v.GetKind().(*structpb.Value_NumberValue)
	return ok
}

// partFailed is the error of a split call's failed request: the usage of
// the parts embedded before it is added to its meta (spent, and billed by
// the provider), with a warning saying which part failed; a param naming
// an input of that request (input[N]) names it in the whole call.
func partFailed(err error, spent *llmrelayv1.Usage, k, parts, start, end int) error {
	var pe *provider.Error
	if !errors.As(err, &pe) {
		return err
	}
	if pe.Meta == nil {
		pe.Meta = &llmrelayv1.ResponseMeta{}
	}
	if spent != nil {
		pe.Meta.Usage = addUsage(pe.Meta.Usage, spent)
	}
	w := fmt.Sprintf("request %d of %d (inputs %d to %d) failed; the %d before it were embedded", k+1, parts, start, end-1, k)
	if m := inputParamRE.FindStringSubmatch(pe.Param); m != nil {
		// The provider counts the inputs of its own request: input[1]
		// of the second part of two is the call's input[start+1], the
		// one the caller must shorten.
		if i, perr := strconv.Atoi(m[1]); perr == nil && i < end-start {
			pe.Param = "input[" + strconv.Itoa(start+i) + "]" + m[2]
			w += fmt.Sprintf("; the provider's input[%d] is the call's input[%d]", i, start+i)
		}
	}
	pe.Meta.Warnings = append(pe.Meta.Warnings, w)
	return err
}

// inputParamRE matches a provider error's param naming one input of its
// embeddings request: OpenAI's input[N] (from "Invalid 'input[N]': …"),
// Voyage's as the OpenAI adapter names it.
var inputParamRE = regexp.MustCompile(`^input\[(\d{1,9})\](.*)$`)

// inputsField names the input a provider's error is about by the
// request's field, inputs[N] (the providers', and partFailed's, input[N]
// is OpenAI's name of it).
func inputsField(err error) error {
	var pe *provider.Error
	if errors.As(err, &pe) {
		if m := inputParamRE.FindStringSubmatch(pe.Param); m != nil {
			pe.Param = "inputs[" + m[1] + "]" + m[2]
		}
	}
	return err
}

// Embed returns one embedding per input.
func (g *gateway) Embed(ctx context.Context, req *llmrelayv1.EmbedRequest) (*llmrelayv1.EmbedResponse, error) {
	st := g.state.Load()
	ctx, p, err := g.prepareEmbed(ctx, st, req)
	if err != nil {
		return nil, toStatus(ctx, err, nil, st.redact, g.log)
	}
	defer p.cancel()
	res, err := g.unaryRoute(ctx, p)
	if err != nil {
		err = inputsField(err)
		meta := g.finishMeta(p, reported(err))
		return nil, g.account(ctx, p, meta, toStatus(ctx, err, meta, st.redact, g.log))
	}
	meta := g.finishMeta(p, res)
	meta.EmbeddingsCount = int32(len(res.Embeddings))
	if len(res.Embeddings) != len(req.GetInputs()) {
		return nil, g.account(ctx, p, meta, toStatus(ctx, provider.BadResponse(p.providerType, "provider returned %d embeddings for %d inputs", len(res.Embeddings), len(req.GetInputs())), meta, st.redact, g.log))
	}
	g.account(ctx, p, meta, nil)
	return &llmrelayv1.EmbedResponse{Embeddings: res.Embeddings, Meta: meta}, nil
}

func (g *gateway) prepareEmbed(ctx context.Context, st *state, req *llmrelayv1.EmbedRequest) (context.Context, *prepared, error) {
	if err := g.labelsGate(ctx, req.GetCall()); err != nil {
		return ctx, nil, err
	}
	if err := checkFields(req.ProtoReflect()); err != nil {
		return ctx, nil, err
	}
	if err := validateCall(req.GetCall()); err != nil {
		return ctx, nil, err
	}
	if len(req.GetInputs()) == 0 {
		return ctx, nil, invalidField("inputs", "at least one input is required")
	}
	if len(req.GetInputs()) > maxEmbedInput {
		return ctx, nil, invalidField("inputs", "at most %d inputs, got %d", maxEmbedInput, len(req.GetInputs()))
	}
	for i, in := range req.GetInputs() {
		if in == "" {
			return ctx, nil, invalidField(fmt.Sprintf("inputs[%d]", i), "empty input")
		}
	}
	if req.Dimensions != nil && req.GetDimensions() < 1 {
		return ctx, nil, invalidField("dimensions", "must be at least 1")
	}
	m, capab, err := g.resolve(ctx, st, req.GetModel(), llmrelayv1.Protocol_PROTOCOL_EMBEDDINGS, "embeddings")
	if err != nil {
		return ctx, nil, err
	}
	dims := capab.Dimensions
	if req.Dimensions != nil {
		d := req.GetDimensions()
		dims = &d
	}
	pOpts, dropped, err := checkProviderOptions(m, req.GetProviderOptions(), req.GetCall().GetIgnoreInvalidOptions())
	if err != nil {
		return ctx, nil, err
	}
	pOpts, unused, err := embedProviderOptions(m.Name, pOpts, req.GetCall().GetIgnoreInvalidOptions())
	if err != nil {
		return ctx, nil, err
	}
	dropped = append(dropped, unused...)
	p := g.newPrepared(ctx, st, m, llmrelayv1.Protocol_PROTOCOL_EMBEDDINGS, capab)
	p.meta.DroppedOptions = dropped
	p.call.Op = pipeline.OpEmbed
	p.call.Embed = &provider.EmbedRequest{Model: m.UpstreamModel, Format: capab.Format.Name, Inputs: req.GetInputs(), Dimensions: dims, ProviderOptions: pOpts}
	if req.GetCall() != nil {
		p.rawExplicit = req.GetCall().PreserveRaw
	}
	ctx, p.cancel = g.callContext(ctx, req.GetCall(), st.callBound)
	return ctx, p, nil
}

// embedOptions are the provider options an embeddings request sends, by
// the provider_options case: OpenAI's user (the embeddings `user`),
// Ollama's num_ctx and keep_alive. Gemini's embedContent takes none of
// Gemini's.
var embedOptions = map[string]map[string]bool{
	"openai": {"user": true},
	"ollama": {"num_ctx": true, "keep_alive": true},
}

// embedProviderOptions refuses, naming it, a provider option set on an
// embeddings call that no embeddings request carries (OpenAI's store or
// logprobs, Gemini's thinking budget, Ollama's think: they were dropped
// without a word), or with ignore clears it and reports it dropped. The
// options given are not modified.
func embedProviderOptions(model string, po *llmrelayv1.ProviderOptions, ignore bool) (*llmrelayv1.ProviderOptions, []*llmrelayv1.DroppedOption, error) {
	if po == nil {
		return nil, nil, nil
	}
	fd := po.ProtoReflect().WhichOneof(po.ProtoReflect().Descriptor().Oneofs().ByName("provider"))
	if fd == nil {
		return po, nil, nil
	}
	kind := string(fd.Name())
	var unused []string
	po.ProtoReflect().Get(fd).Message().Range(func(f protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		if !embedOptions[kind][string(f.Name())] {
			unused = append(unused, string(f.Name()))
		}
		return true
	})
	if len(unused) == 0 {
		return po, nil, nil
	}
	sort.Strings(unused)
	const reason = "not used by embeddings requests"
	if !ignore {
		return nil, nil, &catalog.OptionError{Model: model, Option: "provider_options." + kind + "." + unused[0], Reason: reason}
	}
	out := proto.CloneOf(po)
	opts := out.ProtoReflect().Get(fd).Message()
	var dropped []*llmrelayv1.DroppedOption
	for _, name := range unused {
		opts.Clear(opts.Descriptor().Fields().ByName(protoreflect.Name(name)))
		dropped = append(dropped, &llmrelayv1.DroppedOption{Option: "provider_options." + kind + "." + name, Reason: reason})
	}
	return out, dropped, nil
}
