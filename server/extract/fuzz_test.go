package extract

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

var knownPatterns = map[string]bool{
	PatternTextField: true, PatternContentString: true, PatternContentStringItem: true, PatternRefusalField: true,
	PatternInstructionsString: true, PatternPromptString: true, PatternDeltaField: true, PatternResponseString: true,
	PatternBedrockToolUse: true, PatternToolUseField: true, PatternFunctionCallField: true, PatternOpenAIFunction: true,
	PatternTypedToolUse: true, PatternFlatToolUse: true,
	PatternBedrockToolResult: true, PatternToolResultField: true, PatternFunctionResponseField: true,
	PatternTypedToolResult: true, PatternRoleTool: true, PatternToolCallIDField: true,
	PatternDefinitionDirect: true, PatternDefinitionFunction: true, PatternDefinitionTool: true,
	PatternDefinitionDefinition: true, PatternDefinitionBedrockToolSpec: true, PatternDefinitionGeminiDeclaration: true,
}

// resolve returns every value the JSON Pointer p can name in n (several when
// an object repeats a member name).
func resolve(n *node, p string) []*node {
	if p == "" {
		return []*node{n}
	}
	if !strings.HasPrefix(p, "/") {
		return nil
	}
	seg, rest, _ := strings.Cut(p[1:], "/")
	if rest != "" || strings.HasSuffix(p[1:], "/") {
		rest = "/" + rest
	}
	seg = strings.NewReplacer("~1", "/", "~0", "~").Replace(seg)
	var out []*node
	switch n.kind {
	case kindArray:
		i, err := strconv.Atoi(seg)
		if err == nil && i >= 0 && i < len(n.elems) {
			out = append(out, resolve(&n.elems[i], rest)...)
		}
	case kindObject:
		for i, k := range n.keys {
			if k == seg {
				out = append(out, resolve(&n.elems[i], rest)...)
			}
		}
	}
	return out
}

// checkInvariants asserts what holds for every response to a valid payload.
func checkInvariants(t *testing.T, data []byte, r *llmrelayv1.ExtractResponse) {
	t.Helper()
	if _, err := proto.Marshal(r); err != nil {
		t.Fatalf("proto.Marshal: %v", err)
	}
	if _, err := protojson.Marshal(r); err != nil {
		t.Fatalf("protojson.Marshal: %v", err)
	}
	doc, err := parseJSON(data)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	used := map[string]bool{}
	resolves := func(kind, path string, ok func(*node) bool) {
		for _, n := range resolve(&doc, path) {
			if ok(n) {
				return
			}
		}
		t.Errorf("%s path %q does not name a matching value", kind, path)
	}
	for _, x := range r.GetTexts() {
		used[x.GetPattern()] = true
		if x.GetText() == "" {
			t.Errorf("empty text reported at %q", x.GetPath())
		}
		resolves("text", x.GetPath(), func(n *node) bool { return n.kind == kindString && n.str == x.GetText() })
	}
	seen := map[useKey]bool{}
	for _, u := range r.GetToolUses() {
		used[u.GetPattern()] = true
		if (u.Input == nil) == (u.RawArguments == nil) {
			t.Errorf("tool use %q: want exactly one of input and raw_arguments", u.GetName())
		}
		if u.Input != nil && u.Input.GetStructValue() == nil {
			t.Errorf("tool use %q: input is not an object: %v", u.GetName(), u.Input)
		}
		if u.GetId() != "" {
			k := useKey{u.GetId(), u.GetName()}
			if seen[k] {
				t.Errorf("tool use %v reported twice", k)
			}
			seen[k] = true
		}
		resolves("tool use", u.GetPath(), func(n *node) bool { return n.kind == kindObject })
	}
	for _, x := range r.GetToolResults() {
		used[x.GetPattern()] = true
		resolves("tool result", x.GetPath(), func(n *node) bool { return n.kind == kindObject })
	}
	for _, d := range r.GetToolDefinitions() {
		used[d.GetPattern()] = true
		if d.GetName() == "" {
			t.Errorf("definition without a name at %q", d.GetPath())
		}
		resolves("definition", d.GetPath(), func(n *node) bool { return n.kind == kindObject })
	}
	distinct := map[string]bool{}
	for _, p := range r.GetMatchedPatterns() {
		if !knownPatterns[p] {
			t.Errorf("unknown pattern %q", p)
		}
		if distinct[p] {
			t.Errorf("pattern %q listed twice", p)
		}
		distinct[p] = true
	}
	if !reflect.DeepEqual(distinct, used) {
		t.Errorf("matched_patterns %v, items use %v", r.GetMatchedPatterns(), used)
	}
}

