package gemini

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// Round 21d: pydantic-ai's large Gemini recordings, transcribed page by
// page and checked against what the API sent (testdata/README.md, "Round
// 21d"). Every expectation is read off the recording by hand.

func init() {
	round17Recordings = append(round17Recordings, "real_pyd_google_model_thinking_part_1", "real_pyd_google_model_thinking_part_2",
		"real_pyd_google_tool_call_id_wire_format_tool_return", "real_pyd_google_strict_tools_use_validated_mode_1",
		"real_pyd_google_strict_tools_use_validated_mode_2", "real_pyd_google_strict_tools_use_validated_mode_3",
		"real_pyd_google_native_output_with_builtin_tools_gemini_3_1", "real_pyd_google_model_web_search_tool",
		"real_pyd_google_model_file_search_grounding_gemini_3_true_stream", "real_pyd_google_model_thinking_part_from_other_model",
		"real_pyd_google_tool_call_id_wire_format_retry_prompt", "real_pyd_google_model_web_fetch_tool_true",
		"real_pyd_google_search", "real_pyd_google_builtin_tools_with_other_tools",
		"real_pyd_google_model_maps_tool_with_location", "real_pyd_google_model_thinking_config",
		"real_pyd_google_model_stream", "real_pyd_google_model_structured_output_1",
		"real_pyd_google_model_structured_output_2", "real_pyd_google_prompted_output_with_tools_1", "real_pyd_google_prompted_output_with_tools_2",
		"real_pyd_google_model_top_p", "real_pyd_google_native_output_multiple")
}

// r21dCrossing is pydantic-ai's thinking-part request: a system prompt, the
// turns, a do-nothing tool (dummy, no parameters), thoughts asked for
// (include_thoughts) and TEXT output (through extra_body).
func r21dCrossing(turns ...*llmrelayv1.Message) *provider.Request {
	req := r21User("gemini-3-pro-preview", "You are a helpful assistant.", turns...)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{{Name: "dummy", Parameters: `{"additionalProperties":false,"properties":{},"type":"object"}`}}
	yes := true
	req.ProviderOptions = &llmrelayv1.ProviderOptions{
		Provider:  &llmrelayv1.ProviderOptions_Gemini{Gemini: &llmrelayv1.GeminiOptions{IncludeThoughts: &yes}},
		ExtraBody: `{"generationConfig":{"responseModalities":["TEXT"]}}`,
	}
	return req
}

// r21dCrossingRequest is the request pydantic-ai sent with these contents,
// as we spell it: includeThoughts and parametersJsonSchema in camelCase
// (pydantic-ai's SDK wrote include_thoughts and parameters_json_schema; the
// API reads both), no role on the system instruction, and no description
// for a tool that has none (pydantic-ai sent "description": "", the same
// to the API).
func r21dCrossingRequest(contents string) string {
	return `{"contents":` + contents + `,"generationConfig":{"responseModalities":["TEXT"],"thinkingConfig":{"includeThoughts":true}},` +
		`"systemInstruction":{"parts":[{"text":"You are a helpful assistant."}]},` +
		`"tools":[{"functionDeclarations":[{"name":"dummy","parametersJsonSchema":{"additionalProperties":false,"properties":{},"type":"object"}}]}]}`
}

// TestRound21dThinkingPart: gemini-3-pro-preview (November 2025), unary,
// with thoughts included, two turns.
//
// Turn 1: a thought summary (thought: true, 2.4 KB ending in three line
// breaks) with no signature, then the answer as one text part carrying
// the thoughtSignature (3.9 KB of base64; its protobuf length prefix is
// the rest of the decoded bytes, so the transcription is whole). A
// reasoning part with the summary, the text, then a signature-only
// reasoning part (the text part's signature). STOP; 29 prompt tokens (29
// TEXT by modality), 736 candidates + 1001 thought tokens, 1766 total.
//
// Turn 2: the answer sent back with "Considering the way to cross the
// street, analogously, how do I cross the river?": pydantic-ai's request,
// which the API answered, holds the thought part (thought: true, its text)
// and the text part with the signature, as ours does (pydantic-ai
// re-encoded the signature URL-safe; ours is the standard base64 the API
// sent, the same bytes). The answer has the same shape: 1280 prompt
// tokens, 958 + 1115 thought tokens, 3353 total.
func TestRound21dThinkingPart(t *testing.T) {
	t.Parallel()
	const (
		q1 = "How do I cross the street?"
		q2 = "Considering the way to cross the street, analogously, how do I cross the river?"
	)
	res1, srv1 := r21Unary(t, "real_pyd_google_model_thinking_part_1", r21dCrossing(msg(llmrelayv1.Role_ROLE_USER, text(q1))))
	parts1 := r21RecordedCandidate(t, "real_pyd_google_model_thinking_part_1")["content"].(map[string]any)["parts"].([]any)
	thought1, answer1 := parts1[0].(map[string]any), parts1[1].(map[string]any)
	sig1, _ := answer1["thoughtSignature"].(string)
	if thought1["thought"] != true || !strings.HasPrefix(thought1["text"].(string), "**A Safe Street-Crossing Guide: My Thought Process**\n\nAlright, let's break this down.") ||
		!strings.HasSuffix(thought1["text"].(string), "Then, I'm ready to produce the final response.\n\n\n") ||
		!strings.HasPrefix(answer1["text"].(string), "Crossing the street safely is a fundamental skill") ||
		!strings.HasSuffix(answer1["text"].(string), "They may be looking at traffic lights rather than looking for you.") ||
		!strings.HasPrefix(sig1, "EqoeCqceAdHtim+cXhv3WM3Av2yB") || !strings.HasSuffix(sig1, "yUusnfFk5ItIF/D") {
		t.Fatalf("recorded parts %v", parts1)
	}
	want1 := msg(llmrelayv1.Role_ROLE_ASSISTANT,
		reasoningPart(&llmrelayv1.Reasoning{Text: thought1["text"].(string)}),
		text(answer1["text"].(string)),
		reasoningPart(&llmrelayv1.Reasoning{Signature: sig1}))
	if !proto.Equal(res1.Message, want1) {
		t.Errorf("turn 1 message\n got %v\nwant %v", res1.Message, want1)
	}
	r21Meta(t, res1.Meta, "ON4gaYT4Gc20qtsP2bSiiQ0", "gemini-3-pro-preview", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 29, OutputTokens: 1737, TotalTokens: 1766, ReasoningTokens: 1001})
	if got := r21Ext(t, res1.Meta, "usage_details"); got != `{"promptTokensDetails.TEXT":29}` {
		t.Errorf("turn 1 usage details %s", got)
	}
	if len(res1.Meta.GetWarnings()) != 0 {
		t.Errorf("turn 1 warnings %q", res1.Meta.GetWarnings())
	}
	const user1 = `{"parts":[{"text":"` + q1 + `"}],"role":"user"}`
	r21SameRequest(t, srv1, "/v1beta/models/gemini-3-pro-preview:generateContent", r21dCrossingRequest(`[`+user1+`]`))

	res2, srv2 := r21Unary(t, "real_pyd_google_model_thinking_part_2",
		r21dCrossing(msg(llmrelayv1.Role_ROLE_USER, text(q1)), res1.Message, msg(llmrelayv1.Role_ROLE_USER, text(q2))))
	sent := r17JSON(t, srv2.Last(t).Body)
	contents, _ := sent["contents"].([]any)
	if len(contents) != 3 {
		t.Fatalf("contents %v", contents)
	}
	model, _ := contents[1].(map[string]any)
	mparts, _ := model["parts"].([]any)
	if len(mparts) != 2 {
		t.Fatalf("model turn %v", model)
	}
	r21SameSignature(t, mparts[1].(map[string]any)["thoughtSignature"].(string), r21dRecordedSignature(t))
	recordedTurn := `{"parts":[{"text":` + r21dQuote(t, thought1["text"].(string)) + `,"thought":true},{"text":` + r21dQuote(t, answer1["text"].(string)) +
		`,"thoughtSignature":"` + sig1 + `"}],"role":"model"}`
	r21SameRequest(t, srv2, "/v1beta/models/gemini-3-pro-preview:generateContent",
		r21dCrossingRequest(`[`+user1+`,`+recordedTurn+`,{"parts":[{"text":"`+q2+`"}],"role":"user"}]`))

	parts2 := r21RecordedCandidate(t, "real_pyd_google_model_thinking_part_2")["content"].(map[string]any)["parts"].([]any)
	thought2, answer2 := parts2[0].(map[string]any), parts2[1].(map[string]any)
	sig2, _ := answer2["thoughtSignature"].(string)
	if thought2["thought"] != true || !strings.HasPrefix(thought2["text"].(string), "**Navigating Nature's Road: Thinking Through River Crossing**\n\n") ||
		!strings.HasSuffix(thought2["text"].(string), "With those thoughts, I can now move to production.\n\n\n") ||
		!strings.HasPrefix(answer2["text"].(string), "Crossing a river is deceptively similar to crossing a street") ||
		!strings.HasSuffix(answer2["text"].(string), "The strongest person should be upstream to break the current for the others (like a crossing guard).") ||
		!strings.HasPrefix(sig2, "EschCsQhAdHtim8jB36dDPs8") || !strings.HasSuffix(sig2, "aUFx+z0/I=") {
		t.Fatalf("recorded parts %v", parts2)
	}
	want2 := msg(llmrelayv1.Role_ROLE_ASSISTANT,
		reasoningPart(&llmrelayv1.Reasoning{Text: thought2["text"].(string)}),
		text(answer2["text"].(string)),
		reasoningPart(&llmrelayv1.Reasoning{Signature: sig2}))
	if !proto.Equal(res2.Message, want2) {
		t.Errorf("turn 2 message\n got %v\nwant %v", res2.Message, want2)
	}
	r21Meta(t, res2.Meta, "UN4gafq5OY-kmtkPwqS6kAs", "gemini-3-pro-preview", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 1280, OutputTokens: 2073, TotalTokens: 3353, ReasoningTokens: 1115})
	if got := r21Ext(t, res2.Meta, "usage_details"); got != `{"promptTokensDetails.TEXT":1280}` {
		t.Errorf("turn 2 usage details %s", got)
	}
}

