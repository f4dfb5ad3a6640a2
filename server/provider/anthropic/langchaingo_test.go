package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// tmc/langchaingo's httprr recordings (testdata/README.md, "Real
// recordings from langchaingo's httprr traces"): the live API's answers to
// langchaingo's tests, with every response header as recorded (request-id,
// anthropic-ratelimit-*). Every expectation below is read off the
// recording by hand.

// The recorded signatures and redacted_thinking data.
const (
	lcgRedacted1   = "ErIGCkYICxgCKkAy1e1hkuqvlKEFaTr1/ucDwntenwqabMdAYEsi+2Wn/mS0O5swtEBqgARXJRY/ANU5H1YKtjCHYrEtLyaFCxiREgzPAZZTqNgeLoxhHesaDBP5vwXnwpgabkcq1CIw9Ea/ZCeeZVLhlXgqhHYnSxuIOiLKsCtl2x6Lv11p0ckbObR6LZFwnBDv5Zxp4e/PKpkFLzCZlFafNWhgdcvbGKoy6NI+oec5HjAJ9gErH6AzFJIYAX9E5BMObCg5HARR4P8RwnMVWoi8UwmRaqmotIjaOgkzRlFX58j1J1/mZcw/+1cJrJsoKRo9uBqCr+fwCuspZR65eiNVAqReeHyOX/eRcYdRgqbzTJNG1QDd2tVkkPUjHShoBuLZRBt0ynqToc+kAmjLfZSdxx3hNYehvIf88qCcDtw+uzGYd4lbTgwZsT5G+Bopxu9Q4+q3EkreNQpNXIPd+eqvvsgNYE8FiJCUKFVb68IxBKFAt81kwCpwvP67qpb7vs3xEghl0Nkau69/7QfHTH8zHeeRGP7X5kypHlMLl3Uz++cdDdFdpyeAhsMDF/TEEmPOTahYcFniWS/+S1Gz4K3E2ym2ds6n6zb3CpfJmTAzBpreRn9TnNcRDutu25PNUVxdCJ5dmZMFRFXJXLq+15uxiJL/KMHHu3uGvOjeo5UvG86RZ27RAvCY7K4ueLR7zVhOzMOa5QclWt8AqPmGR9sgH1wDg/Ni2Eijylg85Ti8uGSj93ERfbTKS9gUYOIDgRnT0B97TBvYLrhtCOvA29KJuWwX8hgx9wYMuWml1OoJ3oRR0Xdd3v46Rt8Gc4On3RiQgdKErK72W3w5E0gLMibMzzrkXmbzCHQYrfDXpVraalIMnok4hQQxinKGMBqPefeXGlgY6wJheN0DEveQ9nj4dnPFrTaHGa9+nUk+THjOFQHnxF6/Axkj7c3sZKwbknMBgK72lavtaQiFlvuSY9QTUXsMQbkwFOaAXxVrjLwLkWg9oe8OCUMvaLFn6jxgQiYt45iEwIU3IvSHinP++Ss4VBLNMtNcXB+w/ggLIbCBK+tHUXvIkE/8OjkwY1qQij6UiQIYAQ=="
	lcgRedacted2   = "EvUECkYICxgCKkBJLVO1JZwO+Dg1X0fx3ZrBW4UsBkYv82xCDfu91EW2KN3OTDSCABQ1wb43X+6vfPFLV3oo2zAsMU0aovLTpMnSEgx7t+XSTaSCMtm+drIaDC6HpFZsN1dN7O+c/iIwJIjeVdLKIQrWp6r4tnS28C45GK4EPumSOEBM5OafXs4+Dua1D8qtLDxylBTr7fc7KtwD/lNqtd4mQd0Vowl8lrJlnPdslSSCdt9kVf7nZz15Kn2syK1ro/oNTa4LXOQ0l0ycgY02qrfZvd6QWABjv+g+E7Ue+l+pWc/WIlLMdGmeeh+MNnO9ZiuA/tEXmqwFoGvogl11vUEsXzq052wACFqT9jQ6wdiB6qrUC5hphWyanp3QBAPvMt/KDsJd49yk/um2iHFrbIQp4TUUS7GjoKO4GEv0d38w1F8t4oOD+PxfjM3Oe2YKJH2AeAHrdw1SCubzLGCNellXSg7V+IzXdZ63uqNBrtFE4guhofScIK7a5DKbxgaVRpWraqlOGjrYhCgqN+t8bcEmtIkS3sa7mqmniqCaaRvv6GBFjQCxnYc8+rYAoG87TVmJPsbeOIeiKHRd1vooIuVe7B1sbVlTd6PP6Gfpg7JZufSengzuxyh+s9IsIe2L6DeoC/1ii3JJzIeE1WtTTq/GIxG/07d4MhzXYw0H4j2ybNiqSPtNgAbvKoXIjQP0j2dME9hzG3YpKomVR05QtsmuryyfEr1QvSh4JYzS7kpWFEGWE4HYsUSpA/9P0UAqWbguFo89eMQ6nfhRt9WduhU+7CE4b7OiFnQwzGL8Qdy/voW8Y+H2Snyxrw81cJbIUYwRl+1nD6oYAQ=="
	lcgParallelSig = "ErcECkYICxgCKkAPeZNKidA0PTeTnqksaIA7PGhGLSqK1TBXs63Dazt6rzdPjMM/S2vkRh0guMK88VP0kz5inHJpIq47NRYMGC6kEgwsMVazmmv0ziPgFosaDKD5iJwVBa3Th/5BHiIw+x395wsUZhaishmS2cyurftZsIbthkLyNGOUPh9w0NlOH/d0PElX6df67F9ZCJPpKp4DDKUvpcrOwSdymL0Ci8zjh+TQiPqRe2zi/aqIoe66aZ9pufT5FTitwvf7xBqr9DVeg4t0yM27yjA+P961jhXfEXV+WU1g4IZgdQnELNnw8JtHgWA8mmEE5jMqOO0PewBORwpEgpYgSfraey67vEVHF0eW+b0wWWygtj7hGKjoWcu+MakujV3UFcQIV6nJRiW9w1fH+uZD6GVCysBSo6R1wdq7CvAH24FbtrNJLvBWteDTDJc0+KSPP6bbwLNIcjkTft/PAnoUruCpKAr+eq5nHPZR5Hr1VslIbGEOXH1Uk1t1BOAPr69I+EOL+Xu1XhEVV2y8BN18ho4SFgrzAZsZZNS3ZPE7Xpf46bZql1nlFJQLKGOsRV10Z+K43RpPuyeEP1X1GyI/axWZ4mrztTS3FKiLOmjY+xYm+JQd52NyCMq73oLD2K4CjSXd7e6WsW4ld1ZBEYXgYZyCQrUdNIjRldaBrUsg1EP6G74RZP1m56/6oLuXbOjzXZijOEZkhASetwd0OBaIVjgmJpi1s5uIIWqZ2d+SUvMORO0Z3ZgzGAE="
	lcgOpus5Sig    = "CAIS+AEKhwEIEBgCKkCXdfqxobAfmqVlxWjKUiA6dxpXcPqKTMxHmXSkynyNEHoR6klR5YlqPWgEbCEsLAAaPtSooG8ZrW6ia0w1OpBIMg1jbGF1ZGUtb3B1cy01OAFCCHRoaW5raW5nWiQxOTA0NDU2YS1jZDY0LTQ3NmMtOWNjOC1kYjAwY2RmOWQyMzISDBEunk84g+B2GDmFFxoMNVsQox6i3JkKdpXYIjCxN3M0xrki5V4yIq9jO7mgzO+//axKyA8hoEvF6BiAlPFAH5Z6j5sBFAkcQAJ5aRcqHhCvnR2olbH6V2yckbZHnzcwgpW09edk8ms1/C9vxRgB"
	lcgStreamSig   = "EtICCkYICxgCKkARDRHxiNXHCcLFFJcta90QwhdCi9Wo5jidivkr+cJXUddQZVjOeXK0WmjjeD1wD5POjU5NQaufZ0x+hpnjlzKeEgx7EZ0nO2v7fx5WNSEaDA75Rm5H/g/QMSKTbyIwwAKk+dyda4LZGMrIH26JlqvQWhTcfoHsyefjMKrB5k5ff9mKRKZksZ9Qf8p2dkU2KrkBTTJB3kHGXcCFSAG5ROV+uGNjfkrEssZFmCbLE36p3soy/BMzHzhvw+VpHRHc0A45x7BI6BefdpwF6aJgK418dP5TVC1gPLP9ENz4r4/nS63HVyxha4m8+MXmUtZ7DQ8VmSsiheMduBcL9z0RX1CEUJKaepw4CrRFSv9TZrT6l611WvBLSERIUmkLrfl+G2bZgQFT1o4cjU0ce3ZxrCCeoRnL+aA0l2yDJnvfFxeP9KxS7EFPWa45d6gYAQ=="

	lcgSeqSig1 = "EtgCCkYICxgCKkAQHixoPDQwD9Pf0GyoWSG0ipJjgnhRhUsWMGRf6PKykeA6Dz+EI8fa9yeKQttngwFibwjqFZ6qPhanqQsxKBpiEgwDxACbfTP4VcPm6uMaDA5NfLuUhm2y8Kn5iiIwcsRk7bxA1jiIwd8QyIuNKa9O+IiuYzRWaN7QBJ7bT0R4/eUyArB0Hks1BBLxt5+VKr8BlpFuctab4iX0xit2s9981lTBeMlQX3nDKyMo4GmL3OTz7lt2nfIEztifU6NEcydNopmlAgHr+650w4+050ALJx6V3EYSSHAK0FF9GJ4NhPxzbfgNn4zCvEmA9fLe6WstDP3U400FMiOq7NG8/1oKAjb94OWOlqnEUknqUwvaLmLKlWCr61L0v1GrOXFihQmuOeS+1uZttmaej0PvykrJVNJvVwOTzu56bYLJPxwrh+0V2P62ErV0WXmg5V6SOsIYAQ=="
	lcgSeqSig2 = "Eo4DCkYICxgCKkDUiYETxJ0HO3qz8nQDk23rkQ9lYxR6MmK8PVbdChMg882CH/q+r7LxxoI439uEfYJSKdB/zFq6cVZc5qMkX97fEgxggdj4RHghueD0Q8UaDDot5UpWOt1Oq7d4JSIwzlstL25D9dyLX9r+Xx/UiAFDU8mFeVlTjSAMeJvB9EqihF7wdpug+UbJGyZ1hXBYKvUB2BqxRZAXrg2XVr/40HoH9hfIejw8tiO5jE5kJrCjDYvdfBpdTpFB4omGoVsaTPHhnEkZlbR91fvXOfUQSX3IABJRT/ERnNioj/RGeYdcs70hc6VQup6DoWvPiW+uIujVU6KWBNJiuU/HofiWN4yR28uGCjq/ZQAGd89EtxddIDYmvb+wM0WVmdfKbQcJQbaFlM3FmjZFhFZByn9FqfBuwh/Qriy1Ff6P6a8QYjmBKYzgLtPcLU11xRl1GVmZDRwpfy5KCyBOuc2SHn2bgdhsBSc3QyR4crrN+l+dnu96CylPkS7/KZeUum0AuKXu0tEo/KncrvYYAQ=="
	lcgMtcSig1 = "EsEDCkYICxgCKkBeFDWbmIv1VVS22aPCRHHeeZi97keLFUKgSANMIarirqLUjgvgtJ/d5SdfiTkK2aO6aKYl1XZ0NElb6aNupq5jEgy8l4zhT2IS4Y67SuwaDPfD5ClhdiqxM2T7cCIw0OzWBRWB5sRaGQz7FrefxwsDtDXwBftcS9Zj7EL75yHpN07uzqGqtzfP9S+JFij5KqgCL9yx8O7mDUDMZrcoRR9fWzG5Ilp9w0qckxvUBBUvOeLj+P+i268dHTInpGoYVFpOpzT5we1rfhRliRSGsjx+2cWGbtlI1GGHPBUsNvHtsNIBTiyWsCLe/3ufrm2qeOf3oP0qYOtuavdFQBayQ16sMX/np/4SsR0i9/z04Zd+QlHG3riudaepm6WeMb58WkfplWovAQL7rbYKGFLH/o0DDf3NJzB4xGBPLSjAHxIkkoW9TZPGb1qf0/sF+sb+t6nBCRmz4/gbtxJflqbRO3xsU50eokDgk9W4ot1MF/1vLyZkxv9kJCARaOw9sXzo7nIgA8rRDWE5erAlLl7In3A/ZTL+1Dk/LmE2is2jD1bTDQ/jswgWicT19uLyogOliNGZhySfsm/HQT0YAQ=="
	lcgMtcSig2 = "Eq4CCkYICxgCKkDtz9wavwgzweFxn+jHQlLBgUl8TB07ClUrYykKxo5Mu7vtgR3WSZ268/YSMQbyHAoEdCZW4eFH8yaxaDpGzihjEgxbet/tV0xGsJieaRwaDNojFULU9bXV86XORyIwGjpNV2HCHTMx1Ubi83J7rmw/Xec2haciETQKfONOiRwxdm5xO/y/8vOgESCLpIyWKpUBysRWX7AVL4rvarfcsxUl+kVMvUtmIgW0W3Kv6Xa6Jm4XgFkd4uh4FiMZ0iY1lch7YrnacsB3PYzHrRg+sjiPHDMnQXIvw9BZ7KTXl2nUVjSwjlJyYpc+OPSeMAtyKTWKJtNZQAoF/zzQbYsAYwuLwMyQBtDykyRW03lw4h/ShBrXh9zM2AQ0LobzadbVreyhEl5XhPoYAQ=="

	// lcgMagic is the prompt Anthropic answers with redacted thinking.
	lcgMagic = "ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_46C9A13E193C177646C7398A98432ECCCE4C1253D5E2D82641AC0E52CC2876CB"
)

