// Package schema checks the JSON Schemas callers send as JSON text (tool
// parameters, response formats) and validates structured answers against
// them.
//
// Schemas stay text everywhere else: providers receive the caller's bytes
// with their key order. This package only parses them to check them.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// MaxErrors bounds the violations reported for one answer.
const MaxErrors = 20

// Schema is a compiled JSON Schema.
type Schema struct {
	s *jsonschema.Schema
	// unchecked are the schema's patterns that Go's regexp (RE2) cannot
	// run (lookaround, backreferences): valid ECMA-262, so the schema is
	// not refused, but an answer is not checked against them.
	unchecked []string
}

// Unchecked returns the patterns of the schema that validation does not
// check (lookaround or backreferences, which RE2 cannot run).
func (s *Schema) Unchecked() []string { return s.unchecked }

// noLoader refuses every external reference: a schema from a caller must not
// make the gateway read files or fetch URLs ($ref to file:///etc/passwd or an
// internal address).
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external $ref %q is not allowed: inline it or use $defs", url)
}

const resource = "llmrelay:schema.json"

// Compile parses text as JSON and compiles it as a JSON Schema (draft
// 2020-12 unless $schema names another draft). The error says what is wrong
// in words a caller can act on.
func Compile(text string) (*Schema, error) {
	if s, ok := cache.get(text); ok {
		return s, nil
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	if _, ok := doc.(map[string]any); !ok {
		if _, isBool := doc.(bool); !isBool {
			return nil, errors.New("a JSON Schema is an object (or true/false)")
		}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// "format" holds: draft 2020-12 makes it an annotation unless the
	// meta-schema asks for the format-assertion vocabulary, so
	// {"format":"date-time"} accepted "yesterday" while the same schema
	// under draft-07 refused it. The providers' structured outputs
	// generate the formats they list (OpenAI strict: date-time, date,
	// time, duration, email, hostname, ipv4, ipv6, uuid), and a caller
	// parsing the answer into a date type fails on anything else, so an
	// answer that misses its format does not match. Formats the library
	// does not know stay annotations.
	c.AssertFormat()
	c.UseLoader(noLoader{})
	var engine regexpEngine
	c.UseRegexpEngine(engine.compile)
	if err := c.AddResource(resource, doc); err != nil {
		return nil, fmt.Errorf("not a valid JSON Schema: %v", err)
	}
	compiled, err := c.Compile(resource)
	if err != nil {
		if msg := unknownDraft(doc, err); msg != "" {
			return nil, errors.New(msg)
		}
		return nil, fmt.Errorf("not a valid JSON Schema: %s", compileMessage(err))
	}
	s := &Schema{s: compiled, unchecked: engine.close()}
	cache.put(text, s)
	return s, nil
}

// regexpEngine compiles a schema's patterns with Go's regexp. JSON Schema
// patterns are ECMA-262 regular expressions; RE2 has no lookaround and no
// backreferences, and the compiler refused such a pattern as "not valid
// regex" (a Zod schema's `^(?!.*\.\.).*$`, sent as a tool's parameters
// the provider takes, failed the whole request). Those patterns compile
// to a Regexp that matches everything and are recorded as unchecked; a
// pattern that is invalid in both dialects is still refused. ECMA's
// \uXXXX escapes are RE2's \x{XXXX}.
type regexpEngine struct {
	mu        sync.Mutex
	closed    bool // compiled: later calls (format "regex" values) record nothing
	unchecked []string
}

func (e *regexpEngine) compile(pattern string) (jsonschema.Regexp, error) {
	re2 := ecmaEscapes(pattern)
	re, err := regexp.Compile(re2)
	if err == nil {
		return re, nil
	}
	if !beyondRE2(re2, err) {
		return nil, err
	}
	e.mu.Lock()
	if !e.closed && !slices.Contains(e.unchecked, pattern) {
		e.unchecked = append(e.unchecked, pattern)
	}
	e.mu.Unlock()
	return anyString(pattern), nil
}

// close ends the compilation and returns the unchecked patterns.
func (e *regexpEngine) close() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	return e.unchecked
}

// anyString is a pattern RE2 cannot run: it matches every string.
type anyString string

func (p anyString) String() string        { return string(p) }
func (anyString) MatchString(string) bool { return true }

// beyondRE2 reports whether RE2 refused the pattern for an ECMA-262
// feature it lacks: a lookahead or lookbehind group, or a backreference
// (\1-\9, \k<name>).
func beyondRE2(pattern string, err error) bool {
	var se *syntax.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code {
	case syntax.ErrInvalidPerlOp, syntax.ErrInvalidNamedCapture:
		// A lookbehind reads as a named group's start to RE2.
		return strings.HasPrefix(se.Expr, "(?=") || strings.HasPrefix(se.Expr, "(?!") ||
			strings.HasPrefix(se.Expr, "(?<=") || strings.HasPrefix(se.Expr, "(?<!")
	case syntax.ErrInvalidEscape:
		return len(se.Expr) == 2 && se.Expr[1] >= '1' && se.Expr[1] <= '9' || strings.HasPrefix(se.Expr, `\k`)
	}
	return false
}

// ecmaEscapes rewrites ECMA-262's \uXXXX escapes as RE2's \x{XXXX}; the
// rest is left as written (an escaped backslash stays one).
func ecmaEscapes(pattern string) string {
	if !strings.Contains(pattern, `\u`) {
		return pattern
	}
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c != '\\' || i+1 >= len(pattern) {
			b.WriteByte(c)
			continue
		}
		if pattern[i+1] == 'u' && i+6 <= len(pattern) && isHex(pattern[i+2:i+6]) {
			b.WriteString(`\x{` + pattern[i+2:i+6] + `}`)
			i += 5
			continue
		}
		b.WriteByte(c)
		b.WriteByte(pattern[i+1])
		i++
	}
	return b.String()
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// unknownDraft is the refusal of a root "$schema" that names no draft the
// validator has built in: the compiler fetches an unknown meta-schema like
// any reference, which the loader refuses, and the caller read "external
// $ref ... is not allowed" for a schema without a $ref (an OpenAPI 3.1
// dialect, an empty "$schema"). "" when the error is not that.
func unknownDraft(doc any, err error) string {
	root, _ := doc.(map[string]any)
	meta, ok := root["$schema"].(string)
	var lue *jsonschema.LoadURLError
	if !ok || !errors.As(err, &lue) {
		return ""
	}
	if u, _, _ := strings.Cut(lue.URL, "#"); meta != "" && u != strings.TrimSuffix(meta, "#") {
		return "" // a $ref of the schema's, not its meta-schema
	}
	return fmt.Sprintf(`"$schema" %q names no JSON Schema draft the server validates with (draft-04, -06, -07, 2019-09, 2020-12, `+
		`e.g. "https://json-schema.org/draft/2020-12/schema"): remove it (2020-12 is the default) or name one of those`, meta)
}

// compileMessage is the compiler's error without its internal resource URL.
func compileMessage(err error) string {
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		var ve *jsonschema.ValidationError
		if errors.As(sve.Err, &ve) {
			return strings.Join(violationsOf(ve, true), "; ")
		}
	}
	// A refused $ref: the loader's reason, without the library's
	// "failing loading" wrapping.
	var lue *jsonschema.LoadURLError
	if errors.As(err, &lue) && lue.Err != nil {
		return lue.Err.Error()
	}
	return strings.ReplaceAll(err.Error(), resource, "schema")
}