// r21dRecordedSignature is the signature pydantic-ai sent back in the
// second request, as the cassette recorded it (URL-safe base64).
func r21dRecordedSignature(t *testing.T) string {
	t.Helper()
	return "EqoeCqceAdHtim-cXhv3WM3Av2yBDu1t4su_bUCXEv2uoKmDxRFXBZaAr6vqPBbKwPmwyqPna9syVALkAlc5-NojqP1zI_ndCn_GrZRPvVxS3YASLJ9LNq0k19xCz6PEauRu3bnJ0hbmmfmC0CsDE8iQ6btxFq4LUKA3s1hKDKsv_uAyztYwO8auDFQp12A8Dqojzs4t0O1ZPggjKSM4W9fa-wbNQMWbZohdVquwHfH-RK0mu2lbi0Ubs8uB3FRSbNVqsP1MZTMUh8iyP6hgGNlaEsuCtMVrOejQEZjPCp-tFFM7DJZigXvx4FP91KJVgDtZLWcgzEfqB0UxXqdWtTBqWcA84PrPqINqqTJLpJEY_1QJrKDsTn5WT4NkMwKY6Ir0MmxK5AxJVCUSt-qNj207hB2YLCnr0DKfs_gQEwQH2y-faPtYltshY6hbLK8sgKN61ZAqTSeXJu-rbuuCC-nKq_2D2ziJZT5FP2m_n4bT13WvnPyN6_CUEkeSoEz89v5LKJrkr7WThWburYT_bAJ-2D8UzxpT1bwM40MzrPLfyXkXdxIbxUHb7u_DSiaL-56p6MhTdq7vkO2FFnBgOwMLrJlmka8Q_QTJx4EABCdksqIGzKEHGWCu9r7zDGms928rscvybYcPkMykN5-dxOKgFrZ5sByUbkoedYvdzl_JJMw-SQbsj6HUvhJG_3UWqg1HewhkEUpPuwZrpAcSKSY63sHj3P9fLQcY9QrK_TIyTj-Jy8PIlKN29Ju5YvmSom-6lVZYYnZLPEGgsTS9m2pFPMEAh_ela18MzcPRYqVYXoxRm4IndXULXfNUWknSdCRv_OkoSYOBIhEPoPeI4JJ4KB9psWUZiugEIgc1Dmuc45bEvwAngMURlPvCVisGjsKeL2FFgw-qyw6SkBK0E7ctH00pBqt9wtGtHyI4UE3CjcQk8vUjNx7kvpP5qQI7bpLRTL7kvFaHLnsqXG9I-bEX8Zj-alna85Ll5XVoo9fBbCMvdDwTOQPy3ro1oOO6NK0lpwUeu8Dvyi88wGYQJijzFP0j1TXw-iFstiLFL-8d_Dk5JcFuvc8sfdLWaF-oExvq_edw316oyJBzxY-TokXCVNKddwqqm7IPk7ZBtvxankEpGRKkrLxN8jlOf5of0IbnqCmRYTbfikZ8ODmNJTxH8104DST83RmeQO7bKwWbLKylYLdfFjNPkzoCF9k8mmV7CVUmAmUeZJ6fEWRgCKZxxMGeZgnrT8YO4g_4Amax155Fv-xWmSzV7RH93ePRxLz2RMXoNC5wj1cYbwXBnIVtEd72M6HBa-3-mZ2cZCVvqJ5SRfkauR0ruah5lDIK1x97WmS2IPHQeXgfEPe1O79mThECwHTJU5_Al_x5tKQn1goBi1LJwpQmyOWaeiVz-yjvlj34MPKSbafRA8fquZym8ppoglZg-Aq3-j6QdelF1vs4ro-IFTg2edjdcrvAyNStjaCj5UJfeG7Y7znixJssRwNC9WB_Br8vPwEZf65pRsds_57qNhkLXO5gUN-a4pxsQocodFLwcJ4VPtanUcbICW6xX8b2IJcxx--Qbsp8eLSrmRoeANKUAAQqbVxX-sCUBn5RIQzYqLSswckhMGkGxe1hhcbP6AXI7jrK92rJSoIgAPDmnWEFUqSqbnwXkhwtB6ZwHX78h96o4QnkdghfJiNMKd9fNvpWdfi8bvkGgsuf7din3oROshqvQPwOfh1HeH-KgIJxBbUl4mS7SgNQPWGx4lVMmK5J1gb0G1-KKPWvrPkYkFfXCfpTMv04OwWsxMiyp1yFmfr_ekralHuiNgdyRrha8PBVjpQ6l7zHuR2uCodHareE2JmJFJoaMH6sHsAQyReJ-aCUL71kmBLpZcIpcGWdSmDUsTZgaMnvEw9aXs09_T7fIZkz01WB7UQqUxIZfRFgLeFfBiJKTp7gs2qAF3MZjMQO0TECvbC-1pCrBYJ6ssyz-1_kKQE6vkniZruoOp-CjA842StpgkHoTku_lExZ0_p4g0Qmme6Ch6kvc9cN0FDxPdTiIDKW_CJargOpgWRbVIMtVBLyDuaf5cWx0WZNcINPL1U-lbeHsIo1Q7F9roP8p3y49QoqWnaD17-wrXKDCVxKzr8YBI2KiYE6itnyxWgFHeNe6RFZtlQP06pjEsPD88ki-H_vZpFjvWoc6wo1Wz31uqOhXXywFMS2RoTJY-IG80yvh8D7VvqfKGfCQf-m5DhXaIX61qO4yfbS5lprxyNRthCmWK1X0uW71Bb0orfzBjoTErYisWj1kDmq9vEwIpANtoBe15MsGq_93Fdvx8Jqp59EgjKVhUAx73k_G69_DJTvx5Cq_ClNsYPiQTsCKX0iDCHV7agYHu1uQ1-c4j4KdH2-k5_kVq-IBOTwBo4AkluZU5Gm0ah7lmtze7EJ3wRqTXiuAG88GibLwX9DgHNYkP4b3OaXMLjcY61sa9sq5pJShphY_c6F6Lc0UQ031kxRFP1HY1wCDd_yGiGjfWVCb_RiTPSp_KrqtiCzaVdKFTTpwKcqPR2ciIQjByJYpRYUHGoFbo5pUWfBKXlri1KCFebHvictZfqx4WME0JeO2EUzSWJU1gKF2ypu5fNPTNB33-t8-8ocRxi0s6MfRFQqIHXeAaCAJU_L0aB5odhPRUHb-W1kFylkyzqzx3g1-ePlxqLDBAgRcYDMDsLGmhlNwAN_Ht_11tHjwRgohpbCyuGYiuWcVjgnsVG-PdeiOzgeA8SyuMZf_qYP2YUWlUZq7o0_R-_tBn-QS6rQOZ1NWTyvF7swNNAhbtyVGqPYiOifymEYvzE426eBogdAit2KqxqGpRyo-i7OAEh8K5EiHX3-9WrNVp4EPnfO7spUlkQCH33yeENlbeoYofLPGBaVwE6bWD1r1s74LpvkR-LQnmPz_beGYMnoZgWZWeJswvhOkapFdQJt4kevajCSxsLpFQqAz82rwbGDFaIhFHZaKh9htV1Xc7vJYBo4cVgW6EsX3tW7iOPxfcqo8TBkjcJ0wTFIG69TOHy5H7xi6653Rebhavq21lCHAHE8zgISqpPJfOJXmeLitq0sw9_3A_HDu5_Vlst-OUW1lZQxsjRzjQPCQSWj_HJi2OImvs06NKDlqy6vW2Z7Vp9KB4sAAD0kQ-f7_x-jobHlmSoiLJYCTkdO6zDd6vPzxNyKFvUyHjV8HCpGSuDTlPFfxWswp80NBSnC46Jpe5E8IvyO2Gnadjlv7FY18Ybc_vVNIFwBz2ovyBIosFiCUcA1_JZU9zb0X1sxcZ2BulhocXde3fBh8Pxbau1sDfyOP4BlIc0CkCgwxPWU_bDc0KBbIA5vm3edrKPemiqooZwhgiPzWPO88SyRqUgyrMxYyvUQEjrBk-z7xCGr3e7cGdot-sJHkSWPGQq4aGS6UGKglRh34fcuamu2aeOymcHAUNe83As9lnio4Vdoi7c1f_kD2XUkE1q4_MOO8RuJD9CooctX_CJETglzSYDetW4rJ1RtwGWGRZ4Hl7XmoAK4f22S47-cBKWswZ1yvokAd5XRwoqKh2WTT-VoRgMcVJnKSK4nwOhRdrTbPUlo-VkGAzJ7mhtXR7fiy4qyHmcZSfq2dB7sOQVwwt5c9MKPDzpsunv-FsATLtmAqFhsFu3VEH9hrHi0V7F4owgjhJUTFN-bMLrnho8oh0mTgBS7jnCI74gYbXhDWBKcrfsyU8ZeKYzfNyqOIkh3FQz7Nwki7nZIY_E7fIpEIgxfo0NPSC_lCM6gNv69hFimgdSIX1ZvJh0942r_w6Fzi1w3MQycSDXyL0aZa-fbbw6ao2BoV9raeW67CITA6lVlnC4FA-4JyfCIE55FGws8R0uvUCLE5aubnnadmy0yREJkpefhiW-MxVOgQKUF17JT7XIUrl9YMjZsQM9C6TK3I1h2QQbs83NdZKrTre20COtF21tBLxwSGpPGi267suMEszifFb-TAW1rlZSvBE5xKM5G3HZNZUEope5jb9Y_nozy-tFkrsW4MqXNVuTij-CzhE7c414MWuM_eALa4Rkvmc3XhpC4liIuFHW5EgpxC45jKUPw7jPanhcYx5fPNR3r8LHUwgBlFpSPZDKan-caXyxI5BhQy7oqlK6K3q-95Ff-W-deHNlwJQTHfDybz0HRVo3lolPkX7K9cvcFw-HrZ3EzB-fc__qRnRBFUHQQJ1e3BA4Rh_F6S_IXG8K4jZu0a1kpi9ZU-Cy66zCeyEqX4Bx1iDnm7ivpQLXtqvRe9c4bPb5RcSYk2qddWqS-unE6EGw92x0rJaNwDK9xsljmdMqnhMadCurOB5sJjsoxHm474480PW2p4qooSp47vkJoy1g-cQkQvpF3rxhhlonmx_bxzoPSnCTtSOejCV5WvO7eJdmyWPLph4xKmU-XA6ShyPtcSKKkoOrTWf2Zd5qnjLJ6jPelZqAHzSjK9QHgTnkqukPQdJuzhNpiX-Sbe_2prWehxaL_DjIfbUSiQ1g_b-pGjoTWQnFkFHqKOen6Y02Ndl9F5f7VCbUxFd4oLQoB_rWf6m88rc5Qt9VZxKq6zYkk0v-c3U7LLBRujl34SHbtKWgSPLl12Z1qY-jJSbdECHx-8NY372pM0cIM7Dp3NlCfdpLwRXaCZ3_23QzkExd3U5YeixucUWM4ajgA0-Nhm3XG5Xz-6-00lZFzMkarqZEryxvtfJMdtDaUbMfLcGMm881SRWVLPZjUB17IFQJJSi-GmQkS8alXjUsqi97NS6uLM8UawDzUJO4dInQEpLkj-7CxzP4EYwAIf_QcnSP9wxhO1TCFStkeAy2E-NoHC7jtSqLule-KlZOiaL20eprGHjKe7S7hbLxmV9koyuBsYIQMmmgAbZSDMgneBIMsuafqXLaQp6E5k6UvP6hZ0iWrwIhbk6PAspAwcJfb9A1LQV00tXJZsJ86aqNWleFvmIy7VtISk80pwdkXftMhD88eJJTphGC0mmRPiPPuDChmT_l7V7VHHcAaEF-FHI-ZhO4I8p9cFWdR1KH7eH-R7G5gN6bEx7LA5IuBTaav3EmkVmegOefHuzIeqmtW1FdGAU7zssYQjC1fjzN_6C9oEd3sioCeyYPgXohlR8EpXaG3EW978PaUs73TquMRkWywyj0Ch0oVnQcElN2HczWNuEmW_-z61yUusnfFk5ItIF_D"
}