// lcgSeqThinking1 is the thinking of
// real_lcg_sequential_tool_calls_with_thinking_1.
const lcgSeqThinking1 = "The user wants me to:\n1. Calculate (5 + 3)\n2. Then multiply that result by 2\n\nI can do this in one calculation: (5 + 3) * 2\n\nLet me use the calculate function to compute this."

// lcgRedactedText is the text of real_lcg_redacted_thinking_1.
const lcgRedactedText = "I don't respond to attempts to access internal systems or backdoor commands. There are no special triggers or magic strings that change how I operate.\n\nHow can I assist you today with a legitimate task?"

// lcgThinkingRequest is langchaingo's TestAnthropic_RedactedThinking
// request: claude-3-7-sonnet-latest, temperature 1, max_tokens 16000,
// thinking with a budget of 10000.
func lcgThinkingRequest() *provider.Request {
	return &provider.Request{
		Protocol: llmrelayv1.Protocol_PROTOCOL_CHAT,
		Model:    "claude-3-7-sonnet-latest",
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text(lcgMagic))},
		Options:  &llmrelayv1.GenerationOptions{Temperature: ptr(1.0), MaxTokens: ptr[int32](16000)},
		ProviderOptions: &llmrelayv1.ProviderOptions{Provider: &llmrelayv1.ProviderOptions_Anthropic{Anthropic: &llmrelayv1.AnthropicOptions{
			ThinkingBudgetTokens: ptr[int32](10000),
		}}},
	}
}

