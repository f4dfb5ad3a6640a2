package extract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/provider/providertest"
)

// The provider packages hold real recordings (real_*.http, the provider's
// response) and the requests the adapters built (*.request.golden, for the
// recordings and for the hand-written fixtures, in each provider's wire
// format). Every JSON body among them, and every JSON chunk of their streams,
// is fed to Extract and the result is compared with what the payload says,
// decoded here from each provider's documented shape, independently of the
// extractor's patterns: every text in order with its role (reasoning apart),
// every tool call with its id, name, role and arguments, every result with
// its id, name, role and error flag, every definition with its schema, and
// nothing else.

// jv is a JSON value decoded with member order kept.
type jv struct {
	kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	keys []string
	vals []*jv
	str  string
}

func decodeOrdered(data []byte) (*jv, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := decodeValue(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data")
	}
	return v, nil
}

func decodeValue(d *json.Decoder) (*jv, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			v := &jv{kind: 'a'}
			for d.More() {
				e, err := decodeValue(d)
				if err != nil {
					return nil, err
				}
				v.vals = append(v.vals, e)
			}
			_, err := d.Token()
			return v, err
		}
		v := &jv{kind: 'o'}
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, err
			}
			e, err := decodeValue(d)
			if err != nil {
				return nil, err
			}
			v.keys = append(v.keys, k.(string))
			v.vals = append(v.vals, e)
		}
		_, err := d.Token()
		return v, err
	case string:
		return &jv{kind: 's', str: t}, nil
	case json.Number:
		return &jv{kind: 'n', str: t.String()}, nil
	case bool:
		return &jv{kind: 'b', str: fmt.Sprint(t)}, nil
	default:
		return &jv{kind: 'z'}, nil
	}
}

// get returns the last member named k (duplicates: last wins), or nil.
func (v *jv) get(k string) *jv {
	if v == nil || v.kind != 'o' {
		return nil
	}
	for i := len(v.keys) - 1; i >= 0; i-- {
		if v.keys[i] == k {
			return v.vals[i]
		}
	}
	return nil
}

func (v *jv) s(k string) string {
	if m := v.get(k); m != nil && m.kind == 's' {
		return m.str
	}
	return ""
}

func (v *jv) items(k string) []*jv {
	if m := v.get(k); m != nil && m.kind == 'a' {
		return m.vals
	}
	return nil
}

func (v *jv) isTrue(k string) bool {
	m := v.get(k)
	return m != nil && m.kind == 'b' && m.str == "true"
}

// plain converts v to encoding/json's generic form (numbers as float64).
func (v *jv) plain() any {
	if v == nil {
		return nil
	}
	switch v.kind {
	case 'o':
		m := map[string]any{}
		for i, k := range v.keys {
			m[k] = v.vals[i].plain()
		}
		return m
	case 'a':
		a := []any{}
		for _, e := range v.vals {
			a = append(a, e.plain())
		}
		return a
	case 's':
		return v.str
	case 'n':
		var f float64
		if err := json.Unmarshal([]byte(v.str), &f); err != nil {
			return v.str
		}
		return f
	case 'b':
		return v.str == "true"
	}
	return nil
}

type wantUse struct {
	id, name, role string
	input          any    // the arguments as a JSON object (generic form)
	raw            string // set instead when the arguments are a string that is not JSON
	isRaw          bool
}

type wantResult struct {
	id, name, role string
	isError        bool
}

type wantDef struct {
	name   string
	schema any // nil: no schema given
}

// want is what a payload carries, in document order.
type want struct {
	role      string   // of the nearest enclosing object that has one
	texts     []string // answer, prompt and instruction texts
	roles     []string // of each text
	reasoning []string // reasoning text: never reported as an unlabelled text
	uses      []wantUse
	results   []wantResult
	defs      []wantDef
}

func (w *want) text(s string) {
	if s != "" {
		w.texts = append(w.texts, s)
		w.roles = append(w.roles, w.role)
	}
}