// r21dQuote is s as a JSON string literal.
func r21dQuote(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRound21dForeignToolCallHistory: gemini-2.5-flash (2026), unary, a
// history whose tool call another provider made (OpenAI's id
// call_openai_xyz, no signature), its result 42, then "continue". The API
// answered pydantic-ai's request 200: one text part carrying a
// thoughtSignature, STOP, 57 prompt (TEXT) + 32 + 141 thought tokens, 230
// total. Our request holds the same turns, with the call's id on the
// functionCall and the functionResponse as recorded, and three differences
// the API takes either way: no thoughtSignature on the foreign call (only
// Gemini 3 validates the first call of a step; pydantic-ai stamps its
// skip_thought_signature_validator placeholder, base64 of the text, on
// every model), the result as {"result": "42"} (pydantic-ai wrote
// {"return_value": 42}: a tool result is text in the contract, and text
// that is not a JSON object goes as the result string) and no empty
// description.
func TestRound21dForeignToolCallHistory(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_google_tool_call_id_wire_format_tool_return"
	req := r21User("gemini-2.5-flash", "",
		msg(llmrelayv1.Role_ROLE_USER, text("What is the answer?")),
		msg(llmrelayv1.Role_ROLE_ASSISTANT, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
			CallId: "call_openai_xyz", Name: "get_answer", Arguments: "{}", ArgumentsValid: true}}}),
		msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart("call_openai_xyz", "42")),
		msg(llmrelayv1.Role_ROLE_USER, text("continue")))
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{{Name: "get_answer", Parameters: `{"additionalProperties":false,"properties":{},"type":"object"}`}}
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"generationConfig":{"responseModalities":["TEXT"]}}`}
	res, srv := r21Unary(t, name, req)
	part := r21RecordedCandidate(t, name)["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)
	sig, _ := part["thoughtSignature"].(string)
	if !strings.HasPrefix(sig, "Cr0FAb4+9vvZySfAkIcf") || !strings.HasSuffix(sig, "//x9INdhJo=") {
		t.Fatalf("recorded signature %q", sig)
	}
	want := msg(llmrelayv1.Role_ROLE_ASSISTANT,
		text("I'm sorry, I cannot provide more context without additional information. The `get_answer` function simply returns a value and does not provide further details."),
		reasoningPart(&llmrelayv1.Reasoning{Signature: sig}))
	if !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	r21Meta(t, res.Meta, "_qfgaevzGcz2juMP8pCmoAE", "gemini-2.5-flash", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 57, OutputTokens: 173, TotalTokens: 230, ReasoningTokens: 141})
	if got := r21Ext(t, res.Meta, "usage_details"); got != `{"promptTokensDetails.TEXT":57}` {
		t.Errorf("usage details %s", got)
	}
	r21SameRequest(t, srv, "/v1beta/models/gemini-2.5-flash:generateContent",
		`{"contents":[{"parts":[{"text":"What is the answer?"}],"role":"user"},`+
			`{"parts":[{"functionCall":{"args":{},"id":"call_openai_xyz","name":"get_answer"}}],"role":"model"},`+
			`{"parts":[{"functionResponse":{"id":"call_openai_xyz","name":"get_answer","response":{"result":"42"}}}],"role":"user"},`+
			`{"parts":[{"text":"continue"}],"role":"user"}],"generationConfig":{"responseModalities":["TEXT"]},`+
			`"tools":[{"functionDeclarations":[{"name":"get_answer","parametersJsonSchema":{"additionalProperties":false,"properties":{},"type":"object"}}]}]}`)
}

const r21dCitySchema = `{"additionalProperties":false,"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"}`

// r21dStrictRequest is pydantic-ai's strict-tools request: two strict
// tools, TEXT output, then the turns after the question.
func r21dStrictRequest(more ...*llmrelayv1.Message) *provider.Request {
	req := r21User("gemini-2.5-flash", "", append([]*llmrelayv1.Message{msg(llmrelayv1.Role_ROLE_USER, text("What is the weather and the time in Paris? Use the tools."))}, more...)...)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	strict := true
	req.Tools = []*llmrelayv1.Tool{
		{Name: "get_weather", Parameters: r21dCitySchema, Strict: &strict},
		{Name: "get_time", Parameters: r21dCitySchema, Strict: &strict},
	}
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"generationConfig":{"responseModalities":["TEXT"]}}`}
	return req
}

// TestRound21dStrictToolsValidated: gemini-2.5-flash (2026), unary, a
// three-turn tool loop with both tools strict, which pydantic-ai sends as
// functionCallingConfig mode VALIDATED (calls or text, each call held to
// its schema); the API took it on every turn. Strict tools used to be
// sent with a warning that Gemini has no strict mode and the schema was
// not enforced; Gemini 2.5 and later now get VALIDATED, as recorded, and
// no warning. Turn 1: get_weather({"city":"Paris"}) with a
// thoughtSignature, no id, "Model generated function call(s)." with STOP
// (79 in, 15 + 69 thought out). Turn 2, after the weather: get_time the
// same way (122 in, 15 + 33). Turn 3, after the time: the answer text
// with its signature (162 in, 21 + 28). serviceTier "standard" in each
// usageMetadata. Our requests hold the recorded turns, differing where the
// API takes either: no ids (the API gave none; pydantic-ai made its own),
// the signatures in the standard base64 received (pydantic-ai's URL-safe,
// the same bytes), {"result": …} for "return_value", no empty description.
func TestRound21dStrictToolsValidated(t *testing.T) {
	t.Parallel()
	const (
		head = `{"contents":[{"parts":[{"text":"What is the weather and the time in Paris? Use the tools."}],"role":"user"}`
		tail = `],"generationConfig":{"responseModalities":["TEXT"]},"toolConfig":{"functionCallingConfig":{"mode":"VALIDATED"}},` +
			`"tools":[{"functionDeclarations":[{"name":"get_weather","parametersJsonSchema":` + r21dCitySchema + `},{"name":"get_time","parametersJsonSchema":` + r21dCitySchema + `}]}]}`
		path = "/v1beta/models/gemini-2.5-flash:generateContent"
	)
	res1, srv := r21Unary(t, "real_pyd_google_strict_tools_use_validated_mode_1", r21dStrictRequest())
	call1 := r21OneCall(t, res1.Message, "get_weather", `{"city":"Paris"}`)
	r21SameSignature(t, call1.GetSignature(), "CtACARFNMg80aCiOORUSWSvBQLE-xqJvrmLZ-IrKWPLiDg1zbxrL2WAiyOJB1HSjMhqZMa3xm9F6ja7CfHpM3JHGe9IY8vXm2sCkwrBQWwWXLdYp5LXi1X8ik3MugY8EQe2VQXf-qbkrnyNHvUpc3xo9PEnnBtCYfa5uDNS4FlUeKQe5efM4gsclFW3ngnVL5KHJIfe2ADmwjnV7jnItQBSZc7pQKOjxI8CGW4MxhcEZx7wdtAYOjXWtfZt86aR5l-DdKyHbIyDZjAY1acjBnY3CN283pkuXuNVn3k2DtdY8XJhZqTzjmr22gYb14NvRkNOuXxS7dk_OxDa3KGFG5cbwp92jQikWU4eGb-V6YqxyXoHCqbFt4YuNEDKx_yKl2Tr0bx5rsuHZ8dsNiZ-nbTJvf9fRhKzw7wvQPpEp65kACwkdHw6g4PjjbWnYkpI4-KGq")
	r21Meta(t, res1.Meta, "WKNOarSwGpjhz7IP99bVwQU", "gemini-2.5-flash", "STOP", llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS,
		&llmrelayv1.Usage{InputTokens: 79, OutputTokens: 84, TotalTokens: 163, ReasoningTokens: 69})
	if got := r21Ext(t, res1.Meta, extFinishMessage); got != `"Model generated function call(s)."` {
		t.Errorf("finish message %s", got)
	}
	if w := res1.Meta.GetWarnings(); len(w) != 0 {
		t.Errorf("warnings %q, want none: strict is VALIDATED mode", w)
	}
	r21SameRequest(t, srv, path, head+tail)

	weather := msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(call1.GetCallId(), "The weather in Paris is sunny and 24C."))
	res2, srv := r21Unary(t, "real_pyd_google_strict_tools_use_validated_mode_2", r21dStrictRequest(res1.Message, weather))
	call2 := r21OneCall(t, res2.Message, "get_time", `{"city":"Paris"}`)
	r21SameSignature(t, call2.GetSignature(), "Cq8BARFNMg_xNlGP_1PmQ6rEFqLL_1MvxBMU3GosA89FKBqFIQ6Ztf1goqdGzDV2VEZpJPgWEfr7jjeP3q-BUC534sl-McRFacgUmdgEatPj0xxVOIuUrSaZqe5YiejljvOV2a11BdTCCGoPMlQm2soWXeJTk6kZWClA7_y-lJAttHO7I645IligZQSBLy7pMTEwP8bt9wxf3G5mmo2OwuV81q8_jo9ddV9AIl2NMj_-1g==")
	r21Meta(t, res2.Meta, "WaNOas-mIaCGz7IPxq6foQU", "gemini-2.5-flash", "STOP", llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS,
		&llmrelayv1.Usage{InputTokens: 122, OutputTokens: 48, TotalTokens: 170, ReasoningTokens: 33})
	turn1 := `,{"parts":[{"functionCall":{"args":{"city":"Paris"},"name":"get_weather"},"thoughtSignature":"` + call1.GetSignature() + `"}],"role":"model"},` +
		`{"parts":[{"functionResponse":{"name":"get_weather","response":{"result":"The weather in Paris is sunny and 24C."}}}],"role":"user"}`
	r21SameRequest(t, srv, path, head+turn1+tail)

	clock := msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(call2.GetCallId(), "The time in Paris is 3pm."))
	res3, srv := r21Unary(t, "real_pyd_google_strict_tools_use_validated_mode_3", r21dStrictRequest(res1.Message, weather, res2.Message, clock))
	part := r21RecordedCandidate(t, "real_pyd_google_strict_tools_use_validated_mode_3")["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)
	sig3, _ := part["thoughtSignature"].(string)
	if !strings.HasPrefix(sig3, "CroBARFNMg/hCeSOl740") {
		t.Fatalf("recorded signature %q", sig3)
	}
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("The weather in Paris is sunny and 24C. The time in Paris is 3pm."),
		reasoningPart(&llmrelayv1.Reasoning{Signature: sig3})); !proto.Equal(res3.Message, want) {
		t.Errorf("turn 3 message\n got %v\nwant %v", res3.Message, want)
	}
	r21Meta(t, res3.Meta, "WqNOas_zD46sz7IPt7r-iAU", "gemini-2.5-flash", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 162, OutputTokens: 49, TotalTokens: 211, ReasoningTokens: 28})
	turn2 := `,{"parts":[{"functionCall":{"args":{"city":"Paris"},"name":"get_time"},"thoughtSignature":"` + call2.GetSignature() + `"}],"role":"model"},` +
		`{"parts":[{"functionResponse":{"name":"get_time","response":{"result":"The time in Paris is 3pm."}}}],"role":"user"}`
	r21SameRequest(t, srv, path, head+turn1+turn2+tail)
}

// TestRound21dStrictToolChoice: what strict tools send for each tool
// choice and model. VALIDATED where calls are left to the model (no
// choice, AUTO) on Gemini 2.5 and later; ANY (required, a named function)
// already holds each call to its schema and NONE makes none, so those are
// sent as asked, without a warning; gemini-2.0-flash and unknown ids are
// not sent VALIDATED, with the warning that the schema is not enforced.
func TestRound21dStrictToolChoice(t *testing.T) {
	t.Parallel()
	mode := func(m llmrelayv1.ToolChoiceMode) *llmrelayv1.ToolChoice {
		return &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: m}}
	}
	for _, tc := range []struct {
		model    string
		choice   *llmrelayv1.ToolChoice
		strict   bool
		want     string // functionCallingConfig.mode ("" none)
		warnings int
	}{
		{"gemini-2.5-flash", nil, true, "VALIDATED", 0},
		{"gemini-3-pro-preview", mode(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO), true, "VALIDATED", 0},
		{"gemini-flash-latest", nil, true, "VALIDATED", 0},
		{"gemini-2.5-pro", mode(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED), true, "ANY", 0},
		{"gemini-2.5-pro", &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_FunctionName{FunctionName: "get_time"}}, true, "ANY", 0},
		{"gemini-2.5-pro", mode(llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_NONE), true, "NONE", 0},
		{"gemini-2.5-flash", nil, false, "", 0},
		{"gemini-2.0-flash", nil, true, "", 2},
		{"tunedModels/my-model", nil, true, "", 2},
	} {
		req := r21dStrictRequest()
		req.Model = tc.model
		for _, tl := range req.Tools {
			tl.Strict = &tc.strict
		}
		req.Options = &llmrelayv1.GenerationOptions{ToolChoice: tc.choice}
		out, warnings, err := buildRequest(req)
		if err != nil {
			t.Fatalf("%s %v: %v", tc.model, tc.choice, err)
		}
		got := ""
		if out.ToolConfig != nil {
			got = out.ToolConfig.FunctionCallingConfig.Mode
		}
		if got != tc.want || len(warnings) != tc.warnings {
			t.Errorf("%s %v strict=%v: mode %q, warnings %q; want %q and %d warnings", tc.model, tc.choice, tc.strict, got, warnings, tc.want, tc.warnings)
		}
	}
}

