package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	_ "google.golang.org/grpc/health/grpc_health_v1" // registers grpc.health.v1 for the examples that call it
)

// grpcurlExample is one grpcurl command of a document's sh blocks.
type grpcurlExample struct {
	doc, method, data string
	headers           []string
	comment           string   // the command's trailing "# ..." comment
	after             []string // the "# ..." lines right after it
}

// TestDocGrpcurlExamples runs every grpcurl command of the README and the
// docs against a server on the embedded default, as a reader following
// them would: each request must decode as grpcurl decodes it (protojson,
// unknown fields refused) and succeed, unless its text says what fails
// ("nope" is NotFound; an "# ERROR: Code: ..." block after it gives the
// code and message), and an answer the text shows in a comment ("# You
// said: ...") must be the answer.
func TestDocGrpcurlExamples(t *testing.T) {
	t.Parallel()
	addr, _ := startServer(t)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var examples []grpcurlExample
	for _, doc := range []string{"../../README.md", "../../docs/clients.md", "../../docs/extract.md"} {
		raw, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		examples = append(examples, grpcurlExamples(doc, string(raw))...)
	}
	ran := 0
	for _, ex := range examples {
		if ex.data == "" || ex.data == "@" || strings.Contains(ex.data, "$(") {
			continue // from stdin or a shell substitution: below, or not standalone
		}
		ran++
		code, msg, out := invokeExample(t, conn, ex)
		wantCode, wantMsg := codes.OK, ""
		if strings.Contains(ex.data, `"nope"`) {
			wantCode = codes.NotFound
		}
		if len(ex.after) > 0 && strings.HasPrefix(ex.after[0], "ERROR: Code: ") {
			c := strings.TrimPrefix(ex.after[0], "ERROR: Code: ")
			found := false
			for k := codes.OK; k <= codes.Unauthenticated; k++ {
				if k.String() == c {
					wantCode, found = k, true
				}
			}
			if !found {
				t.Errorf("%s %s: unknown code %q", ex.doc, ex.method, c)
			}
			wantMsg = errorMessage(ex.after[1:])
		}
		if code != wantCode || (wantMsg != "" && msg != wantMsg) {
			t.Errorf("%s %s -d %s:\n got %v %q\nwant %v %q", ex.doc, ex.method, ex.data, code, msg, wantCode, wantMsg)
		}
		if strings.HasPrefix(ex.comment, "You said: ") {
			if got := answerText(out); got != ex.comment {
				t.Errorf("%s %s -d %s: the answer is %q, the comment says %q", ex.doc, ex.method, ex.data, got, ex.comment)
			}
		}
	}
	if ran < 12 {
		t.Errorf("only %d grpcurl examples found and run: is the extraction broken?", ran)
	}
}

// errorMessage joins the "Message:" lines of an "# ERROR:" block (wrapped
// over several comment lines) up to its "Details:".
func errorMessage(lines []string) string {
	var parts []string
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if i == 0 {
			if !strings.HasPrefix(l, "Message: ") {
				return ""
			}
			l = strings.TrimPrefix(l, "Message: ")
		} else if strings.HasPrefix(l, "Details:") {
			break
		}
		parts = append(parts, l)
	}
	return strings.Join(parts, " ")
}

func answerText(msgs []proto.Message) string {
	for _, m := range msgs {
		if r, ok := m.(*llmrelayv1.ChatResponse); ok {
			return r.GetMessage().GetParts()[0].GetText()
		}
	}
	return ""
}

