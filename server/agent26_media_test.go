package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"google.golang.org/grpc/status"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

const agentMediaYAML = `
providers:
  - name: up
    type: anthropic
    base_url: {{URL}}
    api_key: sk-agent-test-key-0000000000
models:
  - name: m
    provider: up
    upstream_model: claude-sonnet-4-5
    capabilities:
      tools: {format: anthropic-messages}
      vision: {format: anthropic-messages}
      documents: {format: anthropic-messages}
`

// screenshotPNG is round r's fake screenshot: a PNG signature and the round.
func screenshotPNG(r int) []byte { return []byte(fmt.Sprintf("\x89PNG\r\n\x1a\nround%02d", r)) }

// computerUse scripts a computer-use run: `rounds` rounds whose model call
// asks for one screenshot each, then a text answer.
func computerUse(t *testing.T, tag string, rounds int) *providertest.Server {
	t.Helper()
	var recs []providertest.Recording
	for r := 1; r <= rounds; r++ {
		recs = append(recs, anthropicStream(fmt.Sprintf("msg_01Media26%sR%02d", tag, r), "", []chatCall{{fmt.Sprintf("toolu_01Media26%sShot%02d", tag, r), "screenshot", `{}`}}))
	}
	recs = append(recs, anthropicStream(fmt.Sprintf("msg_01Media26%sDone", tag), "The form is filled in.", nil))
	return providertest.Replay(t, recs...)
}

func screenshotTool() []*llmrelayv1.Tool {
	return []*llmrelayv1.Tool{{Name: "screenshot", Description: "Screenshot of the screen", Parameters: `{"type":"object","properties":{}}`}}
}

// answerScreenshot answers round r's call with a text and that round's PNG.
func answerScreenshot(r *llmrelayv1.AgentToolCallRequest) *llmrelayv1.ToolResult {
	return &llmrelayv1.ToolResult{CallId: r.GetCallId(), Content: fmt.Sprintf("screen after round %d", r.GetRound()),
		Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Image{Image: &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: screenshotPNG(int(r.GetRound()))}, MimeType: "image/png"}}}}}
}

// sentMedia reads an Anthropic request body: per tool_result, in order,
// the images it carries (the round each screenshot came from) and its
// text blocks.
type sentResult struct {
	id     string
	images []string
	texts  []string
}