// enter makes v's role, if it has one, the current role until the returned
// function restores the previous one.
func (w *want) enter(v *jv) func() {
	prev := w.role
	if r := v.get("role"); r != nil && r.kind == 's' {
		w.role = r.str
	}
	return func() { w.role = prev }
}

func (w *want) result(id, name string, isError bool) {
	w.results = append(w.results, wantResult{id: id, name: name, role: w.role, isError: isError})
}

func (w *want) think(s string) {
	if s != "" {
		w.reasoning = append(w.reasoning, s)
	}
}

// use records a tool call, its arguments (the raw value) normalized as
// docs/extract.md says.
func (w *want) use(id, name string, args *jv) {
	u := wantUse{id: id, name: name, role: w.role}
	switch {
	case args == nil || args.kind == 'z':
		u.input = map[string]any{}
	case args.kind == 'o':
		u.input = args.plain()
	case args.kind == 's':
		if strings.TrimSpace(args.str) == "" {
			u.input = map[string]any{}
			break
		}
		var x any
		if err := json.Unmarshal([]byte(args.str), &x); err != nil {
			u.raw, u.isRaw = args.str, true
			break
		}
		if m, ok := x.(map[string]any); ok {
			u.input = m
		} else {
			u.input = map[string]any{"value": x}
		}
	default:
		u.input = map[string]any{"value": args.plain()}
	}
	w.uses = append(w.uses, u)
}

func (w *want) def(name string, schema *jv) {
	d := wantDef{name: name}
	if schema != nil {
		d.schema = schema.plain()
	}
	w.defs = append(w.defs, d)
}

// --- OpenAI Chat Completions (and Ollama /api/chat, which shares it) ---

func (w *want) chatRequestOrResponse(v *jv) {
	defer w.enter(v)()
	for i, k := range v.keys {
		m := v.vals[i]
		switch k {
		case "messages":
			for _, msg := range m.vals {
				w.chatMessage(msg)
			}
		case "choices":
			for _, c := range m.vals {
				for j, ck := range c.keys {
					if ck == "message" || ck == "delta" {
						w.chatMessage(c.vals[j])
					}
				}
			}
		case "message": // Ollama chat response and chunks
			w.chatMessage(m)
		case "tools", "functions":
			for _, t := range m.vals {
				if f := t.get("function"); f != nil && f.kind == 'o' {
					t = f
				}
				if n := t.s("name"); n != "" {
					w.def(n, t.get("parameters"))
				}
			}
		case "prediction": // predicted output: text the request supplies
			w.chatMessage(m)
		case "prompt", "system": // Ollama /api/generate request
			if m.kind == 's' {
				w.text(m.str)
			}
		case "thinking": // Ollama /api/generate response
			if m.kind == 's' {
				w.think(m.str)
			}
		}
	}
}

func (w *want) chatMessage(m *jv) {
	defer w.enter(m)()
	if m.s("role") == "tool" || m.s("role") == "function" {
		// The content of a result is passed on, not searched for text.
		w.result(m.s("tool_call_id"), m.s("name")+m.s("tool_name"), false)
		return
	}
	for i, k := range m.keys {
		v := m.vals[i]
		switch k {
		case "content", "refusal":
			if v.kind == 's' {
				w.text(v.str)
			}
			for _, p := range v.vals {
				switch {
				case p.kind == 's':
					w.text(p.str)
				case p.s("type") == "text" || p.s("type") == "output_text":
					w.text(p.s("text"))
				case p.s("type") == "refusal":
					w.text(p.s("refusal"))
				case p.s("type") == "thinking": // Mistral
					for _, x := range p.items("thinking") {
						w.think(x.s("text"))
					}
				}
			}
		case "reasoning_content", "reasoning", "thinking":
			if v.kind == 's' {
				w.think(v.str)
			}
		case "reasoning_details": // OpenRouter
			for _, d := range v.vals {
				w.think(d.s("text"))
				w.think(d.s("summary"))
			}
		case "tool_calls":
			calls := v.vals
			if v.kind == 'o' {
				// text-generation-inference 1.4: one call object, not a
				// list, its id a number and its arguments "parameters".
				calls = []*jv{v}
			}
			for _, c := range calls {
				if cu := c.get("custom"); cu != nil {
					// A custom (free-form) tool call: its input is text.
					w.use(c.s("id"), cu.s("name"), cu.get("input"))
					continue
				}
				f := c.get("function")
				id := c.s("id")
				if n := c.get("id"); id == "" && n != nil && n.kind == 'n' {
					id = n.str
				}
				if id == "" {
					id = f.s("id")
				}
				args := f.get("arguments")
				if args == nil {
					args = f.get("parameters")
				}
				w.use(id, f.s("name"), args)
			}
		case "function_call":
			if v.kind == 'o' {
				w.use("", v.s("name"), v.get("arguments"))
			}
		}
	}
}

