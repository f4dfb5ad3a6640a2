package server

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/peer"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// decodeTarget is what a wrapped handler asks the codec to decode into: the
// request message, and the codec's decoding error, kept here instead of
// being returned. grpc-go turns any error of a codec's Unmarshal into
// Internal ("failed to unmarshal the received message"), but a request the
// server cannot decode (invalid UTF-8 in a string, garbage bytes, nesting
// beyond the decoder's limit) is the caller's mistake: InvalidArgument.
type decodeTarget struct {
	msg   any
	err   error
	field string // the field the error is in, when it can be named
}

// Unmarshal decodes data for the server codec: into a decodeTarget's
// message, recording the error there, or into v itself.
func (c *codec) Unmarshal(data mem.BufferSlice, v any) error {
	if t, ok := v.(*decodeTarget); ok {
		t.err = c.std.Unmarshal(data, t.msg)
		if t.err != nil {
			if m, ok := t.msg.(protoreflect.ProtoMessage); ok {
				t.field = undecodableField(m.ProtoReflect().Descriptor(), data.Materialize())
			}
		}
		return nil
	}
	return c.std.Unmarshal(data, v)
}

// undecodable is the request error of a message the codec rejected, with
// the field it is in when that can be named.
func undecodable(err error, field string) error {
	msg := "the request message could not be decoded: " + err.Error()
	if field != "" {
		msg = field + ": " + msg
	}
	return &requestError{code: codes.InvalidArgument, reason: llmrelayv1.ErrorReason_ERROR_REASON_INVALID_REQUEST,
		field: field, msg: msg}
}

// maxLocateDepth bounds undecodableField's nesting as the decoder's
// recursion limit bounds the decoder's.
const maxLocateDepth = 10000

// undecodableField finds the field of a message of type md, encoded in b,
// that the decoder rejects: a string that is not UTF-8, a value that is no
// valid wire format, a message nested too deep. It returns the field's path
// (`messages[1].parts[0].text`), the deepest it can name (a message field
// whose bytes break off is named itself; under a message nested too deep,
// the top-level field), or "" when not even a top-level field can be named
// (the bytes are no message at all). It runs only on a rejected request.
func undecodableField(md protoreflect.MessageDescriptor, b []byte) string {
	segs, deep := locate(md, b, 0)
	if deep && len(segs) > 1 {
		segs = segs[len(segs)-1:]
	}
	var sb strings.Builder
	for i := len(segs) - 1; i >= 0; i-- {
		if i < len(segs)-1 && !strings.HasPrefix(segs[i], "[") {
			sb.WriteByte('.')
		}
		sb.WriteString(segs[i])
	}
	return sb.String()
}

// locate returns the path of the bad field below md, innermost segment
// first (a list index is a segment of its own: "[2]"), and whether the
// depth limit was reached; nil when it finds nothing to name.
func locate(md protoreflect.MessageDescriptor, b []byte, depth int) (segs []string, deep bool) {
	if depth > maxLocateDepth {
		return nil, true
	}
	counts := map[protowire.Number]int{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, false
		}
		b = b[n:]
		fd := md.Fields().ByNumber(num)
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			if fd == nil {
				return nil, false
			}
			if fd.IsList() {
				return []string{"[" + strconv.Itoa(counts[num]) + "]", string(fd.Name())}, false
			}
			return []string{string(fd.Name())}, false
		}
		v := b[:m]
		b = b[m:]
		if fd == nil {
			continue
		}
		idx := counts[num]
		counts[num]++
		name := func(inner []string) []string {
			if fd.IsList() {
				inner = append(inner, "["+strconv.Itoa(idx)+"]")
			}
			return append(inner, string(fd.Name()))
		}
		if typ != protowire.BytesType {
			continue // a scalar, or a wire type the decoder keeps as an unknown field
		}
		val, _ := protowire.ConsumeBytes(v)
		switch {
		case fd.Kind() == protoreflect.StringKind && !utf8.Valid(val):
			return name(nil), false
		case fd.IsMap():
			if inner, deep := locate(fd.Message(), val, depth+1); inner != nil || deep {
				return []string{string(fd.Name())}, deep
			}
		case fd.Kind() == protoreflect.MessageKind:
			if inner, deep := locate(fd.Message(), val, depth+1); inner != nil || deep {
				return name(inner), deep
			}
		case fd.IsList() && !packedValid(fd.Kind(), val):
			return name(nil), false
		}
	}
	return nil, false
}

