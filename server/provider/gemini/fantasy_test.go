package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// charmbracelet/fantasy's go-vcr cassettes (testdata/README.md, "Real
// recordings from charmbracelet/fantasy's cassettes"): streamGenerateContent
// with alt=sse as recorded (spaced JSON, CRLF framing), only the
// Content-Type header kept. The expectations are read off the recordings by
// hand; fantasyStreams adds, to what checkSimonw checks, each call's whole
// signature and its arguments byte for byte.
type fantasyWant struct {
	simonwWant
	// sigs and args are each call's whole thoughtSignature ("" for none)
	// and arguments text, in order.
	sigs, args []string
}

// The unary recordings (TestFantasyGenerate, TestFantasyGenerateParallel).
const (
	fantasyUnary               = "real_fantasy_google_thinking_gemini_3_pro_1"
	fantasyUnaryParallel       = "real_fantasy_google_gemini_2_5_pro_multi_tool_1"
	fantasyVertexUnaryParallel = "real_fantasy_vertex_gemini_flash_multi_tool_1"
)

var fantasyStreams = map[string]fantasyWant{
	// gemini-2.5-flash, two parallel calls in one chunk without ids: the
	// first carries the thoughtSignature, the second none, its arguments
	// in the model's order (b before a); finishReason STOP with
	// finishMessage; 36 candidate + 39 thought tokens.
	"real_fantasy_google_multi_tool_streaming_1": {simonwWant{req: "tools_parallel", model: "gemini-2.5-flash", responseID: "XNH5aLSAF8GznsEP9sXIsAs",
		calls:  []simonwCall{{"", "add", `{"a":2,"b":3}`, "CiQB0e2Kb02QlBJ2I5/z"}, {"", "multiply", `{"b":3,"a":2}`, ""}},
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, finishMsg: "Model generated function call(s).",
		in: 121, out: 36 + 39, total: 196, thoughts: 39},
		[]string{"CiQB0e2Kb02QlBJ2I5/zDqv1c0AUEV+Ct+vGYwdFdWC3cx3yIuUKXQHR7Ypv3ZUytEmQlCdJhzrfshB8YFIoW134jv3AuUL8L16mz3cXjEvhr8tAFeSEScUollNyBu/e3OFraKdblEfpDXY2UASkOMhrezbveAaD4bxTeBmXbcJNqLFeTwp/AdHtim8YarufF4O5TXWRjFYgnIppzlQcQfTEyqqmA8J3gLjGgyROG7/2MSw/0EakJKFOXuFth2Sdskl1sLjsD7lOvAxbmzDHITcg9l39JrSaXcHN405OLs1bfgIhKdi8m/wq+MXPL72IOuO6YjuBjud9qruxF3/THtP+netVeA==", ""},
		[]string{`{"a":2,"b":3}`, `{"b":3,"a":2}`}},
	// gemini-3-pro-preview with includeThoughts and thinkingLevel HIGH: no
	// thought summary, a signed call in a chunk without finishReason, then
	// an empty text part with finishReason STOP (no finishMessage); 16
	// candidate + 73 thought tokens on both chunks.
	"real_fantasy_google_thinking_gemini_3_pro_streaming_1": {simonwWant{req: "thinking_tools", model: "gemini-3-pro-preview", responseID: "dv-dadqKAouGz7IP2r-x4Ao",
		calls:  []simonwCall{{"", "weather", `{"location":"Florence, Italy"}`, "EqoDCqcDAb4+9vtxYT0M"}},
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS,
		in:     65, out: 16 + 73, total: 154, thoughts: 73},
		[]string{"EqoDCqcDAb4+9vtxYT0MyTOcABWD9QZqDpm796s3VmnwFwdFNh/sd/gdkTxOEWPxg1YG5CYfNIr4+IVvBgqtGb5osFqiIEVetBLwdCnZlPCRT5mjeJNvRLN11YqUzNWjokDKsiKMAynCETBR0s5FN+HW8ANlVJiMRTgknDuAAEWBU8X1S7ST0V4KUrK0Qt//hh9njcp3gDabEu3IMKRfUEC9uoicajB+u+EOS7bH8gzR+JqvNqLyzcSb2BTy9JIE09lweuDs2ONAdbOC1EhJpObh7QG3GNy9Wbw2+5MnnOk2NQxY72yLDDl+rTYVeR3U4wQPkFrv9BaoIOOKu2i51JB7kCNVxXrGt3QxpAy4fBULpJ7WamIIEM+zaM7MwVeD1+9pdXSUDvZ9ZT6LmiKBFtG/Cw5RQaHbNxFR7GS/bOYZPv3JaOIUDDfHoWOokFrJ1exTx5b5IQ9a8vAZZhNAHbWT5OIHLkOzjgJGfK3E/KLudlAdUDhJgCR6p/KHQRC11eE2RrvWfoJri+IEW4h4+4P3dk50AZXgslTB4fjdninU1rqLEdarsdhHQ0jl"},
		[]string{`{"location":"Florence, Italy"}`}},
	// The answer after the tool result: "°" in the text, a last empty
	// text part with finishReason whose chunk raises promptTokenCount
	// (95 to 168).
	"real_fantasy_google_thinking_gemini_3_pro_streaming_2": {simonwWant{req: "plain", model: "gemini-3-pro-preview", responseID: "eP-dabHAGIWsz7IP8p272QY",
		text:   "The weather in Florence, Italy is currently 40°C.",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, in: 168, out: 14, total: 182}, nil, nil},
	// gemini-2.5-pro with includeThoughts and a 128-token budget: a thought
	// summary (escaped quotes, backticks, three final line breaks) in a
	// chunk without candidatesTokenCount, then the signed call with
	// finishReason and finishMessage; 14 candidate + 67 thought tokens.
	"real_fantasy_google_thinking_gemini_2_5_pro_streaming_1": {simonwWant{req: "thinking_tools", model: "gemini-2.5-pro", responseID: "hAkJaeFW9IfPsg_C9c2ACw",
		reasoning: "**Determining Weather Location**\n\nI've homed in on the user's request. It's a clear weather query targeting \"Florence, Italy.\" " +
			"This directly triggers the `weather.get_weather` function. The key is the `location` parameter, which is easily set to \"Florence, Italy\".\n\n\n",
		calls:  []simonwCall{{"", "weather", `{"location":"Florence, Italy"}`, "CiIB0e2KbyCfx1Z1RKkF"}},
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, finishMsg: "Model generated function call(s).",
		in: 54, out: 14 + 67, total: 135, thoughts: 67},
		[]string{"CiIB0e2KbyCfx1Z1RKkF6sHVGHTNjP3RfJVvbB2c3VXwURzoCmcB0e2Kby2As26sswW6FC3Viyj7C4KCMGBg0CzeZ1exOmHoBI+beWVEQkkJjaWIt+tahvCbytKtiCVbpMiJ1ahWtYv3H7UEahkL4PAJB51RVdijk5/p5wQzrivdSZNfJlPNVha/wuXpCocBAdHtim883J+t+t3gG4ZOoZFXa1/m37O2QO0ZCVjKsZjwrjFopVJ7pDBX5NlY0c8dBtV7d03eyYr1B4mrQX7Mzn69/qZdzXwl0TyD50iYlY/7gnkz5UvVpViDaP6/iolbtHL26EjN57L81KT97tdda/SwEqwVJuN38QQOHXC2Ku6u2TFpZUd2CnAB0e2Kb5HwqXMp8QpDRCrUG60zY5e8lY1jQWgHZjfXe0k6uZ+VZIMm3oZFG/PyhwRYm4vPNqWwurROkBxPwqrLGmoEb6fYn6Cs+5zKhHoiRdis4hyeqDc9pCUmruG7ts3D5CYlgJI7Z1/Wa+zI8act"},
		[]string{`{"location":"Florence, Italy"}`}},
	// Vertex AI gemini-2.5-pro (v1beta1): the candidate without "index",
	// "role" before "parts", two parallel calls without ids (the first
	// signed) in one chunk with finishReason STOP and no finishMessage;
	// trafficType, createTime, candidatesTokensDetails.
	"real_fantasy_vertex_gemini_multi_tool_streaming_1": {simonwWant{req: "tools_parallel", model: "gemini-2.5-pro", responseID: "PggJaeDQDNOM0ekPpsvo4Qk",
		calls:  []simonwCall{{"", "add", `{"a":2,"b":3}`, "CiQB4/H/XlX6NEE2oZem"}, {"", "multiply", `{"a":2,"b":3}`, ""}},
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS,
		in:     57, out: 10 + 78, total: 145, thoughts: 78},
		[]string{"CiQB4/H/XlX6NEE2oZemlkg67NxoKoJB5NoayjE5vi7trpqjHVUKXgHj8f9eB6K+z0Pl4dvATaGSyM3TPl0Ss2E68unSJJBQZlzT3epePny9LoODM1eSIS30esNvQYFWw8+AKSL4Dh7TrAF/wAXObu0B5EAxiisuNdpDpSNvoEmPYL8XwWEKawHj8f9ePJLfhHJqWosCkZwiGo/yuq3rNlyAYM+RpSTaT8sZ6TqgG5pqp8tzahjrBVMe8zc1I303Xj0fNeYyIK4GyXzva+kUzYv/Itnc/EEDDFHb9CnOsb7Q9UDiVIvbyn6Q0BIHHWtoJ8pWCocBAePx/14/qMNWbsiLE2J6ETDqka11adZo0yr8opBcpZqrrXLW0LCllKWrOucvFDJR2MrF+gO4RBZaR0xqT1bUPacWsYCD9fym+k2O/6mTQQCZr0dQv2z4ebrTpIJ3B3EgS90RToimlDHmUi6mv3sco9MHSOu+Cw/hFR5RCYodgJLNqsg5Bu/ECisB4/H/XqsC8CxNVguMHOF29sfs0UjX7aXTUL2oH5fq9qd3jukcEs2WH04x", ""},
		[]string{`{"a":2,"b":3}`, `{"a":2,"b":3}`}},
	// The answer after the tool results: one chunk, its text part (not a
	// thought) carrying the thoughtSignature; 19 candidate + 253 thought
	// tokens.
	"real_fantasy_vertex_gemini_multi_tool_streaming_2": {simonwWant{req: "plain", model: "gemini-2.5-pro", responseID: "QAgJafXbCeGA0ekPtcmwmA0",
		text: "The sum of 2 and 3 is 5, and the product is 6.", sigPrefix: "CiIB4/H/XkgskiftxblvQ",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, in: 73, out: 19 + 253, total: 345, thoughts: 253}, nil, nil},
	// gemini-2.5-pro: the two parallel calls in two chunks, the first
	// (signed, arguments b before a) in a chunk without finishReason, the
	// second with finishReason STOP and finishMessage; the counts grow
	// from 18 to 36 candidate tokens (285 thought tokens on both).
	"real_fantasy_google_gemini_2_5_pro_multi_tool_streaming_1": {simonwWant{req: "tools_parallel", model: "gemini-2.5-pro", responseID: "itH5aJG_B8zqkdUPprP6mAs",
		calls:  []simonwCall{{"", "add", `{"b":3,"a":2}`, "CiQB0e2Kb57nv74mjLhs"}, {"", "multiply", `{"b":3,"a":2}`, ""}},
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, finishMsg: "Model generated function call(s).",
		in: 121, out: 36 + 285, total: 442, thoughts: 285},
		[]string{"CiQB0e2Kb57nv74mjLhshFKCmBXd6OPdPXW6hcvhQ0Ah+RTWpvUKXgHR7Ypv2muReT3X/CMDBYqroFimUxlMLj8fYkd6ItNVADJZgVAz8s+GPlUX/X5ek+s3AsQxCk8comKPDFK025fkkNswGveqOfToi4ZKID+OgZ1UnJvgO3XA+5RxoHMKkQEB0e2KbwMhww+0chgTKrKmtGlVJEulUm8CodC3QpNadxWRmO2leIYgJu65gZEFdgaY58heQAwB+UZC4KRU/sSazBaG7+whubHZqf1v0XA+N9OGuq7tMI98lV+Pu33+XfjdpT5LLe9yudqZCwdGJwA8l9YjTl+zNZfEul/8/rY90S/DFS2E+2NkYq64vIi4vdEyCpoBAdHtim8KQahce7ytBBjX/e/zYLHMXGXgLsQm21oILm01MwjnLaaqmYS/9eQlPyGaLU2KTvfsgwKlGoTlPpqJ9jetepn/Ry8fkiCTVaufSXI2MP+ybDOMYMM8gaRZOyuu2Bzpjm/+J4i0VpUKNNICQh3WcJzW5qR+p8RHoiFdROWg9/LnMqS6ql6cyrxhGMwv2wIV5W9YqgjT6QqGAQHR7YpvhVr/elrAHhKJgicP7Y531AVoH/l4eb+qOY+7hzQujMZYEj8MefRJqjuPdcDfG+RYaBpgek5S1p5cohl1XE/oAkHNQXgpfvFuL02t4H+AlHejTwuR1s2x2XRNQKK6C+3mWr4R5Q79FY09Ieq/BAkLtrZvo0qGRDKyegrXTh+6WKvuCoYBAdHtim8f7Qn30hkTiHPm65o5izhEee3Ln58hX0mnFoP1UwpM5esqheL4kxEKQpcanIRDCmtj45oGOfB6VF7MEWgEQCZJwrv8KoH4CCxQwsoxdySngnL3kAGn6wfy40LOGiIA0np3mGDqhU600bm8UKjx3gj50DHwzLEEadNT3wy41oQ9xbEKagHR7YpvRXJGf6R/nSrN0wiqiAxYH8S/3OkkvL37e4HpwqMUY/4fIneWqquAB9lgbsBBrD7LKXu09p18UsLZtSz8/eFhtFB0YTnwHQZjAE/DEAPxRgprpym3W5XKtPEr7YzKbyqbjwS6l1YKYgHR7YpvSe18xmCtimGx0eW40nwaeZpXJ2hJCaOL01kzIz8cYrFQ8FvflkkOOEYnHHVEI5Io5ZtNu27OQfDttIyI82/s9rgFwFHIFqELwJgrPTx44Vr+db9wbZJqT7JNbQHqClUB0e2Kb9ctFr54D8Y/7NH/rFW4LtfWxRWLIJtPukLCA2XPRjjMzs33V8gzxH6RefPIbVVZlUOS655vRt7xV+qKxz919n4Idmwh6/tvWam6h/sM62eyCocBAdHtim8KLIApG87MqfFodW/FiuP5wi4eCxaBS3HRjdd76dN60hnL9BfdA91b0h9REWlyB5PF69Ps0L3nMUTMzOLQz5JDeRepYnCNLwd5JydEKdb2wu3VZD5YCY2sOUwwJVYjvIx75JuxAroAKBz9xvNP4lQjqlAKcToY7jppmCDa1yrvxnPzCpQBAdHtim9yshTGhyOwsEUpmAEzPlt+7ZJZFaU7DVFcSPg5N/w6u0yS30HInOHFPlkgc+uqSbgbAQv1tYI5+9z8LwfRDwmJohix4A/Gb1Yclj05Rm90gPucBd7CQPFdXz/11Sk8T8WLU9X0IKEz3x78ywWHsBcFWR5RMjxTsLFXb9qAtuCdEv1hb41As2ywKCLE9Tp28wpoAdHtim8VRv1D+31h2K/XWrtGT+3yb4K9s6iuxUgcUml21PO+Equsi+B5rhL3L6bFS+JNZE4QNjHhxPbcd7HYkUCuaFrUf1eSopsoHX39sYC0XMrJEe4VLlIUkET2lf/XIl+DaPbhZUsKRQHR7Ypvf8F2YJBtTLptW4g4i/ZDbcr11MMyv64V2/EqZZEmHTtw9nBE6SMCmgmrWYcMvYSPMkUr4eYZYPZl9tvgmXG/kAoiAdHtim9aDszqnOeIs2xlNS4m/E0X/HX7v+VS8LtXfbBGGw==", ""},
		[]string{`{"b":3,"a":2}`, `{"b":3,"a":2}`}},
	// The answer after the tool results: text ending in a line break, then
	// a last chunk whose content has a role and no parts, with finishReason.
	"real_fantasy_google_gemini_2_5_pro_multi_tool_streaming_2": {simonwWant{req: "plain", model: "gemini-2.5-pro", responseID: "kNH5aK-jF8vqkdUP0uSP-Aw",
		text:   "The sum of 2 and 3 is 5 and the product is 6.\n",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, in: 181, out: 18, total: 199}, nil, nil},
	// Vertex AI gemini-2.5-flash after a tool result: the first chunk's
	// usageMetadata holds only trafficType (no counts), the candidate no
	// index; the last chunk has the counts (38 in, 13 out).
	"real_fantasy_vertex_gemini_flash_tool_streaming_2": {simonwWant{req: "plain", model: "gemini-2.5-flash", responseID: "FggJaYymH6DM5OMPxdqygAc",
		text:   "The weather in Florence, Italy is 40 degrees Celsius.",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, in: 38, out: 13, total: 51}, nil, nil},
	// Vertex AI gemini-2.5-pro: a long first chunk (escaped quotes, "á",
	// Markdown) with a trafficType-only usageMetadata, then the end with
	// 74 candidate + 650 thought tokens and no thought part.
	"real_fantasy_vertex_gemini_pro_simple_streaming_1": {simonwWant{req: "plain", model: "gemini-2.5-pro", responseID: "JggJabPpD9KK0ekP6b_N-Q0",
		text: "Of course! The most common ways to say \"hi\" in Portuguese are:\n\n*   **Oi** (more informal, like \"hi\")\n" +
			"*   **Olá** (a bit more formal, like \"hello\")\n\nYou might also hear people greet each other with **Tudo bem?**, " +
			"which means \"How are you?\" or \"Is everything well?\".",
		finish: llmrelayv1.FinishReason_FINISH_REASON_STOP, in: 9, out: 74 + 650, total: 733, thoughts: 650}, nil, nil},
	// gemini-2.5-flash with includeThoughts and a 128-token budget: two
	// thought summaries in two chunks (one reasoning block: the text of
	// both), thought tokens 68 then 83, then the signed call with
	// finishReason and finishMessage; 13 candidate tokens.
	"real_fantasy_google_thinking_gemini_2_5_flash_streaming_1": {simonwWant{req: "thinking_tools", model: "gemini-2.5-flash", responseID: "1dH5aLdlu-fszw_R-5iICw",
		reasoning: "**Investigating Weather Inquiries**\n\nI've determined the user is seeking weather data for Florence, Italy. The \"weather\" tool seems appropriate, " +
			"and I'll configure its \"location\" parameter accordingly to gather the requested information. This seems straightforward.\n\n\n" +
			"**Clarifying Location Details**\n\nI have confirmed the user's focus is on weather data, specifically in Florence, Italy. Utilizing the `weather` tool is the logical next step. " +
			"I'm focusing now on accurately configuring the `location` parameter within the tool, ensuring the prompt for \"Florence, Italy\" is correctly processed. " +
			"This refined approach solidifies the connection between the user's intent and tool application.\n\n\n",
		calls:  []simonwCall{{"", "weather", `{"location":"Florence, Italy"}`, "CiQB0e2Kb9hi6EZcilsj"}},
		finish: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS, finishMsg: "Model generated function call(s).",
		in: 54, out: 13 + 83, total: 150, thoughts: 83},
		[]string{"CiQB0e2Kb9hi6EZcilsj+31+JVZ7CCByLgkmuNyInNF9Jk7ZYkkKZwHR7Ypv/Wt/XyxDgXKh2VbOdJFhhMduABt8qAJIEDD0z6fFQS5W1CMmYWEPduHvGAtDaHd6xyYM3EygM6WbB4I7lThasv2V+lVKac8WEoQeO2QBXNVQOzjb2UosWr+LiUTx87Xd43wKiwIB0e2Kb1fdQ2tOU+4YfSYRgJ8Du9zWgH9oTtFKGyqd3i5vS1T5+f+3KZZgEQcsJEfaRGnOMUzef50UMf0guk8KkzzNTWrIAKX/8ADI98S3dqYCyWa14ePKXLyOcSItiHfMfh5lEEjHnJPoLch/nn2Pc1f9r+xgK9lXtrlIvBCvMI5hIv+5U90bX2zDPIkuSV2Nrzst9TayGjXeaUCRgRmKQeVz8QODcSz1bGpdF95TRZ7pjn5qgUWYHds0UGwrgdnSP20mB7WyM5GMet9olZGxzO/o7Uy2cFvkg1Y3h8RF6OzgY0MjU6LDNPU2f/YEa8DW1wNLVGDZUyg9SnBlOLSZgYcQ5GBillDwIcsKWwHR7YpvweOODmmbYd8sYQ8QhwNr+nOAua2aT4bgsdScNUwMpZVrYy2dEHujhG9RN9uppP9zVscepQA12M3SsU4iSJzD9T7va68LW2kQWO1FnY5oZjzBP0T1qjE="},
		[]string{`{"location":"Florence, Italy"}`}},
}