// TestRound21dStructuredWithURLContext: gemini-3-pro-preview (November
// 2025), unary, JSON output with a schema (CityLocation) and the urlContext
// tool: the JSON pretty-printed with a trailing space, kept as sent, one
// text part carrying the thoughtSignature (a signature-only reasoning part
// after the text); 9 in, 21 + 135 thought tokens, 165 total. pydantic-ai
// sent the schema as the OpenAPI responseSchema (type OBJECT,
// property_ordering); we send the JSON Schema as responseJsonSchema, which
// the API takes for Gemini 3 (real_pyd_google_auto_native_structured_stream_gemini_3);
// the tool goes through extra_body.
func TestRound21dStructuredWithURLContext(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_google_native_output_with_builtin_tools_gemini_3_1"
	const schema = `{"properties":{"city":{"type":"string"},"country":{"type":"string"}},"required":["city","country"],"title":"CityLocation","type":"object"}`
	req := r21User("gemini-3-pro-preview", "", msg(llmrelayv1.Role_ROLE_USER, text("What is the largest city in Mexico?")))
	req.Options = &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: schema}}
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"generationConfig":{"responseModalities":["TEXT"]},"tools":[{"urlContext":{}}]}`}
	res, srv := r21Unary(t, name, req)
	part := r21RecordedCandidate(t, name)["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)
	sig, _ := part["thoughtSignature"].(string)
	if !strings.HasPrefix(sig, "EtcECtQEAdHtim/CS2N3") || !strings.HasSuffix(sig, "yvUcwapiKk3slNY=") {
		t.Fatalf("recorded signature %q", sig)
	}
	want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("{\n  \"city\": \"Mexico City\",\n  \"country\": \"Mexico\"\n} "), reasoningPart(&llmrelayv1.Reasoning{Signature: sig}))
	if !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	r21Meta(t, res.Meta, "I-scaZ7wFOiyqtsP0rvOoQc", "gemini-3-pro-preview", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 9, OutputTokens: 156, TotalTokens: 165, ReasoningTokens: 135})
	if len(res.Meta.GetWarnings()) != 0 {
		t.Errorf("warnings %q", res.Meta.GetWarnings())
	}
	r21SameRequest(t, srv, "/v1beta/models/gemini-3-pro-preview:generateContent",
		`{"contents":[{"parts":[{"text":"What is the largest city in Mexico?"}],"role":"user"}],"generationConfig":{"responseJsonSchema":`+schema+
			`,"responseMimeType":"application/json","responseModalities":["TEXT"]},"tools":[{"urlContext":{}}]}`)
}

// TestRound21dSearchGroundingPro: gemini-2.5-pro (December 2025), unary,
// googleSearch and a system instruction: one text part with "°F" (two
// bytes) before each grounded sentence; groundingMetadata with one web
// chunk (a google.com search URI with spaces in it), three supports whose
// segments are the answer's UTF-8 byte ranges [426,486), [487,524),
// [725,818), a searchEntryPoint and one webSearchQueries; 17 prompt + 109
// tool-use prompt tokens (TEXT by modality each), 225 + 167 thought
// tokens, 518 total. The body escapes < and > as \u003c and \u003e, as
// the API writes JSON: with them the transcription is the recorded
// content-length, 8019 bytes. The grounding is kept whole, as recorded.
func TestRound21dSearchGroundingPro(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_google_model_web_search_tool"
	req := r21User("gemini-2.5-pro", "You are a helpful chatbot.", msg(llmrelayv1.Role_ROLE_USER, text("What is the weather in San Francisco today?")))
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"tools":[{"googleSearch":{}}],"generationConfig":{"responseModalities":["TEXT"]}}`}
	res, srv := r21Unary(t, name, req)
	const answer = "**Partly Cloudy Skies Over San Francisco Today with a Low Chance of Rain**\n\n" +
		"As of 10:01 AM in San Francisco, the weather is partly cloudy with a current temperature of 48°F, which feels more like 45°F. " +
		"There is a minimal 10% chance of rain throughout the day and into the night.\n\n" +
		"The forecast for the remainder of Monday, December 8, 2025, indicates partly cloudy conditions during the day, becoming mostly cloudy at night. " +
		"The expected high for the day is 52°F and the low is 46°F. The humidity is currently around 83%.\n\n" +
		"Looking ahead, the rest of the week in San Francisco is expected to be mostly sunny with temperatures remaining mild. " +
		"Tuesday's forecast predicts sunny skies with a high of 54°F and a low of 48°F. Wednesday and Thursday are also expected to be sunny, with highs reaching into the upper 50s."
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text(answer)); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	r21Meta(t, m, "iRI3abXwJsifz7IPzcqYsQc", "gemini-2.5-pro", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 126, OutputTokens: 392, TotalTokens: 518, ReasoningTokens: 167})
	if len(m.GetWarnings()) != 0 || r21Ext(t, m, extToolUsePromptTokens) != "109" ||
		r21Ext(t, m, "usage_details") != `{"promptTokensDetails.TEXT":17,"toolUsePromptTokensDetails.TEXT":109}` {
		t.Errorf("meta %v", m)
	}
	g, _ := m.GetExtended().AsMap()[extGroundingMetadata].(map[string]any)
	supports, _ := g["groundingSupports"].([]any)
	if len(supports) != 3 {
		t.Fatalf("grounding %v", g)
	}
	for i, s := range supports {
		seg := s.(map[string]any)["segment"].(map[string]any)
		start, _ := seg["startIndex"].(float64)
		end, _ := seg["endIndex"].(float64)
		if got := answer[int(start):int(end)]; got != seg["text"] {
			t.Errorf("support %d: text[%v:%v] = %q, segment %q", i, start, end, got, seg["text"])
		}
	}
	if rec := r21RecordedCandidate(t, name); !jsonEqual(g, rec["groundingMetadata"]) {
		t.Errorf("grounding is not the recorded one")
	}
	r21SameRequest(t, srv, "/v1beta/models/gemini-2.5-pro:generateContent",
		`{"contents":[{"parts":[{"text":"What is the weather in San Francisco today?"}],"role":"user"}],"generationConfig":{"responseModalities":["TEXT"]},`+
			`"systemInstruction":{"parts":[{"text":"You are a helpful chatbot."}]},"tools":[{"googleSearch":{}}]}`)
}