// packedValid reports whether b is a valid packed list of kind k.
func packedValid(k protoreflect.Kind, b []byte) bool {
	for len(b) > 0 {
		var n int
		switch k {
		case protoreflect.DoubleKind, protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind:
			_, n = protowire.ConsumeFixed64(b)
		case protoreflect.FloatKind, protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind:
			_, n = protowire.ConsumeFixed32(b)
		case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind, protoreflect.GroupKind:
			return true // not packable: each element is its own field
		default:
			_, n = protowire.ConsumeVarint(b)
		}
		if n < 0 {
			return false
		}
		b = b[n:]
	}
	return true
}

// decodeErrors returns a copy of desc whose handlers decode requests
// through a decodeTarget and report what the codec rejects as
// InvalidArgument, with a log line (for unary calls the codec runs before
// the interceptors, so the logging interceptor never sees these calls).
func (s *Server) decodeErrors(desc *grpc.ServiceDesc) *grpc.ServiceDesc {
	out := *desc
	out.Methods = make([]grpc.MethodDesc, len(desc.Methods))
	for i, m := range desc.Methods {
		method, h := "/"+desc.ServiceName+"/"+m.MethodName, m.Handler
		m.Handler = func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
			return h(srv, ctx, func(v any) error { return s.decode(ctx, method, dec, v) }, ic)
		}
		out.Methods[i] = m
	}
	out.Streams = make([]grpc.StreamDesc, len(desc.Streams))
	for i, sd := range desc.Streams {
		method, h := "/"+desc.ServiceName+"/"+sd.StreamName, sd.Handler
		sd.Handler = func(srv any, ss grpc.ServerStream) error {
			return h(srv, &decodingStream{ServerStream: ss, s: s, method: method})
		}
		out.Streams[i] = sd
	}
	return &out
}

// decode receives one request into v through recv.
func (s *Server) decode(ctx context.Context, method string, recv func(any) error, v any) error {
	t := decodeTarget{msg: v}
	if err := recv(&t); err != nil {
		return err
	}
	if t.err == nil {
		return nil
	}
	return s.rejectUndecodable(ctx, method, t.err, t.field)
}

// rejectUndecodable logs and reports a request the codec rejected. It is
// apart from decode, which keeps a small frame: the request is decoded
// below decode, nested messages recursing, at the bottom of the
// interceptors' frames (docs/decisions.md, "An open stream's goroutine
// stays within 8 KiB").
//
//go:noinline
func (s *Server) rejectUndecodable(ctx context.Context, method string, err error, field string) error {
	attrs := []any{slog.String("method", method), slog.String("error", err.Error())}
	if field != "" {
		attrs = append(attrs, slog.String("field", field))
	}
	if id := requestIDOf(ctx); id != "" { // streams: the interceptors ran first
		attrs = append(attrs, slog.String("request_id", id))
	}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		attrs = append(attrs, slog.String("peer", p.Addr.String()))
	}
	s.log.WarnContext(ctx, "undecodable request", attrs...)
	return toStatus(ctx, undecodable(err, field), nil, s.gateway.state.Load().redact, s.log)
}

// decodingStream is a server stream whose RecvMsg reports undecodable
// messages as InvalidArgument. It is used by pointer: a value in the
// handler's interface would be reached through the compiler's pointer
// wrapper, one more frame under every request's decoding.
type decodingStream struct {
	grpc.ServerStream
	s      *Server
	method string
}

func (d *decodingStream) RecvMsg(m any) error {
	return d.s.decode(d.ServerStream.Context(), d.method, d.ServerStream.RecvMsg, m)
}
