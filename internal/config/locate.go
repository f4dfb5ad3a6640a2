package config

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// A configuration error is reported as "FILE:LINE:COLUMN: PATH: problem",
// PATH in the configuration's own words: "providers[0] (openai).base_url",
// "models[2] (gpt-4o).capabilities.chat.options.temperature".

// Suggest returns the candidate closest to s when it is close enough to be
// a misspelling (at most two edits, one for short words), else "".
func Suggest(s string, candidates []string) string {
	best, bestDist := "", 3
	if len(s) <= 4 {
		bestDist = 2
	}
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(s), c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Damerau-Levenshtein distance (with adjacent swaps).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// located is one problem at a position of a file.
type located struct {
	source    string
	line, col int
	msg       string
}

func (e *located) Error() string {
	if e.line == 0 {
		return e.source + ": " + e.msg
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.source, e.line, e.col, e.msg)
}

// checkShape walks the document against the configuration types and
// reports, each at its position, every unknown key (with a suggestion or
// the keys allowed there), every value of the wrong kind and every scalar
// that does not decode (an integer, a duration, true or false).
func checkShape(source string, n *yaml.Node, t reflect.Type, path string) []error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	// at reports a problem; the caller then prunes the node, so that the
	// rest of the document decodes and is validated too.
	at := func(node *yaml.Node, format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		if path != "" {
			msg = path + ": " + msg
		}
		return &located{source: source, line: node.Line, col: node.Column, msg: msg}
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil // an empty value: the zero value
	}
	if reflect.PointerTo(t).Implements(reflect.TypeFor[yaml.Unmarshaler]()) {
		if err := n.Decode(reflect.New(t).Interface()); err != nil {
			defer prune(n)
			return []error{at(n, "%s", lineRef.ReplaceAllString(err.Error(), ""))}
		}
		return nil
	}
	if wantKind(t) != 0 && n.Kind != wantKind(t) {
		defer prune(n)
		return []error{at(n, "want %s, got %s", kindName(wantKind(t), t), kindWords(n))}
	}
	switch t.Kind() {
	case reflect.Struct:
		fields := yamlFields(t)
		var errs []error
		kept := n.Content[:0:0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			f, ok := fields[k.Value]
			if !ok {
				errs = append(errs, at(k, "%s", unknownKey(k.Value, fields)))
				continue
			}
			kept = append(kept, k, v)
			errs = append(errs, checkShape(source, v, f.Type, join(path, k.Value))...)
		}
		n.Content = kept
		return errs
	case reflect.Slice:
		var errs []error
		for i, item := range n.Content {
			errs = append(errs, checkShape(source, item, t.Elem(), fmt.Sprintf("%s[%d]%s", path, i, nameLabel(item)))...)
		}
		return errs
	case reflect.Map:
		var errs []error
		for i := 0; i+1 < len(n.Content); i += 2 {
			errs = append(errs, checkShape(source, n.Content[i+1], t.Elem(), join(path, n.Content[i].Value))...)
		}
		return errs
	case reflect.Interface:
		return nil // free-form (capability options): checked by the catalog
	default:
		if err := n.Decode(reflect.New(t).Interface()); err != nil {
			defer prune(n)
			return []error{at(n, "want %s, got %q", scalarWords(t), n.Value)}
		}
		if scalarWords(t) == "an integer" && n.ShortTag() == "!!float" {
			// yaml.v3 decodes 2.5 into an integer as 2, without a word.
			defer prune(n)
			return []error{at(n, "want %s, got %q", scalarWords(t), n.Value)}
		}
		return nil
	}
}

// wantKind is the node kind a Go type decodes from (0: any).
func wantKind(t reflect.Type) yaml.Kind {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return yaml.MappingNode
	case reflect.Slice:
		return yaml.SequenceNode
	case reflect.Interface:
		return 0
	default:
		return yaml.ScalarNode
	}
}

func kindName(k yaml.Kind, t reflect.Type) string {
	switch k {
	case yaml.MappingNode:
		return "a mapping (key: value lines)"
	case yaml.SequenceNode:
		return "a list"
	default:
		return scalarWords(t)
	}
}

// prune empties a node whose problem was reported.
func prune(n *yaml.Node) {
	*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: n.Line, Column: n.Column}
}

var lineRef = regexp.MustCompile(`^line \d+: `)

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// nameLabel is " (name)" for list items that have a name, as in every
// path of the configuration's errors.
func nameLabel(item *yaml.Node) string {
	if item.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(item.Content); i += 2 {
		if item.Content[i].Value == "name" {
			return " (" + item.Content[i+1].Value + ")"
		}
	}
	return ""
}

func yamlFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if f.IsExported() && name != "" && name != "-" {
			out[name] = f
		}
	}
	return out
}

func unknownKey(key string, fields map[string]reflect.StructField) string {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if near := Suggest(key, keys); near != "" {
		return fmt.Sprintf("unknown key %q; did you mean %q?", key, near)
	}
	return fmt.Sprintf("unknown key %q (the keys here are %s)", key, strings.Join(keys, ", "))
}

func kindWords(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	default:
		return strconv.Quote(n.Value)
	}
}

func scalarWords(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	default:
		return "a value (text)"
	}
}

// pathPrefix matches the path an error message starts with.
var pathPrefix = regexp.MustCompile(`^[a-z_]+(\[\d+\])?( \([^)]*\))?(\.[A-Za-z0-9_/-]+(\[\d+\])?( \([^)]*\))?)*`)

var pathSegment = regexp.MustCompile(`([A-Za-z0-9_/-]+)|\[(\d+)\]`)

// Locate rewrites each error of err (errors.Join'ed ones one by one) that
// starts with a configuration path as "FILE:LINE:COLUMN: message", the
// position of that path in the file the configuration was read from.
func (c *Config) Locate(err error) error {
	if err == nil {
		return nil
	}
	if multi, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range multi.Unwrap() {
			out = append(out, c.Locate(e))
		}
		return errors.Join(out...)
	}
	var l *located
	if errors.As(err, &l) {
		return err
	}
	msg := err.Error()
	line, col := c.position(pathPrefix.FindString(msg))
	return &located{source: c.source, line: line, col: col, msg: msg}
}

// position finds the deepest node of path that exists in the document.
func (c *Config) position(path string) (line, col int) {
	if c.root == nil || path == "" {
		return 0, 0
	}
	// Nothing found: no position (0, 0) rather than the document's start.
	n := c.root
	// Names in parentheses are labels, not segments.
	path = regexp.MustCompile(` \([^)]*\)`).ReplaceAllString(path, "")
	for _, m := range pathSegment.FindAllStringSubmatch(path, -1) {
		if m[1] != "" {
			if n.Kind != yaml.MappingNode {
				return line, col
			}
			found := false
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == m[1] {
					line, col = n.Content[i].Line, n.Content[i].Column
					n, found = n.Content[i+1], true
					break
				}
			}
			if !found {
				return line, col
			}
			continue
		}
		i, _ := strconv.Atoi(m[2])
		if n.Kind != yaml.SequenceNode || i >= len(n.Content) {
			return line, col
		}
		n = n.Content[i]
		line, col = n.Line, n.Column
	}
	return line, col
}

// expandNode applies ${VAR} / ${VAR:-default} to every scalar value (not
// keys). A plain scalar that changed is resolved again, so "${PORT}" can
// be an integer; the document's structure cannot change. The references
// to variables that are unset or empty and have no default are returned,
// at their positions: when the file has problems, they are named with
// them (an api_key "${OPENAI_API_KEY}" whose variable is missing reads as
// a missing key otherwise). The malformed references ("${" starting none)
// are returned too: they are errors whatever else the file holds.
func expandNode(n *yaml.Node) (unset, malformed []unsetRef) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			u, m := expandNode(c)
			unset, malformed = append(unset, u...), append(malformed, m...)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			u, m := expandNode(n.Content[i+1])
			unset, malformed = append(unset, u...), append(malformed, m...)
		}
	case yaml.ScalarNode:
		v, missing, bad := expand(n.Value)
		for _, name := range missing {
			unset = append(unset, unsetRef{name: name, line: n.Line, col: n.Column})
		}
		for _, frag := range bad {
			malformed = append(malformed, unsetRef{name: frag, line: n.Line, col: n.Column})
		}
		if v != n.Value {
			n.Value = v
			switch {
			case n.Style == 0:
				n.Tag = ""
			case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 && n.Style&yaml.TaggedStyle == 0:
				// A quoted reference, which a flow mapping needs
				// ({max_attempts: "${N}"}), may give a number or a
				// boolean as a plain one does.
				probe := yaml.Node{Kind: yaml.ScalarNode, Value: v}
				switch probe.ShortTag() {
				case "!!int", "!!float", "!!bool":
					n.Style, n.Tag = 0, ""
				}
			}
		}
	}
	return unset, malformed
}

// unsetRef is a ${VAR} without a default whose variable is unset or empty
// (name is VAR), or a malformed reference (name is its text).
type unsetRef struct {
	name      string
	line, col int
}
