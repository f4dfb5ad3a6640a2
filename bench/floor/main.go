// Command floor is the benchmark's bare relay: the least a gRPC-to-HTTP
// gateway can do, measured beside llmrelay in the same run so that every
// row has a floor to be compared with. It serves llmrelay's Chat and
// StreamChat with a plain grpc-go server and, per call, writes one
// prebuilt HTTP/1.1 POST (chosen by the request's model name) on a
// kept-alive connection to the upstream (cleartext or TLS; one connection
// per concurrent call), then relays the answer's bytes without decoding
// them: a unary answer becomes the text of the response message, each
// line of a stream ("data: ..." of SSE, or an NDJSON line) one text_delta,
// and the end of the body a StreamEnd.
//
//	floor -listen 127.0.0.1:9000 -upstream http://127.0.0.1:18080 -route bench/long=openai-chat:200
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

type routes []string

func (r *routes) String() string     { return strings.Join(*r, ",") }
func (r *routes) Set(v string) error { *r = append(*r, v); return nil }

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "gRPC listen address")
	upstream := flag.String("upstream", "", "upstream base URL (http:// or https://)")
	caFile := flag.String("ca", "", "PEM certificate the upstream's TLS certificate must chain to")
	var rs routes
	flag.Var(&rs, "route", "MODEL=FORMAT[:CHUNKS]: the request sent for a model (repeatable; formats: "+strings.Join(formatNames(), ", ")+")")
	flag.Parse()
	if err := run(*listen, *upstream, *caFile, rs); err != nil {
		log.Fatal(err)
	}
}

func run(listen, upstream, caFile string, rs routes) error {
	u, err := url.Parse(upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("-upstream %q: want http://host:port or https://host:port", upstream)
	}
	up := &upstreamPool{addr: u.Host}
	if u.Scheme == "https" {
		pool := x509.NewCertPool()
		if caFile != "" {
			pem, err := os.ReadFile(caFile)
			if err != nil {
				return err
			}
			if !pool.AppendCertsFromPEM(pem) {
				return fmt.Errorf("-ca %s: no certificate", caFile)
			}
		} else if pool, err = x509.SystemCertPool(); err != nil {
			return err
		}
		up.tls = &tls.Config{RootCAs: pool, ServerName: u.Hostname(), NextProtos: []string{"http/1.1"},
			ClientSessionCache: tls.NewLRUClientSessionCache(64)}
	}
	f := &floor{up: up, unary: map[string][]byte{}, stream: map[string][]byte{}}
	for _, r := range rs {
		model, spec, ok := strings.Cut(r, "=")
		name, chunks, _ := strings.Cut(spec, ":")
		if !ok || f.route(model, name, u.Host, strings.TrimSuffix(u.Path, "/"), chunks) != nil {
			return fmt.Errorf("-route %q: want MODEL=FORMAT[:CHUNKS] with a known format", r)
		}
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := grpc.NewServer()
	llmrelayv1.RegisterGatewayServiceServer(srv, f)
	healthpb.RegisterHealthServer(srv, health.NewServer())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		srv.Stop()
	}()
	log.Printf("floor on %s relaying to %s", ln.Addr(), upstream)
	return srv.Serve(ln)
}

// route prebuilds the requests of a model: the stream request of its
// format (with X-Mock-Chunks when chunks is a number) and, for OpenAI
// chat, the unary one.
func (f *floor) route(model, format, host, base, chunks string) error {
	build, ok := formats[format]
	if !ok {
		return fmt.Errorf("unknown format %q", format)
	}
	f.stream[model] = build(host, base, chunks)
	if format == "openai-chat" {
		f.unary[model] = post(host, base+"/chat/completions", "", chatBody(""))
	}
	return nil
}

func chatBody(extra string) string {
	return `{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Say hello in one short sentence."}],"max_tokens":64` + extra + `}`
}

// formats build the prebuilt stream request of each upstream format.
var formats = map[string]func(host, base, chunks string) []byte{
	"openai-chat": func(host, base, chunks string) []byte {
		return post(host, base+"/chat/completions", chunks, chatBody(`,"stream":true,"stream_options":{"include_usage":true}`))
	},
	"openai-responses": func(host, base, chunks string) []byte {
		return post(host, base+"/responses", chunks, `{"model":"gpt-4o-mini","input":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Say hello in one short sentence."}],"max_output_tokens":64,"store":false,"stream":true}`)
	},
	"anthropic": func(host, base, chunks string) []byte {
		return post(host, base+"/v1/messages", chunks, `{"model":"claude-sonnet-4-5","max_tokens":64,"system":"You are a helpful assistant.","messages":[{"role":"user","content":"Say hello in one short sentence."}],"stream":true}`)
	},
	"gemini": func(host, base, chunks string) []byte {
		return post(host, base+"/models/gemini-2.5-flash:streamGenerateContent?alt=sse", chunks, `{"systemInstruction":{"parts":[{"text":"You are a helpful assistant."}]},"contents":[{"role":"user","parts":[{"text":"Say hello in one short sentence."}]}],"generationConfig":{"maxOutputTokens":64}}`)
	},
	"ollama": func(host, base, chunks string) []byte {
		return post(host, base+"/api/chat", chunks, `{"model":"llama3.2","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Say hello in one short sentence."}],"stream":true,"options":{"num_predict":64}}`)
	},
}

func formatNames() []string {
	var out []string
	for k := range formats {
		out = append(out, k)
	}
	return out
}