// TestRound21dFileSearchServerInvocations: gemini-3-flash-preview (July
// 2026), streamed, fileSearch over a store holding one document, with
// toolConfig.includeServerSideToolInvocations: Gemini 3 then streams the
// built-in tool's invocation as parts: a toolCall part ({"toolType":
// "FILE_SEARCH", "id": "std8lcuv"}) carrying a thoughtSignature, a
// toolResponse part for the same id with another signature, then the
// answer in two text events and a final empty text with a third signature,
// STOP, the groundingMetadata (a retrievedContext chunk with the store and
// customMetadata source_url, two supports over the text's byte ranges) and
// the usage: 126 prompt + 470 tool-use prompt tokens, 44 + 147 thought
// tokens, 787 total. The toolCall and toolResponse parts were dropped
// without a word (only their signatures kept), then reported by a warning
// each; since round 23 each is a provider item, the part as it came with
// its signature, no warning, and the next turn sends them back as
// recorded. The final signature stays a signature-only reasoning part,
// the grounding whole, the request the recorded one (the store name in
// camelCase, which the API reads as pydantic-ai's file_search_store_names).
func TestRound21dFileSearchServerInvocations(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_google_model_file_search_grounding_gemini_3_true_stream"
	const store = "fileSearchStores/testfilesearchgroundingstre-xd02p9o1zz8e"
	req := r21User("gemini-3-flash-preview", "", msg(llmrelayv1.Role_ROLE_USER, text("What is the capital of France?")))
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"generationConfig":{"responseModalities":["TEXT"]},` +
		`"toolConfig":{"includeServerSideToolInvocations":true},"tools":[{"fileSearch":{"fileSearchStoreNames":["` + store + `"]}}]}`}
	evs, srv := r20Stream(t, name, req)
	f := foldEvents(evs)
	const answer = "The capital of France is **Paris**. It is well-known for its iconic landmarks, such as the Eiffel Tower."
	if f.text != answer || len(f.calls) != 0 {
		t.Errorf("text %q, calls %v", f.text, f.calls)
	}
	// The recorded toolCall and toolResponse parts, from the stream's
	// first two events.
	var recParts []any
	for _, line := range strings.Split(string(providertest.Load(t, filepath.Join("testdata", name+".http")).Body), "\n") {
		data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
		if !ok {
			continue
		}
		c, _ := r17JSON(t, []byte(data))["candidates"].([]any)[0].(map[string]any)
		for _, pt := range c["content"].(map[string]any)["parts"].([]any) {
			if m := pt.(map[string]any); m["toolCall"] != nil || m["toolResponse"] != nil {
				recParts = append(recParts, pt)
			}
		}
	}
	folded := foldMessage(t, evs)
	var items []any
	var sigs []string
	for _, p := range folded.GetParts() {
		if r := p.GetReasoning(); r != nil {
			if r.GetText() != "" {
				t.Errorf("reasoning text %q", r.GetText())
			}
			sigs = append(sigs, r.GetSignature())
		}
		if it := p.GetProviderItem(); it != nil {
			items = append(items, r19Decode(t, it.GetJson()))
		}
	}
	if len(recParts) != 2 || !jsonEqual(items, recParts) || folded.GetParts()[0].GetProviderItem().GetType() != "toolCall" ||
		folded.GetParts()[1].GetProviderItem().GetType() != "toolResponse" {
		t.Errorf("items %v, want the recorded parts %v", items, recParts)
	}
	if len(sigs) != 1 || !strings.HasPrefix(sigs[0], "EusBCugBAQw51sdrQ2Y5") {
		t.Errorf("signatures %q", sigs)
	}
	next := r21User("gemini-3-flash-preview", "", req.Messages[0], folded, msg(llmrelayv1.Role_ROLE_USER, text("And of Italy?")))
	sent, warnings := r23Contents(t, next)
	wantTurns := []any{
		map[string]any{"role": "user", "parts": []any{map[string]any{"text": "What is the capital of France?"}}},
		map[string]any{"role": "model", "parts": []any{recParts[0], recParts[1], map[string]any{"text": answer, "thoughtSignature": sigs[0]}}},
		map[string]any{"role": "user", "parts": []any{map[string]any{"text": "And of Italy?"}}},
	}
	if !jsonEqual(r19Decode(t, sent), wantTurns) || len(warnings) != 0 {
		t.Errorf("next turn %s (warnings %q), want the recorded tool parts back", sent, warnings)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 596, OutputTokens: 191, TotalTokens: 787, ReasoningTokens: 147}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
	m := f.meta
	if m.GetResponseId() != "FldGauy9Keztg8UPqo_-wAs" || m.GetResolvedModel() != "gemini-3-flash-preview" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" || m.GetServiceTier() != "standard" {
		t.Errorf("meta %v", m)
	}
	if w := m.GetWarnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
	g, _ := m.GetExtended().AsMap()[extGroundingMetadata].(map[string]any)
	supports, _ := g["groundingSupports"].([]any)
	if len(supports) != 2 {
		t.Fatalf("grounding %v", g)
	}
	for i, s := range supports {
		seg := s.(map[string]any)["segment"].(map[string]any)
		start, _ := seg["startIndex"].(float64)
		end, _ := seg["endIndex"].(float64)
		if got := answer[int(start):int(end)]; got != seg["text"] {
			t.Errorf("support %d: text[%v:%v] = %q, segment %q", i, start, end, got, seg["text"])
		}
	}
	chunk, _ := g["groundingChunks"].([]any)[0].(map[string]any)["retrievedContext"].(map[string]any)
	if chunk["fileSearchStore"] != store || chunk["text"] != "Paris is the capital of France. The Eiffel Tower is a famous landmark in Paris.\n" {
		t.Errorf("chunk %v", chunk)
	}
	r21SameRequest(t, srv, "/v1beta/models/gemini-3-flash-preview:streamGenerateContent",
		`{"contents":[{"parts":[{"text":"What is the capital of France?"}],"role":"user"}],"generationConfig":{"responseModalities":["TEXT"]},`+
			`"toolConfig":{"includeServerSideToolInvocations":true},"tools":[{"fileSearch":{"fileSearchStoreNames":["`+store+`"]}}]}`)
}

// TestRound21dThinkingFromOtherModel: gemini-2.5-pro (January 2026),
// unary, with thoughts included, continuing a conversation gpt-5 began:
// the history holds gpt-5's answer as our OpenAI adapter reads it, one
// reasoning item (its id, its five summary texts joined by a blank line,
// its encrypted_content; the stand-in here is the recorded value's first
// 31 characters, the item being dropped either way) and the answer text.
//
// pydantic-ai sent the five summaries as five thought parts without a
// signature, then the text, and gemini-2.5-pro answered. Ours drops the
// reasoning item with a warning (Gemini cannot take back another
// provider's reasoning items) and sends the text alone; the rest is the
// recorded request. The answer: a thought summary (no signature), then the
// text carrying the thoughtSignature (7.5 KB of base64, its protobuf
// length prefix the rest of the bytes); STOP; 1053 prompt tokens (TEXT),
// 892 candidates + 1341 thought tokens, 3286 total.
func TestRound21dThinkingFromOtherModel(t *testing.T) {
	t.Parallel()
	const (
		name = "real_pyd_google_model_thinking_part_from_other_model"
		q1   = "How do I cross the street?"
		q2   = "Considering the way to cross the street, analogously, how do I cross the river?"
	)
	rparts := r17JSON(t, []byte(r21dGPTTurn))["parts"].([]any)
	if len(rparts) != 6 {
		t.Fatalf("recorded model turn %v", rparts)
	}
	var summaries []string
	for _, p := range rparts[:5] {
		if p.(map[string]any)["thought"] != true {
			t.Fatalf("recorded part %v", p)
		}
		summaries = append(summaries, p.(map[string]any)["text"].(string))
	}
	gptAnswer := rparts[5].(map[string]any)["text"].(string)
	if !strings.HasPrefix(summaries[0], "**Providing street crossing instructions**\n\n") || !strings.HasPrefix(summaries[4], "**Creating safe crossing instructions**") ||
		!strings.HasPrefix(gptAnswer, "Here's a simple, safe way to cross a street:") || !strings.HasSuffix(gptAnswer, "guidance for your exact situation.") {
		t.Fatalf("recorded model turn %v", rparts)
	}
	gpt := msg(llmrelayv1.Role_ROLE_ASSISTANT,
		reasoningPart(&llmrelayv1.Reasoning{Id: "rs_0d3e7d19e1d3306100697cc0a5b06081979f3164a57ea04a97", Text: strings.Join(summaries, "\n\n"),
			Signature: "gAAAAABpfMDLUiax62V-zYQoJHemQlL"}),
		text(gptAnswer))
	req := r21dCrossing(msg(llmrelayv1.Role_ROLE_USER, text(q1)), gpt, msg(llmrelayv1.Role_ROLE_USER, text(q2)))
	req.Model = "gemini-2.5-pro"
	res, srv := r21Unary(t, name, req)
	r21SameRequest(t, srv, "/v1beta/models/gemini-2.5-pro:generateContent",
		r21dCrossingRequest(`[{"parts":[{"text":"`+q1+`"}],"role":"user"},{"parts":[{"text":`+r21dQuote(t, gptAnswer)+`}],"role":"model"},`+
			`{"parts":[{"text":"`+q2+`"}],"role":"user"}]`))

	parts := r21RecordedCandidate(t, name)["content"].(map[string]any)["parts"].([]any)
	thought, answer := parts[0].(map[string]any), parts[1].(map[string]any)
	sig, _ := answer["thoughtSignature"].(string)
	if len(parts) != 2 || thought["thought"] != true || thought["thoughtSignature"] != nil ||
		!strings.HasPrefix(thought["text"].(string), "**River Crossing: A Safe Analogy to Street Crossing**\n\nOkay, so the user wants an analogy?") ||
		!strings.HasSuffix(thought["text"].(string), "*   Talk about the correct technique: face upstream") ||
		!strings.HasPrefix(answer["text"].(string), "Excellent question! That's a great way to think about it.") ||
		!strings.HasSuffix(answer["text"].(string), "choose the safest possible option over the quickest one.**") ||
		len(sig) != 7512 || !strings.HasPrefix(sig, "Cv8rAXLI2ny/VO8MbPQerAwN") || !strings.HasSuffix(sig, "T8VkZa1qvm2Q") {
		t.Fatalf("recorded parts %v", parts)
	}
	want := msg(llmrelayv1.Role_ROLE_ASSISTANT,
		reasoningPart(&llmrelayv1.Reasoning{Text: thought["text"].(string)}),
		text(answer["text"].(string)),
		reasoningPart(&llmrelayv1.Reasoning{Signature: sig}))
	if !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	r21Meta(t, res.Meta, "M8F8adbvLpbiz7IPi_KAsQg", "gemini-2.5-pro", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 1053, OutputTokens: 2233, TotalTokens: 3286, ReasoningTokens: 1341})
	if got := r21Ext(t, res.Meta, "usage_details"); got != `{"promptTokensDetails.TEXT":1053}` {
		t.Errorf("usage details %s", got)
	}
	if w := res.Meta.GetWarnings(); len(w) != 1 || !strings.Contains(w[0], `reasoning item "rs_0d3e7d19e1d3306100697cc0a5b06081979f3164a57ea04a97" dropped: Gemini cannot take back another provider's reasoning items`) {
		t.Errorf("warnings %q", w)
	}
}

// r21dGPTTurn is the model turn of pydantic-ai's recorded request (the
// cassette's parsed_body, compact): gpt-5's five reasoning summaries as
// thought parts, then its answer.
const r21dGPTTurn = "{\"parts\":[{\"text\":\"**Providing street crossing instructions**\\n\\nI'm looking to craft a response for the user who asked how to cross the street safely. This is about general safety rather than legal advice. I should offer step-by-step instructions, like using crosswalks, looking both ways, and waiting for the walk signal. It's important to mention eye contact with drivers, avoiding distractions, and keeping kids close. For those with mobility challenges, I can include accessible tips like using curb ramps and audible signals.\",\"thought\":true},{\"text\":\"**Considering rural and urban crossing safety**\\n\\nI'm thinking about additional contexts for crossing streets, especially in rural areas without crosswalks. It's important to find straight stretches with good sight lines and cross perpendicularly. I should mention to look for gaps in traffic and be aware of hills or curves. For high-speed roads, use pedestrian overpasses if available. Also, I'll remind to check local driving directions, always looking left-right-left for safety. I might end with a brief, actionable list of tips for crossing at intersections.\",\"thought\":true},{\"text\":\"**Providing general safety guidelines**\\n\\nI want to give general safety advice for crossing streets while also asking if the user needs specifics. I need to avoid coming off as patronizing, so I'll focus on being helpful. It's important to provide clear disclaimers about safety and aim for minimal formatting, maybe using bullet points. I'll include tips for kids to hold hands and look both ways. For people with mobility challenges, I should emphasize proper timing with crossing signals and watch for turning vehicles, especially in low visibility.\",\"thought\":true},{\"text\":\"**Detailing safe crossing procedures**\\n\\nI want to ensure that the user knows to step out only when it's clear. I should highlight edge cases, like the \\\"double threat\\\" in multi-lane situations, where one car stops but others might not. It's important to peek past parked cars and listen for approaching vehicles. If using a stroller, keep it back until there's a safe gap. I need to emphasize clear viewing points, especially on rural roads or roundabouts, and also remind about the dangers of alcohol or drug impairment. I'll keep it concise while outlining core steps with optional variations.\",\"thought\":true},{\"text\":\"**Creating safe crossing instructions**\\n\\nI'm looking to create clear and concise instructions for the user about how to safely cross the street. First, I want to know if they're at a signalized intersection, a stop sign, or without a crosswalk. Then, I should present step-by-step guidance without heavy formatting, using bullet points when helpful.\\n\\nI need to emphasize things like stopping at the edge, putting away phones, and making eye contact with drivers. It's important to discuss special situations, such as crossing near parked vehicles or in low visibility conditions. I'll encourage them to tell me about their specific crossing situation so I can tailor my guidance.\",\"thought\":true},{\"text\":\"Here's a simple, safe way to cross a street:\\n\\n- Go to a crosswalk or intersection if you can. Avoid crossing mid‐block.\\n- Stop at the curb; put your phone away and remove earbuds.\\n- Press the pedestrian button if there is one.\\n- When the signal shows WALK/the walking person, or when there's no signal but traffic is clear:\\n  - Look for traffic in all lanes. Check the lane nearest you first.\\n    - In right‐hand traffic countries: look left → right → left.\\n    - In left‐hand traffic countries: look right → left → right.\\n  - Watch for turning cars, bikes, and e‐scooters. Make eye contact with drivers.\\n- Step off only when vehicles have stopped or there's a big gap. Keep scanning as you cross; walk straight, don't run.\\n- If the signal starts flashing \\\"Don't Walk\\\" while you're already in the crosswalk, continue to the other side. Don't start crossing on a solid \\\"Don't Walk.\\\"\\n- On multi‐lane roads, be sure each lane is clear or stopped--don't rely on one car waving you through.\\n- If there's no crosswalk: choose a well‐lit spot with clear views (not near a curve, hill, or parked vehicles), wait for a large gap in both directions, then cross directly across.\\n- Extra tips:\\n  - At night or in rain, wear something bright/reflective and take extra time.\\n  - With kids or pets, hold hands/short leash and cross together.\\n  - Don't step out from in front of a bus or large vehicle that blocks your view.\\n  - At roundabouts, cross one direction at a time using the refuge island.\\n\\nTell me what kind of road and signals you see, and I can give step‐by‐step guidance for your exact situation.\"}],\"role\":\"model\"}"

