package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
)

const (
	echoToken   = "echo-only-token-0123456789"
	adminToken  = "admin-token-0123456789abcdef"
	streamToken = "stream-token-0123456789abcdef"
)

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// authYAML: "echo" may use builtin/echo only, two requests a minute and a
// small token budget; "admin" (token from the environment) every model.
func authYAML() string {
	cfg := string(config.DefaultYAML())
	return cfg + `
auth:
  tokens:
    - name: echo
      sha256: ` + sha(echoToken) + `
      models: [builtin/echo]
      requests_per_minute: 4
    - name: admin
      token_env: LLMRELAY_TEST_ADMIN_TOKEN
      tokens_per_minute: 10
    - name: streamer
      sha256: ` + sha(streamToken) + `
      tokens_per_minute: 10
`
}

func bearer(tok string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
}

func TestAuthCallers(t *testing.T) {
	t.Setenv("LLMRELAY_TEST_ADMIN_TOKEN", adminToken)
	c, logs := startWith(t, authYAML(), "")
	req := &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("hello there")}}

	// No token, a wrong token: Unauthenticated with ErrorInfo.
	for name, ctx := range map[string]context.Context{"none": context.Background(), "wrong": bearer("not-a-configured-token")} {
		_, err := c.Chat(ctx, req)
		st, info, _ := statusDetails(t, err)
		if st.Code() != codes.Unauthenticated || info.GetReason() != "UNAUTHENTICATED" {
			t.Errorf("%s token: %v %v", name, st, info)
		}
	}

	// The caller's name reaches meta and the log line.
	resp, err := c.Chat(bearer(echoToken), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetMeta().GetCaller() != "echo" {
		t.Errorf("meta.caller = %q", resp.GetMeta().GetCaller())
	}
	if !strings.Contains(logs.String(), "caller=echo") {
		t.Errorf("log lacks the caller: %s", logs.String())
	}

	// A model outside the caller's list: PermissionDenied, whether or not
	// it exists.
	for _, model := range []string{"builtin/embed", "no/such-model"} {
		_, err = c.Embed(bearer(echoToken), &llmrelayv1.EmbedRequest{Model: model, Inputs: []string{"x"}})
		st, info, _ := statusDetails(t, err)
		if st.Code() != codes.PermissionDenied || info.GetReason() != "PERMISSION_DENIED" || info.GetMetadata()["caller"] != "echo" || info.GetMetadata()["model"] != model {
			t.Errorf("%s: %v %v", model, st, info)
		}
	}

	// ListModels shows the caller's models only.
	lm, err := c.ListModels(bearer(echoToken), &llmrelayv1.ListModelsRequest{})
	if err != nil || len(lm.GetModels()) != 1 || lm.GetModels()[0].GetName() != "builtin/echo" {
		t.Errorf("ListModels for echo: %v %v", lm, err)
	}
	lm, err = c.ListModels(bearer(adminToken), &llmrelayv1.ListModelsRequest{})
	if err != nil || len(lm.GetModels()) != 2 {
		t.Errorf("ListModels for admin: %v %v", lm, err)
	}

	// Four requests a minute: the fifth (a Chat, two Embeds and a
	// ListModels went before) is ResourceExhausted naming the limit, with RetryInfo.
	_, err = c.Chat(bearer(echoToken), req)
	st, info, _ := statusDetails(t, err)
	if st.Code() != codes.ResourceExhausted || info.GetReason() != "RESOURCE_EXHAUSTED" || info.GetMetadata()["limit"] != "requests_per_minute" {
		t.Fatalf("over the request rate: %v %v", st, info)
	}
	var retry *errdetails.RetryInfo
	for _, d := range st.Details() {
		if r, ok := d.(*errdetails.RetryInfo); ok {
			retry = r
		}
	}
	if retry == nil || retry.GetRetryDelay().AsDuration() <= 0 {
		t.Errorf("no RetryInfo: %v", st.Details())
	}

	// admin's 10 tokens a minute: a call of more than 10 tokens goes
	// through (its size is known at its end), the next is refused.
	long := &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("one two three four five six seven eight nine ten eleven")}}
	if _, err := c.Chat(bearer(adminToken), long); err != nil {
		t.Fatal(err)
	}
	_, err = c.Chat(bearer(adminToken), long)
	st, info, _ = statusDetails(t, err)
	if st.Code() != codes.ResourceExhausted || info.GetMetadata()["limit"] != "tokens_per_minute" {
		t.Errorf("over the token budget: %v %v", st, info)
	}
	// A stream's usage counts as well.
	s, err := c.StreamChat(bearer(streamToken), &llmrelayv1.StreamChatRequest{Model: long.Model, Messages: long.Messages})
	if err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := s.Recv()
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		if end := ev.GetEnd(); end != nil {
			if end.GetMeta().GetCaller() != "streamer" || end.GetMeta().GetUsage().GetTotalTokens() <= 10 {
				t.Fatalf("stream meta %v", end.GetMeta())
			}
			break
		}
	}
	_, err = c.Chat(bearer(streamToken), long)
	if status.Code(err) != codes.ResourceExhausted {
		t.Errorf("after a stream over the budget: %v", err)
	}
	for _, tok := range []string{echoToken, adminToken, streamToken, "not-a-configured-token"} {
		if strings.Contains(logs.String(), tok) {
			t.Errorf("a caller token reached the log: %s", tok)
		}
	}
}

