package pipeline

import (
	"bytes"
	"strings"

	"github.com/llmrelay/llmrelay/server/provider"
)

// maxEncodedLen is how long an encoded secret byte may be: a JSON \u00XX
// escape behind up to maxBackslashes backslashes (a JSON string quoted
// inside another).
const (
	maxBackslashes = 4
	maxEncodedLen  = maxBackslashes + 5
)

// longest is the longest encoded form of a secret (0 for none): how much a
// streamed body must be kept back so that a secret split across reads is
// still found.
func (r *Redactor) longest() int {
	n := 0
	if r != nil {
		for _, s := range r.secrets {
			n = max(n, len(s)*maxEncodedLen)
		}
	}
	return n
}

// Bytes returns p with every configured secret replaced, literal or
// encoded the ways a provider may echo it: JSON escapes (\u0073, \/, also
// behind the doubled backslashes of JSON in a JSON string) and URL
// percent-encoding, byte by byte in any mix. It returns p itself, without
// copying, when there is nothing to replace. A masked form of a secret
// (its ends around asterisks, as OpenAI's 401 shows the key it refused)
// is replaced too (provider.RedactMaskedSecret).
func (r *Redactor) Bytes(p []byte) []byte {
	p = r.literalBytes(p)
	if r == nil || len(r.secrets) == 0 || !bytes.Contains(p, stars) {
		return p
	}
	s := string(p)
	for _, sec := range r.secrets {
		s = provider.RedactMaskedSecret(s, string(sec), redacted)
	}
	if s == string(p) {
		return p
	}
	return []byte(s)
}

// stars is the run of asterisks every masked form of a secret has, and
// minMaskedSecret the least length of a secret whose masked form
// provider.RedactMaskedSecret replaces.
var stars = []byte("****")

const minMaskedSecret = 8

// literalBytes is Bytes without the masked forms.
func (r *Redactor) literalBytes(p []byte) []byte {
	if r == nil || len(r.secrets) == 0 {
		return p
	}
	if bytes.IndexByte(p, '\\') < 0 && bytes.IndexByte(p, '%') < 0 {
		// No encoding in p: only literal secrets can be there.
		for _, s := range r.secrets {
			if bytes.Contains(p, s) {
				p = bytes.ReplaceAll(p, s, []byte(redacted))
			}
		}
		return p
	}
	var out []byte
	last := 0
	for i := 0; i < len(p); {
		n := r.matchAny(p, i)
		if n == 0 {
			i++
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(p))
		}
		out = append(append(out, p[last:i]...), redacted...)
		i += n
		last = i
	}
	if out == nil {
		return p
	}
	return append(out, p[last:]...)
}

// String is Bytes for strings.
func (r *Redactor) String(s string) string {
	if r == nil || len(r.secrets) == 0 {
		return s
	}
	if !strings.ContainsAny(s, `\%`) {
		for _, sec := range r.secrets {
			if strings.Contains(s, string(sec)) {
				s = strings.ReplaceAll(s, string(sec), redacted)
			}
			s = provider.RedactMaskedSecret(s, string(sec), redacted)
		}
		return s
	}
	b := r.Bytes([]byte(s))
	return string(b)
}

// matchAny is the length of the longest secret encoded at p[i:], 0 for none.
func (r *Redactor) matchAny(p []byte, i int) int {
	c := p[i]
	best := 0
	for _, s := range r.secrets {
		if c != s[0] && c != '\\' && c != '%' {
			continue
		}
		best = max(best, matchAt(p, i, s))
	}
	return best
}

// matchAt is the length of the encoding of sec at p[i:], 0 if there is none.
func matchAt(p []byte, i int, sec []byte) int {
	j := i
	for _, c := range sec {
		if j >= len(p) {
			return 0
		}
		if p[j] == c {
			j++
			continue
		}
		n, d := decodeByte(p[j:])
		if n == 0 || d != c {
			return 0
		}
		j += n
	}
	return j - i
}

// decodeByte decodes one encoded ASCII byte at the start of p: \uXXXX or
// \/ behind 1 to maxBackslashes backslashes, or %XX. n is 0 when p does
// not start with one.
func decodeByte(p []byte) (n int, c byte) {
	if len(p) >= 3 && p[0] == '%' {
		if v, ok := hexVal(p[1:3]); ok {
			return 3, byte(v)
		}
		return 0, 0
	}
	k := 0
	for k < len(p) && k < maxBackslashes && p[k] == '\\' {
		k++
	}
	if k == 0 || k >= len(p) {
		return 0, 0
	}
	switch p[k] {
	case '/':
		return k + 1, '/'
	case 'u', 'U':
		if len(p) >= k+5 {
			if v, ok := hexVal(p[k+1 : k+5]); ok && v < 0x80 {
				return k + 5, byte(v)
			}
		}
	}
	return 0, 0
}

func hexVal(h []byte) (int, bool) {
	v := 0
	for _, c := range h {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | int(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// Active reports whether there is any secret to redact.
func (r *Redactor) Active() bool { return r != nil && len(r.secrets) > 0 }

// Contains reports whether Bytes may find a secret anywhere in p: a
// secret literally, or encoded in any of the forms Bytes replaces. It has
// no false negatives, and no false positives but one: p holding a run of
// four asterisks, where a masked form of a secret may be (which Bytes
// replaces depending on the characters around it, so no scan of a
// concatenation could decide it). It does not allocate, so a caller can
// prove that a batch of strings holds no secret with one scan of their
// concatenation: a string that Bytes or String would change holds a
// match, and a literal or encoded match depends only on the bytes it
// covers, so it is still a match wherever the string's bytes are copied
// whole.
func (r *Redactor) Contains(p []byte) bool {
	if r == nil || len(r.secrets) == 0 {
		return false
	}
	if bytes.Contains(p, stars) {
		for _, s := range r.secrets {
			if len(s) >= minMaskedSecret {
				return true
			}
		}
	}
	for _, s := range r.secrets {
		if bytes.Contains(p, s) {
			return true
		}
	}
	// Every other match has an encoded byte, and an encoded byte starts
	// with '\\' or '%' (decodeByte): the first encoded byte of a match is
	// at such a byte q, preceded by the secret's first n bytes literally.
	// So trying, at each '\\' and '%', every literal prefix that ends
	// there finds every match.
	for _, esc := range [...]byte{'\\', '%'} {
		for off := 0; off < len(p); {
			k := bytes.IndexByte(p[off:], esc)
			if k < 0 {
				break
			}
			q := off + k
			for _, s := range r.secrets {
				for n := 0; n < len(s) && n <= q; n++ {
					i := q - n
					if n > 0 && (p[i] != s[0] || !bytes.Equal(p[i:q], s[:n])) {
						continue
					}
					if matchAt(p, i, s) > 0 {
						return true
					}
				}
			}
			off = q + 1
		}
	}
	return false
}