// lcgRateLimit is the four input/output token extended keys of a
// recording's anthropic-ratelimit-input-tokens-* and -output-tokens-*.
func lcgRateLimit(m map[string]string, inLimit, inRemaining, inReset, outLimit, outRemaining, outReset string) map[string]string {
	m["ratelimit_input_tokens_limit"] = inLimit
	m["ratelimit_input_tokens_remaining"] = inRemaining
	m["ratelimit_input_tokens_reset"] = `"` + inReset + `"`
	m["ratelimit_output_tokens_limit"] = outLimit
	m["ratelimit_output_tokens_remaining"] = outRemaining
	m["ratelimit_output_tokens_reset"] = `"` + outReset + `"`
	return m
}

func TestLangchaingoGenerate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		req  func(t *testing.T) *provider.Request
		want llmWant
		// remaining are anthropic-ratelimit-requests-remaining and
		// -tokens-remaining.
		requestsRemaining, tokensRemaining int64
	}{
		// claude-3-7-sonnet, the magic prompt: a redacted_thinking block
		// (its data is the signature), then text; cache_creation zeros.
		{"real_lcg_redacted_thinking_1", func(*testing.T) *provider.Request { return lcgThinkingRequest() }, llmWant{
			parts: []*llmrelayv1.Part{
				reasoningPart(&llmrelayv1.Reasoning{Redacted: true, Signature: lcgRedacted1}),
				text(lcgRedactedText),
			},
			responseID: "msg_01GdmrBH1QwTGgDMNjUE2FNE", model: "claude-3-7-sonnet-20250219", requestID: "req_011CXWs7iTa9zBae46AjtwEe",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage:         usageOf(93, 193, 0, 0, 0),
			requestsLimit: 4000, tokensLimit: 280000, tokensReset: time.Date(2026, 1, 26, 23, 34, 11, 0, time.UTC),
			extended: lcgRateLimit(map[string]string{"service_tier": `"standard"`},
				"200000", "200000", "2026-01-26T23:34:11Z", "80000", "80000", "2026-01-26T23:34:14Z"),
		}, 3999, 280000},
		// The follow-up ("Continue the conversation"): redacted thinking
		// again, text with a space before a blank line.
		{"real_lcg_redacted_thinking_2", func(*testing.T) *provider.Request { return lcgThinkingRequest() }, llmWant{
			parts: []*llmrelayv1.Part{
				reasoningPart(&llmrelayv1.Reasoning{Redacted: true, Signature: lcgRedacted2}),
				text("I'd be happy to have a conversation with you, but we haven't really started one with a specific topic yet. \n\n" +
					"Is there something in particular you'd like to discuss or a question I can help you with today? " +
					"I'm here to assist with information, brainstorming, writing tasks, or just having a thoughtful conversation about topics you're interested in."),
			},
			responseID: "msg_017x59Rc2fc2xNnkzJ3FJ6s3", model: "claude-3-7-sonnet-20250219", requestID: "req_011CXWs899dJYVrnSjmByvK1",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage:         usageOf(143, 176, 0, 0, 0),
			requestsLimit: 4000, tokensLimit: 280000, tokensReset: time.Date(2026, 1, 26, 23, 34, 17, 0, time.UTC),
			extended: lcgRateLimit(map[string]string{"service_tier": `"standard"`},
				"200000", "200000", "2026-01-26T23:34:17Z", "80000", "80000", "2026-01-26T23:34:19Z"),
		}, 3999, 280000},
		// claude-sonnet-4-5 with interleaved thinking: a signed thinking
		// block (escaped quotes, numbered lines), text, then two parallel
		// tool_use blocks.
		{"real_lcg_parallel_tool_calls_with_thinking", thinkingRequest, llmWant{
			parts: []*llmrelayv1.Part{
				reasoningPart(&llmrelayv1.Reasoning{
					Text: "The user is asking for both the weather and time in Boston. I have two functions available that can help:\n" +
						"1. get_weather - which takes a location parameter\n2. get_time - which takes a location parameter\n\n" +
						"Since these are independent calls (neither depends on the result of the other), I can make both calls at the same time in a single function_calls block.\n\n" +
						"The location is \"Boston\" for both calls.",
					Signature: lcgParallelSig,
				}),
				text("I'll get both the weather and time information for Boston."),
				toolCallValid("toolu_01Pm8yB7EWqPLcqs7q6CZLwF", "get_weather", `{"location":"Boston"}`),
				toolCallValid("toolu_01HZ1ZdpZQujsQX8oNutwTfd", "get_time", `{"location":"Boston"}`),
			},
			responseID: "msg_01PAH28ZD28BrJKtY8YPZzMv", model: "claude-sonnet-4-5-20250929", requestID: "req_011CXWs7iSL9xT6oejBka3DG",
			finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
			usage:         usageOf(797, 200, 0, 0, 0),
			requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2026, 1, 26, 23, 34, 11, 0, time.UTC),
			extended: lcgRateLimit(map[string]string{"service_tier": `"standard"`},
				"2000000", "2000000", "2026-01-26T23:34:11Z", "400000", "400000", "2026-01-26T23:34:13Z"),
		}, 3997, 2400000},
		// claude-opus-5 with adaptive thinking (summarized): a short signed
		// thinking block, text with ✓; stop_details null;
		// output_tokens_details.thinking_tokens 11 of the 144 output
		// tokens; inference_geo kept in usage_details.
		{"real_lcg_opus5_adaptive_reasoning", func(*testing.T) *provider.Request { return plainRequest() }, llmWant{
			parts: []*llmrelayv1.Part{
				reasoningPart(&llmrelayv1.Reasoning{Text: "I'm setting x to 7.", Signature: lcgOpus5Sig}),
				text("## Solving for x\n\n**Equation:** x + 5 = 12\n\n**Step 1:** Subtract 5 from both sides to isolate x.\n\n" +
					"$$x + 5 - 5 = 12 - 5$$\n\n**Step 2:** Simplify.\n\n$$x = 7$$\n\n" +
					"**Check:** Substitute back into the original equation: 7 + 5 = 12 ✓\n\n**Answer: x = 7**"),
			},
			responseID: "msg_011CdMfQetsW9ZNDxPVNNcYq", model: "claude-opus-5", requestID: "req_011CdMfQdyon7F6domQsLmQa",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage:         usageOf(24, 144, 0, 0, 11),
			requestsLimit: 10000, tokensLimit: 12000000, tokensReset: time.Date(2026, 7, 24, 22, 22, 4, 0, time.UTC),
			extended: lcgRateLimit(map[string]string{"service_tier": `"standard"`, "usage_details": `{"inference_geo":"global"}`},
				"10000000", "10000000", "2026-07-24T22:22:04Z", "2000000", "2000000", "2026-07-24T22:22:06Z"),
		}, 9996, 12000000},
		// claude-haiku-4-5 writing a long system prompt to the 1-hour
		// cache: 7 uncached input tokens, 6001 written, all of them in
		// ephemeral_1h_input_tokens; text with an emoji.
		{"real_lcg_ttl_caching_1", func(*testing.T) *provider.Request { return plainRequest() }, llmWant{
			parts:      []*llmrelayv1.Part{text("Hello! \U0001F44B How can I help you today?")},
			responseID: "msg_013XwAZHgGBDoohvW8efWAB9", model: "claude-haiku-4-5-20251001", requestID: "req_011CYuaH6E6KR4uusUW5SYP6",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage:         usageOf(7, 16, 0, 6001, 0),
			requestsLimit: 4000, tokensLimit: 4800000, tokensReset: time.Date(2026, 3, 10, 14, 41, 29, 0, time.UTC),
			// The split has only the 1h count: a zero count is no detail.
			extended: lcgRateLimit(map[string]string{"service_tier": `"standard"`,
				"usage_details": `{"cache_creation.ephemeral_1h_input_tokens":6001,"inference_geo":"not_available"}`},
				"4000000", "3999000", "2026-03-10T14:41:29Z", "800000", "800000", "2026-03-10T14:41:29Z"),
		}, 3999, 4799000},
		// claude-sonnet-4-5 with interleaved thinking, the first of two
		// sequential tool turns: signed thinking then a tool_use, no text.
		{"real_lcg_sequential_tool_calls_with_thinking_1", thinkingRequest, llmWant{
			parts: []*llmrelayv1.Part{
				reasoningPart(&llmrelayv1.Reasoning{Text: lcgSeqThinking1, Signature: lcgSeqSig1}),
				toolCallValid("toolu_01DEbz4aVH2QyU3TVqydqZpN", "calculate", `{"expression":"(5 + 3) * 2"}`),
			},
			responseID: "msg_01XX2qdoQ5WNBRd5WwDzfiLs", model: "claude-sonnet-4-5-20250929", requestID: "req_011CXWs7iSLSf847316kwCkX",
			finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
			usage:         usageOf(745, 125, 0, 0, 0),
			requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2026, 1, 26, 23, 34, 11, 0, time.UTC),
			extended: lcgRateLimit(map[string]string{"service_tier": `"standard"`},
				"2000000", "2000000", "2026-01-26T23:34:11Z", "400000", "400000", "2026-01-26T23:34:12Z"),
		}, 3997, 2400000},
		// Its answer after the tool result "8": thinking, text with ×, a
		// second tool_use.
		{"real_lcg_sequential_tool_calls_with_thinking_2", thinkingRequest, llmWant{
			parts: []*llmrelayv1.Part{
				reasoningPart(&llmrelayv1.Reasoning{
					Text: "Hmm, that doesn't seem right. Let me think through this:\n- (5 + 3) = 8\n- 8 * 2 = 16\n\n" +
						"The result should be 16, not 8. It seems the function may have only calculated (5 + 3) and not multiplied by 2. Let me recalculate to make sure.",
					Signature: lcgSeqSig2,
				}),
				text("The calculation is: **(5 + 3) × 2 = 8 × 2 = 16**\n\nWait, let me recalculate that to verify:"),
				toolCallValid("toolu_016gA6ur1kRmB1T6mfsipJ4X", "calculate", `{"expression":"8 * 2"}`),
			},
			responseID: "msg_0192uhTax7YRMifdZfWyvFZm", model: "claude-sonnet-4-5-20250929", requestID: "req_011CXWs7zAdrdtSDv2uf9S5E",
			finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
			usage:         usageOf(890, 190, 0, 0, 0),
			requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2026, 1, 26, 23, 34, 15, 0, time.UTC),
			extended: lcgRateLimit(map[string]string{"service_tier": `"standard"`},
				"2000000", "2000000", "2026-01-26T23:34:15Z", "400000", "400000", "2026-01-26T23:34:18Z"),
		}, 3999, 2400000},
		// A system prompt, tools and the user turn written to the 5-minute
		// cache (3775 tokens, all ephemeral_5m); 10 uncached.
		{"real_lcg_multi_turn_tool_thinking_caching_1", thinkingRequest, llmWant{
			parts: []*llmrelayv1.Part{
				reasoningPart(&llmrelayv1.Reasoning{
					Text: "The user wants me to fetch sales data and calculate the total. I'll need to:\n1. First fetch the sales data using the fetch_data function\n" +
						"2. Then calculate the total based on what data is returned\n\nLet me start by fetching the sales data. I'll use a general query for \"sales data\".",
					Signature: lcgMtcSig1,
				}),
				text("I'll help you fetch the sales data and calculate the total."),
				toolCallValid("toolu_01P4vRC8iixnXvBvmteWaxGN", "fetch_data", `{"query":"sales data"}`),
			},
			responseID: "msg_01He5m3A5uoXGxTqGgrSW9mh", model: "claude-sonnet-4-5-20250929", requestID: "req_011CXYRrRs7DyYUiXiuNeH3i",
			finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
			usage:         usageOf(10, 143, 0, 3775, 0),
			requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2026, 1, 27, 19, 24, 4, 0, time.UTC),
			extended: lcgRateLimit(map[string]string{"service_tier": `"standard"`,
				"usage_details": `{"cache_creation.ephemeral_5m_input_tokens":3775}`},
				"2000000", "1998000", "2026-01-27T19:24:04Z", "400000", "400000", "2026-01-27T19:24:06Z"),
		}, 3999, 2398000},
		// The next turn (after the tool result): 3775 read from the cache,
		// 171 more written (5m), 13 uncached.
		{"real_lcg_multi_turn_tool_thinking_caching_2", thinkingRequest, llmWant{
			parts: []*llmrelayv1.Part{
				reasoningPart(&llmrelayv1.Reasoning{
					Text:      "Great! I got the sales data: [100, 200, 300]. Now I need to calculate the total. I'll use the calculate function to sum these values.",
					Signature: lcgMtcSig2,
				}),
				text("Now let me calculate the total of these sales:"),
				toolCallValid("toolu_01WP2FzrnXpCrURz14ts8Pr7", "calculate", `{"expression":"100 + 200 + 300"}`),
			},
			responseID: "msg_0175p4EoaU7y6W7JAn9dTpVL", model: "claude-sonnet-4-5-20250929", requestID: "req_011CXYRrkCvKbc6EjfzgMvWc",
			finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
			usage:         usageOf(13, 114, 3775, 171, 0),
			requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2026, 1, 27, 19, 24, 9, 0, time.UTC),
			extended: lcgRateLimit(map[string]string{"service_tier": `"standard"`,
				"usage_details": `{"cache_creation.ephemeral_5m_input_tokens":171}`},
				"2000000", "2000000", "2026-01-27T19:24:09Z", "400000", "400000", "2026-01-27T19:24:10Z"),
		}, 3999, 2400000},
		// claude-sonnet-5 with adaptive thinking that chose not to think:
		// no thinking block, thinking_tokens 0 (no reasoning count), text
		// with ✓, stop_details null.
		{"real_lcg_adaptive_thinking", func(*testing.T) *provider.Request { return plainRequest() }, llmWant{
			parts: []*llmrelayv1.Part{text("# Solving x + 5 = 12\n\nTo solve for **x**, subtract 5 from both sides of the equation:\n\n" +
				"$$x + 5 = 12$$\n$$x + 5 - 5 = 12 - 5$$\n$$x = 7$$\n\n**Check:** 7 + 5 = 12 ✓\n\n**x = 7**")},
			responseID: "msg_011Cd22MwnQnvT26utSBh48V", model: "claude-sonnet-5", requestID: "req_011Cd22MvYzVn3TwyTiR8zLH",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage:         usageOf(24, 108, 0, 0, 0),
			requestsLimit: 10000, tokensLimit: 12000000, tokensReset: time.Date(2026, 7, 14, 13, 24, 57, 0, time.UTC),
			extended: lcgRateLimit(map[string]string{"service_tier": `"standard"`, "usage_details": `{"inference_geo":"global"}`},
				"10000000", "10000000", "2026-07-14T13:24:57Z", "2000000", "2000000", "2026-07-14T13:24:58Z"),
		}, 9999, 12000000},
		// Native structured output (output_config.format json_schema): the
		// answer is the text, the JSON object as the model wrote it.
		{"real_lcg_structured_output_object_schema", func(*testing.T) *provider.Request { return lcgStructuredRequest() }, llmWant{
			parts:      []*llmrelayv1.Part{text(`{"country":"France","capital":"Paris"}`)},
			responseID: "msg_011Cd6gdWqN9oHSSz2JXDnoq", model: "claude-sonnet-4-5-20250929", requestID: "req_011Cd6gdNK9czxiwpU5vtTpu",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage:         usageOf(176, 12, 0, 0, 0),
			requestsLimit: 10000, tokensLimit: 12000000, tokensReset: time.Date(2026, 7, 17, 0, 29, 11, 0, time.UTC),
			extended: lcgRateLimit(map[string]string{"service_tier": `"standard"`, "usage_details": `{"inference_geo":"not_available"}`},
				"10000000", "10000000", "2026-07-17T00:29:11Z", "2000000", "2000000", "2026-07-17T00:29:11Z"),
		}, 9995, 12000000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, "testdata/"+tc.name+".http")
			res, err := newTestProvider(t, srv.URL).Generate(context.Background(), tc.req(t))
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			checkLLMWant(t, "unary", res.Message, res.Meta, tc.want)
			if rl := res.Meta.GetRateLimit(); rl.GetRequestsRemaining() != tc.requestsRemaining || rl.GetTokensRemaining() != tc.tokensRemaining {
				t.Errorf("remaining requests %d tokens %d, want %d %d", rl.GetRequestsRemaining(), rl.GetTokensRemaining(), tc.requestsRemaining, tc.tokensRemaining)
			}
			providertest.Golden(t, "testdata/"+tc.name+".golden", renderResult(t, res))
			providertest.Golden(t, "testdata/"+tc.name+".request.golden", providertest.RequestGolden(srv.Last(t), requestHeaders...))
		})
	}
}