// Validate checks a JSON text against the schema. It returns nil when the
// text is valid, else the violations, each as "<JSON pointer>: <message>"
// (at most MaxErrors).
func (s *Schema) Validate(text string) []string {
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return []string{fmt.Sprintf("not valid JSON: %v", err)}
	}
	return s.ValidateValue(v)
}

// ValidateValue is Validate for a value already parsed by ParseJSON.
func (s *Schema) ValidateValue(v any) []string {
	err := s.s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return violations(ve)
	}
	return []string{err.Error()}
}

// ParseJSON parses text the way the validator needs it (numbers kept exact).
func ParseJSON(text string) (any, error) {
	return jsonschema.UnmarshalJSON(strings.NewReader(text))
}

// violations flattens a validation error into "<pointer>: <message>" lines,
// one per leaf cause (the parents only say "allOf failed"), sorted and
// deduplicated, at most MaxErrors.
func violations(ve *jsonschema.ValidationError) []string {
	return violationsOf(ve, false)
}

// violationsOf is violations; with preferEnum, an anyOf whose branches
// failed at the same place and one of which lists the allowed values
// reports that branch only: the meta-schema's "type" is a type name or an
// array of them, and {"type": "strin"} said "/type: got string, want
// array; /type: value must be one of 'array', ..." where the second
// alone is the answer.
func violationsOf(ve *jsonschema.ValidationError, preferEnum bool) []string {
	seen := map[string]bool{}
	var list []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if _, anyOf := e.ErrorKind.(*kind.AnyOf); anyOf && preferEnum {
			for _, c := range e.Causes {
				// The branch may be a $ref to the list ("simpleTypes").
				for _, ref := c.ErrorKind.(*kind.Reference); ref && len(c.Causes) == 1; _, ref = c.ErrorKind.(*kind.Reference) {
					c = c.Causes[0]
				}
				if _, enum := c.ErrorKind.(*kind.Enum); enum && len(c.Causes) == 0 && slices.Equal(c.InstanceLocation, e.InstanceLocation) {
					walk(c)
					return
				}
			}
		}
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		loc := "/" + strings.Join(e.InstanceLocation, "/")
		line := loc + ": " + e.ErrorKind.LocalizedString(printer)
		if !seen[line] {
			seen[line] = true
			list = append(list, line)
		}
	}
	walk(ve)
	sort.Strings(list)
	if len(list) > MaxErrors {
		list = append(list[:MaxErrors], fmt.Sprintf("... and %d more", len(list)-MaxErrors))
	}
	return list
}

