package openai

import (
	"net/http"
	"strconv"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
)

// extAzureSpillover is the meta.extended key of Azure's account of a
// spillover: {"from_deployment": …, "error": …, "deployment": …}, the
// provisioned deployment the call spilled over from, the status it
// answered and the deployment that served the call
// (x-ms-spillover-from-deployment, x-ms-spillover-error,
// x-ms-deployment-name), what of them Azure sent.
const extAzureSpillover = "azure_spillover"

// azureSpillover reads Azure OpenAI's spillover headers. A provisioned
// (PTU) deployment with spillover on sends a request it cannot take (a
// 429 when its units are used up, any non-200) to a standard deployment
// of the same resource, which serves it and bills it per token, where the
// provisioned deployment's calls cost nothing more. Azure says so in the
// answer's headers: x-ms-is-spilled-over ("true"; "false" on the answers
// of a deployment that did not spill: crewAI's recording,
// testdata/real_crew_azure_responses_call_with_tools.http),
// x-ms-spillover-from-deployment (the provisioned deployment),
// x-ms-spillover-error (its status) and x-ms-deployment-name, the
// deployment that served the call (Microsoft's "Manage traffic with
// spillover for provisioned deployments"; LiteLLM prices an answer with
// x-ms-is-spilled-over: true at the served model's per-token rates). The
// meta named only the deployment asked for (azure_deployment), as if it
// had served the call: its cost and the provisioned capacity read wrong.
// A failure after a spillover (the standard deployment's own answer)
// keeps the headers, and its meta says so too.
func azureSpillover(meta *llmrelayv1.ResponseMeta, h http.Header) {
	from := validUTF8(strings.TrimSpace(h.Get("X-Ms-Spillover-From-Deployment")))
	if !strings.EqualFold(strings.TrimSpace(h.Get("X-Ms-Is-Spilled-Over")), "true") && from == "" {
		return
	}
	status := validUTF8(strings.TrimSpace(h.Get("X-Ms-Spillover-Error")))
	served := validUTF8(strings.TrimSpace(h.Get("X-Ms-Deployment-Name")))
	b := map[string]any{}
	w := "Azure spilled the call over"
	if from != "" {
		b["from_deployment"] = from
		w += " from the provisioned deployment " + strconv.Quote(from)
	}
	if status != "" {
		if n, err := strconv.Atoi(status); err == nil {
			b["error"] = n
		} else {
			b["error"] = status
		}
		w += " (it answered " + status + ")"
	}
	if served != "" {
		b["deployment"] = served
		w += " to the deployment " + strconv.Quote(served)
	} else {
		w += " to its spillover deployment"
	}
	provider.SetExtended(meta, extAzureSpillover, b)
	meta.Warnings = append(meta.Warnings, w+", which bills it per token")
}