func TestLangchaingoStream(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		want llmWant
		// deltas is how many argument deltas each call gets, in order
		// (the recorded input_json_delta events, the empty ones left out).
		deltas []int
	}{
		// claude-sonnet-4-5 thinking then answering, padded JSON (spaces
		// before the closing brace of most events), a ping inside the
		// thinking block, a last empty thinking_delta, one
		// signature_delta; message_delta repeats the input counts.
		{"real_lcg_text_response_with_thinking_streaming", llmWant{
			parts: []*llmrelayv1.Part{
				reasoningPart(&llmrelayv1.Reasoning{
					Text: "This is a simple addition problem. Let me think through it step by step.\n\n5 + 3\n\nI need to add 3 to 5.\n\n" +
						"Starting with 5, I add 3:\n5 + 1 = 6\n6 + 1 = 7\n7 + 1 = 8\n\nSo 5 + 3 = 8",
					Signature: lcgStreamSig,
				}),
				text("# Adding 5 + 3\n\nLet me work through this step by step:\n\n**Step 1:** Start with the first number: **5**\n\n" +
					"**Step 2:** Add the second number: **3**\n\n**Step 3:** Count up from 5, three times:\n- 5 + 1 = 6\n- 6 + 1 = 7\n- 7 + 1 = 8\n\n" +
					"**Answer: 5 + 3 = 8**"),
			},
			responseID: "msg_015p8Cc5938XnHxgs9GKuBm5", model: "claude-sonnet-4-5-20250929", requestID: "req_011CXWs7iSL6Vha7gUysrcfv",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage:         usageOf(50, 211, 0, 0, 0),
			requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2026, 1, 26, 23, 34, 10, 0, time.UTC),
			extended: lcgRateLimit(map[string]string{"service_tier": `"standard"`},
				"2000000", "2000000", "2026-01-26T23:34:10Z", "400000", "400000", "2026-01-26T23:34:10Z"),
		}, nil},
		// claude-sonnet-4-5: text, then two parallel tool_use blocks with
		// caller {type: direct}: calculateTip's arguments in seven pieces
		// after an empty one (split inside keys), getWaiterName with only
		// an empty input_json_delta (no arguments: {}); inference_geo in
		// message_start's usage.
		{"real_lcg_generate_content_with_tool_and_streaming", llmWant{
			parts: []*llmrelayv1.Part{
				text("I'll calculate the tip and get the waiter's name for you."),
				toolCallValid("toolu_01UhMrWkCgWyQ9rMPESVvW7Q", "calculateTip", `{"billAmount": 50, "tipPercentage": 15}`),
				toolCallValid("toolu_01TegCH28tEiPxz2ecyuYFh9", "getWaiterName", "{}"),
			},
			responseID: "msg_011DarQorWnnFyLE4phPP6KE", model: "claude-sonnet-4-5-20250929", requestID: "req_011CYuapvA1BFxD4EFJ8wx3f",
			finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
			usage:         usageOf(679, 111, 0, 0, 0),
			requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2026, 3, 10, 14, 48, 40, 0, time.UTC),
			extended: lcgRateLimit(map[string]string{"service_tier": `"standard"`, "usage_details": `{"inference_geo":"not_available"}`},
				"2000000", "2000000", "2026-03-10T14:48:40Z", "400000", "400000", "2026-03-10T14:48:40Z"),
		}, []int{7, 1}}, // getWaiterName's one delta is the "{}" the adapter gives a call without arguments
		// claude-sonnet-4-5 with cache_control on the tools and the last
		// turn, three turns of one conversation. First: a tool_use (no
		// text), 1881 tokens written to the 5-minute cache, 3 uncached;
		// message_delta repeats the counts without the 5m/1h split.
		{"real_lcg_tool_results_caching_streaming_1", llmWant{
			parts:      []*llmrelayv1.Part{toolCallValid("toolu_017gFQvN2ViSK2BLwq8bwwhc", "get_weather", `{"location": "Paris, France"}`)},
			responseID: "msg_01FSzqDYDTPLK3UNG2tMpcGg", model: "claude-sonnet-4-5-20250929", requestID: "req_011CXYS9Aaptbk1qKCgCcgbv",
			finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
			usage:         usageOf(3, 55, 0, 1881, 0),
			requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2026, 1, 27, 19, 27, 50, 0, time.UTC),
			extended: lcgRateLimit(map[string]string{"service_tier": `"standard"`,
				"usage_details": `{"cache_creation.ephemeral_5m_input_tokens":1881}`},
				"2000000", "1999000", "2026-01-27T19:27:50Z", "400000", "400000", "2026-01-27T19:27:50Z"),
		}, []int{4}},
		// After the tool result: text with °, 1881 read, 72 written, 6
		// uncached.
		{"real_lcg_tool_results_caching_streaming_2", llmWant{
			parts:      []*llmrelayv1.Part{text("The current weather in Paris, France is sunny with a temperature of 22°C (approximately 72°F).")},
			responseID: "msg_01MTrWMuLwJ1QQWm3Y9hNQCq", model: "claude-sonnet-4-5-20250929", requestID: "req_011CXYS9LSQSgfPDS5DbEQsK",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage:         usageOf(6, 27, 1881, 72, 0),
			requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2026, 1, 27, 19, 27, 53, 0, time.UTC),
			extended: lcgRateLimit(map[string]string{"service_tier": `"standard"`,
				"usage_details": `{"cache_creation.ephemeral_5m_input_tokens":72}`},
				"2000000", "1999000", "2026-01-27T19:27:53Z", "400000", "400000", "2026-01-27T19:27:53Z"),
		}, nil},
		// "What about London?": a tool_use again, 1953 read, 37 written.
		{"real_lcg_tool_results_caching_streaming_3", llmWant{
			parts:      []*llmrelayv1.Part{toolCallValid("toolu_019DHu8vHnnTfwnzfCP6RnN9", "get_weather", `{"location": "London, UK"}`)},
			responseID: "msg_01Uwq8F8Di4KkeQDfBGnjeKk", model: "claude-sonnet-4-5-20250929", requestID: "req_011CXYS9WMDK7jsw3vXaGYrm",
			finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, providerStop: "tool_use",
			usage:         usageOf(3, 55, 1953, 37, 0),
			requestsLimit: 4000, tokensLimit: 2400000, tokensReset: time.Date(2026, 1, 27, 19, 27, 55, 0, time.UTC),
			extended: lcgRateLimit(map[string]string{"service_tier": `"standard"`,
				"usage_details": `{"cache_creation.ephemeral_5m_input_tokens":37}`},
				"2000000", "1999000", "2026-01-27T19:27:55Z", "400000", "400000", "2026-01-27T19:27:55Z"),
		}, []int{4}},
		// claude-3-opus (August 2025) through langchaingo's client: "id"
		// before "model" in message_start, a ping between text deltas,
		// only request-id (no rate-limit headers) and Via: 1.1 google.
		{"real_lcg_client_create_message_stream", llmWant{
			parts:      []*llmrelayv1.Part{text("1\n2\n3\n4\n5")},
			responseID: "msg_01Ju7oPaDmjgrhWq8gNP4AUj", model: "claude-3-opus-20240229", requestID: "req_011CSFCEDW38yAyCenJvnwn8",
			finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, providerStop: "end_turn",
			usage:    usageOf(15, 13, 0, 0, 0),
			extended: map[string]string{"service_tier": `"standard"`},
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.ReplayFile(t, "testdata/"+tc.name+".http")
			s, err := newTestProvider(t, srv.URL).Stream(context.Background(), plainRequest())
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			evs, err := collect(s)
			if err != nil {
				t.Fatalf("stream error: %v", err)
			}
			f := foldEvents(t, evs)
			checkLLMWant(t, "streamed", f.message, f.meta, tc.want)
			if got := accumulate(t, evs); !proto.Equal(got, f.message) {
				t.Errorf("accumulator message\n got %v\nwant %v", got, f.message)
			}
			var deltas []int
			for _, ev := range evs {
				if ev.Kind != provider.EventToolCall || ev.ToolCall.Arguments == "" {
					continue
				}
				i := ev.ToolCall.Index
				for len(deltas) <= i {
					deltas = append(deltas, 0)
				}
				deltas[i]++
			}
			if !equalInts(deltas, tc.deltas) {
				t.Errorf("argument deltas per call %v, want %v", deltas, tc.deltas)
			}
			providertest.Golden(t, "testdata/"+tc.name+".golden", renderEvents(t, evs, err))
			providertest.Golden(t, "testdata/"+tc.name+".request.golden", providertest.RequestGolden(srv.Last(t), requestHeaders...))
		})
	}
}

