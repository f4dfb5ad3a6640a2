package openai

import (
	"context"
	"testing"

	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// TestRound24SiliconFlowUnknownModel: SiliconFlow answers a model it does
// not serve with 400 {"code":20012,"message":"Model does not exist. Please
// check it carefully.","data":null}, unary and before a stream alike
// (dialect_siliconflow_err_400_model_does_not_exist, the body
// ErlichLiu/DeepClaude#111 quotes). **Bug:** an invalid request, where
// the same mistake is a not-found error from OpenAI and DashScope (404
// model_not_found) and from Mistral, Perplexity, DeepSeek and OpenRouter
// (refineKind): no fallback to a route that serves the model. Now not
// found, SiliconFlow's number kept as the code.
func TestRound24SiliconFlowUnknownModel(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		srv := providertest.ReplayFile(t, td("dialect_siliconflow_err_400_model_does_not_exist.http"))
		p := newHostProvider(t, "https://api.siliconflow.cn/v1", srv.URL)
		var err error
		if stream {
			_, err = p.Stream(context.Background(), r22Ask("deepseek-ai/deepseek-r1", "hi"))
		} else {
			_, err = p.Generate(context.Background(), r22Ask("deepseek-ai/deepseek-r1", "hi"))
		}
		e := providerError(t, err)
		if e.Kind != provider.KindNotFound || e.HTTPStatus != 400 || e.Code != "20012" ||
			e.Message != "Model does not exist. Please check it carefully." {
			t.Errorf("stream %v: %s", stream, renderErr(err))
		}
	}
}
