package server

import (
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/llmrelay/llmrelay/server/pipeline"
)

// redactProto removes every configured secret from every string and bytes
// field of m, nested messages, lists and maps (keys too) included. It is
// the one pass over what a provider supplied to a call's meta (ids, model
// names, extended values, warnings, raw captures) before the meta reaches
// a client or a log.
//
// The walk is the slow path: most metas hold no secret, and that is proved
// first by one scan of m's wire encoding (Redactor.Contains). The wire
// encoding holds every string and bytes value of m, map keys, nested
// messages, Struct values and unknown fields included, each as its bytes
// copied whole; the walk changes a value only when the value holds a match
// (literal, JSON-escaped or percent-encoded, as Redactor.Bytes finds
// them), and a match depends only on the bytes it covers, so it is still a
// match inside the encoding. No match in the encoding therefore means the
// walk would change nothing. A match the encoding makes across two values
// (or with tag and length bytes) only costs the walk.
func redactProto(r *pipeline.Redactor, m proto.Message) {
	if r == nil || !r.Active() || m == nil {
		return
	}
	if v, ok := m.(vtMarshaler); ok && !mayHoldSecret(r, v) {
		return
	}
	redactMessage(r, m.ProtoReflect())
}

// scanBufs are the buffers mayHoldSecret encodes into.
var scanBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledScan bounds the buffers kept in scanBufs (a meta with a raw
// capture of a large body is encoded into a buffer of its own).
const maxPooledScan = 64 << 10

// mayHoldSecret reports whether m's wire encoding holds a secret in a form
// r redacts (true also when m cannot be encoded).
func mayHoldSecret(r *pipeline.Redactor, m vtMarshaler) bool {
	size := m.SizeVT()
	bp := scanBufs.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= maxPooledScan {
			scanBufs.Put(bp)
		}
	}()
	if cap(*bp) < size {
		*bp = make([]byte, size)
	}
	buf := (*bp)[:size]
	if _, err := m.MarshalToSizedBufferVT(buf); err != nil {
		return true
	}
	return r.Contains(buf)
}

// redactMessage walks the fields by descriptor rather than with Range: no
// closure to allocate per message (it runs on every call's meta).
func redactMessage(r *pipeline.Redactor, m protoreflect.Message) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if !m.Has(fd) {
			continue
		}
		v := m.Get(fd)
		switch {
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				if nv, ok := redactValue(r, fd, l.Get(i)); ok {
					l.Set(i, nv)
				}
			}
		case fd.IsMap():
			redactMap(r, fd, v.Map())
		default:
			if nv, ok := redactValue(r, fd, v); ok {
				m.Set(fd, nv)
			}
		}
	}
}

func redactMap(r *pipeline.Redactor, fd protoreflect.FieldDescriptor, mp protoreflect.Map) {
	type entry struct {
		old protoreflect.MapKey
		key string
		val protoreflect.Value
	}
	var rekeyed []entry
	mp.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		if nv, ok := redactValue(r, fd.MapValue(), v); ok {
			mp.Set(k, nv)
			v = nv
		}
		if fd.MapKey().Kind() == protoreflect.StringKind {
			if s := k.String(); r.String(s) != s {
				rekeyed = append(rekeyed, entry{k, r.String(s), v})
			}
		}
		return true
	})
	for _, e := range rekeyed {
		mp.Clear(e.old)
		mp.Set(protoreflect.ValueOfString(e.key).MapKey(), e.val)
	}
}

// redactValue returns the redacted value and true when it changed
// (messages are redacted in place and report false).
func redactValue(r *pipeline.Redactor, fd protoreflect.FieldDescriptor, v protoreflect.Value) (protoreflect.Value, bool) {
	switch fd.Kind() {
	case protoreflect.StringKind:
		if s := r.String(v.String()); s != v.String() {
			return protoreflect.ValueOfString(s), true
		}
	case protoreflect.BytesKind:
		b := v.Bytes()
		if nb := r.Bytes(b); len(nb) != len(b) || (len(b) > 0 && &nb[0] != &b[0]) {
			return protoreflect.ValueOfBytes(nb), true
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		redactMessage(r, v.Message())
	}
	return v, false
}