func TestFantasyStreams(t *testing.T) {
	t.Parallel()
	for name, w := range fantasyStreams {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, _ := replay(t, name)
			s, err := p.Stream(context.Background(), generateCases(t)[w.req])
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			defer s.Close()
			evs, end := drain(t, s)
			if !errors.Is(end, io.EOF) {
				t.Fatalf("stream ended with %v", end)
			}
			providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderStream(t, evs, end))
			checkSimonw(t, w.simonwWant, evs)
			// A usageMetadata without counts (Vertex AI's first chunks)
			// is not a zero usage: every usage event has counts.
			for _, ev := range evs {
				if ev.Kind == provider.EventUsage && ev.Usage.GetInputTokens() == 0 && ev.Usage.GetTotalTokens() == 0 {
					t.Errorf("usage event without counts: %v", ev.Usage)
				}
			}
			calls := foldEvents(evs).calls
			ids := map[string]bool{}
			for i, c := range calls {
				if i < len(w.sigs) && c.GetSignature() != w.sigs[i] {
					t.Errorf("call %d signature %.40q…, want %.40q…", i, c.GetSignature(), w.sigs[i])
				}
				if i < len(w.args) && c.GetArguments() != w.args[i] {
					t.Errorf("call %d arguments %s, want %s as recorded", i, c.GetArguments(), w.args[i])
				}
				if ids[c.GetCallId()] {
					t.Errorf("call %d reuses id %q", i, c.GetCallId())
				}
				ids[c.GetCallId()] = true
			}
		})
	}
}