func sentMedia(t *testing.T, body []byte) []sentResult {
	t.Helper()
	var req struct {
		Messages []struct {
			Content []struct {
				Type      string `json:"type"`
				ToolUseID string `json:"tool_use_id"`
				Content   []struct {
					Type   string `json:"type"`
					Text   string `json:"text"`
					Source struct {
						Data string `json:"data"`
					} `json:"source"`
				} `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	var out []sentResult
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if b.Type != "tool_result" {
				continue
			}
			r := sentResult{id: b.ToolUseID}
			for _, c := range b.Content {
				switch c.Type {
				case "image":
					raw, err := base64.StdEncoding.DecodeString(c.Source.Data)
					if err != nil {
						t.Fatal(err)
					}
					r.images = append(r.images, string(raw[len(raw)-7:]))
				case "text":
					r.texts = append(r.texts, c.Text)
				}
			}
			out = append(out, r)
		}
	}
	return out
}

// A computer-use run with keep_recent_tool_media 2: every model call the
// provider sees carries only the two most recent screenshots, each older
// one a note naming it; one run warning says so from the first round that
// leaves one out; and the conversation in end keeps every screenshot.
func TestAgentKeepRecentToolMedia(t *testing.T) {
	t.Parallel()
	const rounds, keep = 6, 2
	up := computerUse(t, "Keep", rounds)
	c, _ := startWith(t, agentMediaYAML, up.URL)
	setup := &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Fill in the login form.")},
		Tools: screenshotTool(), MaxRounds: rounds + 1, KeepRecentToolMedia: keep}
	sent := proto.CloneOf(setup)
	evs, err := agentRun(context.Background(), t, c, setup, answerScreenshot)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(setup, sent) {
		t.Error("the setup message was changed")
	}
	reqs := up.Requests()
	if len(reqs) != rounds+1 {
		t.Fatalf("%d model calls", len(reqs))
	}
	for i, req := range reqs {
		results := sentMedia(t, req.Body)
		if len(results) != i {
			t.Fatalf("call %d: %d tool results", i+1, len(results))
		}
		for j, r := range results {
			shot := j + 1 // the round whose screenshot this result holds
			if want := fmt.Sprintf("toolu_01Media26KeepShot%02d", shot); r.id != want {
				t.Errorf("call %d: result %d is %s", i+1, j, r.id)
			}
			if shot > len(results)-keep {
				if len(r.images) != 1 || r.images[0] != fmt.Sprintf("round%02d", shot) || len(r.texts) != 1 {
					t.Errorf("call %d: result of round %d: images %q, texts %q, want its screenshot", i+1, shot, r.images, r.texts)
				}
				continue
			}
			note := fmt.Sprintf("[image (image/png, 15 bytes) of call toolu_01Media26KeepShot%02d left out: only the 2 most recent tool-result images and files are sent]", shot)
			if len(r.images) != 0 || len(r.texts) != 2 || r.texts[0] != fmt.Sprintf("screen after round %d", shot) || r.texts[1] != note {
				t.Errorf("call %d: result of round %d: images %q, texts %q, want the note %q", i+1, shot, r.images, r.texts, note)
			}
		}
	}
	end := evs[len(evs)-1].GetEnd()
	if end == nil {
		t.Fatalf("last event %v", evs[len(evs)-1])
	}
	shots := 0
	for _, m := range end.GetMessages() {
		for _, p := range m.GetParts() {
			if r := p.GetToolResult(); r != nil {
				shots++
				if len(r.GetParts()) != 1 || string(r.GetParts()[0].GetImage().GetData()) != string(screenshotPNG(shots)) {
					t.Errorf("end: result %d parts %v", shots, r.GetParts())
				}
			}
		}
	}
	if shots != rounds {
		t.Errorf("end: %d screenshots", shots)
	}
	var warned []string
	for _, w := range end.GetMeta().GetWarnings() {
		if strings.Contains(w, "left out of the model call") {
			warned = append(warned, w)
		}
	}
	want := "round 4: 1 older tool-result image(s) and file(s) (15 bytes inline) left out of the model call, each replaced by a note: " +
		"only the 2 most recent are sent (setup.keep_recent_tool_media), in this round and every later one; the conversation returned keeps them all"
	if len(warned) != 1 || warned[0] != want {
		t.Errorf("warnings %q", end.GetMeta().GetWarnings())
	}
}

// agent.keep_recent_tool_media is the runs' default; a setup's value
// wins, -1 sends every image whatever the default, and a value below -1
// is refused naming the field.
func TestAgentKeepRecentToolMediaConfig(t *testing.T) {
	t.Parallel()
	const rounds = 3
	y := agentMediaYAML + "agent:\n  keep_recent_tool_media: 1\n"
	count := func(tag string, keep int32) (images, notes int, warnings []string) {
		t.Helper()
		up := computerUse(t, tag, rounds)
		c, _ := startWith(t, y, up.URL)
		setup := &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Fill in the login form.")},
			Tools: screenshotTool(), MaxRounds: rounds + 1, KeepRecentToolMedia: keep}
		evs, err := agentRun(context.Background(), t, c, setup, answerScreenshot)
		if err != nil {
			t.Fatal(err)
		}
		reqs := up.Requests()
		for _, r := range sentMedia(t, reqs[len(reqs)-1].Body) {
			images += len(r.images)
			notes += len(r.texts) - 1
		}
		return images, notes, evs[len(evs)-1].GetEnd().GetMeta().GetWarnings()
	}
	if images, notes, w := count("Dflt", 0); images != 1 || notes != 2 || !strings.Contains(strings.Join(w, "\n"), "only the 1 most recent are sent (the server's agent.keep_recent_tool_media)") {
		t.Errorf("config default: %d images, %d notes, warnings %q", images, notes, w)
	}
	if images, notes, _ := count("Over", 2); images != 2 || notes != 1 {
		t.Errorf("setup 2: %d images, %d notes", images, notes)
	}
	if images, notes, w := count("All", -1); images != 3 || notes != 0 || strings.Contains(strings.Join(w, "\n"), "left out") {
		t.Errorf("setup -1: %d images, %d notes, warnings %q", images, notes, w)
	}

	c, _ := startWith(t, y, "http://127.0.0.1:1")
	_, err := agentRun(context.Background(), t, c, &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("x")},
		Tools: screenshotTool(), KeepRecentToolMedia: -2}, nil)
	st, _, br := statusDetails(t, err)
	if st.Code() != codes.InvalidArgument || br == nil || br.GetFieldViolations()[0].GetField() != "setup.keep_recent_tool_media" {
		t.Errorf("status %v, %v", st, br)
	}
}

// anthropicError is an Anthropic error answer (the shape of
// provider/anthropic/testdata/error_413.http).
func anthropicError(code int, typ, msg, id string) providertest.Recording {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("request-id", id)
	h.Set("x-should-retry", "false")
	m, _ := json.Marshal(msg)
	return providertest.Recording{Status: code, Header: h,
		Body: []byte(fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%s},"request_id":%q}`, typ, m, id))}
}