// --- OpenAI Responses ---

func (w *want) responsesBody(v *jv) {
	defer w.enter(v)()
	for i, k := range v.keys {
		m := v.vals[i]
		switch k {
		case "instructions":
			if m.kind == 's' {
				w.text(m.str)
			}
			for _, it := range m.vals {
				w.responsesItem(it)
			}
		case "input":
			if m.kind == 's' {
				w.text(m.str)
			}
			for _, it := range m.vals {
				w.responsesItem(it)
			}
		case "output":
			for _, it := range m.vals {
				w.responsesItem(it)
			}
		case "tools":
			for _, t := range m.vals {
				if n := t.s("name"); n != "" {
					w.def(n, t.get("parameters"))
				}
				// MCP server tools are listed by the mcp_list_tools item.
			}
		}
	}
}

func (w *want) responsesItem(it *jv) {
	defer w.enter(it)()
	switch typ := it.s("type"); typ {
	case "message", "":
		if c := it.get("content"); c != nil && c.kind == 's' {
			w.text(c.str)
		}
		for _, p := range it.items("content") {
			w.responsesPart(p)
		}
	case "reasoning":
		for _, p := range it.items("summary") {
			w.think(p.s("text"))
		}
		for _, p := range it.items("content") {
			w.think(p.s("text"))
		}
	case "function_call", "custom_tool_call":
		args := it.get("arguments")
		if typ == "custom_tool_call" {
			args = it.get("input")
		}
		w.use(it.s("call_id"), it.s("name"), args)
	case "mcp_call":
		w.use(it.s("id"), it.s("name"), it.get("arguments"))
	case "function_call_output", "custom_tool_call_output":
		w.result(it.s("call_id"), "", false)
	case "mcp_list_tools":
		for _, t := range it.items("tools") {
			w.def(t.s("name"), t.get("input_schema"))
		}
	}
}

func (w *want) responsesPart(p *jv) {
	defer w.enter(p)()
	switch p.s("type") {
	case "output_text", "input_text", "text":
		w.text(p.s("text"))
	case "refusal":
		w.text(p.s("refusal"))
	case "reasoning_text", "summary_text":
		w.think(p.s("text"))
	}
}

// responsesEvent decodes one Responses streaming event.
func (w *want) responsesEvent(ev *jv) {
	defer w.enter(ev)()
	typ := ev.s("type")
	if typ == "response.function_call_arguments.done" && ev.s("name") != "" {
		// OpenRouter's done event names the function beside the whole
		// arguments (testdata/real_opencode_openrouter_gpt55_tool_loop_stream.http):
		// a tool use, as a flat call object is; OpenAI's has no name.
		w.use("", ev.s("name"), ev.get("arguments"))
	}
	for i, k := range ev.keys {
		m := ev.vals[i]
		switch k {
		case "response":
			w.responsesBody(m)
		case "item":
			w.responsesItem(m)
		case "part":
			w.responsesPart(m)
		case "text":
			if m.kind != 's' {
				continue
			}
			if strings.Contains(typ, "reasoning") {
				w.think(m.str)
			} else {
				w.text(m.str)
			}
		case "refusal":
			// response.refusal.done: the whole refusal, as
			// response.output_text.done's "text" is the whole answer.
			if m.kind == 's' {
				w.text(m.str)
			}
		case "delta":
			// The answer's and the refusal's deltas are text; a reasoning
			// delta is not, and a function call's arguments delta is a
			// fragment of JSON, not text.
			if m.kind == 's' && (typ == "response.output_text.delta" || typ == "response.refusal.delta") {
				w.text(m.str)
			} else if m.kind == 's' && strings.Contains(typ, "reasoning") {
				w.think(m.str)
			}
		}
	}
}