// TestFantasyGenerate: gemini-3-pro-preview, unary, with includeThoughts
// and thinkingLevel HIGH (pretty-printed as the API sends it): a thought
// summary (backticks, escaped quotes, three final line breaks), then a
// signed call without an id; finishReason STOP with finishMessage; 16
// candidate + 80 thought tokens.
func TestFantasyGenerate(t *testing.T) {
	t.Parallel()
	const name = fantasyUnary
	const responseID = "cf-dacuQCbPoz7IPiZ25mAE"
	p, _ := replay(t, name)
	res, err := p.Generate(context.Background(), generateCases(t)["thinking_tools"])
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	providertest.Golden(t, filepath.Join("testdata", name+".golden"), renderResult(t, res))
	call := toolCallPart(generatedID(responseID, 0, "", ""), "weather", `{"location":"Florence, Italy"}`)
	call.GetToolCall().Signature = "EoMDCoADAb4+9vvcql04LjFTQa1nTMMudhrlpmFSqgQWtecZs9Gzm8GC6izmq42etV5ICgg5qr/h5KO05LHjo7OT/Y/O6zTq5vweOOvvAZHK3IDBgU7FBiCW5bW+nI6TjhgDHSNPn/Uk14iuv5RGXrH1QgxQ2ApBiLQlEmkjzmzmBUgI0gRmjRX+sDMF0IJu66tmZfkaqvR9Tp2xxEZjJitWL7P6jZvql6JE54UmL8dI02Dk/xnNS76rZiipzg8013aXxfIEgTEHMnsRvzK7QCGaukQ+/DU8GnomhZRYZPEW32OxQEjUyqm10c8o62WPtThyfIUmUBHwc8oojkH/2IT5fRy2nJwvUar3O82/of2miqe/9z7TNTKNK83wl9Gy5R3Gbc/XjI7A+LrwlYTynsVRqXFg3YURlzRnfFcGt4KEUcd2wLKqpeCNSngzS0VgiEqK5j9RTPedm3S2/oTgtl8jt2gff3NEDkJe8xUlXLS+l28rJ22Loc9BooDebKZYBBHvL9qu"
	want := msg(llmrelayv1.Role_ROLE_ASSISTANT,
		reasoningPart(&llmrelayv1.Reasoning{Text: "**My Approach to Gathering Weather Information**\n\n" +
			"Okay, so the user wants the weather for Florence, Italy. My primary task here is to find the most efficient way to get that information. " +
			"I immediately recognize the need for a weather data retrieval tool; that's the obvious starting point. I quickly scan my available tools and, " +
			"from what I see, the `weather` tool seems like the most relevant option. That's a good sign.\n\n" +
			"Now, I need to ensure I'm using this tool correctly. It takes a `location` parameter, which is exactly what I need to specify the city. " +
			"Excellent, that aligns perfectly with the user's request for Florence. Therefore, the logical action is to call the `weather` tool and pass " +
			"\"Florence, Italy\" as the value for the `location` parameter. The structure will be `weather(location=\"Florence, Italy\")`. " +
			"That should provide the user with the weather details they're after.\n\n\n"}),
		call)
	if !proto.Equal(res.Message, want) {
		t.Errorf("message\n got %v\nwant %v", res.Message, want)
	}
	m := res.Meta
	if m.GetResponseId() != responseID || m.GetResolvedModel() != "gemini-3-pro-preview" ||
		m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetProviderFinishReason() != "STOP" {
		t.Errorf("meta %v", m)
	}
	if got, _ := m.GetExtended().AsMap()[extFinishMessage].(string); got != "Model generated function call(s)." {
		t.Errorf("finish message %q", got)
	}
	wantUsage := &llmrelayv1.Usage{InputTokens: 65, OutputTokens: 16 + 80, TotalTokens: 161, ReasoningTokens: 80}
	if !proto.Equal(m.GetUsage(), wantUsage) {
		t.Errorf("usage %v, want %v", m.GetUsage(), wantUsage)
	}
	if len(m.GetWarnings()) != 0 {
		t.Errorf("warnings %q", m.GetWarnings())
	}
}

