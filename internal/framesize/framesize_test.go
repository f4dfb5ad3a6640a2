package framesize

import (
	"errors"
	"strings"
	"testing"
)

//go:noinline
func big(n int) int {
	var a [64]int
	a[n%64] = n
	return consume(a[:])
}

//go:noinline
func consume(s []int) int {
	t := 0
	for _, v := range s {
		t += v
	}
	return t
}

func TestOf(t *testing.T) {
	name, size, err := Of(big)
	if errors.Is(err, ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(name, ".big") {
		t.Errorf("name %q", name)
	}
	// 512 bytes of array, the outgoing arguments, BP and the return address.
	if size < 64*8+16 || size > 64*8+128 {
		t.Errorf("frame of big: %d bytes, want a little over 512", size)
	}
	if _, small, err := Of(consume); err != nil || small > 64 {
		t.Errorf("frame of consume: %d bytes (%v), want a few words", small, err)
	}
}
