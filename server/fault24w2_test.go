package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// Fault sequences of round 24 on the pipeline's bounds and fallbacks (the
// harness is fault13_test.go's; the bodies are its hand-built ones).

// after answers with step once d has passed, or not at all when the
// gateway gave up first.
func after(d time.Duration, step f13Step) f13Step {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(d):
			step(w, r)
		case <-r.Context().Done():
		}
	}
}

// TestFault24UnaryHeadersWaitForTheAnswer: a non-streaming answer's
// headers come only once it is generated (a reasoning model: minutes), a
// stream's at once. With first_byte_timeout shorter than the generation,
// the unary call waits for its answer (unary_first_byte_timeout, unset:
// max_call_duration) and succeeds in one attempt, on llmrelay's HTTP/1.1
// pool and on net/http's transport (http_version "2") alike; a stream
// whose headers do not come within first_byte_timeout is still cut and
// retried, the status naming the setting. The unary call was cut at
// first_byte_timeout (120 s by default, as the OpenAI and Anthropic SDKs
// wait 600 s) and sent again, each attempt billed, and failed.
func TestFault24UnaryHeadersWaitForTheAnswer(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"auto", "2"} {
		for _, f := range []f13Format{openaiChat, openaiResponses, anthropicFormat, geminiFormat, ollamaFormat} {
			yaml := "defaults: {first_byte_timeout: 100ms, http_version: \"" + version + "\", retry: {max_attempts: 2, base_delay: 1ms, max_delay: 2ms}}\n" + f.yaml
			t.Run(version+"/"+f.name+"/unary", func(t *testing.T) {
				t.Parallel()
				up := f13Serve(t, after(400*time.Millisecond, f.okStep(1)))
				c := f13Start(t, yaml, up.URL, &f13Clock{})
				resp, err := c.Chat(context.Background(), chatReq13())
				if err != nil {
					t.Fatalf("a unary answer slower than first_byte_timeout failed: %v", err)
				}
				if up.requests() != 1 || resp.GetMeta().GetAttempts() != 1 {
					t.Errorf("upstream saw %d requests, attempts %d, want 1", up.requests(), resp.GetMeta().GetAttempts())
				}
			})
			t.Run(version+"/"+f.name+"/stream", func(t *testing.T) {
				t.Parallel()
				up := f13Serve(t, after(2*time.Second, respond(200, f.streamHead(1), f.complete())))
				c := f13Start(t, yaml, up.URL, &f13Clock{})
				got := readStream13(t, c)
				if got.started || got.err == nil {
					t.Fatalf("started %v, err %v", got.started, got.err)
				}
				st, info, _ := statusDetails(t, got.err)
				if st.Code() != codes.DeadlineExceeded || info.GetReason() != "UPSTREAM_TIMEOUT" || !strings.Contains(st.Message(), "first_byte_timeout (100ms)") {
					t.Fatalf("got %v %s (%s), want DeadlineExceeded UPSTREAM_TIMEOUT naming first_byte_timeout", st.Code(), info.GetReason(), st.Message())
				}
				if m := failedMeta(t, got.err); m.GetAttempts() != 2 || up.requests() != 2 {
					t.Errorf("attempts %d, upstream %d, want 2", m.GetAttempts(), up.requests())
				}
			})
		}
	}
}

// azureOperationNotSupported is Azure OpenAI's 400 for an operation the
// deployment's model does not do, as langchain-ai/langmem#13 quotes it
// for chat asked of an embedding deployment (the openai adapter's
// azure_err_400_operation_not_supported fixture quotes the embeddings
// one, OpenHands/OpenHands#1003): no type, code OperationNotSupported.
const azureOperationNotSupported = `{"error":{"code":"OperationNotSupported","message":"The chatCompletion operation does not work with the specified model, text-embedding-3-large. Please choose different model and try again. You can learn more about which models can be used with each operation here: https://go.microsoft.com/fwlink/?linkid=2197993."}}`

// TestFault24UnsupportedFallsBack: a routed model whose first deployment's
// model cannot do the operation (Azure's OperationNotSupported, a
// deployment of an embedding model behind a chat route) gives way to the
// second, which answers; not retried on the first. It failed the call
// with Unimplemented although the route had a deployment that could
// answer.
func TestFault24UnsupportedFallsBack(t *testing.T) {
	t.Parallel()
	f := azureFormat()
	first := f13Serve(t, respond(400, merged(hdr("Content-Type", "application/json"), f.reqIDHeader(1)), azureOperationNotSupported))
	second := f13Serve(t, f.okStep(11))
	c := f13StartRouted(t, f, 3, first, second, &f13Clock{})
	resp, err := c.Chat(context.Background(), chatReq13())
	if err != nil {
		t.Fatalf("the route did not fall back: %v", err)
	}
	m := resp.GetMeta()
	if m.GetProvider() != "second" || len(m.GetRouting().GetTried()) != 1 || first.requests() != 1 || m.GetAttempts() != 2 {
		t.Errorf("provider %s, routing %v, first saw %d, attempts %d", m.GetProvider(), m.GetRouting(), first.requests(), m.GetAttempts())
	}
	if rr := m.GetRetryReasons(); len(rr) != 1 || rr[0].GetUpstreamStatus() != 400 || !strings.Contains(rr[0].GetMessage(), "chatCompletion operation does not work") {
		t.Errorf("retry reasons %v", rr)
	}
}

