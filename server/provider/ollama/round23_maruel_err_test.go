package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound23MaruelBadModel: maruel/genai's recording of a local Ollama
// asked to stream a chat with a model it does not have (testdata/README.md,
// "Round 23"): 404 {"error":"model \"bad_model\" not found, try pulling it
// first"}, the older wording (real_oi_model_not_found has the newer one).
// Not found, the message whole, no code, no retry delay, unary and
// streamed; the request we send is the recorded one but for what ours adds
// on purpose (truncate and shift false).
func TestRound23MaruelBadModel(t *testing.T) {
	t.Parallel()
	const name = "real_maruel_err_404_bad_model"
	req := func() *provider.Request {
		return &provider.Request{Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "bad_model",
			Messages: []*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("Tell a short joke."))}}
	}
	check := func(what string, err error) {
		t.Helper()
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("%s: err = %v, want *provider.Error", what, err)
		}
		if pe.Kind != provider.KindNotFound || pe.HTTPStatus != 404 || pe.Message != `model "bad_model" not found, try pulling it first` || pe.Code != "" || pe.RetryAfter != 0 {
			t.Errorf("%s: %+v", what, pe)
		}
	}
	_, err := newTestProvider(t, providertest.ReplayFile(t, td(name+".http"))).Generate(context.Background(), req())
	check("Generate", err)
	srv := providertest.ReplayFile(t, td(name+".http"))
	st, err := newTestProvider(t, srv).Stream(context.Background(), req())
	if err == nil {
		_, err = collect(st)
	}
	check("Stream", err)
	var got, want map[string]any
	if err := json.Unmarshal(srv.Last(t).Body, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"model":"bad_model","stream":true,"messages":[{"role":"user","content":"Tell a short joke."}],"truncate":false,"shift":false}`), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("request %s", srv.Last(t).Body)
	}
}