// A run whose request outgrows the provider's limit mid-run fails with a
// status that says so: the round, the provider's message, what the
// conversation sent carried and what to do, with the call's ErrorInfo and
// retry reasons as they were, and a failure event naming the round with
// the conversation up to the previous one. A refusal for something else
// keeps its message.
func TestAgentRequestOutgrown(t *testing.T) {
	t.Parallel()
	shots := func(tag string, n int, last providertest.Recording) *providertest.Server {
		var recs []providertest.Recording
		for r := 1; r <= n; r++ {
			recs = append(recs, anthropicStream(fmt.Sprintf("msg_01Media26%sR%02d", tag, r), "", []chatCall{{fmt.Sprintf("toolu_01Media26%sShot%02d", tag, r), "screenshot", `{}`}}))
		}
		return providertest.Replay(t, append(recs, last)...)
	}
	run := func(yaml string, up *providertest.Server, keep int32) (*status.Status, *llmrelayv1.AgentFailure, *llmrelayv1.FailedCallMeta, map[string]string) {
		t.Helper()
		c, _ := startWith(t, yaml, up.URL)
		setup := &llmrelayv1.AgentSetup{Model: "m", Messages: []*llmrelayv1.Message{user("Fill in the login form.")}, Tools: screenshotTool(), KeepRecentToolMedia: keep}
		evs, err := agentRun(context.Background(), t, c, setup, answerScreenshot)
		st, info, _ := statusDetails(t, err)
		var fcm *llmrelayv1.FailedCallMeta
		for _, d := range st.Details() {
			if f, ok := d.(*llmrelayv1.FailedCallMeta); ok {
				fcm = f
			}
		}
		return st, evs[len(evs)-1].GetFailure(), fcm, info.GetMetadata()
	}

	up := shots("Big", 2, anthropicError(413, "request_too_large", "Request exceeds the maximum allowed number of bytes.", "req_01Media26TooLargeR3x"))
	st, failure, fcm, md := run(agentMediaYAML, up, 0)
	want := "round 3: up: Request exceeds the maximum allowed number of bytes. (refused for its size: the conversation sent has 5 messages and 2 tool-result images and files, 30 bytes inline, " +
		"and each round sends it whole again; set setup.keep_recent_tool_media to send only the most recent)"
	if st.Code() != codes.InvalidArgument || st.Message() != want || md["upstreamStatus"] != "413" || md["upstreamRequestId"] != "req_01Media26TooLargeR3x" {
		t.Errorf("status %v %q, metadata %v", st.Code(), st.Message(), md)
	}
	if rr := fcm.GetMeta().GetRetryReasons(); len(rr) != 1 || rr[0].GetReason() != "http_413" || rr[0].GetUpstreamStatus() != 413 {
		t.Errorf("retry reasons %v", rr)
	}
	if failure.GetRound() != 3 || len(failure.GetMessages()) != 5 || len(failure.GetMeta().GetRounds()) != 3 {
		t.Errorf("failure round %d, %d messages, %d rounds", failure.GetRound(), len(failure.GetMessages()), len(failure.GetMeta().GetRounds()))
	}

	// Anthropic's media count (anthropics/claude-code#19822's message),
	// with the server's default keeping 2: not enough, says the status.
	up = shots("Many", 3, anthropicError(400, "invalid_request_error", "Too much media: 0 document pages + 102 images > 100", "req_01Media26TooMuchR4x"))
	st, failure, _, _ = run(agentMediaYAML+"agent:\n  keep_recent_tool_media: 2\n", up, 0)
	want = "round 4: up: Too much media: 0 document pages + 102 images > 100 (refused for its images and documents: the conversation sent has 7 messages and 2 tool-result images and files, 30 bytes inline, " +
		"and each round sends it whole again; keep_recent_tool_media 2 (the server's agent.keep_recent_tool_media) was not enough: lower it)"
	if st.Code() != codes.InvalidArgument || st.Message() != want || failure.GetRound() != 4 {
		t.Errorf("status %v %q, failure round %d", st.Code(), st.Message(), failure.GetRound())
	}

	// Another refusal keeps its message.
	up = shots("Other", 1, anthropicError(400, "invalid_request_error", "messages.1.content.0: unexpected tool_use_id", "req_01Media26OtherR2xx"))
	st, _, _, _ = run(agentMediaYAML, up, 0)
	if st.Message() != "up: messages.1.content.0: unexpected tool_use_id" {
		t.Errorf("status %v %q", st.Code(), st.Message())
	}
}

