// Package catalog is the runtime view of the configured models: which
// provider serves a model, which protocols it supports with which format
// and options, and the merge-then-validate rule for request options.
package catalog

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server/cost"
	"github.com/llmrelay/llmrelay/server/pipeline"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Provider is a configured provider, ready to call.
type Provider struct {
	Name     string
	Type     string
	Impl     provider.Provider
	Pipeline *pipeline.Pipeline
	// PreserveRaw is the configured default for raw capture.
	PreserveRaw bool
	// MaxEmbedInputs is the most inputs one upstream embeddings request
	// carries (0: no limit below the gateway's); the server splits a call
	// with more.
	MaxEmbedInputs int
}

// Model is a configured model.
type Model struct {
	Name string
	// UpstreamModel and Provider are the first deployment's.
	UpstreamModel string
	Provider      *Provider
	Reasoning     bool
	// NativeStructuredOutput: the model takes JSON schema response formats
	// natively (Anthropic output_config.format) instead of a forced tool.
	NativeStructuredOutput bool
	Capabilities           map[llmrelayv1.Protocol]*Capability
	// Deployments serve the model, in fallback order (one for a model
	// configured with a single provider).
	Deployments []*Deployment
	// Weighted picks the first deployment at random by weight.
	Weighted bool
	// ContentFilterFallback: a deployment's content filter refusing the
	// prompt gives way to the next deployment (models[].
	// content_filter_fallback); otherwise the refusal stands.
	ContentFilterFallback bool
	// Context is the configured prompt context, merged before every
	// request's messages.
	Context []*llmrelayv1.Message
	// Prices give each response its cost; nil without configured prices.
	Prices *cost.Table
	// PreserveRaw, when set, is the model's raw capture default, over
	// its providers' (a call's call.preserve_raw still wins).
	PreserveRaw *bool
}

var contextRoles = map[string]llmrelayv1.Role{"system": llmrelayv1.Role_ROLE_SYSTEM, "user": llmrelayv1.Role_ROLE_USER, "assistant": llmrelayv1.Role_ROLE_ASSISTANT}

// Deployment is one provider serving a model.
type Deployment struct {
	Name          string
	Provider      *Provider
	UpstreamModel string
	Weight        int
}

// Route returns the deployments to try, in order: the configured order,
// or for weighted routing a weighted random order (rnd(n) returns a
// number in [0, n)).
func (m *Model) Route(rnd func(n int) int) []*Deployment {
	if !m.Weighted || len(m.Deployments) < 2 {
		return m.Deployments
	}
	rest := append([]*Deployment(nil), m.Deployments...)
	out := make([]*Deployment, 0, len(rest))
	for len(rest) > 0 {
		total := 0
		for _, d := range rest {
			total += d.Weight
		}
		pick := 0
		if total > 0 {
			r := rnd(total)
			for i, d := range rest {
				if r < d.Weight {
					pick = i
					break
				}
				r -= d.Weight
			}
		}
		out = append(out, rest[pick])
		rest = append(rest[:pick], rest[pick+1:]...)
	}
	return out
}

// Capability is one protocol of a model.
type Capability struct {
	Protocol   llmrelayv1.Protocol
	Format     *Format
	Options    *llmrelayv1.GenerationOptions
	Dimensions *int32
	// Shown is the configured options as ListModels shows them.
	Shown *structpb.Struct
}

// Catalog maps model names to models.
type Catalog struct {
	models map[string]*Model
	names  []string
}

var protocolByKey = map[string]llmrelayv1.Protocol{
	"chat": llmrelayv1.Protocol_PROTOCOL_CHAT, "vision": llmrelayv1.Protocol_PROTOCOL_VISION,
	"tools": llmrelayv1.Protocol_PROTOCOL_TOOLS, "embeddings": llmrelayv1.Protocol_PROTOCOL_EMBEDDINGS,
	"documents": llmrelayv1.Protocol_PROTOCOL_DOCUMENTS, "audio": llmrelayv1.Protocol_PROTOCOL_AUDIO,
}

// ReasoningPrefixes are the model-name prefixes treated as reasoning
// models unless a model's `reasoning` setting says otherwise.
var ReasoningPrefixes = []string{"o1", "o3", "o4", "gpt-5"}

