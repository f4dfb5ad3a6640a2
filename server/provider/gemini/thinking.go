package gemini

import (
	"fmt"
	"strconv"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// Thinking by model generation (the Gemini API and Vertex thinking pages,
// the model pages' "supported thinking levels"):
//
//   - Gemini 1.x and 2.0 take no thinking configuration.
//   - Gemini 2.5 takes thinkingBudget: Pro 128 to 32768 and cannot stop
//     thinking (0: "Budget 0 is invalid. This model only works in thinking
//     mode."), Flash 0 to 24576, Flash-Lite 512 to 24576 or 0.
//   - Gemini 3 and later take thinkingLevel and cannot stop thinking
//     (a zero budget is a bare 400, real_logfire_adk_gemini_3_refuses_zero_budget_error).
//     Which levels each model takes varies: MINIMAL only on the Flash-Lite
//     models and the Flash models before 3.7 (3 Flash, 3.5 Flash);
//     gemini-3.1-pro-preview and gemini-3.7-flash answer it with 400
//     "Thinking level MINIMAL is not supported for this model."
//     (real_issue_22372_reasoning_none_error, vercel/ai's
//     google-gemini-3.7-flash-thinking-levels); MEDIUM on all but
//     gemini-3-pro (low and high only). Every Gemini 3 model takes low and
//     high, so an id we cannot place gets those.
//
// gemini-flash-latest and the other -latest aliases name the newest
// models: Gemini 3 and later. Ids that are not gemini-… (tuned models,
// gemma) keep the budget mapping.
type thinkingKind int

const (
	thinkBudget thinkingKind = iota
	thinkLevel
	thinkNone
)

// geminiModel is a model id as the thinking mapping reads it.
type geminiModel struct {
	gemini       bool // a gemini-… id
	major, minor int  // -1 when the id has no version
	latest       bool // gemini-flash-latest, gemini-pro-latest, … (no version)
	variant      string
}

// parseGemini reads models/gemini-2.5-pro, gemini-3.1-pro-preview,
// publishers/google/models/gemini-3-flash-preview@default,
// gemini-live-2.5-flash-preview, gemini-flash-lite-latest.
func parseGemini(id string) geminiModel {
	m := geminiModel{major: -1, minor: -1}
	s := strings.ToLower(id)
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	if i := strings.IndexAny(s, "@:"); i >= 0 {
		s = s[:i]
	}
	tokens := strings.Split(s, "-")
	if len(tokens) < 2 || tokens[0] != "gemini" {
		return m
	}
	m.gemini = true
	for _, t := range tokens[1:] {
		switch t {
		case "pro", "flash":
			if m.variant == "" {
				m.variant = t
			}
		case "lite":
			if m.variant == "flash" {
				m.variant = "flash-lite"
			}
		case "latest":
			m.latest = true
		default:
			if m.major < 0 {
				m.major, m.minor = parseVersion(t)
			}
		}
	}
	if m.major >= 0 {
		// gemini-1.5-pro-latest: the newest of that version, which the
		// version says; only an alias without one names the newest models.
		m.latest = false
	}
	return m
}

// parseVersion reads "2.5" (2, 5) and "3" (3, 0); -1, -1 for anything else
// (a date, "exp", "1206").
func parseVersion(t string) (int, int) {
	majorText, minorText, dotted := strings.Cut(t, ".")
	major, err := strconv.Atoi(majorText)
	if err != nil || len(majorText) > 2 || major < 0 {
		return -1, -1
	}
	if !dotted {
		return major, 0
	}
	minor, err := strconv.Atoi(minorText)
	if err != nil || len(minorText) > 2 || minor < 0 {
		return -1, -1
	}
	return major, minor
}

// gemini3Plus: a Gemini 3 or later model. The -latest aliases are:
// Google's models page lists only Gemini 3 models as current (2.0 and
// 2.5 are shut down or superseded), gemini-pro-latest has named 3.1 Pro
// since 6 March 2026 (Google's notice, quoted in
// google-gemini/gemini-cli#20588), gemini-flash-latest a 3.x Flash and
// gemini-flash-lite-latest a 3.x Flash-Lite.
func (m geminiModel) gemini3Plus() bool { return m.gemini && (m.latest || m.major >= 3) }

// takesValidated: a model whose function calling takes VALIDATED mode
// (calls held to their schemas): Gemini 2.5 and later. Older and unknown
// ids are not sent it.
func (m geminiModel) takesValidated() bool {
	return m.gemini3Plus() || (m.gemini && (m.major > 2 || (m.major == 2 && m.minor >= 5)))
}

func (m geminiModel) thinking() thinkingKind {
	switch {
	case !m.gemini:
		return thinkBudget
	case m.gemini3Plus():
		return thinkLevel
	case m.major < 0:
		return thinkBudget
	case m.major < 2 || (m.major == 2 && m.minor < 5):
		return thinkNone
	}
	return thinkBudget
}

// canStopThinking: Gemini 2.5 Pro and Gemini 3 and later cannot.
func (m geminiModel) canStopThinking() bool {
	switch m.thinking() {
	case thinkLevel:
		return false
	case thinkBudget:
		return !(m.gemini && m.major == 2 && m.variant == "pro")
	}
	return true
}

// proMinBudget is Gemini 2.5 Pro's least thinkingBudget, the only budget
// model that cannot stop thinking.
const proMinBudget = 128

func (m geminiModel) takesMinimal() bool {
	switch {
	case m.variant == "flash-lite":
		return true
	case m.variant != "flash" || m.latest:
		return false
	}
	return m.major == 3 && m.minor < 7
}

func (m geminiModel) takesMedium() bool {
	return !(m.variant == "pro" && m.major == 3 && m.minor == 0 && !m.latest)
}

func effortName(e llmrelayv1.ReasoningEffort) string {
	return strings.TrimPrefix(e.String(), "REASONING_EFFORT_")
}

// effortThinking maps reasoning_effort to model's thinkingConfig; the
// warnings say where the model could not take the level asked for and
// got the nearest it takes.
func effortThinking(model string, e llmrelayv1.ReasoningEffort) (thinkingConfig, []string, error) {
	m := parseGemini(model)
	name := effortName(e)
	switch m.thinking() {
	case thinkNone:
		if e == llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE {
			// It does not think: NONE is what it does.
			return thinkingConfig{}, nil, nil
		}
		return thinkingConfig{}, nil, &provider.Error{Provider: providerName, Kind: provider.KindInvalidRequest, Param: "options.reasoning_effort",
			Message: fmt.Sprintf("%s does not think (thinking starts with Gemini 2.5); drop reasoning_effort %s", model, name)}
	case thinkBudget:
		b := thinkingBudget(e)
		var warnings []string
		if aboveHigh(e) {
			warnings = append(warnings, fmt.Sprintf("reasoning_effort %s: Gemini has no level above high; sent HIGH's thinkingBudget %d", name, b))
		}
		if b == 0 && !m.canStopThinking() {
			b = proMinBudget
			warnings = append(warnings, fmt.Sprintf("reasoning_effort NONE: %s cannot switch thinking off; sent thinkingBudget %d, its least", model, b))
		}
		return thinkingConfig{ThinkingBudget: &b}, warnings, nil
	}
	level := thinkingLevel(e)
	var warnings []string
	switch {
	case level == "minimal" && !m.takesMinimal():
		level = "low"
		if e == llmrelayv1.ReasoningEffort_REASONING_EFFORT_MINIMAL {
			warnings = append(warnings, fmt.Sprintf("reasoning_effort MINIMAL: thinkingLevel minimal is not one %s is known to take; sent low", model))
		}
	case level == "medium" && !m.takesMedium():
		level = "high"
		warnings = append(warnings, fmt.Sprintf("reasoning_effort MEDIUM: %s has no medium thinking level (low and high only); sent high, its default", model))
	}
	if aboveHigh(e) {
		warnings = append(warnings, fmt.Sprintf("reasoning_effort %s: Gemini's highest thinkingLevel is high; sent high", name))
	}
	if e == llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE && level != "minimal" {
		// minimal is Google's "no thinking" for most queries; low is not.
		warnings = append(warnings, fmt.Sprintf("reasoning_effort NONE: %s cannot switch thinking off; sent thinkingLevel %s, the least it is known to take", model, level))
	}
	return thinkingConfig{ThinkingLevel: level}, warnings, nil
}

// aboveHigh: reasoning efforts above HIGH (XHIGH, MAX), which Gemini has no
// level for: they get its highest, with a warning.
func aboveHigh(e llmrelayv1.ReasoningEffort) bool {
	return e == llmrelayv1.ReasoningEffort_REASONING_EFFORT_XHIGH || e == llmrelayv1.ReasoningEffort_REASONING_EFFORT_MAX
}