func addSeeds(f *testing.F) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		f.Fatal(err)
	}
	regress, err := filepath.Glob("testdata/real/*.json")
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range append(files, regress...) {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		`{"content": ["String", {"text": "Object"}, {"other": "data"}]}`,
		`{"text": "Using tools", "tool_calls": [{"id": "call_123", "type": "function", "function": {"name": "search", "arguments": "{}"}}]}`,
		`{"name": "search", "arguments": "not valid json {"}`,
		`{"tools": [{"tool": {"name": "search"}}, {"definition": {"name": "search"}}]}`,
		`{"role": "tool", "tool_call_id": "123", "content": "Result"}`,
		`{"toolResult": {"toolUseId": "1", "content": [{"json": {"a": 1e400}}], "status": "error"}}`,
		`{"a/b": {"m~n": {"text": "x"}}, "text": "\ud800"}`,
		`[[[[{"functionCall": {"name": "f", "args": "[1]"}}]]]]`,
		`{"a": 1,}`, `nul`, "\"\xff\"",
	} {
		f.Add([]byte(s))
	}
}

// FuzzExtract: no panic; invalid JSON is a *SyntaxError with an offset
// inside the input; valid JSON always gives a response that satisfies the
// invariants and marshals.
func FuzzExtract(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Extract(data)
		if !json.Valid(data) {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("invalid JSON: error %v, want *SyntaxError", err)
			}
			if se.Offset < 0 || se.Offset > int64(len(data)) {
				t.Fatalf("offset %d outside input of %d bytes", se.Offset, len(data))
			}
			return
		}
		if err != nil {
			t.Fatalf("valid JSON: %v", err)
		}
		checkInvariants(t, data, r)
		// The parser agrees with encoding/json.
		n, err := parseJSON(data)
		if err != nil {
			t.Fatal(err)
		}
		decode := func(b []byte) (any, error) {
			d := json.NewDecoder(bytes.NewReader(b))
			d.UseNumber()
			var v any
			return v, d.Decode(&v)
		}
		fromStd, err := decode(data)
		if err != nil {
			t.Fatal(err)
		}
		fromNode, err := decode(appendJSON(nil, &n))
		if err != nil {
			t.Fatalf("appendJSON output is not JSON: %v", err)
		}
		if !reflect.DeepEqual(fromStd, fromNode) {
			t.Fatalf("parser disagrees with encoding/json:\n%v\n%v", fromStd, fromNode)
		}
		// The same payload as a google.protobuf.Value extracts without
		// panic and marshals (members are then visited in key order).
		var v structpb.Value
		if err := protojson.Unmarshal(data, &v); err == nil {
			rv := ExtractValue(&v)
			if _, err := proto.Marshal(rv); err != nil {
				t.Fatalf("value payload: marshal: %v", err)
			}
		}
	})
}

// FuzzParseArguments: no panic, and the Arguments invariants hold.
func FuzzParseArguments(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `"{\"a\":1}"`, `"not json {"`, `[1,2,3]`, `""`, `null`, ``, `"[1]"`, `{`, `7`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		a := ParseArguments(raw)
		checkArguments(t, raw, a)
	})
}

func checkArguments(t *testing.T, raw []byte, a Arguments) {
	t.Helper()
	if a.Form < ArgumentsMissing || a.Form > ArgumentsMalformed {
		t.Fatalf("form %d", a.Form)
	}
	if (a.Input == nil) != a.Malformed() {
		t.Fatalf("%s: input %v", a.Form, a.Input)
	}
	if !a.Malformed() && a.Raw != "" {
		t.Fatalf("%s: raw %q", a.Form, a.Raw)
	}
	var obj map[string]any
	valid := json.Unmarshal([]byte(a.Text), &obj) == nil && obj != nil
	if a.Valid != valid {
		t.Fatalf("%s: text %q valid=%v, parses as object=%v", a.Form, a.Text, a.Valid, valid)
	}
	if a.Input != nil {
		if _, err := proto.Marshal(a.Input); err != nil {
			t.Fatalf("marshal input: %v", err)
		}
	}
	if len(raw) > 0 && json.Valid(raw) && raw[0] == '{' && a.Form != ArgumentsObject {
		t.Fatalf("object %s classified %s", raw, a.Form)
	}
}
