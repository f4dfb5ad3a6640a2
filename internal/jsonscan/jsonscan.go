// Package jsonscan reads JSON of one known, fixed shape without
// reflection, for the adapters' fast paths: the events that make up most
// of a stream (a text delta) are matched token by token, and anything the
// scanner does not accept goes to encoding/json. What it accepts it
// decodes exactly as encoding/json does; each fast path that uses it is
// fuzzed differentially against encoding/json.
package jsonscan

import (
	"bytes"
	"unicode/utf8"
)

// Scanner reads B from position I.
type Scanner struct {
	B []byte
	I int
}

func (s *Scanner) ws() {
	for s.I < len(s.B) {
		switch s.B[s.I] {
		case ' ', '\t', '\n', '\r':
			s.I++
		default:
			return
		}
	}
}

// Lit consumes lit (a punctuation mark, a quoted key or value, a literal)
// after optional whitespace.
func (s *Scanner) Lit(lit string) bool {
	s.ws()
	if !bytes.HasPrefix(s.B[s.I:], []byte(lit)) {
		return false
	}
	s.I += len(lit)
	return true
}

// Lits consumes each of lits in turn.
func (s *Scanner) Lits(lits ...string) bool {
	for _, l := range lits {
		if !s.Lit(l) {
			return false
		}
	}
	return true
}

// Run consumes lits as Lits does, with one comparison when B has them as
// run, which must be lits as a provider writes them: the same tokens in
// the same order, with or without whitespace between them (a fast path's
// common case; anything else falls back to Lits).
func (s *Scanner) Run(run string, lits ...string) bool {
	return s.Lit(run) || s.Lits(lits...)
}

// End reports whether only whitespace is left.
func (s *Scanner) End() bool {
	s.ws()
	return s.I == len(s.B)
}

// Int reads an integer JSON number of at most 9 digits (no fraction or
// exponent, no leading zero): what encoding/json decodes into an int.
func (s *Scanner) Int() (int, bool) {
	s.ws()
	neg := s.I < len(s.B) && s.B[s.I] == '-'
	if neg {
		s.I++
	}
	start, n := s.I, 0
	for s.I < len(s.B) && s.B[s.I] >= '0' && s.B[s.I] <= '9' && s.I-start < 10 {
		n = n*10 + int(s.B[s.I]-'0')
		s.I++
	}
	digits := s.I - start
	if digits == 0 || digits > 9 || (digits > 1 && s.B[start] == '0') {
		return 0, false
	}
	if s.I < len(s.B) && (s.B[s.I] == '.' || s.B[s.I] == 'e' || s.B[s.I] == 'E') {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// String reads a string with the escapes \" \\ \/ \b \f \n \r \t and valid
// UTF-8 (\u escapes and invalid UTF-8 are refused: encoding/json's
// handling of them is left to encoding/json). raw is the quoted token as
// it appears in B; scratch holds the unescaped text when there are
// escapes. prev is returned instead of a new string when equal.
func (s *Scanner) String(scratch *[]byte, prev string) (str string, raw []byte, ok bool) {
	v, raw, ok := s.Bytes(scratch)
	if !ok {
		return "", nil, false
	}
	if string(v) == prev {
		return prev, raw, true
	}
	return string(v), raw, true
}

// Bytes reads a string as String does, without making one: v is the
// unescaped text, within B when there are no escapes, else in scratch
// (valid until scratch is used again).
func (s *Scanner) Bytes(scratch *[]byte) (v, raw []byte, ok bool) {
	s.ws()
	if s.I >= len(s.B) || s.B[s.I] != '"' {
		return nil, nil, false
	}
	open := s.I
	s.I++
	start, ascii, escaped := s.I, true, false
	out := (*scratch)[:0]
	for s.I < len(s.B) {
		c := s.B[s.I]
		switch {
		case c == '"':
			v := s.B[start:s.I]
			if escaped {
				v = append(out, v...)
				*scratch = v
			}
			s.I++
			if !ascii && !utf8.Valid(v) {
				return nil, nil, false
			}
			return v, s.B[open:s.I], true
		case c < 0x20:
			return nil, nil, false
		case c >= 0x80:
			ascii = false
			s.I++
		case c == '\\':
			if s.I+1 >= len(s.B) {
				return nil, nil, false
			}
			var r byte
			switch s.B[s.I+1] {
			case '"', '\\', '/':
				r = s.B[s.I+1]
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			case 'n':
				r = '\n'
			case 'r':
				r = '\r'
			case 't':
				r = '\t'
			default:
				return nil, nil, false
			}
			out = append(out, s.B[start:s.I]...)
			out = append(out, r)
			escaped = true
			s.I += 2
			start = s.I
		default:
			s.I++
		}
	}
	return nil, nil, false
}
