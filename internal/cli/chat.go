package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// genFlags are the flags chat and tools share.
type genFlags struct {
	conn     connFlags
	model    string
	system   string
	images   listFlag
	files    listFlag
	options  listFlag
	jsonOut  bool
	metaLine bool
}

func (g *genFlags) register(fsName string) *flag.FlagSet {
	fs := newFlags(fsName)
	g.conn.register(fs, 5*time.Minute)
	fs.StringVar(&g.model, "model", "", "model name, as listed by \"llmrelay models\" (required)")
	fs.StringVar(&g.model, "m", "", "shorthand for --model")
	fs.StringVar(&g.system, "system", "", "system prompt")
	fs.Var(&g.images, "image", "image `FILE` to attach to the prompt, repeatable (needs the vision capability)")
	fs.Var(&g.files, "file", "document or audio `FILE` to attach (PDF, text, wav, mp3, ...), repeatable; the type from the extension, else the content (needs the documents or audio capability)")
	fs.Var(&g.options, "o", optionsHelp())
	fs.BoolVar(&g.jsonOut, "json", false, "print the whole response with its metadata as JSON (no streaming)")
	fs.BoolVar(&g.metaLine, "meta", false, "after the answer, print a one-line summary to stderr: tokens, timings, attempts, provider request id, cost")
	return fs
}

// messages builds the conversation: the system prompt, then the user's
// prompt (the arguments, or stdin when there are none or the only one is
// "-") with the images and files.
func (g *genFlags) messages(e *env, pos []string) ([]*llmrelayv1.Message, error) {
	if g.model == "" {
		return nil, usageErrorf("-m MODEL is required (\"llmrelay models\" lists them)")
	}
	prompt := strings.Join(pos, " ")
	if len(pos) == 0 || (len(pos) == 1 && pos[0] == "-") {
		if isTerminal(e.stdin) && len(pos) == 0 {
			return nil, usageErrorf("no prompt: give it as arguments, or pipe it to stdin")
		}
		raw, err := io.ReadAll(e.stdin)
		if err != nil {
			return nil, fmt.Errorf("read the prompt from stdin: %w", err)
		}
		prompt = strings.TrimRight(string(raw), "\n")
	}
	if strings.TrimSpace(prompt) == "" && len(g.images) == 0 && len(g.files) == 0 {
		return nil, usageErrorf("no prompt: give it as arguments or on stdin")
	}
	var msgs []*llmrelayv1.Message
	if g.system != "" {
		msgs = append(msgs, &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_SYSTEM, Parts: []*llmrelayv1.Part{textPart(g.system)}})
	}
	user := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_USER}
	if prompt != "" {
		user.Parts = append(user.Parts, textPart(prompt))
	}
	for _, path := range g.images {
		img, err := readImage(path)
		if err != nil {
			return nil, err
		}
		user.Parts = append(user.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_Image{Image: img}})
	}
	for _, path := range g.files {
		f, err := readFile(path)
		if err != nil {
			return nil, err
		}
		user.Parts = append(user.Parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_File{File: f}})
	}
	return append(msgs, user), nil
}

// isTerminal reports whether r is an interactive terminal, where reading a
// prompt from stdin would wait for the user without saying so.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func textPart(s string) *llmrelayv1.Part {
	return &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: s}}
}

func readImage(path string) (*llmrelayv1.Image, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErrorf("--image: %v", err)
	}
	mt := mime.TypeByExtension(strings.ToLower(filepath.Ext(path)))
	if !strings.HasPrefix(mt, "image/") {
		mt = http.DetectContentType(data)
	}
	if !strings.HasPrefix(mt, "image/") {
		return nil, usageErrorf("--image %s: not an image (%s)", path, mt)
	}
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	return &llmrelayv1.Image{Source: &llmrelayv1.Image_Data{Data: data}, MimeType: mt}, nil
}

// readFile reads a --file: its bytes, its media type from the extension
// (mime.TypeByExtension) or else from its content (http.DetectContentType),
// without parameters, and its base name.
func readFile(path string) (*llmrelayv1.File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErrorf("--file: %v", err)
	}
	if len(data) == 0 {
		return nil, usageErrorf("--file %s: empty file", path)
	}
	mt := mime.TypeByExtension(strings.ToLower(filepath.Ext(path)))
	if mt == "" {
		mt = http.DetectContentType(data)
	}
	if parsed, _, err := mime.ParseMediaType(mt); err == nil {
		mt = parsed
	}
	return &llmrelayv1.File{Source: &llmrelayv1.File_Data{Data: data}, MimeType: mt, Filename: filepath.Base(path)}, nil
}