// --- Anthropic Messages ---

func (w *want) anthropicBody(v *jv) {
	defer w.enter(v)()
	for i, k := range v.keys {
		m := v.vals[i]
		switch k {
		case "system":
			if m.kind == 's' {
				w.text(m.str)
			}
			for _, b := range m.vals {
				w.anthropicBlock(b)
			}
		case "messages":
			for _, msg := range m.vals {
				restore := w.enter(msg)
				w.anthropicContent(msg.get("content"))
				restore()
			}
		case "content": // a response
			w.anthropicContent(m)
		case "tools":
			for _, t := range m.vals {
				if n := t.s("name"); n != "" {
					w.def(n, t.get("input_schema"))
				}
			}
		// Stream events.
		case "message":
			w.anthropicBody(m)
		case "content_block":
			w.anthropicBlock(m)
		case "delta":
			switch m.s("type") {
			case "text_delta":
				w.text(m.s("text"))
			case "compaction_delta":
				w.text(m.s("content"))
			case "thinking_delta":
				w.think(m.s("thinking"))
			}
		}
	}
}

func (w *want) anthropicContent(c *jv) {
	if c == nil {
		return
	}
	if c.kind == 's' {
		w.text(c.str)
	}
	for _, b := range c.vals {
		w.anthropicBlock(b)
	}
}

func (w *want) anthropicBlock(b *jv) {
	defer w.enter(b)()
	switch typ := b.s("type"); {
	case typ == "text":
		w.text(b.s("text"))
	case typ == "compaction":
		// The model's summary of the conversation it replaces: text,
		// not reasoning.
		w.text(b.s("content"))
	case typ == "thinking":
		w.think(b.s("thinking"))
	case typ == "tool_use" || typ == "server_tool_use" || typ == "mcp_tool_use":
		w.use(b.s("id"), b.s("name"), b.get("input"))
	case typ == "tool_result" || strings.HasSuffix(typ, "_tool_result"):
		// Server tools (web_search_tool_result, mcp_tool_result, ...) give
		// an error as a content object typed *_tool_result_error.
		isErr := b.isTrue("is_error") || strings.HasSuffix(b.get("content").s("type"), "_tool_result_error")
		w.result(b.s("tool_use_id"), "", isErr)
	}
}

// --- Gemini ---

func (w *want) geminiBody(v *jv) {
	defer w.enter(v)()
	for i, k := range v.keys {
		m := v.vals[i]
		switch k {
		case "contents":
			for _, c := range m.vals {
				w.geminiContent(c)
			}
		case "candidates":
			for _, c := range m.vals {
				w.geminiContent(c.get("content"))
			}
		case "systemInstruction", "system_instruction", "content": // content: embedContent
			w.geminiContent(m)
		case "requests": // batchEmbedContents
			for _, r := range m.vals {
				w.geminiBody(r)
			}
		case "tools":
			for _, t := range m.vals {
				for _, dk := range []string{"functionDeclarations", "function_declarations"} {
					for _, d := range t.items(dk) {
						schema := d.get("parameters")
						if schema == nil {
							schema = d.get("parametersJsonSchema")
						}
						w.def(d.s("name"), schema)
					}
				}
			}
		}
	}
}

