package telemetry

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// families returns every metric family the endpoint serves once each
// metric has a sample, with its label names.
func families(t *testing.T) map[string]map[string]bool {
	t.Helper()
	m := NewMetrics()
	s := grpc.NewServer()
	healthpb.RegisterHealthServer(s, health.NewServer())
	m.grpc.register(s)
	m.ObserveCall(Call{Operation: "chat", Provider: "p", Model: "m", Caller: "c", ErrorType: "Unavailable", Meta: &llmrelayv1.ResponseMeta{
		Usage: &llmrelayv1.Usage{InputTokens: 1, OutputTokens: 1}, TimeToFirstToken: durationpb.New(1),
		Cost:         &llmrelayv1.Cost{Currency: "USD", AmountNanos: 1},
		RetryReasons: []*llmrelayv1.RetryReason{{Reason: "http_503", UpstreamStatus: 503}, {Reason: "http_503", UpstreamStatus: 503}},
	}})
	m.StreamStarted("m")
	m.Fallback("m", "d")
	mfs, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	for _, mf := range mfs {
		labels := map[string]bool{}
		for _, metric := range mf.GetMetric() {
			for _, lp := range metric.GetLabel() {
				labels[lp.GetName()] = true
			}
		}
		if mf.GetType() == dto.MetricType_HISTOGRAM {
			labels["le"] = true
		}
		out[mf.GetName()] = labels
	}
	return out
}

var (
	metricRef = regexp.MustCompile(`\b([a-z][a-z0-9_]*)\{([^}]*)\}`)
	matcher   = regexp.MustCompile(`([a-z_]+)\s*(?:=~|!~|!=|=)`)
	byClause  = regexp.MustCompile(`by \(([^)]*)\)`)
)

// TestDashboardMetrics: every metric the Grafana dashboard queries exists,
// and every label it filters or groups by is one of that metric's labels.
func TestDashboardMetrics(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../deploy/grafana/llmrelay.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatal(err)
	}
	fams := families(t)
	seen := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			labels := map[string]bool{}
			for _, ref := range metricRef.FindAllStringSubmatch(tg.Expr, -1) {
				name := ref[1]
				base := name
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					if b, ok := strings.CutSuffix(name, suffix); ok && fams[b] != nil {
						base = b
					}
				}
				fl, ok := fams[base]
				if !ok {
					t.Errorf("panel %q: no metric %s", p.Title, name)
					continue
				}
				seen++
				for l := range fl {
					labels[l] = true
				}
				// Filters name the metric's labels, or the scrape target's.
				for _, m := range matcher.FindAllStringSubmatch(ref[2], -1) {
					if l := m[1]; !fl[l] && l != "job" && l != "instance" {
						t.Errorf("panel %q filters %s by %q, which it lacks", p.Title, name, l)
					}
				}
			}
			for _, by := range byClause.FindAllStringSubmatch(tg.Expr, -1) {
				for _, l := range strings.Split(by[1], ",") {
					if l = strings.TrimSpace(l); !labels[l] {
						t.Errorf("panel %q groups by %q, which its metrics lack", p.Title, l)
					}
				}
			}
		}
	}
	if seen < len(dash.Panels) {
		t.Errorf("only %d metric references in %d panels", seen, len(dash.Panels))
	}
}

// TestMetricsDocumented: the README names every metric of llmrelay's own
// (the gRPC, Go and process families are documented as groups) with its
// labels.
func TestMetricsDocumented(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, labels := range families(t) {
		if strings.HasPrefix(name, "grpc_") || strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			continue
		}
		i := strings.Index(string(readme), "`"+name+"`")
		if i < 0 {
			t.Errorf("README does not document %s", name)
			continue
		}
		line := string(readme[i:])
		line, _, _ = strings.Cut(line, "\n")
		for l := range labels {
			if l != "le" && !strings.Contains(line, "`"+l+"`") {
				t.Errorf("README: %s lacks its label %s on its line", name, l)
			}
		}
	}
}
