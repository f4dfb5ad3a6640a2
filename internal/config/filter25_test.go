package config

import (
	"strings"
	"testing"
)

// TestContentFilterFallback: models[].content_filter_fallback is a bool
// that needs deployments to fall back over (two or more); set on a model
// of one provider or one deployment it is refused, the error naming the
// key where it stands; a value that is not a bool is refused by its type.
func TestContentFilterFallback(t *testing.T) {
	const providers = "providers: [{name: a, type: builtin}, {name: b, type: builtin}]\n"
	const caps = "capabilities: {chat: {format: builtin}}"
	for body, want := range map[string]string{
		"models: [{name: m, content_filter_fallback: true, deployments: [{provider: a}, {provider: b}], " + caps + "}]\n":  "",
		"models: [{name: m, content_filter_fallback: false, deployments: [{provider: a}, {provider: b}], " + caps + "}]\n": "",
		"models: [{name: m, content_filter_fallback: false, provider: a, " + caps + "}]\n":                                 "",
		"models: [{name: m, content_filter_fallback: true, provider: a, " + caps + "}]\n":                                  "t.yaml:2:20: models[0] (m).content_filter_fallback: needs two deployments or more to fall back to (deployments), the model has 1",
		"models: [{name: m, content_filter_fallback: true, deployments: [{provider: a}], " + caps + "}]\n":                 "models[0] (m).content_filter_fallback: needs two deployments or more",
		"models: [{name: m, content_filter_fallback: often, deployments: [{provider: a}, {provider: b}], " + caps + "}]\n": "content_filter_fallback",
	} {
		cfg, err := Parse([]byte(providers+body), "t.yaml")
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", body, err, want)
			continue
		}
		if err == nil && cfg.Models[0].ContentFilterFallback != strings.Contains(body, "content_filter_fallback: true") {
			t.Errorf("%s: ContentFilterFallback = %v", body, cfg.Models[0].ContentFilterFallback)
		}
	}
}