// TestRound21dForeignToolCallRetry: gemini-2.5-flash (2026), unary, the
// same history as TestRound21dForeignToolCallHistory but the tool failed:
// pydantic-ai's retry prompt ("Try again.\n\nFix the errors and try
// again.") went back as the functionResponse's error, and so does ours (an
// error result whose text is not JSON is the error string). The API
// answered one text part carrying a thoughtSignature (489 bytes, whole by
// its protobuf length prefix), STOP, 66 prompt (TEXT) + 46 + 99 thought
// tokens, 211 total. Our request differs from the recorded one only in the
// placeholder signature pydantic-ai stamps on the foreign call and the
// empty description, as there.
func TestRound21dForeignToolCallRetry(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_google_tool_call_id_wire_format_retry_prompt"
	req := r21User("gemini-2.5-flash", "",
		msg(llmrelayv1.Role_ROLE_USER, text("What is the answer?")),
		msg(llmrelayv1.Role_ROLE_ASSISTANT, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{
			CallId: "call_openai_xyz", Name: "get_answer", Arguments: "{}", ArgumentsValid: true}}}),
		msg(llmrelayv1.Role_ROLE_TOOL, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{
			CallId: "call_openai_xyz", Content: "Try again.\n\nFix the errors and try again.", IsError: true}}}),
		msg(llmrelayv1.Role_ROLE_USER, text("continue")))
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Tools = []*llmrelayv1.Tool{{Name: "get_answer", Parameters: `{"additionalProperties":false,"properties":{},"type":"object"}`}}
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"generationConfig":{"responseModalities":["TEXT"]}}`}
	res, srv := r21Unary(t, name, req)
	part := r21RecordedCandidate(t, name)["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)
	sig, _ := part["thoughtSignature"].(string)
	if len(sig) != 656 || !strings.HasPrefix(sig, "CukDAb4+9vtdOmXU4b3a") || !strings.HasSuffix(sig, "z7grYIphTw") {
		t.Fatalf("recorded signature %q", sig)
	}
	want := msg(llmrelayv1.Role_ROLE_ASSISTANT,
		text("I'm sorry, I was unable to get the answer. The previous attempt resulted in an error. Please let me know "+
			"if there's anything else I can help with or if you'd like to try something different."),
		reasoningPart(&llmrelayv1.Reasoning{Signature: sig}))
	if !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	r21Meta(t, res.Meta, "DKjgaZOKBtPUjuMPpLLZ6Q4", "gemini-2.5-flash", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 66, OutputTokens: 145, TotalTokens: 211, ReasoningTokens: 99})
	if got := r21Ext(t, res.Meta, "usage_details"); got != `{"promptTokensDetails.TEXT":66}` {
		t.Errorf("usage details %s", got)
	}
	if len(res.Meta.GetWarnings()) != 0 {
		t.Errorf("warnings %q", res.Meta.GetWarnings())
	}
	r21SameRequest(t, srv, "/v1beta/models/gemini-2.5-flash:generateContent",
		`{"contents":[{"parts":[{"text":"What is the answer?"}],"role":"user"},`+
			`{"parts":[{"functionCall":{"args":{},"id":"call_openai_xyz","name":"get_answer"}}],"role":"model"},`+
			`{"parts":[{"functionResponse":{"id":"call_openai_xyz","name":"get_answer","response":{"error":"Try again.\n\nFix the errors and try again."}}}],"role":"user"},`+
			`{"parts":[{"text":"continue"}],"role":"user"}],"generationConfig":{"responseModalities":["TEXT"]},`+
			`"tools":[{"functionDeclarations":[{"name":"get_answer","parametersJsonSchema":{"additionalProperties":false,"properties":{},"type":"object"}}]}]}`)
}

// TestRound21dURLContextOnePart: the same urlContext question as
// TestRound21URLContext, recorded for pydantic-ai's other parameter case
// (gemini-2.5-flash, February 2026): this time the answer is the sentence
// alone in one text part, and the grounding segment has no startIndex (0,
// left out as proto3 JSON leaves zeros) and endIndex 66, the whole text.
// urlContextMetadata: https://ai.pydantic.dev retrieved
// (URL_RETRIEVAL_STATUS_SUCCESS). Usage: 32 prompt + 4665 tool-use prompt
// tokens (TEXT) in, 34 + 45 thought tokens out, 4776 total. The request is
// the recorded one.
func TestRound21dURLContextOnePart(t *testing.T) {
	t.Parallel()
	const (
		name     = "real_pyd_google_model_web_fetch_tool_true"
		sentence = "Join us at the inaugural PyAI Conf in San Francisco on March 10th!"
		question = "What is the first sentence on the page https://ai.pydantic.dev? Reply with only the sentence."
	)
	req := r21User("gemini-2.5-flash", "You are a helpful chatbot.", msg(llmrelayv1.Role_ROLE_USER, text(question)))
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"tools":[{"urlContext":{}}],"generationConfig":{"responseModalities":["TEXT"]}}`}
	res, srv := r21Unary(t, name, req)
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text(sentence)); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	if len(sentence) != 66 {
		t.Errorf("the segment [0,66) is not the whole answer")
	}
	m := res.Meta
	r21Meta(t, m, "ttWAad-ZLvu4mtkP7eu7uAQ", "gemini-2.5-flash", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 4697, OutputTokens: 79, TotalTokens: 4776, ReasoningTokens: 45})
	if len(m.GetWarnings()) != 0 || r21Ext(t, m, extToolUsePromptTokens) != "4665" || m.GetServiceTier() != "" {
		t.Errorf("meta %v", m)
	}
	if got, want := r21Ext(t, m, extURLContextMetadata), `{"urlMetadata":[{"retrievedUrl":"https://ai.pydantic.dev","urlRetrievalStatus":"URL_RETRIEVAL_STATUS_SUCCESS"}]}`; got != want {
		t.Errorf("url context %s, recorded %s", got, want)
	}
	if got, want := r21Ext(t, m, extGroundingMetadata), `{"groundingChunks":[{"web":{"title":"Pydantic AI - Pydantic AI","uri":"https://ai.pydantic.dev"}}],`+
		`"groundingSupports":[{"groundingChunkIndices":[0],"segment":{"endIndex":66,"text":"`+sentence+`"}}]}`; got != want {
		t.Errorf("grounding %s, recorded %s", got, want)
	}
	if got := r21Ext(t, m, "usage_details"); got != `{"promptTokensDetails.TEXT":32,"toolUsePromptTokensDetails.TEXT":4665}` {
		t.Errorf("usage details %s", got)
	}
	r21SameRequest(t, srv, "/v1beta/models/gemini-2.5-flash:generateContent",
		`{"contents":[{"parts":[{"text":"`+question+`"}],"role":"user"}],"generationConfig":{"responseModalities":["TEXT"]},`+
			`"systemInstruction":{"parts":[{"text":"You are a helpful chatbot."}]},"tools":[{"urlContext":{}}]}`)
}

// TestRound21dSearchEmptyGrounding: gemini-2.0-flash (July 2025) with
// googleSearch and a system prompt, unary: one text part ending in a line
// break ("Today is Wednesday, July 9, 2025.\n"), STOP, and an empty
// groundingMetadata ({}: the model answered without searching), which
// leaves nothing in meta.extended. Usage: 13 prompt, 15 candidates (both
// TEXT by modality), 28 total. The request is the recorded one but for
// pydantic-ai's empty generationConfig, which ours leaves out.
func TestRound21dSearchEmptyGrounding(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_google_search"
	req := r21User("gemini-2.0-flash", "You are a helpful chatbot.", msg(llmrelayv1.Role_ROLE_USER, text("What is the Todays date?")))
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"tools":[{"googleSearch":{}}]}`}
	res, srv := r21Unary(t, name, req)
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("Today is Wednesday, July 9, 2025.\n")); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	r21Meta(t, m, "-3duaMqKFYmSmNAPjf_f4Qs", "gemini-2.0-flash", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 13, OutputTokens: 15, TotalTokens: 28})
	if len(m.GetWarnings()) != 0 {
		t.Errorf("warnings %q", m.GetWarnings())
	}
	if _, ok := m.GetExtended().GetFields()[extGroundingMetadata]; ok {
		t.Errorf("grounding metadata %s from an empty object", r21Ext(t, m, extGroundingMetadata))
	}
	if got := r21Ext(t, m, "usage_details"); got != `{"candidatesTokensDetails.TEXT":15,"promptTokensDetails.TEXT":13}` {
		t.Errorf("usage details %s", got)
	}
	r21SameRequest(t, srv, "/v1beta/models/gemini-2.0-flash:generateContent",
		`{"contents":[{"parts":[{"text":"What is the Todays date?"}],"role":"user"}],`+
			`"systemInstruction":{"parts":[{"text":"You are a helpful chatbot."}]},"tools":[{"googleSearch":{}}]}`)
}

// TestRound21dPromptedOutputWithURLContext: gemini-2.5-flash (January
// 2026) with urlContext, unary: pydantic-ai's prompted output (the
// CityLocation schema in the system instruction, opening and ending with a
// line break) and TEXT output. The answer is the JSON object alone in one
// text part, STOP, an empty groundingMetadata (nothing fetched: nothing in
// meta.extended); 85 prompt (TEXT) + 13 candidates + 30 thought tokens,
// 128 total. The request is the recorded one (its json.dumps length is the
// recorded content-length, 560).
func TestRound21dPromptedOutputWithURLContext(t *testing.T) {
	t.Parallel()
	const (
		name   = "real_pyd_google_builtin_tools_with_other_tools"
		system = "\nAlways respond with a JSON object that's compatible with this schema:\n\n" +
			`{"properties": {"city": {"type": "string"}, "country": {"type": "string"}}, "required": ["city", "country"], "type": "object", "title": "CityLocation"}` +
			"\n\nDon't include any text or Markdown fencing before or after.\n"
	)
	req := r21User("gemini-2.5-flash", system, msg(llmrelayv1.Role_ROLE_USER, text("What is the largest city in Mexico?")))
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"tools":[{"urlContext":{}}],"generationConfig":{"responseModalities":["TEXT"]}}`}
	res, srv := r21Unary(t, name, req)
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text(`{"city": "Mexico City", "country": "Mexico"}`)); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	r21Meta(t, m, "pjR8aYSzGKXUz7IPopGb6A8", "gemini-2.5-flash", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 85, OutputTokens: 43, TotalTokens: 128, ReasoningTokens: 30})
	if len(m.GetWarnings()) != 0 {
		t.Errorf("warnings %q", m.GetWarnings())
	}
	if _, ok := m.GetExtended().GetFields()[extGroundingMetadata]; ok {
		t.Errorf("grounding metadata %s from an empty object", r21Ext(t, m, extGroundingMetadata))
	}
	if got := r21Ext(t, m, "usage_details"); got != `{"promptTokensDetails.TEXT":85}` {
		t.Errorf("usage details %s", got)
	}
	r21SameRequest(t, srv, "/v1beta/models/gemini-2.5-flash:generateContent",
		`{"contents":[{"parts":[{"text":"What is the largest city in Mexico?"}],"role":"user"}],"generationConfig":{"responseModalities":["TEXT"]},`+
			`"systemInstruction":{"parts":[{"text":`+r21dQuote(t, system)+`}]},"tools":[{"urlContext":{}}]}`)
}