// TestFantasyGenerateParallel: unary answers (pretty-printed as the API
// sends them) with two parallel calls without ids, the first signed, the
// second not.
func TestFantasyGenerateParallel(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, responseID, model, sig, finishMsg string
		usage                                   *llmrelayv1.Usage
		avgLogprobs                             float64 // 0: none
		createTime                              time.Time
	}{
		// gemini-2.5-pro: finishMessage; 36 candidate + 73 thought tokens.
		{fantasyUnaryParallel, "DQkJadesHOWzqtsP98mO8Ao", "gemini-2.5-pro",
			"CpECAdHtim+6+kabSNJ55G1aHXgyrJEt4/hov4uGHkcSqzlgfBd4clna+c9UpSL1rvSqMOb2E8NohfunKGm4ZHHOX9X+dBKww0ekyLz+83CF28LbsOzDHrPtIiRYoDaL/75h/HzhboaPK+aunAUglNLxM/b5yrr2tT0jKvz4LzuymTYHCpzBCcoIecoeuT0RO/WaUsjB8CMRGxnigv2XtuFkBxxzk2OWPmhSM6KTeIQTVe0d3T4HjKe2L76XG1WeaV3weeMxeCyrqX4ycxH2fJ1h5cG5EONLNxqA9eHREWu/j5ABiOGxZv2ih6xU/xyo5apwpLAwVSYtyDKXiTH4T6Wp/V7t8E7Urj4smOABFupCATUl",
			"Model generated function call(s).", &llmrelayv1.Usage{InputTokens: 125, OutputTokens: 36 + 73, TotalTokens: 234, ReasoningTokens: 73}, 0, time.Time{}},
		// Vertex AI gemini-2.5-flash: no candidate index, no finishMessage,
		// avgLogprobs, createTime, trafficType; 10 candidate + 70 thought
		// tokens.
		{fantasyVertexUnaryParallel, "FwgJaaXLHe2iptQP__zTsAs", "gemini-2.5-flash",
			"CqECAePx/16hu6jpQBsua/6D0znPjMbbAuwTIAxACow0BHlZjpuJ2bAGyr7Wo7paE6FNx84jcAd1AMLIJAWscUNukGCRiDORASgswHP16BSSB6jN5dLjTJ0UpUoxESXEW4U0iyrruAkortreKykTPMnW63wWjao8KQESbO/Q7g7WOQPGUzpmOCw9cvKt6I/DRZLjiJ1S8BmgEbc8ix2C4YBguza0iJ28V3ggewHiXumC3RxijchXLLkLx9Y5ww3XoJk1QaaWN3puEeWyVpEOQQJHa0pQVLYIp+IkQ0t0oe3jKDI05FBjn+h1lvbHoPuImyLtjUZFAMBqh76BWHQAYsfVUEzzSWplygLX0RP+NABj/9jDMK22/+DjBnBpEL1dv0lXvQ==",
			"", &llmrelayv1.Usage{InputTokens: 60, OutputTokens: 10 + 70, TotalTokens: 140, ReasoningTokens: 70}, -0.99647712707519531,
			time.Date(2025, 11, 3, 19, 52, 55, 484773000, time.UTC)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, _ := replay(t, tc.name)
			res, err := p.Generate(context.Background(), generateCases(t)["tools_parallel"])
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			providertest.Golden(t, filepath.Join("testdata", tc.name+".golden"), renderResult(t, res))
			add := toolCallPart(generatedID(tc.responseID, 0, "", ""), "add", `{"a":2,"b":3}`)
			add.GetToolCall().Signature = tc.sig
			mul := toolCallPart(generatedID(tc.responseID, 1, "", ""), "multiply", `{"a":2,"b":3}`)
			if want := msg(llmrelayv1.Role_ROLE_ASSISTANT, add, mul); !proto.Equal(res.Message, want) {
				t.Errorf("message\n got %v\nwant %v", res.Message, want)
			}
			m := res.Meta
			if m.GetResponseId() != tc.responseID || m.GetResolvedModel() != tc.model ||
				m.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS || m.GetProviderFinishReason() != "STOP" {
				t.Errorf("meta %v", m)
			}
			ext := m.GetExtended().AsMap()
			if got, _ := ext[extFinishMessage].(string); got != tc.finishMsg {
				t.Errorf("finish message %q, want %q", got, tc.finishMsg)
			}
			if got, _ := ext[extAvgLogprobs].(float64); got != tc.avgLogprobs {
				t.Errorf("avgLogprobs %v, want %v", ext[extAvgLogprobs], tc.avgLogprobs)
			}
			if (m.GetCreateTime() != nil) != !tc.createTime.IsZero() || (m.GetCreateTime() != nil && !m.GetCreateTime().AsTime().Equal(tc.createTime)) {
				t.Errorf("create time %v, want %v", m.GetCreateTime(), tc.createTime)
			}
			if !proto.Equal(m.GetUsage(), tc.usage) {
				t.Errorf("usage %v, want %v", m.GetUsage(), tc.usage)
			}
			if len(m.GetWarnings()) != 0 {
				t.Errorf("warnings %q", m.GetWarnings())
			}
		})
	}
}