func (g *genFlags) requestOptions() (*llmrelayv1.GenerationOptions, *llmrelayv1.CallOptions, error) {
	gen, call := &llmrelayv1.GenerationOptions{}, &llmrelayv1.CallOptions{}
	if err := applyOptions(g.options, gen, call); err != nil {
		return nil, nil, err
	}
	return gen, call, nil
}

const chatSummary = `Send a prompt to a model and stream the answer to stdout as it arrives.
The prompt is the arguments, or stdin when there are none (or "-").`

func chat(ctx context.Context, e *env, args []string) error {
	var g genFlags
	fs := g.register("chat")
	pos, err := parse(e, fs, "PROMPT...", chatSummary, args)
	if err != nil {
		return err
	}
	msgs, err := g.messages(e, pos)
	if err != nil {
		return err
	}
	gen, call, err := g.requestOptions()
	if err != nil {
		return err
	}
	ctx, cl, closeConn, err := g.conn.dial(ctx)
	if err != nil {
		return err
	}
	defer closeConn()
	if g.jsonOut {
		resp, err := cl.Chat(ctx, &llmrelayv1.ChatRequest{Model: g.model, Messages: msgs, Options: gen, Call: call})
		if err != nil {
			return err
		}
		return g.finishJSON(e, resp, resp.GetMeta())
	}
	s, err := cl.StreamChat(ctx, &llmrelayv1.StreamChatRequest{Model: g.model, Messages: msgs, Options: gen, Call: call})
	if err != nil {
		return err
	}
	out := &answerWriter{w: e.stdout}
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			out.endLine()
			return err
		}
		switch ev := ev.GetEvent().(type) {
		case *llmrelayv1.StreamChatResponse_TextDelta:
			out.write(ev.TextDelta.GetText())
		case *llmrelayv1.StreamChatResponse_RefusalDelta:
			out.write(ev.RefusalDelta.GetText())
		case *llmrelayv1.StreamChatResponse_ProviderItem:
			// A piece only its provider reads (a server tool's call or
			// result): named, on its own line, not printed.
			out.endLine()
			fmt.Fprintf(e.stderr, "[provider item %s]\n", ev.ProviderItem.GetType())
		}
	}
	out.endLine()
	if out.err != nil {
		return fmt.Errorf("write the answer: %w", out.err)
	}
	notices(e.stderr, "chat", s.Acc.Meta())
	if g.metaLine {
		fmt.Fprintln(e.stderr, metaSummary(s.Acc.Meta()))
	}
	return nil
}

func (g *genFlags) finishJSON(e *env, resp proto.Message, meta *llmrelayv1.ResponseMeta) error {
	b, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(resp)
	if err != nil {
		return fmt.Errorf("encode the response: %w", err)
	}
	if _, err := fmt.Fprintf(e.stdout, "%s\n", b); err != nil {
		return fmt.Errorf("write the response: %w", err)
	}
	if g.metaLine {
		fmt.Fprintln(e.stderr, metaSummary(meta))
	}
	return nil
}

// answerWriter writes streamed text as it comes and remembers the first
// write error and whether the output ends a line.
type answerWriter struct {
	w       io.Writer
	err     error
	midLine bool
}

func (a *answerWriter) write(s string) {
	if s == "" || a.err != nil {
		return
	}
	_, a.err = io.WriteString(a.w, s)
	a.midLine = !strings.HasSuffix(s, "\n")
}

func (a *answerWriter) endLine() {
	if a.midLine {
		a.write("\n")
	}
}

const toolsSummary = `Offer the tools of --tools FILE to a model and stream its answer: text as
it arrives, each tool call on its own line as soon as it is complete.
FILE is a JSON array of {"name", "description", "parameters" (JSON Schema), "strict"}.`

// toolSpec is one tool of a --tools file.
type toolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict"`
}