// TestRound21dMapsWithLocation: gemini-2.5-flash (March 2026) with
// googleMaps and the user's location (toolConfig.retrievalConfig.lat_lng,
// through extra_body as pydantic-ai sent it), unary: one text part naming
// two pizza places, STOP; groundingMetadata with twenty maps chunks
// (placeId, title, uri), two supports whose byte segments [179,237) and
// [313,374) are their sentences in the text, and the search query "pizza
// place near me", all kept whole in meta.extended. Usage: 10 prompt + 101
// tool-use prompt tokens in, 133 + 2754 thought tokens out, 2998 total.
// The request is the recorded one.
func TestRound21dMapsWithLocation(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_google_model_maps_tool_with_location"
	req := r21User("gemini-2.5-flash", "", msg(llmrelayv1.Role_ROLE_USER, text("Find me a good pizza place near here.")))
	const extra = `{"generationConfig":{"responseModalities":["TEXT"]},"toolConfig":{"retrievalConfig":{"lat_lng":{"latitude":37.7879,"longitude":-122.4075}}},"tools":[{"googleMaps":{}}]}`
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: extra}
	res, srv := r21Unary(t, name, req)
	const answer = "Here are a couple of good pizza places open near you right now:\n\n" +
		"*   **Yummy Pizza (Ofarrell)** is rated 4.5 stars and is located 1.7 kilometers away (about an 8.3-minute drive). It's open until 4:00 AM today, so it will be closing soon.\n" +
		"*   **Halal Modena pizza** is open 24 hours and has a rating of 4.2 stars. It is 1.3 kilometers away, which is about a 6.3-minute drive."
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text(answer)); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	if answer[179:237] != "It's open until 4:00 AM today, so it will be closing soon." || answer[313:374] != "It is 1.3 kilometers away, which is about a 6.3-minute drive." {
		t.Errorf("the grounding segments do not address their sentences")
	}
	m := res.Meta
	r21Meta(t, m, "cMq_abf6CNa4kdUP1dr14Qo", "gemini-2.5-flash", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 111, OutputTokens: 2887, TotalTokens: 2998, ReasoningTokens: 2754})
	if len(m.GetWarnings()) != 0 || r21Ext(t, m, extToolUsePromptTokens) != "101" {
		t.Errorf("meta %v", m)
	}
	recorded := r21RecordedCandidate(t, name)["groundingMetadata"]
	want, err := json.Marshal(recorded)
	if err != nil {
		t.Fatal(err)
	}
	chunks, _ := recorded.(map[string]any)["groundingChunks"].([]any)
	if len(chunks) != 20 || chunks[19].(map[string]any)["maps"].(map[string]any)["placeId"] != "places/ChIJ8beMEuOBhYAR_82lwoNSvQ0" {
		t.Fatalf("recorded chunks %v", chunks)
	}
	if got := r21Ext(t, m, extGroundingMetadata); !jsonEqual(r19Decode(t, got), r19Decode(t, string(want))) {
		t.Errorf("grounding %s, recorded %s", got, want)
	}
	if got := r21Ext(t, m, "usage_details"); got != `{"promptTokensDetails.TEXT":10,"toolUsePromptTokensDetails.TEXT":101}` {
		t.Errorf("usage details %s", got)
	}
	r21SameRequest(t, srv, "/v1beta/models/gemini-2.5-flash:generateContent",
		`{"contents":[{"parts":[{"text":"Find me a good pizza place near here."}],"role":"user"}],`+strings.TrimPrefix(extra, "{"))
}

// TestRound21dThoughtsNotIncluded: gemini-2.5-pro (January 2026), unary,
// thoughts asked not to be included (thinkingConfig include_thoughts
// false) with a system prompt: the answer is one text part without a
// signature and no thought part, yet the model thought: 285 thought tokens
// beside 8 candidates, which count as output (293) and as reasoning
// tokens; 15 prompt (TEXT), 308 total. The request is the recorded one
// (includeThoughts in camelCase; the API reads both spellings).
func TestRound21dThoughtsNotIncluded(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_google_model_thinking_config"
	req := r21User("gemini-2.5-pro", "You are a helpful chatbot.", msg(llmrelayv1.Role_ROLE_USER, text("What is the capital of France?")))
	no := false
	req.ProviderOptions = &llmrelayv1.ProviderOptions{
		Provider:  &llmrelayv1.ProviderOptions_Gemini{Gemini: &llmrelayv1.GeminiOptions{IncludeThoughts: &no}},
		ExtraBody: `{"generationConfig":{"responseModalities":["TEXT"]}}`,
	}
	res, srv := r21Unary(t, name, req)
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("The capital of France is **Paris**.")); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	r21Meta(t, res.Meta, "x1R8af-uF5a0qtsPxbfq0Ag", "gemini-2.5-pro", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 15, OutputTokens: 293, TotalTokens: 308, ReasoningTokens: 285})
	if len(res.Meta.GetWarnings()) != 0 {
		t.Errorf("warnings %q", res.Meta.GetWarnings())
	}
	if got := r21Ext(t, res.Meta, "usage_details"); got != `{"promptTokensDetails.TEXT":15}` {
		t.Errorf("usage details %s", got)
	}
	r21SameRequest(t, srv, "/v1beta/models/gemini-2.5-pro:generateContent",
		`{"contents":[{"parts":[{"text":"What is the capital of France?"}],"role":"user"}],"generationConfig":{"responseModalities":["TEXT"],"thinkingConfig":{"includeThoughts":false}},`+
			`"systemInstruction":{"parts":[{"text":"You are a helpful chatbot."}]}}`)
}

// TestRound21dStreamOneEvent: gemini-2.5-flash (January 2026), streamed at
// temperature 0 with a system prompt: the whole answer in one SSE event
// (CRLF-framed) with its finishReason and usage: "The capital of France is
// **Paris**.", STOP, 15 prompt (TEXT) + 8 candidates + 16 thought tokens,
// 39 total. The request is the recorded one: temperature 0 is sent, not
// left out as unset.
func TestRound21dStreamOneEvent(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_google_model_stream"
	req := r21User("gemini-2.5-flash", "You are a helpful chatbot.", msg(llmrelayv1.Role_ROLE_USER, text("What is the capital of France?")))
	zero := 0.0
	req.Options = &llmrelayv1.GenerationOptions{Temperature: &zero}
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"generationConfig":{"responseModalities":["TEXT"]}}`}
	evs, srv := r20Stream(t, name, req)
	f := foldEvents(evs)
	if f.text != "The capital of France is **Paris**." || len(f.calls) != 0 {
		t.Errorf("text %q, calls %v", f.text, f.calls)
	}
	if want := (&llmrelayv1.Usage{InputTokens: 15, OutputTokens: 24, TotalTokens: 39, ReasoningTokens: 16}); !proto.Equal(f.usage, want) {
		t.Errorf("usage %v, want %v", f.usage, want)
	}
	m := f.meta
	if m.GetResponseId() != "ezh8aaKTCYSnqtsP-qXkqQI" || m.GetResolvedModel() != "gemini-2.5-flash" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || m.GetProviderFinishReason() != "STOP" || len(m.GetWarnings()) != 0 {
		t.Errorf("meta %v", m)
	}
	r21SameRequest(t, srv, "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
		`{"contents":[{"parts":[{"text":"What is the capital of France?"}],"role":"user"}],"generationConfig":{"responseModalities":["TEXT"],"temperature":0},`+
			`"systemInstruction":{"parts":[{"text":"You are a helpful chatbot."}]}}`)
}

// r21dTemperatureRequest is pydantic-ai's structured-output request on
// gemini-2.0-flash: the system prompt, the turns, the temperature tool and
// the final_result output tool, a call required (mode ANY), TEXT output.
func r21dTemperatureRequest(turns ...*llmrelayv1.Message) *provider.Request {
	req := r21User("gemini-2.0-flash", "You are a helpful chatbot.", turns...)
	req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
	req.Options = &llmrelayv1.GenerationOptions{ToolChoice: &llmrelayv1.ToolChoice{Choice: &llmrelayv1.ToolChoice_Mode{Mode: llmrelayv1.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED}}}
	req.Tools = []*llmrelayv1.Tool{
		{Name: "temperature", Description: r21dTemperatureDescription, Parameters: r21dTemperatureSchema},
		{Name: "final_result", Description: "The final response which ends this conversation", Parameters: r21dFinalResultSchema},
	}
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"generationConfig":{"responseModalities":["TEXT"]}}`}
	return req
}

const (
	r21dTemperatureDescription = "<summary>Get the temperature in a city on a specific date.</summary>\n<returns>\n<description>The temperature in degrees Celsius.</description>\n</returns>"
	r21dTemperatureSchema      = `{"additionalProperties":false,"properties":{"city":{"description":"The city name.","type":"string"},"date":{"description":"The date. (format: date)","type":"string"}},"required":["city","date"],"type":"object"}`
	r21dFinalResultSchema      = `{"properties":{"city":{"type":"string"},"date":{"description":"Format: date","type":"string"},"temperature":{"type":"string"}},"required":["temperature","date","city"],"type":"object"}`
)

// r21dTemperatureBody is that request as we send it with these contents:
// the tools as recorded and mode ANY without allowedFunctionNames
// (pydantic-ai listed both tools, which is every tool: the same to the API).
func r21dTemperatureBody(t *testing.T, contents string) string {
	return `{"contents":` + contents + `,"generationConfig":{"responseModalities":["TEXT"]},"systemInstruction":{"parts":[{"text":"You are a helpful chatbot."}]},` +
		`"toolConfig":{"functionCallingConfig":{"mode":"ANY"}},` +
		`"tools":[{"functionDeclarations":[{"description":` + r21dQuote(t, r21dTemperatureDescription) + `,"name":"temperature","parametersJsonSchema":` + r21dTemperatureSchema + `},` +
		`{"description":"The final response which ends this conversation","name":"final_result","parametersJsonSchema":` + r21dFinalResultSchema + `}]}]}`
}

// TestRound21dStructuredOutputToolLoop: gemini-2.0-flash (January 2026),
// unary, a call required of two tools, two requests. Turn 1: the
// temperature call {"city": "London", "date": "2022-01-01"} with no id
// (Gemini 2.0 gives none: ours makes one up and keeps it to itself) and
// no signature, STOP (a call: tool calls), avgLogprobs; 69 prompt + 14
// candidates (both TEXT), 83 total. Turn 2, after the result "30°C": the
// final_result call {"city": "London", "date": "2022-01-01",
// "temperature": "30°C"}; 91 + 21, 112 total. Our second request has the
// recorded turns but for three things the API takes either way: no id on
// the call and its response (pydantic-ai sent its own pyd_ai_ id), no
// placeholder signature (Gemini 2.0 validates none) and the result as
// {"result": "30°C"} (pydantic-ai: {"return_value": "30°C"}); both
// requests leave out allowedFunctionNames listing every tool. Each
// avgLogprobs is kept in meta.extended.
func TestRound21dStructuredOutputToolLoop(t *testing.T) {
	t.Parallel()
	const q = "What was the temperature in London 1st January 2022?"
	user := `{"parts":[{"text":"` + q + `"}],"role":"user"}`
	res1, srv1 := r21Unary(t, "real_pyd_google_model_structured_output_1", r21dTemperatureRequest(msg(llmrelayv1.Role_ROLE_USER, text(q))))
	r21SameRequest(t, srv1, "/v1beta/models/gemini-2.0-flash:generateContent", r21dTemperatureBody(t, "["+user+"]"))
	parts := res1.Message.GetParts()
	if len(parts) != 1 || parts[0].GetToolCall() == nil {
		t.Fatalf("turn 1 parts %v", parts)
	}
	call := parts[0].GetToolCall()
	if call.GetName() != "temperature" || call.GetArguments() != `{"city":"London","date":"2022-01-01"}` || !call.GetArgumentsValid() || call.GetCallId() == "" || call.GetSignature() != "" {
		t.Errorf("turn 1 call %v", call)
	}
	r21Meta(t, res1.Meta, "cjR8aY30KYyHz7IPgpnP2Qg", "gemini-2.0-flash", "STOP", llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS,
		&llmrelayv1.Usage{InputTokens: 69, OutputTokens: 14, TotalTokens: 83})

	res2, srv2 := r21Unary(t, "real_pyd_google_model_structured_output_2", r21dTemperatureRequest(msg(llmrelayv1.Role_ROLE_USER, text(q)),
		res1.Message, msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(call.GetCallId(), "30°C"))))
	r21SameRequest(t, srv2, "/v1beta/models/gemini-2.0-flash:generateContent", r21dTemperatureBody(t, "["+user+
		`,{"parts":[{"functionCall":{"args":{"city":"London","date":"2022-01-01"},"name":"temperature"}}],"role":"model"},`+
		`{"parts":[{"functionResponse":{"name":"temperature","response":{"result":"30°C"}}}],"role":"user"}]`))
	parts = res2.Message.GetParts()
	if len(parts) != 1 || parts[0].GetToolCall() == nil || parts[0].GetToolCall().GetName() != "final_result" ||
		parts[0].GetToolCall().GetArguments() != `{"city":"London","date":"2022-01-01","temperature":"30°C"}` {
		t.Errorf("turn 2 parts %v", parts)
	}
	r21Meta(t, res2.Meta, "czR8aYbANbbpz7IPlerjOQ", "gemini-2.0-flash", "STOP", llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS,
		&llmrelayv1.Usage{InputTokens: 91, OutputTokens: 21, TotalTokens: 112})
	for i, c := range []struct {
		meta *llmrelayv1.ResponseMeta
		want float64
	}{{res1.Meta, -1.5454250387847424e-05}, {res2.Meta, -7.697110829342688e-06}} {
		var v float64
		if err := json.Unmarshal([]byte(r21Ext(t, c.meta, extAvgLogprobs)), &v); err != nil || v != c.want {
			t.Errorf("turn %d avgLogprobs %s, recorded %v", i+1, r21Ext(t, c.meta, extAvgLogprobs), c.want)
		}
	}
}