// shortener answers embeddings like text-embedding-3 asked for 2
// dimensions.
func shortener(t *testing.T) *f13Upstream {
	t.Helper()
	return f13Serve(t, func(w http.ResponseWriter, _ *http.Request) {
		vals := "0.6,0.8"
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[`+vals+`]}],"model":"text-embedding-3-small","usage":{"prompt_tokens":2,"total_tokens":2}}`)
	})
}

// TestFault24DimensionsFallBack: an embeddings route whose first
// deployment's model cannot give the dimensions asked (vLLM's bge-m3,
// refusing "dimensions"; sent again without them, its vectors have 4
// values, not the 2 asked for) gives way to the second deployment, whose
// model shortens its vectors; the call is served with 2 values. It failed
// with InvalidArgument although the route could serve it. A route of one
// deployment still fails as before (TestEmbed24DimensionsRefusedDefault).
func TestFault24DimensionsFallBack(t *testing.T) {
	t.Parallel()
	first := newMatryoshkaRefuser(t, 4)
	second := shortener(t)
	yaml := `
defaults:
  retry: {max_attempts: 3, base_delay: 1ms, max_delay: 2ms}
providers:
  - {name: first, type: openai, base_url: {{URL}}, api_key: sk-embed-test-0000}
  - {name: second, type: openai, base_url: ` + second.URL + `, api_key: sk-embed-test-0001}
models:
  - name: m
    deployments: [{provider: first, upstream_model: bge-m3}, {provider: second, upstream_model: text-embedding-3-small}]
    capabilities:
      embeddings: {format: openai-embeddings}
`
	c, _ := startWith(t, yaml, first.URL)
	resp, err := c.Embed(context.Background(), &llmrelayv1.EmbedRequest{Model: "m", Inputs: []string{"a"}, Dimensions: proto32(2)})
	if err != nil {
		t.Fatalf("the route did not fall back: %v", err)
	}
	if e := resp.GetEmbeddings(); len(e) != 1 || len(e[0].GetValues()) != 2 {
		t.Fatalf("embeddings %v", e)
	}
	m := resp.GetMeta()
	if m.GetProvider() != "second" || len(m.GetRouting().GetTried()) != 1 || len(first.requests()) != 2 || second.requests() != 1 {
		t.Errorf("provider %s, routing %v, first saw %d, second %d", m.GetProvider(), m.GetRouting(), len(first.requests()), second.requests())
	}
}

// TestFault24HungDeploymentFallsBackAtOnce: a routed model whose first
// deployment hangs (no headers within first_byte_timeout for a stream,
// unary_first_byte_timeout for a unary call; silence inside a unary
// answer past idle_timeout) moves to the second at once: one request to
// the first, the timeout its one retry reason, the second's answer. Each
// timeout was retried on the hung deployment first (max_attempts 3: three
// whole bounds, 6 minutes of a 10-minute call with the defaults, before
// the next deployment was tried). Without a next deployment the timeout
// is still retried (TestFault13UnaryTransport).
func TestFault24HungDeploymentFallsBackAtOnce(t *testing.T) {
	t.Parallel()
	f := openaiChat
	bounds := "first_byte_timeout: 100ms, unary_first_byte_timeout: 100ms, idle_timeout: 100ms, "
	okHead := merged(hdr("Content-Type", "application/json"), f.reqIDHeader(1))
	for _, tc := range []struct {
		name    string
		stream  bool
		hang    f13Step
		setting string
	}{
		{"stream, no headers", true, hangBeforeHeaders, "first_byte_timeout"},
		{"unary, no headers", false, hangBeforeHeaders, "unary_first_byte_timeout"},
		{"unary, silent mid-body", false, thenHang(okHead, f.okBody[:len(f.okBody)/2]), "idle_timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			first := f13Serve(t, tc.hang)
			second := f13Serve(t, f.okStep(11))
			if tc.stream {
				second = f13Serve(t, respond(200, f.streamHead(11), f.complete()))
			}
			yaml := strings.Replace(f13Routed(f, 3), "defaults: {", "defaults: {"+bounds, 1)
			c := f13Start(t, strings.ReplaceAll(yaml, "{{URL2}}", second.URL), first.URL, &f13Clock{})
			var m *llmrelayv1.ResponseMeta
			if tc.stream {
				got := readStream13(t, c)
				if got.err != nil || got.end == nil {
					t.Fatalf("err %v", got.err)
				}
				m = got.end.GetMeta()
			} else {
				resp, err := c.Chat(context.Background(), chatReq13())
				if err != nil {
					t.Fatal(err)
				}
				m = resp.GetMeta()
			}
			if first.requests() != 1 || m.GetProvider() != "second" || m.GetAttempts() != 2 {
				t.Errorf("first deployment saw %d requests, provider %s, attempts %d; want 1, second, 2", first.requests(), m.GetProvider(), m.GetAttempts())
			}
			if rr := m.GetRetryReasons(); len(rr) != 1 || rr[0].GetReason() != "timeout" || !strings.Contains(rr[0].GetMessage(), tc.setting) || rr[0].GetDelay() != nil {
				t.Errorf("retry reasons %v", rr)
			}
		})
	}
}