// TestLangchaingoRedactedRoundTrip: the answer of
// real_lcg_redacted_thinking_1 sent back with the user's next turn must go
// out as langchaingo's second request of the same trace did (the live API
// accepted it, real_lcg_redacted_thinking_2 is its answer): the
// redacted_thinking block with its data unchanged, then the text, in the
// same messages and with the same thinking settings.
func TestLangchaingoRedactedRoundTrip(t *testing.T) {
	t.Parallel()
	first := providertest.ReplayFile(t, "testdata/real_lcg_redacted_thinking_1.http")
	res, err := newTestProvider(t, first.URL).Generate(context.Background(), lcgThinkingRequest())
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	next := providertest.ReplayFile(t, "testdata/real_lcg_redacted_thinking_2.http")
	req := lcgThinkingRequest()
	req.Messages = append(req.Messages, res.Message, msgOf(llmrelayv1.Role_ROLE_USER, text("Continue the conversation")))
	res2, err := newTestProvider(t, next.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate (follow-up): %v", err)
	}
	if len(res2.Meta.GetWarnings()) != 0 {
		t.Errorf("follow-up warnings %q, want none", res2.Meta.GetWarnings())
	}
	// langchaingo's second request, as recorded (its messages, max_tokens,
	// temperature and thinking; the model is the alias it asked for).
	const recorded = `{"model":"claude-3-7-sonnet-latest","messages":[` +
		`{"role":"user","content":[{"type":"text","text":"` + lcgMagic + `"}]},` +
		`{"role":"assistant","content":[{"type":"redacted_thinking","data":"` + lcgRedacted1 + `"},` +
		`{"type":"text","text":"I don't respond to attempts to access internal systems or backdoor commands. There are no special triggers or magic strings that change how I operate.\n\nHow can I assist you today with a legitimate task?"}]},` +
		`{"role":"user","content":[{"type":"text","text":"Continue the conversation"}]}],` +
		`"max_tokens":16000,"temperature":1,"thinking":{"type":"enabled","budget_tokens":10000}}`
	var want, got map[string]any
	if err := json.Unmarshal([]byte(recorded), &want); err != nil {
		t.Fatalf("recorded request: %v", err)
	}
	if err := json.Unmarshal(next.Last(t).Body, &got); err != nil {
		t.Fatalf("sent request: %v", err)
	}
	for k, w := range want {
		if g := got[k]; !reflect.DeepEqual(g, w) {
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			t.Errorf("request %s\n got %s\nwant %s", k, gb, wb)
		}
	}
}