// TestRound21dPromptedOutputWithTool: gemini-2.5-pro (January 2026),
// unary, pydantic-ai's prompted output (the CityLocation schema in the
// system instruction) beside a tool of no parameters, two requests.
// Turn 1: the get_user_country call with no id, carrying a
// thoughtSignature (3.4 KB, whole by its protobuf length prefix), STOP
// with finishMessage "Model generated function call(s)." (kept in
// meta.extended); 125 prompt + 12 + 646 thought tokens, 783 total. Turn 2,
// after "Mexico": the answer in a json code fence (the model ignored "no
// fencing"), its text carrying the signature; 156 + 25 + 178, 359 total.
// Our second request has the recorded turns but for pydantic-ai's
// pyd_ai_ id on the call and its response, the signature in the standard
// base64 the API sent (pydantic-ai's URL-safe; the request's json.dumps
// length with it, 4556, is its recorded length), {"result": "Mexico"} for
// its return_value and no empty description.
func TestRound21dPromptedOutputWithTool(t *testing.T) {
	t.Parallel()
	const (
		q      = "What is the largest city in the user country? Use the get_user_country tool and then your own world knowledge."
		system = "\nAlways respond with a JSON object that's compatible with this schema:\n\n" +
			`{"properties": {"city": {"type": "string"}, "country": {"type": "string"}}, "required": ["city", "country"], "type": "object", "title": "CityLocation"}` +
			"\n\nDon't include any text or Markdown fencing before or after.\n"
	)
	request := func(turns ...*llmrelayv1.Message) *provider.Request {
		req := r21User("gemini-2.5-pro", system, turns...)
		req.Protocol = llmrelayv1.Protocol_PROTOCOL_TOOLS
		req.Tools = []*llmrelayv1.Tool{{Name: "get_user_country", Parameters: `{"additionalProperties":false,"properties":{},"type":"object"}`}}
		req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"generationConfig":{"responseModalities":["TEXT"]}}`}
		return req
	}
	body := func(contents string) string {
		return `{"contents":` + contents + `,"generationConfig":{"responseModalities":["TEXT"]},"systemInstruction":{"parts":[{"text":` + r21dQuote(t, system) + `}]},` +
			`"tools":[{"functionDeclarations":[{"name":"get_user_country","parametersJsonSchema":{"additionalProperties":false,"properties":{},"type":"object"}}]}]}`
	}
	user := `{"parts":[{"text":"` + q + `"}],"role":"user"}`
	res1, srv1 := r21Unary(t, "real_pyd_google_prompted_output_with_tools_1", request(msg(llmrelayv1.Role_ROLE_USER, text(q))))
	r21SameRequest(t, srv1, "/v1beta/models/gemini-2.5-pro:generateContent", body("["+user+"]"))
	sig1, _ := r21RecordedCandidate(t, "real_pyd_google_prompted_output_with_tools_1")["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)["thoughtSignature"].(string)
	if len(sig1) != 3436 || !strings.HasPrefix(sig1, "Co4UAXLI2nzudxgaUXrU") || !strings.HasSuffix(sig1, "uXuPQrkMr4luI") {
		t.Fatalf("recorded signature %q", sig1)
	}
	parts := res1.Message.GetParts()
	if len(parts) != 1 || parts[0].GetToolCall() == nil {
		t.Fatalf("turn 1 parts %v", parts)
	}
	call := parts[0].GetToolCall()
	if call.GetName() != "get_user_country" || call.GetArguments() != "{}" || call.GetSignature() != sig1 || call.GetCallId() == "" {
		t.Errorf("turn 1 call %v", call)
	}
	r21Meta(t, res1.Meta, "UFl8acntH6jpz7IPpK3MoAE", "gemini-2.5-pro", "STOP", llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS,
		&llmrelayv1.Usage{InputTokens: 125, OutputTokens: 658, TotalTokens: 783, ReasoningTokens: 646})
	if got := r21Ext(t, res1.Meta, extFinishMessage); got != `"Model generated function call(s)."` {
		t.Errorf("finish message %s", got)
	}

	res2, srv2 := r21Unary(t, "real_pyd_google_prompted_output_with_tools_2", request(msg(llmrelayv1.Role_ROLE_USER, text(q)),
		res1.Message, msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(call.GetCallId(), "Mexico"))))
	r21SameRequest(t, srv2, "/v1beta/models/gemini-2.5-pro:generateContent", body("["+user+
		`,{"parts":[{"functionCall":{"args":{},"name":"get_user_country"},"thoughtSignature":"`+sig1+`"}],"role":"model"},`+
		`{"parts":[{"functionResponse":{"name":"get_user_country","response":{"result":"Mexico"}}}],"role":"user"}]`))
	sig2, _ := r21RecordedCandidate(t, "real_pyd_google_prompted_output_with_tools_2")["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)["thoughtSignature"].(string)
	if len(sig2) != 988 || !strings.HasPrefix(sig2, "CuAFAXLI2nzl76CfdYfK") {
		t.Fatalf("recorded signature %q", sig2)
	}
	want2 := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("```json\n{\n  \"city\": \"Mexico City\",\n  \"country\": \"Mexico\"\n}\n```"), reasoningPart(&llmrelayv1.Reasoning{Signature: sig2}))
	if !proto.Equal(res2.Message, want2) {
		t.Errorf("turn 2 message\n got %v\nwant %v", res2.Message, want2)
	}
	r21Meta(t, res2.Meta, "U1l8aZibC76Hz7IP_KaW6Qg", "gemini-2.5-pro", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 156, OutputTokens: 203, TotalTokens: 359, ReasoningTokens: 178})
}

// TestRound21dTopP: gemini-2.5-flash (January 2026), unary, top_p 0.5 with
// a system prompt: one text part, STOP; 15 prompt (TEXT) + 8 candidates +
// 16 thought tokens, 39 total. The request is the recorded one (topP in
// generationConfig).
func TestRound21dTopP(t *testing.T) {
	t.Parallel()
	const name = "real_pyd_google_model_top_p"
	req := r21User("gemini-2.5-flash", "You are a helpful chatbot.", msg(llmrelayv1.Role_ROLE_USER, text("What is the capital of France?")))
	half := 0.5
	req.Options = &llmrelayv1.GenerationOptions{TopP: &half}
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"generationConfig":{"responseModalities":["TEXT"]}}`}
	res, srv := r21Unary(t, name, req)
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text("The capital of France is **Paris**.")); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	r21Meta(t, res.Meta, "cTZ8aai3B5-pqtsPhovV6QM", "gemini-2.5-flash", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 15, OutputTokens: 24, TotalTokens: 39, ReasoningTokens: 16})
	if len(res.Meta.GetWarnings()) != 0 {
		t.Errorf("warnings %q", res.Meta.GetWarnings())
	}
	r21SameRequest(t, srv, "/v1beta/models/gemini-2.5-flash:generateContent",
		`{"contents":[{"parts":[{"text":"What is the capital of France?"}],"role":"user"}],"generationConfig":{"responseModalities":["TEXT"],"topP":0.5},`+
			`"systemInstruction":{"parts":[{"text":"You are a helpful chatbot."}]}}`)
}

// TestRound21dNativeOutputUnion: gemini-2.0-flash (January 2026), unary,
// pydantic-ai's native output for a union of two shapes (anyOf of
// CityLocation and CountryLanguage under "result", each tagged by a
// one-value enum) sent as responseJsonSchema with the JSON MIME type: the
// model picked CountryLanguage, pretty-printed in one text part; STOP,
// avgLogprobs kept; 9 prompt + 46 candidates (both TEXT), 55 total. The
// request is the recorded one.
func TestRound21dNativeOutputUnion(t *testing.T) {
	t.Parallel()
	const (
		name   = "real_pyd_google_native_output_multiple"
		schema = `{"additionalProperties":false,"properties":{"result":{"anyOf":[{"additionalProperties":false,"properties":{"data":{"properties":{"city":{"type":"string"},"country":{"type":"string"}},"required":["city","country"],"type":"object"},"kind":{"enum":["CityLocation"],"type":"string"}},"required":["kind","data"],"type":"object"},{"additionalProperties":false,"properties":{"data":{"properties":{"country":{"type":"string"},"language":{"type":"string"}},"required":["country","language"],"type":"object"},"kind":{"enum":["CountryLanguage"],"type":"string"}},"required":["kind","data"],"type":"object"}]}},"required":["result"],"type":"object"}`
	)
	req := r21User("gemini-2.0-flash", "", msg(llmrelayv1.Role_ROLE_USER, text("What is the primarily language spoken in Mexico?")))
	req.Options = &llmrelayv1.GenerationOptions{ResponseFormat: &llmrelayv1.ResponseFormat{Type: llmrelayv1.ResponseFormatType_RESPONSE_FORMAT_TYPE_JSON_SCHEMA, Schema: schema}}
	req.ProviderOptions = &llmrelayv1.ProviderOptions{ExtraBody: `{"generationConfig":{"responseModalities":["TEXT"]}}`}
	res, srv := r21Unary(t, name, req)
	const answer = "{\n  \"result\": {\n    \"kind\": \"CountryLanguage\",\n    \"data\": {\n      \"country\": \"Mexico\",\n      \"language\": \"Spanish\"\n    }\n  }\n}"
	if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, text(answer)); !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	r21Meta(t, res.Meta, "nDR8aZf9HdWiqtsPsb65mQI", "gemini-2.0-flash", "STOP", llmrelayv1.FinishReason_FINISH_REASON_STOP,
		&llmrelayv1.Usage{InputTokens: 9, OutputTokens: 46, TotalTokens: 55})
	var avg float64
	if err := json.Unmarshal([]byte(r21Ext(t, res.Meta, extAvgLogprobs)), &avg); err != nil || avg != -5.418194822319176e-05 {
		t.Errorf("avgLogprobs %s", r21Ext(t, res.Meta, extAvgLogprobs))
	}
	if len(res.Meta.GetWarnings()) != 0 {
		t.Errorf("warnings %q", res.Meta.GetWarnings())
	}
	r21SameRequest(t, srv, "/v1beta/models/gemini-2.0-flash:generateContent",
		`{"contents":[{"parts":[{"text":"What is the primarily language spoken in Mexico?"}],"role":"user"}],"generationConfig":{"responseJsonSchema":`+schema+
			`,"responseMimeType":"application/json","responseModalities":["TEXT"]}}`)
}
