package server_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
)

// rawCodec sends []byte requests as they are, so that a test can put bytes
// on the wire that no proto marshaler would produce; responses are decoded
// normally.
type rawCodec struct{ std encoding.CodecV2 }

func (rawCodec) Name() string { return proto.Name }

func (c rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	if b, ok := v.(*[]byte); ok {
		return mem.BufferSlice{mem.SliceBuffer(*b)}, nil
	}
	return c.std.Marshal(v)
}

func (c rawCodec) Unmarshal(data mem.BufferSlice, v any) error { return c.std.Unmarshal(data, v) }

// deepValue is an ExtractRequest whose value nests lists depth times.
func deepValue(depth int) []byte {
	var v []byte // an empty Value
	for range depth {
		lv := protowire.AppendTag(nil, 1, protowire.BytesType) // ListValue.values
		lv = protowire.AppendBytes(lv, v)
		v = protowire.AppendBytes(protowire.AppendTag(nil, 6, protowire.BytesType), lv) // Value.list_value
	}
	return protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), v) // ExtractRequest.value
}

// TestUndecodableRequestsOverTCP: bytes the server cannot decode (invalid
// UTF-8 in a string, garbage, nesting beyond the decoder's limit) are
// InvalidArgument with an ErrorInfo, logged, on unary and streaming
// methods, over a real TCP connection (grpc-go reports a codec error as
// Internal by default).
func TestUndecodableRequestsOverTCP(t *testing.T) {
	t.Parallel()
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	srv, err := server.New(cfg, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, []net.Listener{lis}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(rawCodec{std: encoding.GetCodecV2(proto.Name)})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })

	badUTF8 := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte{'m', 0xff, 0xfe}) // model
	garbage := []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0x01}
	cases := []struct {
		name, method string
		stream       bool
		req          []byte
		out          any
		want         string
	}{
		{"invalid UTF-8, unary", "/llmrelay.v1.GatewayService/Chat", false, badUTF8, &llmrelayv1.ChatResponse{}, "UTF-8"},
		{"garbage, unary", "/llmrelay.v1.GatewayService/Tools", false, garbage, &llmrelayv1.ToolsResponse{}, "could not be decoded"},
		{"garbage, stream", "/llmrelay.v1.GatewayService/StreamChat", true, garbage, &llmrelayv1.StreamChatResponse{}, "could not be decoded"},
		{"invalid UTF-8, stream", "/llmrelay.v1.GatewayService/StreamTools", true, badUTF8, &llmrelayv1.StreamToolsResponse{}, "UTF-8"},
		{"too deep", "/llmrelay.v1.ExtractService/Extract", false, deepValue(10_001), &llmrelayv1.ExtractResponse{}, "could not be decoded"},
		{"garbage health check", "/grpc.health.v1.Health/Check", false, garbage, &llmrelayv1.ChatResponse{}, "could not be decoded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req := tc.req
			if tc.stream {
				s, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, tc.method)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.SendMsg(&req); err != nil {
					t.Fatal(err)
				}
				if err := s.CloseSend(); err != nil {
					t.Fatal(err)
				}
				err = s.RecvMsg(tc.out)
				if err == io.EOF {
					t.Fatal("stream ended without a status")
				}
				checkUndecodable(t, err, tc.want)
				return
			}
			checkUndecodable(t, conn.Invoke(ctx, tc.method, &req, tc.out), tc.want)
		})
	}
	t.Cleanup(func() {
		if n := strings.Count(logs.String(), "undecodable request"); n != len(cases) {
			t.Errorf("%d log lines for %d undecodable requests:\n%s", n, len(cases), logs)
		}
	})
}

func checkUndecodable(t *testing.T, err error, want string) {
	t.Helper()
	st, info, _ := statusDetails(t, err)
	if st.Code() != codes.InvalidArgument || info.GetReason() != "INVALID_REQUEST" {
		t.Fatalf("got %v %s: %s, want InvalidArgument INVALID_REQUEST", st.Code(), info.GetReason(), st.Message())
	}
	if !strings.Contains(st.Message(), want) {
		t.Errorf("message %q does not say %q", st.Message(), want)
	}
}