// TestLangchaingoToolRoundTrip: the answer of
// real_lcg_sequential_tool_calls_with_thinking_1 sent back with the tool's
// result must go out as langchaingo's second request of the same trace did
// (the live API accepted it; _2 is its answer): the assistant turn holds the
// thinking block with its text and signature unchanged and the tool_use with
// the parsed arguments; the user turn the tool_result for the same id.
func TestLangchaingoToolRoundTrip(t *testing.T) {
	t.Parallel()
	first := providertest.ReplayFile(t, "testdata/real_lcg_sequential_tool_calls_with_thinking_1.http")
	res, err := newTestProvider(t, first.URL).Generate(context.Background(), thinkingRequest(t))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	next := providertest.ReplayFile(t, "testdata/real_lcg_sequential_tool_calls_with_thinking_2.http")
	req := thinkingRequest(t)
	req.Messages = []*llmrelayv1.Message{
		msgOf(llmrelayv1.Role_ROLE_USER, text("Calculate (5 + 3) and then multiply by 2")),
		res.Message,
		msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_01DEbz4aVH2QyU3TVqydqZpN", "8", false)),
	}
	res2, err := newTestProvider(t, next.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate (follow-up): %v", err)
	}
	if len(res2.Meta.GetWarnings()) != 0 {
		t.Errorf("follow-up warnings %q, want none", res2.Meta.GetWarnings())
	}
	// langchaingo's second request's messages, as recorded.
	recorded := `[{"role":"user","content":[{"type":"text","text":"Calculate (5 + 3) and then multiply by 2"}]},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":` + jsonQuote(t, lcgSeqThinking1) + `,"signature":"` + lcgSeqSig1 + `"},` +
		`{"type":"tool_use","id":"toolu_01DEbz4aVH2QyU3TVqydqZpN","name":"calculate","input":{"expression":"(5 + 3) * 2"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01DEbz4aVH2QyU3TVqydqZpN","content":"8"}]}]`
	var want []map[string]any
	if err := json.Unmarshal([]byte(recorded), &want); err != nil {
		t.Fatalf("recorded messages: %v", err)
	}
	var sent struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(next.Last(t).Body, &sent); err != nil {
		t.Fatalf("sent request: %v", err)
	}
	if !reflect.DeepEqual(sent.Messages, want) {
		gb, _ := json.Marshal(sent.Messages)
		t.Errorf("messages\n got %s\nwant %s", gb, recorded)
	}
}