// invokeExample sends one example as grpcurl would and returns the status
// and the answers.
func invokeExample(t *testing.T, conn *grpc.ClientConn, ex grpcurlExample) (codes.Code, string, []proto.Message) {
	t.Helper()
	svc, method, _ := strings.Cut(ex.method, "/")
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc))
	if err != nil {
		t.Fatalf("%s: %v", ex.method, err)
	}
	md := d.(protoreflect.ServiceDescriptor).Methods().ByName(protoreflect.Name(method))
	if md == nil {
		t.Fatalf("%s: no such method", ex.method)
	}
	in := newMessage(md.Input())
	if err := protojson.Unmarshal([]byte(ex.data), in); err != nil {
		t.Errorf("%s %s: grpcurl would refuse -d %s: %v", ex.doc, ex.method, ex.data, err)
		return codes.Unknown, "", nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, h := range ex.headers {
		k, v, _ := strings.Cut(h, ":")
		ctx = metadata.AppendToOutgoingContext(ctx, strings.TrimSpace(k), strings.TrimSpace(v))
	}
	full := "/" + ex.method
	if !md.IsStreamingServer() {
		out := newMessage(md.Output())
		err := conn.Invoke(ctx, full, in, out)
		st := status.Convert(err)
		return st.Code(), st.Message(), []proto.Message{out}
	}
	s, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: md.IsStreamingClient()}, full)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SendMsg(in); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	var outs []proto.Message
	for {
		out := newMessage(md.Output())
		err := s.RecvMsg(out)
		if errors.Is(err, io.EOF) {
			return codes.OK, "", outs
		}
		if err != nil {
			st := status.Convert(err)
			return st.Code(), st.Message(), outs
		}
		outs = append(outs, out)
	}
}

// newMessage is the generated type of a message (so that answers can be
// type-asserted), else a dynamic one.
func newMessage(d protoreflect.MessageDescriptor) proto.Message {
	if mt, err := protoregistry.GlobalTypes.FindMessageByName(d.FullName()); err == nil {
		return mt.New().Interface()
	}
	return dynamicpb.NewMessage(d)
}

var (
	shBlock      = regexp.MustCompile("(?s)```sh\n(.*?)```")
	methodArg    = regexp.MustCompile(`^(llmrelay\.v1|grpc\.health\.v1)\.\w+/\w+$`)
	afterComment = regexp.MustCompile(`^#\s?(.*)$`)
)

// grpcurlExamples finds the grpcurl commands of a document's sh blocks,
// read as a shell reads them: quotes, "\" line continuations, comments.
func grpcurlExamples(doc, text string) []grpcurlExample {
	var out []grpcurlExample
	for _, b := range shBlock.FindAllStringSubmatch(text, -1) {
		block := b[1]
		for i := 0; ; {
			j := strings.Index(block[i:], "grpcurl ")
			if j < 0 {
				break
			}
			start := i + j
			if start > 0 && block[start-1] != '\n' && block[start-1] != ' ' {
				i = start + 1
				continue
			}
			args, comment, end := shellWords(block[start:])
			i = start + end
			ex := grpcurlExample{doc: doc, comment: comment}
			for k := 0; k < len(args); k++ {
				switch {
				case args[k] == "-d" && k+1 < len(args):
					ex.data = args[k+1]
					k++
				case args[k] == "-H" && k+1 < len(args):
					ex.headers = append(ex.headers, args[k+1])
					k++
				case methodArg.MatchString(args[k]):
					ex.method = args[k]
				}
			}
			for _, l := range strings.Split(block[i:], "\n")[1:] {
				m := afterComment.FindStringSubmatch(l)
				if m == nil {
					break
				}
				ex.after = append(ex.after, m[1])
			}
			if ex.method != "" && !strings.Contains(strings.Join(args, " "), "-unix") {
				out = append(out, ex)
			}
		}
	}
	return out
}

// shellWords splits one command at the start of s into words and returns
// them, its trailing comment and where the command ends.
func shellWords(s string) (words []string, comment string, end int) {
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && s[i+1] == '\n':
			flush()
			i++
		case c == '\n':
			flush()
			return words, comment, i
		case c == '#' && !inWord:
			e := strings.IndexByte(s[i:], '\n')
			if e < 0 {
				e = len(s) - i
			}
			comment = strings.TrimSpace(s[i+1 : i+e])
			flush()
			return words, comment, i + e
		case c == ' ' || c == '\t':
			flush()
		case c == '\'':
			e := strings.IndexByte(s[i+1:], '\'')
			w.WriteString(s[i+1 : i+1+e])
			inWord = true
			i += e + 1
		case c == '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				w.WriteByte(s[i])
			}
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words, comment, len(s)
}