func (w *want) geminiContent(c *jv) {
	defer w.enter(c)()
	for _, p := range c.items("parts") {
		switch {
		case p.get("functionCall") != nil:
			f := p.get("functionCall")
			w.use(f.s("id"), f.s("name"), f.get("args"))
		case p.get("functionResponse") != nil:
			f := p.get("functionResponse")
			w.result(f.s("id"), f.s("name"), false)
		case p.isTrue("thought"):
			w.think(p.s("text"))
		default:
			w.text(p.s("text"))
		}
	}
}

// expectFor decodes payload as the shape the provider package speaks.
func expectFor(pkg string, v *jv) *want {
	w := &want{}
	switch pkg {
	case "anthropic":
		w.anthropicBody(v)
	case "gemini":
		w.geminiBody(v)
	case "ollama":
		w.chatRequestOrResponse(v)
	case "openai":
		switch {
		case v.get("choices") != nil || v.get("messages") != nil:
			w.chatRequestOrResponse(v)
		case strings.HasPrefix(v.s("type"), "response."):
			w.responsesEvent(v)
		default:
			w.responsesBody(v)
		}
	}
	return w
}

// reasoningPath reports whether a text's path names it as reasoning: the
// items of an OpenAI Responses reasoning summary (docs/extract.md: reasoning
// summaries are reported as text with their path).
func reasoningPath(p string) bool {
	return strings.Contains(p, "/summary/")
}

func checkAgainst(t *testing.T, w *want, r *llmrelayv1.ExtractResponse) {
	t.Helper()
	var texts, roles []string
	for _, x := range r.GetTexts() {
		if !reasoningPath(x.GetPath()) {
			texts = append(texts, x.GetText())
			roles = append(roles, x.GetRole())
		}
	}
	if !reflect.DeepEqual(texts, w.texts) {
		t.Errorf("texts (without reasoning paths):\n got %q\nwant %q", texts, w.texts)
	} else if !slices.Equal(roles, w.roles) {
		t.Errorf("roles of the texts: got %q, want %q", roles, w.roles)
	}
	for _, s := range w.reasoning {
		for _, x := range r.GetTexts() {
			if x.GetText() == s && !reasoningPath(x.GetPath()) {
				t.Errorf("reasoning %.60q reported as text at %s", s, x.GetPath())
			}
		}
	}
	if len(r.GetToolUses()) != len(w.uses) {
		t.Errorf("%d tool uses, want %d: %v", len(r.GetToolUses()), len(w.uses), r.GetToolUses())
	}
	for i := range min(len(r.GetToolUses()), len(w.uses)) {
		got, want := r.GetToolUses()[i], w.uses[i]
		if got.GetId() != want.id || got.GetName() != want.name || got.GetRole() != want.role {
			t.Errorf("tool use %d: %q#%q role %q, want %q#%q role %q", i, got.GetName(), got.GetId(), got.GetRole(), want.name, want.id, want.role)
		}
		switch {
		case want.isRaw:
			if got.RawArguments == nil || got.GetRawArguments() != want.raw {
				t.Errorf("tool use %d: raw_arguments %v, want %q", i, got.RawArguments, want.raw)
			}
		case got.GetInput() == nil:
			t.Errorf("tool use %d: no input, want %v", i, want.input)
		default:
			if g := generic(t, got.GetInput()); !reflect.DeepEqual(g, want.input) {
				t.Errorf("tool use %d (%s): input %v, want %v", i, want.name, g, want.input)
			}
		}
	}
	var results []wantResult
	for _, x := range r.GetToolResults() {
		results = append(results, wantResult{id: x.GetId(), name: x.GetName(), role: x.GetRole(), isError: x.GetIsError()})
	}
	if !reflect.DeepEqual(results, w.results) {
		t.Errorf("tool results:\n got %v\nwant %v", results, w.results)
	}
	if len(r.GetToolDefinitions()) != len(w.defs) {
		t.Errorf("%d definitions, want %d", len(r.GetToolDefinitions()), len(w.defs))
	}
	for i := range min(len(r.GetToolDefinitions()), len(w.defs)) {
		got, want := r.GetToolDefinitions()[i], w.defs[i]
		if got.GetName() != want.name {
			t.Errorf("definition %d: %q, want %q", i, got.GetName(), want.name)
		}
		var g any
		if got.GetParameters() != nil {
			g = generic(t, got.GetParameters())
		}
		if !reflect.DeepEqual(g, want.schema) {
			t.Errorf("definition %q: schema %v, want %v", want.name, g, want.schema)
		}
	}
}