func jsonQuote(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lcgStream replays one streamed recording for req and returns the
// answer and the request the adapter sent.
func lcgStream(t *testing.T, name string, req *provider.Request) (*llmrelayv1.Message, []byte) {
	t.Helper()
	srv := providertest.ReplayFile(t, "testdata/"+name+".http")
	s, err := newTestProvider(t, srv.URL).Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: Stream: %v", name, err)
	}
	evs, err := collect(s)
	if err != nil {
		t.Fatalf("%s: stream error: %v", name, err)
	}
	f := foldEvents(t, evs)
	if len(f.meta.GetWarnings()) != 0 {
		t.Errorf("%s: warnings %q, want none", name, f.meta.GetWarnings())
	}
	return f.message, srv.Last(t).Body
}

// TestLangchaingoStreamRoundTrip: the three streamed turns of
// TestAnthropic_ToolResultsCachingStreaming. Each answer, sent back with the
// tool result or the next user turn, must give the messages langchaingo sent
// next, which the live API accepted (its answers are _2 and _3). langchaingo
// marks the last block of each request with cache_control; the gateway sets
// no cache breakpoint in these messages, so the recorded cache_control keys
// are left out of the comparison.
func TestLangchaingoStreamRoundTrip(t *testing.T) {
	t.Parallel()
	req := func(msgs ...*llmrelayv1.Message) *provider.Request {
		r := plainRequest()
		r.Messages = msgs
		return r
	}
	user := msgOf(llmrelayv1.Role_ROLE_USER, text("What's the weather in Paris?"))
	first, _ := lcgStream(t, "real_lcg_tool_results_caching_streaming_1", req(user))
	result := msgOf(llmrelayv1.Role_ROLE_TOOL, toolResultPart("toolu_017gFQvN2ViSK2BLwq8bwwhc", "Sunny, 22°C", false))
	second, sent2 := lcgStream(t, "real_lcg_tool_results_caching_streaming_2", req(user, first, result))
	const turns2 = `[{"role":"user","content":[{"type":"text","text":"What's the weather in Paris?"}]},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_017gFQvN2ViSK2BLwq8bwwhc","name":"get_weather","input":{"location":"Paris, France"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_017gFQvN2ViSK2BLwq8bwwhc","content":"Sunny, 22°C","cache_control":{"type":"ephemeral","ttl":"5m"}}]}]`
	lcgSameMessages(t, "second request", sent2, turns2)

	london := msgOf(llmrelayv1.Role_ROLE_USER, text("What about London?"))
	_, sent3 := lcgStream(t, "real_lcg_tool_results_caching_streaming_3", req(user, first, result, second, london))
	const turns3 = `[{"role":"user","content":[{"type":"text","text":"What's the weather in Paris?"}]},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_017gFQvN2ViSK2BLwq8bwwhc","name":"get_weather","input":{"location":"Paris, France"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_017gFQvN2ViSK2BLwq8bwwhc","content":"Sunny, 22°C"}]},` +
		`{"role":"assistant","content":[{"type":"text","text":"The current weather in Paris, France is sunny with a temperature of 22°C (approximately 72°F)."}]},` +
		`{"role":"user","content":[{"type":"text","text":"What about London?","cache_control":{"type":"ephemeral","ttl":"5m"}}]}]`
	lcgSameMessages(t, "third request", sent3, turns3)
}

// lcgSameMessages compares the messages of a sent request body with
// recorded ones, without the recorded blocks' cache_control.
func lcgSameMessages(t *testing.T, what string, body []byte, recorded string) {
	t.Helper()
	var want []map[string]any
	if err := json.Unmarshal([]byte(recorded), &want); err != nil {
		t.Fatalf("%s: recorded messages: %v", what, err)
	}
	for _, m := range want {
		for _, b := range m["content"].([]any) {
			delete(b.(map[string]any), "cache_control")
		}
	}
	var sent struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatalf("%s: sent request: %v", what, err)
	}
	if !reflect.DeepEqual(sent.Messages, want) {
		gb, _ := json.Marshal(sent.Messages)
		wb, _ := json.Marshal(want)
		t.Errorf("%s: messages\n got %s\nwant %s", what, gb, wb)
	}
}