// The setup's tool results count too, files as images do: a run continued
// from a returned conversation stays within the bound. The setup's PDF is
// the oldest, so it is the one left out once two screenshots came, and the
// setup the client sent is not changed.
func TestAgentKeepRecentToolMediaSetupFile(t *testing.T) {
	t.Parallel()
	up := computerUse(t, "File", 2)
	c, _ := startWith(t, agentMediaYAML, up.URL)
	pdf := &llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: []byte("%PDF-1.7")}, MimeType: "application/pdf", Filename: "form.pdf"}}}
	setup := &llmrelayv1.AgentSetup{Model: "m", Tools: screenshotTool(), KeepRecentToolMedia: 2, Messages: []*llmrelayv1.Message{
		user("Fill in the form the document describes."),
		{Role: llmrelayv1.Role_ROLE_ASSISTANT, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolCall{ToolCall: &llmrelayv1.ToolCall{CallId: "toolu_01Media26FileOpen", Name: "screenshot", Arguments: "{}"}}}}},
		{Role: llmrelayv1.Role_ROLE_TOOL, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_ToolResult{ToolResult: &llmrelayv1.ToolResult{CallId: "toolu_01Media26FileOpen", Name: "screenshot", Content: "the form", Parts: []*llmrelayv1.Part{pdf}}}}}},
	}}
	sent := proto.CloneOf(setup)
	evs, err := agentRun(context.Background(), t, c, setup, answerScreenshot)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(setup, sent) {
		t.Error("the setup message was changed")
	}
	reqs := up.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls", len(reqs))
	}
	if !strings.Contains(string(reqs[1].Body), `"type":"document"`) {
		t.Errorf("call 2 left the PDF out: %s", reqs[1].Body)
	}
	note := `[file \"form.pdf\" (application/pdf, 8 bytes) of call toolu_01Media26FileOpen left out: only the 2 most recent tool-result images and files are sent]`
	if b := string(reqs[2].Body); strings.Contains(b, `"type":"document"`) || !strings.Contains(b, note) || strings.Count(b, `"type":"image"`) != 2 {
		t.Errorf("call 3 body %s", b)
	}
	end := evs[len(evs)-1].GetEnd()
	if !proto.Equal(end.GetMessages()[2], sent.GetMessages()[2]) {
		t.Errorf("end: setup's tool result %v", end.GetMessages()[2])
	}
}