func generic(t *testing.T, v *structpb.Value) any {
	t.Helper()
	b, err := protojson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	return x
}

// payloads returns the JSON payloads of a recording: the whole body, or
// each data: payload of an SSE stream, or each line of an NDJSON stream.
func payloads(body []byte) (chunks [][]byte, stream bool) {
	if json.Valid(body) {
		return [][]byte{body}, false
	}
	text := strings.ReplaceAll(string(body), "\r\n", "\n")
	if strings.Contains(text, "data:") {
		for _, ev := range strings.Split(text, "\n\n") {
			var data []string
			for _, line := range strings.Split(ev, "\n") {
				if rest, ok := strings.CutPrefix(line, "data:"); ok {
					data = append(data, strings.TrimPrefix(rest, " "))
				}
			}
			if d := strings.Join(data, "\n"); d != "" && d != "[DONE]" {
				chunks = append(chunks, []byte(d))
			}
		}
		return chunks, true
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) != "" {
			chunks = append(chunks, []byte(line))
		}
	}
	return chunks, true
}

// requestBody returns the JSON body of a *.request.golden (request line,
// headers, blank line, body).
func requestBody(t *testing.T, path string) []byte {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := bytes.Cut(raw, []byte("\n\n"))
	if !ok {
		t.Fatalf("%s: no blank line after the headers", path)
	}
	return body
}

func TestRealProviderPayloads(t *testing.T) {
	t.Parallel()
	recs, err := filepath.Glob("../provider/*/testdata/real_*.http")
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := filepath.Glob("../provider/*/testdata/*.request.golden")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) < 400 || len(reqs) < 100 {
		t.Fatalf("found %d recordings and %d requests: the provider testdata moved", len(recs), len(reqs))
	}
	var bodies, chunks int
	var total want
	run := func(name, pkg string, data []byte) {
		t.Run(name, func(t *testing.T) {
			v, err := decodeOrdered(data)
			if err != nil {
				t.Fatalf("not JSON: %v", err)
			}
			r, err := Extract(data)
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			checkInvariants(t, data, r)
			sameAsValue(t, data, r)
			w := expectFor(pkg, v)
			checkAgainst(t, w, r)
			total.texts = append(total.texts, w.texts...)
			total.reasoning = append(total.reasoning, w.reasoning...)
			total.uses = append(total.uses, w.uses...)
			total.results = append(total.results, w.results...)
			total.defs = append(total.defs, w.defs...)
		})
	}
	for _, f := range recs {
		pkg := filepath.Base(filepath.Dir(filepath.Dir(f)))
		rec := providertest.Load(t, f)
		if ct := rec.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/plain") || strings.HasPrefix(ct, "text/html") {
			continue // a proxy's plain-text or HTML error page carries no JSON payload
		}
		cs, stream := payloads(rec.Body)
		if len(cs) == 0 {
			t.Errorf("%s: no JSON payload", f)
		}
		for i, c := range cs {
			name := pkg + "/" + strings.TrimSuffix(filepath.Base(f), ".http")
			if stream {
				name += fmt.Sprintf("/chunk%03d", i)
				chunks++
			} else {
				bodies++
			}
			run(name, pkg, c)
		}
	}
	skipped := 0
	for _, f := range reqs {
		pkg := filepath.Base(filepath.Dir(filepath.Dir(f)))
		body := requestBody(t, f)
		if !json.Valid(body) {
			skipped++ // multipart or empty bodies carry no JSON payload
			continue
		}
		bodies++
		run(pkg+"/"+strings.TrimSuffix(filepath.Base(f), ".golden"), pkg, body)
	}
	t.Logf("%d bodies, %d stream chunks (%d requests without a JSON body): %d texts, %d reasoning texts, %d tool uses, %d results, %d definitions",
		bodies, chunks, skipped, len(total.texts), len(total.reasoning), len(total.uses), len(total.results), len(total.defs))
	// The decoders above must keep finding what the recordings hold.
	if len(total.texts) < 1000 || len(total.reasoning) < 500 || len(total.uses) < 300 || len(total.results) < 30 || len(total.defs) < 100 {
		t.Errorf("the decoders found too little: the recordings or their shapes changed")
	}
}