func readTools(path string) ([]*llmrelayv1.Tool, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErrorf("--tools: %v", err)
	}
	var specs []toolSpec
	if err := decodeJSONFile(raw, &specs); err != nil {
		return nil, usageErrorf("--tools %s: want a JSON array of {name, description, parameters, strict}: %v", path, err)
	}
	if len(specs) == 0 {
		return nil, usageErrorf("--tools %s: no tools", path)
	}
	tools := make([]*llmrelayv1.Tool, 0, len(specs))
	for i, s := range specs {
		if s.Name == "" {
			return nil, usageErrorf("--tools %s: tool %d has no name", path, i)
		}
		t := &llmrelayv1.Tool{Name: s.Name, Description: s.Description, Strict: s.Strict}
		if len(s.Parameters) > 0 {
			params, err := toolParameters(s.Parameters)
			if err != nil {
				return nil, usageErrorf("--tools %s: tool %s: parameters: %v", path, s.Name, err)
			}
			t.Parameters = params
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// decodeJSONFile decodes a whole JSON file into v: unknown keys and
// anything after the first value are errors, and each problem is worded
// for the file's author, at its line and column, without Go type names.
func decodeJSONFile(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, tokErr := dec.Token(); tokErr != io.EOF {
			return fmt.Errorf("%s: more after the end of the JSON value", lineCol(raw, dec.InputOffset()))
		}
		return nil
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return errors.New("the file is empty")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("the JSON ends early (a bracket or quote not closed)")
	case errors.As(err, &syn):
		return fmt.Errorf("%s: %s", lineCol(raw, syn.Offset), strings.TrimPrefix(syn.Error(), "json: "))
	case errors.As(err, &typ):
		where := lineCol(raw, typ.Offset)
		if typ.Field != "" {
			where += ": " + typ.Field
		}
		return fmt.Errorf("%s: want %s, got %s", where, jsonWords(typ.Type), typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fmt.Errorf("%s: unknown key %s", lineCol(raw, dec.InputOffset()), strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return err
}

// lineCol is the 1-based line and column of a byte offset.
func lineCol(raw []byte, off int64) string {
	off = min(max(off, 0), int64(len(raw)))
	before := raw[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

// jsonWords names the JSON a Go type decodes from.
func jsonWords(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeFor[json.RawMessage]():
		return "any JSON value"
	case t.Kind() == reflect.Slice:
		return "an array"
	case t.Kind() == reflect.Struct, t.Kind() == reflect.Map:
		return "an object"
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Bool:
		return "true or false"
	default:
		return "a number"
	}
}

// toolParameters is a tool's JSON Schema as the JSON text the contract
// carries, verbatim (key order kept): an object, or a string holding one.
func toolParameters(schema json.RawMessage) (string, error) {
	text := schema
	var s string
	if json.Unmarshal(schema, &s) == nil {
		text = json.RawMessage(s) // already JSON text
	}
	var obj map[string]any
	if err := json.Unmarshal(text, &obj); err != nil {
		return "", fmt.Errorf("want a JSON Schema object: %w", err)
	}
	return strings.TrimSpace(string(text)), nil
}

func tools(ctx context.Context, e *env, args []string) error {
	var g genFlags
	fs := g.register("tools")
	toolsFile := fs.String("tools", "", "JSON `FILE` with the tools to offer (required)")
	pos, err := parse(e, fs, "PROMPT...", toolsSummary, args)
	if err != nil {
		return err
	}
	if *toolsFile == "" {
		return usageErrorf("--tools FILE is required")
	}
	offered, err := readTools(*toolsFile)
	if err != nil {
		return err
	}
	msgs, err := g.messages(e, pos)
	if err != nil {
		return err
	}
	gen, call, err := g.requestOptions()
	if err != nil {
		return err
	}
	ctx, cl, closeConn, err := g.conn.dial(ctx)
	if err != nil {
		return err
	}
	defer closeConn()
	if g.jsonOut {
		resp, err := cl.Tools(ctx, &llmrelayv1.ToolsRequest{Model: g.model, Messages: msgs, Tools: offered, Options: gen, Call: call})
		if err != nil {
			return err
		}
		return g.finishJSON(e, resp, resp.GetMeta())
	}
	s, err := cl.StreamTools(ctx, &llmrelayv1.StreamToolsRequest{Model: g.model, Messages: msgs, Tools: offered, Options: gen, Call: call})
	if err != nil {
		return err
	}
	out := &answerWriter{w: e.stdout}
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			out.endLine()
			return err
		}
		switch ev := ev.GetEvent().(type) {
		case *llmrelayv1.StreamToolsResponse_TextDelta:
			out.write(ev.TextDelta.GetText())
		case *llmrelayv1.StreamToolsResponse_RefusalDelta:
			out.write(ev.RefusalDelta.GetText())
		case *llmrelayv1.StreamToolsResponse_ToolCallDone:
			tc := ev.ToolCallDone.GetToolCall()
			out.endLine()
			// A call the token limit cut, or whose arguments are no
			// JSON object, is marked: it must not look runnable.
			mark := ""
			if !tc.GetArgumentsValid() {
				mark = " (arguments incomplete or not a JSON object: do not run)"
			}
			out.write(fmt.Sprintf("tool call %s [%s]%s: %s\n", tc.GetName(), tc.GetCallId(), mark, tc.GetArguments()))
		}
	}
	out.endLine()
	if out.err != nil {
		return fmt.Errorf("write the answer: %w", out.err)
	}
	notices(e.stderr, "tools", s.Acc.Meta())
	if g.metaLine {
		fmt.Fprintln(e.stderr, metaSummary(s.Acc.Meta()))
	}
	return nil
}