var printer = message.NewPrinter(language.English)

// IsJSONObject reports whether text is one JSON object (what JSON_OBJECT
// response formats promise).
func IsJSONObject(text string) bool {
	t := bytes.TrimSpace([]byte(text))
	if len(t) == 0 || t[0] != '{' {
		return false
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(t))
	if err != nil {
		return false
	}
	_, ok := v.(map[string]any)
	return ok
}

// cache keeps compiled schemas by their text: agents and services send the
// same tool schemas on every call, and compiling is the expensive part.
// Bounded: when full it is emptied (schemas are cheap to compile again).
var cache = &schemaCache{m: map[string]*Schema{}}

const cacheEntries = 512
const cacheMaxText = 64 << 10

type schemaCache struct {
	mu sync.RWMutex
	m  map[string]*Schema
}

func (c *schemaCache) get(text string) (*Schema, bool) {
	c.mu.RLock()
	s, ok := c.m[text]
	c.mu.RUnlock()
	return s, ok
}

func (c *schemaCache) put(text string, s *Schema) {
	if len(text) > cacheMaxText {
		return
	}
	c.mu.Lock()
	if len(c.m) >= cacheEntries {
		clear(c.m)
	}
	c.m[text] = s
	c.mu.Unlock()
}

// CheckObjectRoot refuses a schema whose root cannot describe a JSON
// object: a boolean schema, or a "type" that does not allow "object".
// Function parameters are an object of named arguments on every provider
// (OpenAI: "schema must be a JSON Schema of 'type: \"object\"'",
// Anthropic: input_schema.type must be "object"); a schema without a
// "type" is left for the provider to judge. text has compiled already.
func CheckObjectRoot(text string) error {
	var root any
	if err := json.Unmarshal([]byte(text), &root); err != nil {
		return fmt.Errorf("not valid JSON: %v", err)
	}
	obj, ok := root.(map[string]any)
	if !ok {
		return errors.New(`a function's parameters are an object schema ({"type": "object", "properties": {...}}), not a boolean schema`)
	}
	switch t := obj["type"].(type) {
	case nil:
		return nil
	case string:
		if t == "object" {
			return nil
		}
		return fmt.Errorf(`a function's parameters are an object schema: "type" is %q, want "object"`, t)
	case []any:
		for _, v := range t {
			if v == "object" {
				return nil
			}
		}
		return errors.New(`a function's parameters are an object schema: "type" does not allow "object"`)
	default:
		return errors.New(`"type" is neither a string nor a list of strings`)
	}
}