// TestLangchaingoRateLimitError: a real 429 rate_limit_error (too many
// concurrent connections) with no retry-after and no anthropic-ratelimit-*
// headers, x-should-retry: true; the request id from the header (the body
// has none). Unary and streamed alike (an error status returns no stream).
func TestLangchaingoRateLimitError(t *testing.T) {
	t.Parallel()
	const msg = "Number of concurrent connections has exceeded your rate limit. Please try again later or contact sales at " +
		"https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase."
	for _, streaming := range []bool{false, true} {
		srv := providertest.ReplayFile(t, "testdata/real_lcg_client_beta_header_429.http")
		p := newTestProvider(t, srv.URL)
		var err error
		if streaming {
			var s provider.Stream
			s, err = p.Stream(context.Background(), plainRequest())
			if s != nil {
				t.Fatal("Stream returned a stream with an error status")
			}
		} else {
			_, err = p.Generate(context.Background(), plainRequest())
		}
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("stream=%v: error %T %v is not a *provider.Error", streaming, err, err)
		}
		if pe.Kind != provider.KindRateLimited || pe.HTTPStatus != 429 || pe.Code != "rate_limit_error" || pe.RetryAfter != 0 ||
			pe.ShouldRetry != provider.RetryAdvised || pe.RequestID != "req_011CPg15DzD4eqU5RwJ2ReXS" || pe.Message != msg {
			t.Errorf("stream=%v: got kind=%v status=%d code=%q retry=%v advice=%v rid=%q msg=%q", streaming,
				pe.Kind, pe.HTTPStatus, pe.Code, pe.RetryAfter, pe.ShouldRetry, pe.RequestID, pe.Message)
		}
		if pe.Meta.GetProviderRequestId() != "req_011CPg15DzD4eqU5RwJ2ReXS" || pe.Meta.GetRateLimit() != nil {
			t.Errorf("stream=%v: meta %v, want the request id and no rate limit", streaming, pe.Meta)
		}
	}
}

// lcgStructuredRequest is langchaingo's StructuredOutputRealAPI object
// case: the capital question with a JSON schema, answered natively.
func lcgStructuredRequest() *provider.Request {
	return &provider.Request{
		Model: "claude-sonnet-4-5", NativeStructuredOutput: true,
		Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("What is the capital of France?"))},
		Options: &llmrelayv1.GenerationOptions{MaxTokens: ptr[int32](256), ResponseFormat: &llmrelayv1.ResponseFormat{
			Type:   llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA,
			Schema: `{"type":"object","properties":{"country":{"type":"string"},"capital":{"type":"string"}},"required":["country","capital"],"additionalProperties":false}`,
		}},
	}
}

// TestLangchaingoStructuredRequest: the request for
// real_lcg_structured_output_object_schema is the one the live API
// answered: its model, messages, max_tokens and output_config as recorded,
// and no tools (the native way, no forced answer tool).
func TestLangchaingoStructuredRequest(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, "testdata/real_lcg_structured_output_object_schema.http")
	if _, err := newTestProvider(t, srv.URL).Generate(context.Background(), lcgStructuredRequest()); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	const recorded = `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":[{"type":"text","text":"What is the capital of France?"}]}],` +
		`"max_tokens":256,"output_config":{"format":{"type":"json_schema","schema":{"type":"object","properties":{"country":{"type":"string"},"capital":{"type":"string"}},"required":["country","capital"],"additionalProperties":false}}}}`
	var want, got map[string]any
	if err := json.Unmarshal([]byte(recorded), &want); err != nil {
		t.Fatalf("recorded request: %v", err)
	}
	if err := json.Unmarshal(srv.Last(t).Body, &got); err != nil {
		t.Fatalf("sent request: %v", err)
	}
	for k, w := range want {
		if g := got[k]; !reflect.DeepEqual(g, w) {
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			t.Errorf("request %s\n got %s\nwant %s", k, gb, wb)
		}
	}
	for _, k := range []string{"tools", "tool_choice", "thinking"} {
		if _, ok := got[k]; ok {
			t.Errorf("request has %s: %s", k, srv.Last(t).Body)
		}
	}
}

// TestAdaptiveThinkingRequest: reasoning_effort asks Claude 4.6 and later
// for adaptive thinking at that effort, with its summary shown, as the
// request langchaingo recorded against claude-opus-5, which the live API
// answered (real_lcg_opus5_adaptive_reasoning); minimal maps to low, NONE
// disables thinking (on by default from Claude 5), and native structured
// output shares output_config.
func TestAdaptiveThinkingRequest(t *testing.T) {
	t.Parallel()
	srv := providertest.ReplayFile(t, "testdata/real_lcg_opus5_adaptive_reasoning.http")
	req := &provider.Request{Model: "claude-opus-5", Messages: []*llmrelayv1.Message{msgOf(llmrelayv1.Role_ROLE_USER, text("Solve: If x + 5 = 12, what is x?"))},
		Options: &llmrelayv1.GenerationOptions{MaxTokens: ptr[int32](4096), ReasoningEffort: llmrelayv1.ReasoningEffort_REASONING_EFFORT_HIGH}}
	res, err := newTestProvider(t, srv.URL).Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if r := res.Message.GetParts()[0].GetReasoning(); r.GetText() != "I'm setting x to 7." || r.GetSignature() == "" {
		t.Errorf("reasoning %v", r)
	}
	const recorded = `{"model":"claude-opus-5","messages":[{"role":"user","content":[{"type":"text","text":"Solve: If x + 5 = 12, what is x?"}]}],` +
		`"max_tokens":4096,"thinking":{"type":"adaptive","display":"summarized"},"output_config":{"effort":"high"}}`
	var want, got map[string]any
	if err := json.Unmarshal([]byte(recorded), &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(srv.Last(t).Body, &got); err != nil {
		t.Fatal(err)
	}
	for k, w := range want {
		if g := got[k]; !reflect.DeepEqual(g, w) {
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			t.Errorf("request %s\n got %s\nwant %s", k, gb, wb)
		}
	}

	for effort, want := range map[llmrelayv1.ReasoningEffort]string{
		llmrelayv1.ReasoningEffort_REASONING_EFFORT_MINIMAL: `"output_config":{"effort":"low"}`,
		llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW:     `"output_config":{"effort":"low"}`,
		llmrelayv1.ReasoningEffort_REASONING_EFFORT_MEDIUM:  `"output_config":{"effort":"medium"}`,
		llmrelayv1.ReasoningEffort_REASONING_EFFORT_NONE:    ``,
	} {
		r := &provider.Request{Model: "claude-sonnet-5", Messages: req.Messages, Options: &llmrelayv1.GenerationOptions{ReasoningEffort: effort}}
		m, _, _, err := build(t, r)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(m)
		if want == "" {
			// Claude 5 thinks by default: NONE disables it.
			if !strings.Contains(string(body), `"thinking":{"type":"disabled"}`) || strings.Contains(string(body), "output_config") {
				t.Errorf("%v: %s", effort, body)
			}
			continue
		}
		if !strings.Contains(string(body), want) || !strings.Contains(string(body), `"thinking":{"display":"summarized","type":"adaptive"}`) {
			t.Errorf("%v: %s", effort, body)
		}
	}

	// Native structured output and an effort share output_config (on a
	// model that takes an effort: Sonnet 4.5 thinks with a budget).
	r := lcgStructuredRequest()
	r.Model = "claude-opus-4-6"
	r.Options.ReasoningEffort = llmrelayv1.ReasoningEffort_REASONING_EFFORT_LOW
	m, _, _, err := build(t, r)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(m)
	var sent struct {
		OutputConfig struct {
			Effort string          `json:"effort"`
			Format json.RawMessage `json:"format"`
		} `json:"output_config"`
	}
	if err := json.Unmarshal(body, &sent); err != nil || sent.OutputConfig.Effort != "low" || len(sent.OutputConfig.Format) == 0 {
		t.Errorf("output_config of structured output with an effort: %s", body)
	}
}