func post(host, path, chunks, body string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAuthorization: Bearer sk-bench\r\n", path, host)
	if n, err := strconv.Atoi(chunks); err == nil {
		fmt.Fprintf(&b, "X-Mock-Chunks: %d\r\n", n)
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
	return b.Bytes()
}

type floor struct {
	llmrelayv1.UnimplementedGatewayServiceServer
	up            *upstreamPool
	unary, stream map[string][]byte // prebuilt requests by model
}

func (f *floor) Chat(ctx context.Context, req *llmrelayv1.ChatRequest) (*llmrelayv1.ChatResponse, error) {
	raw, ok := f.unary[req.GetModel()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "no route for model %q", req.GetModel())
	}
	c, body, err := f.up.exchange(ctx, raw)
	if err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	b, err := io.ReadAll(body)
	if err != nil {
		c.close()
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	f.up.put(c)
	return &llmrelayv1.ChatResponse{Message: &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT,
		Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: string(b)}}}}}, nil
}

func (f *floor) StreamChat(req *llmrelayv1.StreamChatRequest, s grpc.ServerStreamingServer[llmrelayv1.StreamChatResponse]) error {
	raw, ok := f.stream[req.GetModel()]
	if !ok {
		return status.Errorf(codes.NotFound, "no route for model %q", req.GetModel())
	}
	c, body, err := f.up.exchange(s.Context(), raw)
	if err != nil {
		return status.Error(codes.Unavailable, err.Error())
	}
	c.lines.Reset(body)
	for {
		line, err := c.lines.ReadSlice('\n')
		if errors.Is(err, io.EOF) && len(line) == 0 {
			break
		}
		if err != nil {
			c.close()
			return status.Error(codes.Unavailable, err.Error())
		}
		line = bytes.TrimRight(line, "\r\n")
		if !bytes.HasPrefix(line, []byte("data: ")) && !bytes.HasPrefix(line, []byte("{")) {
			continue // SSE event names and blank lines
		}
		if err := s.Send(&llmrelayv1.StreamChatResponse{Event: &llmrelayv1.StreamChatResponse_TextDelta{
			TextDelta: &llmrelayv1.TextDelta{Text: string(line)}}}); err != nil {
			c.close()
			return err
		}
	}
	f.up.put(c)
	return s.Send(&llmrelayv1.StreamChatResponse{Event: &llmrelayv1.StreamChatResponse_End{End: &llmrelayv1.StreamEnd{}}})
}

// upstreamPool keeps idle kept-alive connections to the upstream.
type upstreamPool struct {
	addr string
	tls  *tls.Config
	mu   sync.Mutex
	idle []*conn
}

type conn struct {
	nc        net.Conn
	br        *bufio.Reader
	lines     *bufio.Reader
	idleSince time.Time
	reused    bool
}

// maxIdle drops pooled connections before a server's keep-alive timeout
// can close them (the mock's is 120 s); a reused connection that still
// turns out closed is replaced once (exchange).
const maxIdle = 30 * time.Second

func (p *upstreamPool) get(ctx context.Context) (*conn, error) {
	p.mu.Lock()
	for n := len(p.idle); n > 0; n = len(p.idle) {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		if time.Since(c.idleSince) < maxIdle {
			p.mu.Unlock()
			c.reused = true
			return c, nil
		}
		c.close()
	}
	p.mu.Unlock()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	if p.tls != nil {
		tc := tls.Client(nc, p.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = nc.Close() // the handshake error is the one to report
			return nil, err
		}
		nc = tc
	}
	return &conn{nc: nc, br: bufio.NewReaderSize(nc, 4<<10), lines: bufio.NewReaderSize(nil, 4<<10)}, nil
}

func (p *upstreamPool) put(c *conn) {
	c.idleSince = time.Now()
	p.mu.Lock()
	p.idle = append(p.idle, c)
	p.mu.Unlock()
}

func (c *conn) close() { _ = c.nc.Close() } // broken: never reused

// exchange sends raw and reads the answer's head; a reused connection that
// fails before the head (closed by the server meanwhile) is replaced once.
func (p *upstreamPool) exchange(ctx context.Context, raw []byte) (*conn, io.Reader, error) {
	for {
		c, err := p.get(ctx)
		if err != nil {
			return nil, nil, err
		}
		body, err := c.do(raw)
		if err == nil {
			return c, body, nil
		}
		c.close()
		if !c.reused {
			return nil, nil, err
		}
	}
}

// do writes the prebuilt request and reads the response head: it must be
// a 200 with a Content-Length or a chunked body, which is returned.
func (c *conn) do(raw []byte) (io.Reader, error) {
	if _, err := c.nc.Write(raw); err != nil {
		return nil, err
	}
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(line, []byte("HTTP/1.1 200 ")) {
		return nil, fmt.Errorf("upstream: %q", bytes.TrimSpace(line))
	}
	length, chunked := int64(-1), false
	for {
		line, err = c.br.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		if len(line) <= 2 {
			break
		}
		k, v, _ := bytes.Cut(line, []byte(":"))
		v = bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, []byte("Content-Length")):
			if length, err = strconv.ParseInt(string(v), 10, 64); err != nil {
				return nil, err
			}
		case bytes.EqualFold(k, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(v, []byte("chunked"))
		}
	}
	switch {
	case chunked:
		return &chunkedBody{r: httputil.NewChunkedReader(c.br), br: c.br}, nil
	case length >= 0:
		return io.LimitReader(c.br, length), nil
	}
	return nil, errors.New("upstream: answer without a length (not reusable)")
}

// chunkedBody reads the trailer section after the last chunk, which the
// chunked reader leaves on the connection, so that it can carry the next
// request.
type chunkedBody struct {
	r  io.Reader
	br *bufio.Reader
}

func (b *chunkedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if !errors.Is(err, io.EOF) {
		return n, err
	}
	for {
		line, lerr := b.br.ReadSlice('\n')
		if lerr != nil {
			return n, lerr
		}
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			return n, io.EOF
		}
	}
}