func TestAuthHealthNeedsNoToken(t *testing.T) {
	t.Setenv("LLMRELAY_TEST_ADMIN_TOKEN", adminToken)
	cfg, err := config.Parse([]byte(authYAML()), "test")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	conn := serveBufconn(t, srv)
	r, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health without a token: %v %v", r, err)
	}
	_, err = llmrelayv1.NewExtractServiceClient(conn).Extract(context.Background(), &llmrelayv1.ExtractRequest{})
	if status.Code(err) != codes.Unauthenticated {
		t.Errorf("Extract without a token: %v", err)
	}
}

func TestAuthMissingTokenSourceRefusesStart(t *testing.T) {
	t.Setenv("LLMRELAY_TEST_ADMIN_TOKEN", "")
	cfg, err := config.Parse([]byte(authYAML()), "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil || !strings.Contains(err.Error(), "LLMRELAY_TEST_ADMIN_TOKEN") {
		t.Errorf("start with an unset token variable: %v", err)
	}
}

// TestExposure: a non-loopback listener needs auth or an explicit
// allow_unauthenticated (logged); loopback needs neither.
func TestExposure(t *testing.T) {
	t.Setenv("LLMRELAY_TEST_ADMIN_TOKEN", adminToken)
	base := string(config.DefaultYAML())
	cases := []struct {
		name, listen, extra string
		refused             bool
		logWant             string
	}{
		{"loopback", "127.0.0.1:0", "", false, ""},
		{"all interfaces, no auth", "0.0.0.0:0", "", true, ""},
		{"all interfaces, allowed", "0.0.0.0:0", "  allow_unauthenticated: true\n", false, "serving without caller authentication"},
		{"all interfaces, auth", "0.0.0.0:0", "", false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			y := strings.Replace(base, "  listen: 127.0.0.1:50051\n", "  listen: "+tc.listen+"\n"+tc.extra, 1)
			if tc.name == "all interfaces, auth" {
				y = authYAML()
				y = strings.Replace(y, "  listen: 127.0.0.1:50051\n", "  listen: "+tc.listen+"\n", 1)
			}
			cfg, err := config.Parse([]byte(y), "test")
			if err != nil {
				t.Fatal(err)
			}
			logs := &syncBuffer{}
			srv, err := server.New(cfg, slog.New(slog.NewTextHandler(logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			lis, err := srv.Listeners()
			for _, l := range lis {
				l.Close()
			}
			if tc.refused {
				if err == nil || !strings.Contains(err.Error(), "allow_unauthenticated") {
					t.Fatalf("want a refusal naming the way out, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.logWant != "" && !strings.Contains(logs.String(), tc.logWant) {
				t.Errorf("log %q lacks %q", logs.String(), tc.logWant)
			}
			if tc.name == "all interfaces, auth" {
				// A reload may not drop auth from an exposed server.
				noAuth, _ := config.Parse([]byte(base), "reload")
				if err := srv.Reload(noAuth); err == nil {
					t.Error("reload without auth accepted on an exposed listener")
				}
			}
		})
	}
}

func TestUnixSocketMode(t *testing.T) {
	for _, tc := range []struct {
		mode string
		want os.FileMode
	}{{"", 0o600}, {"0660", 0o660}} {
		sock := filepath.Join(t.TempDir(), "s.sock")
		y := strings.Replace(string(config.DefaultYAML()), "  listen: 127.0.0.1:50051\n", "  listen: \"\"\n  unix_socket: "+sock+"\n", 1)
		if tc.mode != "" {
			y = strings.Replace(y, "  unix_socket: "+sock+"\n", "  unix_socket: "+sock+"\n  unix_socket_mode: \""+tc.mode+"\"\n", 1)
		}
		cfg, err := config.Parse([]byte(y), "test")
		if err != nil {
			t.Fatal(err)
		}
		srv, err := server.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		lis, err := srv.Listeners()
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(sock)
		for _, l := range lis {
			l.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != tc.want {
			t.Errorf("mode %q: socket is %v", tc.mode, fi.Mode().Perm())
		}
	}
}

func TestSharedLimiterDownPolicy(t *testing.T) {
	dead := filepath.Join(t.TempDir(), "no-redis.sock")
	for _, policy := range []string{"open", "closed"} {
		y := string(config.DefaultYAML()) + `
auth:
  redis: {address: ` + dead + `, on_error: ` + policy + `, timeout: 50ms}
  tokens:
    - {name: echo, sha256: ` + sha(echoToken) + `, requests_per_minute: 100}
`
		c, logs := startWith(t, y, "")
		resp, err := c.Chat(bearer(echoToken), &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: []*llmrelayv1.Message{user("hi")}})
		if policy == "open" {
			if err != nil || len(resp.GetMeta().GetWarnings()) != 1 || !strings.Contains(resp.GetMeta().GetWarnings()[0], "not enforced") {
				t.Errorf("fail open: %v %v", resp.GetMeta(), err)
			}
			if !strings.Contains(logs.String(), "rate-limit store unreachable") {
				t.Errorf("fail open, no log line: %s", logs.String())
			}
			continue
		}
		st, info, _ := statusDetails(t, err)
		if st.Code() != codes.Unavailable || info.GetReason() != "RATE_LIMITER_UNAVAILABLE" {
			t.Errorf("fail closed: %v %v", st, info)
		}
	}
}