// IsReasoningName applies the name-based default.
func IsReasoningName(model string) bool {
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	for _, p := range ReasoningPrefixes {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

// Build resolves the configured models against the built providers.
// Every problem is reported, each with its location.
func Build(cfg *config.Config, providers map[string]*Provider) (*Catalog, error) {
	c := &Catalog{models: map[string]*Model{}}
	var errs []error
	for i, mc := range cfg.Models {
		where := fmt.Sprintf("models[%d] (%s)", i, mc.Name)
		deps := mc.Deployments
		if len(deps) == 0 {
			deps = []config.Deployment{{Provider: mc.Provider, UpstreamModel: mc.UpstreamModel, Weight: 1}}
		}
		m := &Model{Name: mc.Name, Capabilities: map[llmrelayv1.Protocol]*Capability{}, Weighted: mc.Routing == "weighted",
			ContentFilterFallback: mc.ContentFilterFallback, Prices: cost.New(mc.Prices),
			PreserveRaw: mc.PreserveRawData}
		for _, cm := range mc.Context {
			m.Context = append(m.Context, &llmrelayv1.Message{Role: contextRoles[cm.Role], Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: cm.Text}}}})
		}
		for j, dc := range deps {
			p, ok := providers[dc.Provider]
			if !ok {
				errs = append(errs, fmt.Errorf("%s.deployments[%d].provider: %q is not a configured provider", where, j, dc.Provider))
				continue
			}
			d := &Deployment{Name: dc.Name, Provider: p, UpstreamModel: dc.UpstreamModel, Weight: dc.Weight}
			if d.Name == "" {
				d.Name = p.Name
			}
			if d.UpstreamModel == "" {
				d.UpstreamModel = firstNonEmpty(mc.UpstreamModel, mc.Name)
			}
			if len(mc.Deployments) > 0 && dc.Weight == 0 {
				d.Weight = 1
			}
			m.Deployments = append(m.Deployments, d)
		}
		if len(m.Deployments) == 0 {
			continue
		}
		m.Provider, m.UpstreamModel = m.Deployments[0].Provider, m.Deployments[0].UpstreamModel
		// The name prefixes are OpenAI's: they apply only to a model
		// with a format that follows OpenAI's reasoning rules.
		formatReasoning, nameRules := false, false
		keys := make([]string, 0, len(mc.Capabilities))
		for k := range mc.Capabilities {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, key := range keys {
			cc := mc.Capabilities[key]
			cwhere := fmt.Sprintf("%s.capabilities.%s", where, key)
			proto, ok := protocolByKey[key]
			if !ok {
				errs = append(errs, fmt.Errorf("%s: unknown protocol", cwhere))
				continue
			}
			f, ok := Formats[cc.Format]
			if !ok {
				errs = append(errs, fmt.Errorf("%s.format: unknown format %q (known: %s)", cwhere, cc.Format, strings.Join(FormatNames(), ", ")))
				continue
			}
			spoken := true
			for _, d := range m.Deployments {
				if !containsString(f.ProviderTypes, d.Provider.Type) {
					errs = append(errs, fmt.Errorf("%s.format: %s is not spoken by provider %s (type %s)%s", cwhere, f.Name, d.Provider.Name, d.Provider.Type,
						formatsHint(d.Provider.Type, proto, key)))
					spoken = false
				}
			}
			if !spoken {
				continue
			}
			if !containsProtocol(f.Protocols, proto) {
				hint := ""
				if len(m.Deployments) > 0 {
					hint = formatsHint(m.Deployments[0].Provider.Type, proto, key)
				}
				errs = append(errs, fmt.Errorf("%s.format: %s does not serve %s%s", cwhere, f.Name, key, hint))
				continue
			}
			opts, dims, oerrs := optionsFromConfigAll(cc.Options, f)
			for _, err := range oerrs {
				errs = append(errs, fmt.Errorf("%s.%w", cwhere, err))
			}
			if len(oerrs) > 0 {
				continue
			}
			for _, name := range append(SetOptions(opts), dimsName(dims)...) {
				switch {
				case !f.Options[name]:
					errs = append(errs, fmt.Errorf("%s.options.%s: not supported by format %s", cwhere, name, f.Name))
				case proto != llmrelayv1.Protocol_PROTOCOL_TOOLS && (name == "tool_choice" || name == "parallel_tool_calls"):
					errs = append(errs, fmt.Errorf("%s.options.%s: only for the tools capability", cwhere, name))
				}
			}
			if name, reason := checkNumbers(f, opts); name != "" {
				errs = append(errs, fmt.Errorf("%s.options.%s: %s", cwhere, name, reason))
				continue
			}
			var shown *structpb.Struct
			if len(cc.Options) > 0 {
				var err error
				if shown, err = structpb.NewStruct(normalize(cc.Options)); err != nil {
					errs = append(errs, fmt.Errorf("%s.options: %w", cwhere, err))
					continue
				}
			}
			formatReasoning = formatReasoning || f.Reasoning
			nameRules = nameRules || f.ReasoningRules
			m.Capabilities[proto] = &Capability{Protocol: proto, Format: f, Options: opts, Dimensions: dims, Shown: shown}
		}
		m.Reasoning = formatReasoning || nameRules && IsReasoningName(m.UpstreamModel)
		for _, d := range m.Deployments[1:] {
			if nameRules && IsReasoningName(d.UpstreamModel) != IsReasoningName(m.UpstreamModel) && mc.Reasoning == nil && !formatReasoning {
				errs = append(errs, fmt.Errorf("%s.deployments: %s and %s differ in reasoning support; set reasoning: true or false", where, m.UpstreamModel, d.UpstreamModel))
			}
		}
		if mc.Reasoning != nil {
			m.Reasoning = *mc.Reasoning
		}
		// The configured options are merged into every call, so one that
		// the model's kind rejects (reasoning_effort on a chat model,
		// temperature on a reasoning one) would fail every call.
		for _, key := range keys {
			capab, ok := m.Capabilities[protocolByKey[key]]
			if !ok {
				continue
			}
			cwhere := fmt.Sprintf("%s.capabilities.%s.options", where, key)
			for _, name := range SetOptions(capab.Options) {
				thinking := capab.Options.GetReasoningEffort() != llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE
				if r := optionReason(name, capab.Format, m.Reasoning, true, thinking); r != "" && capab.Format.Options[name] {
					errs = append(errs, fmt.Errorf("%s.%s: %s, and %s is %s", cwhere, name, r, m.Name, kindWords(m.Reasoning)))
				}
			}
		}
		if mc.StructuredOutput != "" {
			// Only Anthropic has a choice; the other providers always use
			// their one native mechanism.
			for _, d := range m.Deployments {
				if d.Provider.Type != "anthropic" {
					errs = append(errs, fmt.Errorf("%s.structured_output: only for anthropic models (provider %s is %s)", where, d.Provider.Name, d.Provider.Type))
				}
			}
			m.NativeStructuredOutput = mc.StructuredOutput == "native"
		}
		c.models[m.Name] = m
		c.names = append(c.names, m.Name)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

func kindWords(reasoning bool) string {
	if reasoning {
		return "a reasoning model (by its format, its name or reasoning: true)"
	}
	return "not a reasoning model (set reasoning: true if it is one)"
}

func dimsName(d *int32) []string {
	if d == nil {
		return nil
	}
	return []string{"dimensions"}
}

// FormatNames lists the known formats.
func FormatNames() []string {
	names := make([]string, 0, len(Formats))
	for n := range Formats {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// formatsHint names the formats a provider type speaks for a protocol, for
// a configuration error about a format that does not fit ("; for chat a
// provider of type ollama takes ollama").
func formatsHint(providerType string, p llmrelayv1.Protocol, key string) string {
	var fit []string
	for _, name := range FormatNames() {
		f := Formats[name]
		if containsString(f.ProviderTypes, providerType) && containsProtocol(f.Protocols, p) {
			fit = append(fit, name)
		}
	}
	if len(fit) == 0 {
		return fmt.Sprintf("; a provider of type %s serves no %s", providerType, key)
	}
	return fmt.Sprintf("; for %s a provider of type %s takes %s", key, providerType, strings.Join(fit, ", "))
}

func containsProtocol(list []llmrelayv1.Protocol, p llmrelayv1.Protocol) bool {
	for _, x := range list {
		if x == p {
			return true
		}
	}
	return false
}

// Lookup finds a model by name.
func (c *Catalog) Lookup(name string) (*Model, bool) {
	m, ok := c.models[name]
	return m, ok
}

// Names lists the model names in configuration order.
func (c *Catalog) Names() []string { return c.names }

// ProtocolName is the configuration key of a protocol.
func ProtocolName(p llmrelayv1.Protocol) string {
	for k, v := range protocolByKey {
		if v == p {
			return k
		}
	}
	return p.String()
}

// Info describes a model for ListModels (no secrets: options only).
func (m *Model) Info() *llmrelayv1.ModelInfo {
	info := &llmrelayv1.ModelInfo{Name: m.Name, Provider: m.Provider.Name, UpstreamModel: m.UpstreamModel, Context: m.Context}
	if len(m.Deployments) > 1 {
		for _, d := range m.Deployments {
			info.Deployments = append(info.Deployments, d.Name)
		}
	}
	protos := make([]llmrelayv1.Protocol, 0, len(m.Capabilities))
	for p := range m.Capabilities {
		protos = append(protos, p)
	}
	sort.Slice(protos, func(i, j int) bool { return protos[i] < protos[j] })
	for _, p := range protos {
		capab := m.Capabilities[p]
		info.Capabilities = append(info.Capabilities, &llmrelayv1.ModelCapability{Protocol: p, Format: capab.Format.Name, Options: capab.Shown})
	}
	return info
}

// normalize converts YAML-decoded values (int) to what structpb takes.
func normalize(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = normalizeValue(v)
	}
	return out
}

func normalizeValue(v any) any {
	switch x := v.(type) {
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case map[string]any:
		return normalize(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeValue(e)
		}
		return out
	default:
		return v
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
