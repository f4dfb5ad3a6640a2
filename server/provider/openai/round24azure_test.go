package openai

import (
	"context"
	"net/http"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// spilloverRequest asks the provisioned deployment gpt-4o-ptu.
func spilloverRequest() *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT, Model: "gpt-4o-ptu", Format: "openai-chat",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Does Azure OpenAI support customer managed keys?"))},
	}
}

// TestRound24AzureSpillover: a call to a provisioned (PTU) deployment
// that Azure spilled over to the resource's standard deployment (its
// units used up: a 429) is answered by the standard deployment and billed
// per token; Azure says so in the headers (x-ms-is-spilled-over: true,
// x-ms-spillover-from-deployment, x-ms-spillover-error,
// x-ms-deployment-name; testdata/README.md). The meta named only the
// deployment asked for, as if it had served the call; now
// extended.azure_spillover holds the three facts and a warning says it.
// The same holds for a failure of the standard deployment after the
// spillover (its 429 keeps the headers), and for an answer with
// x-ms-is-spilled-over: false (a real recording's) nothing is added.
func TestRound24AzureSpillover(t *testing.T) {
	t.Parallel()
	const wantWarning = `Azure spilled the call over from the provisioned deployment "gpt-4o-ptu" (it answered 429) to the deployment "gpt-4o-paygo", which bills it per token`
	check := func(t *testing.T, what string, meta *llmrelayv1.ResponseMeta) {
		t.Helper()
		ext := meta.GetExtended().GetFields()
		s := ext[extAzureSpillover].GetStructValue().GetFields()
		if s["from_deployment"].GetStringValue() != "gpt-4o-ptu" || s["error"].GetNumberValue() != 429 || s["deployment"].GetStringValue() != "gpt-4o-paygo" || len(s) != 3 {
			t.Errorf("%s: azure_spillover %v", what, s)
		}
		if ext[extAzureDeployment].GetStringValue() != "gpt-4o-ptu" {
			t.Errorf("%s: azure_deployment %v", what, ext[extAzureDeployment])
		}
		n := 0
		for _, w := range meta.GetWarnings() {
			if w == wantWarning {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: warnings %q", what, meta.GetWarnings())
		}
	}

	srv := providertest.ReplayFile(t, td("azure_spillover_chat.http"))
	res, err := newTestProvider(t, kAzure, srv.URL).Generate(context.Background(), spilloverRequest())
	if err != nil {
		t.Fatal(err)
	}
	check(t, "answer", res.Meta)
	if res.Meta.GetProviderRequestId() != "5d1f0b7e-93a2-4c61-b8e4-7a0c2f9d3e15" || res.Meta.GetUsage().GetTotalTokens() != 28 {
		t.Errorf("meta %v", res.Meta)
	}
	providertest.Golden(t, td("azure_spillover_chat.golden"), renderResult(t, res))

	srv = providertest.ReplayFile(t, td("azure_spillover_err_429.http"))
	_, err = newTestProvider(t, kAzure, srv.URL).Generate(context.Background(), spilloverRequest())
	pe := providerError(t, err)
	if pe.Kind != provider.KindRateLimited || pe.RequestID != "c2a94e57-1b8d-4f03-9e6a-d84f1570b2c9" || !strings.Contains(pe.Message, "Please retry after 7 seconds") {
		t.Errorf("error %+v", pe)
	}
	check(t, "429", pe.Meta)

	// Each header alone; "false" (what every answer of
	// real_crew_azure_responses_call_with_tools.http's deployment says) is
	// no spillover.
	for _, tc := range []struct {
		h    http.Header
		want string
	}{
		{http.Header{"X-Ms-Is-Spilled-Over": {"false"}, "X-Ms-Deployment-Name": {"gpt-4o-paygo"}}, ""},
		{http.Header{"X-Ms-Deployment-Name": {"gpt-4o-paygo"}}, ""},
		{http.Header{"X-Ms-Is-Spilled-Over": {"True"}}, "Azure spilled the call over to its spillover deployment, which bills it per token"},
		{http.Header{"X-Ms-Spillover-From-Deployment": {"ptu-a"}}, `Azure spilled the call over from the provisioned deployment "ptu-a" to its spillover deployment, which bills it per token`},
	} {
		meta := &llmrelayv1.ResponseMeta{}
		azureSpillover(meta, tc.h)
		got := strings.Join(meta.GetWarnings(), "|")
		if got != tc.want || (tc.want == "") != (meta.GetExtended() == nil) {
			t.Errorf("%v: warnings %q, extended %v", tc.h, got, meta.GetExtended())
		}
	}
}