// Each body in testdata/real is a payload copied from a provider recording
// (testdata/README.md names it) that Extract got wrong; the file name starts
// with the provider package whose shape it is. Besides the checks above, each
// names what the bug was.
func TestRealPayloadRegressions(t *testing.T) {
	t.Parallel()
	pins := map[string]func(t *testing.T, r *llmrelayv1.ExtractResponse){
		// Gemini "thought": true parts were reported as answer text.
		"gemini_thought_part": func(t *testing.T, r *llmrelayv1.ExtractResponse) {
			noTextUnder(t, r, "/candidates/0/content/parts/0/")
		},
		// Grounding segments repeat the answer: each sentence came twice.
		"gemini_grounding_supports_chunk": func(t *testing.T, r *llmrelayv1.ExtractResponse) {
			noTextUnder(t, r, "/candidates/0/groundingMetadata/")
		},
		// Mistral thinking blocks were reported as answer text.
		"openai_mistral_thinking_block": func(t *testing.T, r *llmrelayv1.ExtractResponse) {
			noTextUnder(t, r, "/choices/0/message/content/0/")
		},
		// OpenRouter's reasoning_details (reasoning.text) were answer text.
		"openai_openrouter_reasoning_details": func(t *testing.T, r *llmrelayv1.ExtractResponse) {
			noTextUnder(t, r, "/choices/0/message/reasoning_details/")
		},
		// OpenRouter's url_citation content (the cited pages) was text.
		"openai_openrouter_url_citation_content": func(t *testing.T, r *llmrelayv1.ExtractResponse) {
			noTextUnder(t, r, "/choices/0/message/annotations/")
		},
		// Responses reasoning_text content and reasoning stream events were
		// answer text.
		"openai_responses_reasoning_text_completed_chunk": func(t *testing.T, r *llmrelayv1.ExtractResponse) {
			noTextUnder(t, r, "/response/output/0/")
		},
		"openai_responses_reasoning_text_done_chunk": func(t *testing.T, r *llmrelayv1.ExtractResponse) {
			noTextUnder(t, r, "")
		},
		"openai_responses_reasoning_summary_done_chunk": func(t *testing.T, r *llmrelayv1.ExtractResponse) {
			noTextUnder(t, r, "")
		},
		// A custom_tool_call was keyed by its item id (ctc_...), not by the
		// call_id its custom_tool_call_output answers.
		"openai_responses_custom_tool_call_chunk": func(t *testing.T, r *llmrelayv1.ExtractResponse) {
			if len(r.GetToolUses()) != 1 || r.GetToolUses()[0].GetId() != "call_2GHkSm2Jm0n7vgXsQEryfGmL" {
				t.Errorf("tool uses %v, want one keyed call_2GHkSm2Jm0n7vgXsQEryfGmL", r.GetToolUses())
			}
		},
		// The input of a custom tool call, streamed, was a prompt text.
		"openai_responses_custom_tool_call_input_done_chunk": func(t *testing.T, r *llmrelayv1.ExtractResponse) {
			noTextUnder(t, r, "")
		},
		// The search results of Groq's server-side tools were text.
		"openai_groq_executed_tools_chunk": func(t *testing.T, r *llmrelayv1.ExtractResponse) {
			noTextUnder(t, r, "")
		},
		// Server tool results were not results (their content was walked
		// for text instead), and their error content not an error.
		"anthropic_web_fetch_tool_result": func(t *testing.T, r *llmrelayv1.ExtractResponse) {
			wantResults(t, r, "srvtoolu_013gia34XNKyTfwHxaPCKEVd", true)
		},
		"anthropic_tool_search_tool_result": func(t *testing.T, r *llmrelayv1.ExtractResponse) {
			wantResults(t, r, "srvtoolu_0176qgHeeBpSygYAnUzKHCfh", false)
		},
		// text-generation-inference 1.4's call (one object under
		// tool_calls, "description": null beside "parameters") was read as
		// a tool definition.
		"openai_tgi_tool_call_object": func(t *testing.T, r *llmrelayv1.ExtractResponse) {
			if len(r.GetToolUses()) != 1 || r.GetToolUses()[0].GetName() != "tools" || len(r.GetToolDefinitions()) != 0 {
				t.Errorf("tool uses %v, definitions %v; want the call, no definition", r.GetToolUses(), r.GetToolDefinitions())
			}
		},
		"anthropic_mcp_tool_result_chunk": func(t *testing.T, r *llmrelayv1.ExtractResponse) {
			wantResults(t, r, "mcptoolu_01PbkkWTpLrWH9wKk6kbgE4K", false)
			noTextUnder(t, r, "")
		},
	}
	files, err := filepath.Glob("testdata/real/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(pins) {
		t.Errorf("%d bodies in testdata/real, %d pins", len(files), len(pins))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			pin, ok := pins[name]
			if !ok {
				t.Fatalf("no pin for %s", f)
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			v, err := decodeOrdered(data)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Extract(data)
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			pkg, _, _ := strings.Cut(name, "_")
			checkInvariants(t, data, r)
			checkAgainst(t, expectFor(pkg, v), r)
			pin(t, r)
			providertest.Golden(t, strings.TrimSuffix(f, ".json")+".golden", providertest.ProtoJSON(t, r))
		})
	}
}

