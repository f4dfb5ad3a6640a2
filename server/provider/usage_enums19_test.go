package provider

import (
	"slices"
	"testing"
)

// TestReadCount: counts as a proxy's re-encoding may write them are read;
// anything else is not a count.
func TestReadCount(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{`7`: 7, `7.0`: 7, `1e3`: 1000, `"12"`: 12, `" 12 "`: 12, `"3.0"`: 3, `0`: 0} {
		if n, ok := ReadCount([]byte(in)); !ok || n != want {
			t.Errorf("ReadCount(%s) = %d, %v; want %d", in, n, ok, want)
		}
	}
	for _, in := range []string{`null`, `-1`, `7.5`, `"x"`, `{}`, `[]`, `true`, `1e300`, `"-3"`, ``} {
		if n, ok := ReadCount([]byte(in)); ok {
			t.Errorf("ReadCount(%s) = %d, true", in, n)
		}
	}
	if got := MappedExcept([]string{"a", "b", "c"}, []string{"b"}); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("MappedExcept %v", got)
	}
}
