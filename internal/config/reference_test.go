package config

import (
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// keyPaths lists every key the configuration types accept, as written in
// docs/config.md: "providers[].transport.retry.max_attempts"; a map's keys
// are "<name>".
func keyPaths(t reflect.Type, prefix string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(reflect.TypeFor[yaml.Unmarshaler]()) {
		return nil
	}
	var out []string
	switch t.Kind() {
	case reflect.Struct:
		for name, f := range yamlFields(t) {
			p := join(prefix, name)
			out = append(out, p)
			out = append(out, keyPaths(f.Type, p)...)
		}
	case reflect.Slice:
		out = append(out, keyPaths(t.Elem(), prefix+"[]")...)
	case reflect.Map:
		out = append(out, keyPaths(t.Elem(), prefix+".<name>")...)
	}
	sort.Strings(out)
	return out
}

// TestReferenceDocumentsEveryKey keeps docs/config.md and the types in
// step: every key the types accept has a row, and every row is a key.
func TestReferenceDocumentsEveryKey(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(string(raw), -1) {
		documented[m[1]] = true
	}
	keys := keyPaths(reflect.TypeFor[Config](), "")
	for _, k := range keys {
		if !documented[k] {
			t.Errorf("docs/config.md has no row for `%s`", k)
		}
		delete(documented, k)
	}
	for k := range documented {
		t.Errorf("docs/config.md documents `%s`, which the configuration does not accept", k)
	}
	if len(keys) < 40 || !strings.Contains(strings.Join(keys, " "), "providers[].transport.retry.max_attempts") {
		t.Errorf("keyPaths found %d keys: %v", len(keys), keys)
	}
}
