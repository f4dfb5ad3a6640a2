// Package framesize reads the stack frame size of a compiled function from
// its amd64 prologue in the running executable. Tests use it to keep the
// frames on an open stream's deepest path small (docs/decisions.md, "An
// open stream's goroutine stays within 8 KiB").
package framesize

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
)

// ErrUnsupported: not amd64, not an ELF executable, or built with the race
// detector (Race).
var ErrUnsupported = errors.New("framesize: only amd64 ELF executables without the race detector")

// Of returns the name of fn (a function or method expression) and the
// bytes its frame takes on the goroutine's stack: its locals and outgoing
// arguments, the saved frame pointer and the return address. The size is
// read from the prologue the Go compiler emits on amd64 (PUSHQ BP; MOVQ
// SP, BP; SUBQ $n, SP); a function without one takes its return address
// only.
func Of(fn any) (name string, size int, err error) {
	if runtime.GOARCH != "amd64" || Race {
		return "", 0, ErrUnsupported
	}
	f := runtime.FuncForPC(reflect.ValueOf(fn).Pointer())
	if f == nil {
		return "", 0, errors.New("framesize: not a function")
	}
	name = f.Name()
	code, err := text(f.Entry(), 64)
	if err != nil {
		return name, 0, err
	}
	// The prologue starts the function, after the stack bound check when
	// there is one (at most 16 bytes); a leaf function without locals has
	// none.
	for i := 0; i <= 16; i++ {
		if code[i] != 0x55 || code[i+1] != 0x48 || code[i+2] != 0x89 || code[i+3] != 0xe5 {
			continue // PUSHQ BP; MOVQ SP, BP
		}
		sub := code[i+4:]
		switch {
		case sub[0] == 0x48 && sub[1] == 0x83 && sub[2] == 0xec: // SUBQ $imm8, SP
			return name, int(sub[3]) + 16, nil
		case sub[0] == 0x48 && sub[1] == 0x81 && sub[2] == 0xec && len(sub) >= 7: // SUBQ $imm32, SP
			return name, int(binary.LittleEndian.Uint32(sub[3:7])) + 16, nil
		}
		return name, 16, nil // no locals
	}
	return name, 8, nil // the return address only
}

// text reads n bytes of the executable's code at addr.
func text(addr uintptr, n int) ([]byte, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	f, err := elf.Open(exe)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	defer f.Close()
	s := f.Section(".text")
	if s == nil || uint64(addr) < s.Addr || uint64(addr)+uint64(n) > s.Addr+s.Size {
		return nil, errors.New("framesize: address outside .text")
	}
	buf := make([]byte, n)
	if _, err := s.ReadAt(buf, int64(uint64(addr)-s.Addr)); err != nil {
		return nil, err
	}
	return buf, nil
}