// TestREADMEAgentExample runs the README's Agent example: the messages of
// its agent.json (whose tool results answer the built-in model's call ids
// ahead), and checks the answers against the output it shows: every line
// of it that is whole JSON is an answer the server sends, the call ids are
// the ones the file answers, and the run ends as shown.
func TestREADMEAgentExample(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	m := regexp.MustCompile("(?s)cat > agent.json <<'JSON'\n(.*?)\nJSON\n.*?```\n\n```\n(.*?)```").FindStringSubmatch(text)
	if m == nil {
		t.Fatal("the README has no agent.json example followed by its output")
	}
	var reqs []*llmrelayv1.AgentRequest
	dec := json.NewDecoder(strings.NewReader(m[1]))
	for dec.More() {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("agent.json: %v", err)
		}
		r := &llmrelayv1.AgentRequest{}
		if err := protojson.Unmarshal(v, r); err != nil {
			t.Fatalf("agent.json: grpcurl would refuse %s: %v", v, err)
		}
		reqs = append(reqs, r)
	}
	addr, _ := startServer(t)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := llmrelayv1.NewGatewayServiceClient(conn).Agent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		if err := s.Send(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	var got []any
	var end *llmrelayv1.AgentEnd
	var firstText string
	for {
		r, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the run fails: %v", err)
		}
		if r.GetEnd() != nil {
			end = r.GetEnd()
		}
		if td := r.GetModel().GetTextDelta(); td != nil && firstText == "" {
			firstText = td.GetText()
		}
		b, err := protojson.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	whole := 0
	for _, line := range strings.Split(m[2], "\n") {
		var want any
		if json.Unmarshal([]byte(line), &want) != nil {
			continue // elided ("...", "…") or several answers on a line
		}
		whole++
		found := false
		for _, g := range got {
			if reflect.DeepEqual(g, want) {
				found = true
			}
		}
		if !found {
			t.Errorf("the README shows %s, which the server does not send", line)
		}
	}
	if whole < 2 {
		t.Errorf("only %d whole answers in the README's output: is the extraction broken?", whole)
	}
	if end.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP || len(end.GetMessages()) != 4 || end.GetMeta().GetModelCalls() != 2 ||
		!strings.Contains(m[2], `{"model": {"textDelta": {"text": "`+firstText+`"}}}`) {
		t.Errorf("end %v, first text %q; the README shows:\n%s", end, firstText, m[2])
	}
	if !bytes.Contains(raw, []byte(`"finishReason": "FINISH_REASON_STOP", "messages": [user, assistant, tool, assistant]`)) {
		t.Error("the README no longer shows the end this test checks")
	}
}

// TestREADMECommandLine runs the README's "go run ./cmd/llmrelay ..."
// client lines against a server and checks the answers their comments show.
func TestREADMECommandLine(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := startServer(t)
	ran := 0
	for _, b := range shBlock.FindAllStringSubmatch(string(raw), -1) {
		for _, line := range strings.Split(b[1], "\n") {
			rest, ok := strings.CutPrefix(line, "go run ./cmd/llmrelay ")
			if !ok {
				continue
			}
			args, comment, _ := shellWords(rest)
			if len(args) == 0 || (args[0] != "chat" && args[0] != "tools" && args[0] != "embed" && args[0] != "models") {
				continue
			}
			ran++
			r := runCLI(t, "", append([]string{args[0], "--addr", addr}, args[1:]...)...)
			if r.code != ExitOK {
				t.Errorf("%s: %+v", line, r)
				continue
			}
			if want, ok := strings.CutPrefix(comment, "streams: "); ok && strings.TrimSpace(r.stdout) != want {
				t.Errorf("%s: printed %q, the comment says %q", line, r.stdout, want)
			}
			if slices.Contains(args, "--meta") && !strings.HasPrefix(r.stderr, "meta: builtin/echo via builtin | tokens ") {
				t.Errorf("%s: --meta printed %q", line, r.stderr)
			}
		}
	}
	if ran < 2 {
		t.Errorf("only %d command lines found", ran)
	}
}