// TestFantasyRoundTrip: the answer of
// real_fantasy_google_thinking_gemini_3_pro_streaming_1, sent back with the
// tool's result, must go out as fantasy's second request of the same
// cassette did (the live API accepted it): the model turn is the one call
// with its arguments and its thoughtSignature on the same part, the user
// turn the functionResponse for that name.
func TestFantasyRoundTrip(t *testing.T) {
	t.Parallel()
	const name = "real_fantasy_google_thinking_gemini_3_pro_streaming_1"
	w := fantasyStreams[name]
	p, _ := replay(t, name)
	s, err := p.Stream(context.Background(), generateCases(t)["thinking_tools"])
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	defer s.Close()
	evs, end := drain(t, s)
	if !errors.Is(end, io.EOF) {
		t.Fatalf("stream ended with %v", end)
	}
	answer := foldMessage(t, evs)
	callID := generatedID(w.responseID, 0, "", "")

	req := generateCases(t)["thinking_tools"]
	req.Messages = []*llmrelayv1.Message{
		msg(llmrelayv1.Role_ROLE_USER, text("What's the weather in Florence, Italy?")),
		answer,
		msg(llmrelayv1.Role_ROLE_TOOL, toolResultPart(callID, "40 C")),
	}
	next, srv := replay(t, fantasyUnary)
	if _, err := next.Generate(context.Background(), req); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	var sent struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text             *string `json:"text"`
				Thought          bool    `json:"thought"`
				ThoughtSignature string  `json:"thoughtSignature"`
				FunctionCall     *struct {
					Name string         `json:"name"`
					Args map[string]any `json:"args"`
				} `json:"functionCall"`
				FunctionResponse *struct {
					Name     string         `json:"name"`
					Response map[string]any `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	}
	body := srv.Last(t).Body
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatalf("request body: %v", err)
	}
	if len(sent.Contents) != 3 || sent.Contents[1].Role != "model" || len(sent.Contents[1].Parts) != 1 {
		t.Fatalf("contents %s, want user, model with one part, user", body)
	}
	// As fantasy sent it: {"functionCall":{"args":{"location":"Florence, Italy"},"id":"1","name":"weather"},"thoughtSignature":"EqoD…"}.
	part := sent.Contents[1].Parts[0]
	if part.FunctionCall == nil || part.FunctionCall.Name != "weather" || part.Text != nil || part.Thought ||
		!jsonEqual(part.FunctionCall.Args, map[string]any{"location": "Florence, Italy"}) || part.ThoughtSignature != w.sigs[0] {
		t.Errorf("model turn %s", body)
	}
	if len(sent.Contents[2].Parts) != 1 || sent.Contents[2].Parts[0].FunctionResponse == nil ||
		sent.Contents[2].Parts[0].FunctionResponse.Name != "weather" ||
		!strings.Contains(string(body), `40 C`) {
		t.Errorf("tool result turn %s", body)
	}
}
