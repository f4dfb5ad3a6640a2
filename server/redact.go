package server

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/llmrelay/llmrelay/server/pipeline"
)

// redactProto removes every configured secret from every string and bytes
// field of m, nested messages, lists and maps (keys too) included. It is
// the one pass over what a provider supplied to a call's meta (ids, model
// names, extended values, warnings, raw captures) before the meta reaches
// a client or a log.
func redactProto(r *pipeline.Redactor, m proto.Message) {
	if r == nil || !r.Active() || m == nil {
		return
	}
	redactMessage(r, m.ProtoReflect())
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
