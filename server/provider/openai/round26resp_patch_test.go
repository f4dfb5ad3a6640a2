package openai

import (
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// TestRound26ApplyPatchStream: gpt-5.1 with the apply_patch tool, streamed
// (vercel/ai's openai-apply-patch-tool.1.chunks.txt, November 2025): the
// apply_patch_call's diff streams as response.apply_patch_call_operation_diff
// delta and done events (an event type no other recording here has), then
// the item whole. The stream gives what the unary reading of its final
// response gives: the item kept as a provider item as output_item.done
// carried it, one warning that the client was to apply it (the contract
// has no apply_patch_call_output), finish STOP as the status says, the
// usage; the diff deltas add nothing and lose nothing.
func TestRound26ApplyPatchStream(t *testing.T) {
	t.Parallel()
	const name = "real_vercel_apply_patch_stream"
	const item = `{"id":"apc_0372d86dfc1762fe00692741f3f3dc8190879cba489ff2fc8b","type":"apply_patch_call","status":"completed",` +
		`"call_id":"call_kA46f91ZwocQyMCKyyZqRyC5","operation":{"type":"create_file",` +
		`"diff":"+## Shopping Checklist\n+\n+- [ ] Milk\n+- [ ] Bread\n+- [ ] Eggs\n+- [ ] Fresh fruit\n+- [ ] Coffee\n","path":"shopping-checklist.md"}}`
	const warning = `output item of type "apply_patch_call" (id apc_0372d86dfc1762fe00692741f3f3dc8190879cba489ff2fc8b; ` +
		`call_id call_kA46f91ZwocQyMCKyyZqRyC5: a call of OpenAI's built-in tool for the client to run, which the contract has no place for); kept as a provider item`
	f := r21Stream(t, name, r21Request("gpt-5.1", "Create a shopping checklist."))
	parts := f.Message.GetParts()
	want := &llmrelayv1.ProviderItem{Type: "apply_patch_call", Json: item}
	if len(parts) != 1 || !proto.Equal(parts[0].GetProviderItem(), want) {
		t.Fatalf("parts %v", parts)
	}
	m := f.Meta
	wantFinish(t, m, llmrelayv1.FinishReason_FINISH_REASON_STOP, "completed")
	if w := m.GetWarnings(); len(w) != 1 || w[0] != warning {
		t.Errorf("warnings %q", w)
	}
	if u := (&llmrelayv1.Usage{InputTokens: 642, OutputTokens: 67, TotalTokens: 709}); !proto.Equal(m.GetUsage(), u) {
		t.Errorf("usage %v", m.GetUsage())
	}
	if m.GetResponseId() != "resp_0372d86dfc1762fe00692741f339a08190bce9b78ee2079295" || m.GetResolvedModel() != "gpt-5.1-2025-11-13" {
		t.Errorf("meta %v", m)
	}

	raw, err := os.ReadFile(td(name + ".http"))
	if err != nil {
		t.Fatal(err)
	}
	p := newTestProvider(t, kOpenAI, "http://127.0.0.1:1")
	unary, err := p.parseResponsesResponse(respFinalObject(string(raw)), "gpt-5.1")
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(unary.Message, f.Message) || !proto.Equal(unary.Meta.GetUsage(), m.GetUsage()) ||
		len(unary.Meta.GetWarnings()) != 1 || unary.Meta.GetWarnings()[0] != warning {
		t.Errorf("unary %v, meta %v", unary.Message, unary.Meta)
	}
}

// TestRound26Compaction: gpt-5.2 with server-side compaction, store false
// (vercel/ai's openai-compaction.1.json, trimmed): the answer's message,
// then a compaction item {id cmp_…, type compaction, encrypted_content}
// after it. OpenAI's guide: "For stateless input-array chaining, append
// output items as usual … the compaction item carries context needed for
// the next window". The item is kept as a provider item, without a
// warning (nothing in it is the caller's to act on), and the follow-up
// sends it back in its place, after the message, as OpenAI sent it.
func TestRound26Compaction(t *testing.T) {
	t.Parallel()
	const cmp = `{"id":"cmp_0a311635443846b4016994b3fb8f6481968df9bf035c612c83","type":"compaction",` +
		`"encrypted_content":"gAAAAABplLP75yhVf0v4856Geb-oLdsjDPhdISdmBJvCNP9Su2ib_UJkknntI-GqAeBDF59lGgLqTjJ6tkGU1806G1obLAr7T3xnnIWI1roT_nwSS9vA=="}`
	res := r21Unary(t, "vercel_compaction", r21Request("gpt-5.2", "Compare unit, integration and E2E tests."))
	parts := res.Message.GetParts()
	if len(parts) != 2 || !strings.HasPrefix(parts[0].GetText(), "### Testing strategies: unit vs integration vs E2E\n\n") ||
		!strings.HasSuffix(parts[0].GetText(), "what to test at each layer.") ||
		!proto.Equal(parts[1].GetProviderItem(), &llmrelayv1.ProviderItem{Type: "compaction", Json: cmp}) {
		t.Fatalf("parts %v", parts)
	}
	if w := res.Meta.GetWarnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
	if u := (&llmrelayv1.Usage{InputTokens: 51097, OutputTokens: 2056, TotalTokens: 53153}); !proto.Equal(res.Meta.GetUsage(), u) {
		t.Errorf("usage %v", res.Meta.GetUsage())
	}
	p := newTestProvider(t, kOpenAI, "http://127.0.0.1:1")
	got, warnings := r24NextInput(t, p, "gpt-5.2", msgOf(llmrelayv1.Role_ROLE_USER, text("Compare.")), res.Message,
		msgOf(llmrelayv1.Role_ROLE_USER, text("More.")))
	if len(warnings) != 0 || len(got) != 4 {
		t.Fatalf("input %v, warnings %q", got, warnings)
	}
	m, _ := got[1].(map[string]any)
	c, _ := got[2].(map[string]any)
	if m["type"] != "message" || m["id"] != "msg_0a311635443846b4016994b3e254048196b97b781550681246" ||
		c["type"] != "compaction" || c["id"] != "cmp_0a311635443846b4016994b3fb8f6481968df9bf035c612c83" ||
		c["encrypted_content"] != "gAAAAABplLP75yhVf0v4856Geb-oLdsjDPhdISdmBJvCNP9Su2ib_UJkknntI-GqAeBDF59lGgLqTjJ6tkGU1806G1obLAr7T3xnnIWI1roT_nwSS9vA==" || len(c) != 3 {
		t.Errorf("input %v", got)
	}
}