// noTextUnder fails for any text reported at a path starting with prefix.
func noTextUnder(t *testing.T, r *llmrelayv1.ExtractResponse, prefix string) {
	t.Helper()
	for _, x := range r.GetTexts() {
		if strings.HasPrefix(x.GetPath(), prefix) {
			t.Errorf("text %.60q reported at %s", x.GetText(), x.GetPath())
		}
	}
}

// wantResults fails unless the only tool result is id with is_error isErr.
func wantResults(t *testing.T, r *llmrelayv1.ExtractResponse, id string, isErr bool) {
	t.Helper()
	if len(r.GetToolResults()) != 1 || r.GetToolResults()[0].GetId() != id || r.GetToolResults()[0].GetIsError() != isErr {
		t.Errorf("tool results %v, want one for %s with is_error %v", r.GetToolResults(), id, isErr)
	}
}

// sameAsValue checks that the payload sent as a google.protobuf.Value gives
// the same items as the JSON text (in key order instead of document order).
func sameAsValue(t *testing.T, data []byte, fromJSON *llmrelayv1.ExtractResponse) {
	t.Helper()
	var v structpb.Value
	if err := protojson.Unmarshal(data, &v); err != nil {
		t.Fatalf("protojson: %v", err)
	}
	fromValue := ExtractValue(&v)
	fromJSON = proto.Clone(fromJSON).(*llmrelayv1.ExtractResponse)
	sortByPath(fromJSON)
	sortByPath(fromValue)
	sameSchemas(t, fromJSON, fromValue)
	if !proto.Equal(fromJSON, fromValue) {
		t.Errorf("value payload differs:\n%s\nvs json payload:\n%s", protojson.Format(fromValue), protojson.Format(fromJSON))
	}
}
