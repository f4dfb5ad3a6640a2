package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"text/tabwriter"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
	"github.com/llmrelay/llmrelay/server/catalog"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

const embedSummary = `Embed texts: one JSON array of numbers per input, in input order. The inputs
are the arguments, or the lines of stdin when there are none.`

func embed(ctx context.Context, e *env, args []string) error {
	var conn connFlags
	fs := newFlags("embed")
	conn.register(fs, time.Minute)
	model := fs.String("model", "", "embedding model name (required)")
	fs.StringVar(model, "m", "", "shorthand for --model")
	dims := fs.Int("dimensions", 0, "output dimensions, for models that can shorten embeddings (0: the model's)")
	jsonOut := fs.Bool("json", false, "print the whole response with its metadata as JSON")
	metaLine := fs.Bool("meta", false, "print a one-line summary of the call to stderr")
	inputs, err := parse(e, fs, "TEXT...", embedSummary, args)
	if err != nil {
		return err
	}
	if *model == "" {
		return usageErrorf("-m MODEL is required")
	}
	if len(inputs) == 0 {
		if isTerminal(e.stdin) {
			return usageErrorf("no input: give texts as arguments, or pipe lines to stdin")
		}
		sc := bufio.NewScanner(e.stdin)
		sc.Buffer(make([]byte, 64*1024), 16<<20)
		for sc.Scan() {
			if line := sc.Text(); line != "" {
				inputs = append(inputs, line)
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("read inputs from stdin: %w", err)
		}
		if len(inputs) == 0 {
			return usageErrorf("no input: give texts as arguments or lines on stdin")
		}
	}
	req := &llmrelayv1.EmbedRequest{Model: *model, Inputs: inputs}
	if *dims < 0 || *dims > 1<<20 {
		return usageErrorf("--dimensions %d: want a positive number", *dims)
	}
	if *dims > 0 {
		d := int32(*dims)
		req.Dimensions = &d
	}
	ctx, cl, closeConn, err := conn.dial(ctx)
	if err != nil {
		return err
	}
	defer closeConn()
	resp, err := cl.Embed(ctx, req)
	if err != nil {
		return err
	}
	g := genFlags{metaLine: *metaLine}
	if *jsonOut {
		return g.finishJSON(e, resp, resp.GetMeta())
	}
	w := bufio.NewWriter(e.stdout)
	for _, emb := range resp.GetEmbeddings() {
		w.WriteByte('[')
		for i, v := range emb.GetValues() {
			if i > 0 {
				w.WriteByte(',')
			}
			fmt.Fprintf(w, "%g", v)
		}
		w.WriteString("]\n")
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write the embeddings: %w", err)
	}
	notices(e.stderr, "embed", resp.GetMeta())
	if *metaLine {
		fmt.Fprintln(e.stderr, metaSummary(resp.GetMeta()))
	}
	return nil
}

func models(ctx context.Context, e *env, args []string) error {
	var conn connFlags
	fs := newFlags("models")
	conn.register(fs, 30*time.Second)
	jsonOut := fs.Bool("json", false, "print the models as JSON (a ListModelsResponse with every page)")
	pos, err := parse(e, fs, "", "List the models the server serves, with their protocols and formats.", args)
	if err != nil {
		return err
	}
	if err := noArgs(pos); err != nil {
		return err
	}
	ctx, cl, closeConn, err := conn.dial(ctx)
	if err != nil {
		return err
	}
	defer closeConn()
	all := &llmrelayv1.ListModelsResponse{}
	for token := ""; ; {
		resp, err := cl.Gateway.ListModels(ctx, &llmrelayv1.ListModelsRequest{PageToken: token})
		if err != nil {
			return err
		}
		all.Models = append(all.Models, resp.GetModels()...)
		if token = resp.GetNextPageToken(); token == "" {
			break
		}
	}
	if *jsonOut {
		return (&genFlags{}).finishJSON(e, all, nil)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tPROVIDER\tUPSTREAM\tCAPABILITIES")
	for _, m := range all.GetModels() {
		var caps []string
		for _, c := range m.GetCapabilities() {
			caps = append(caps, catalog.ProtocolName(c.GetProtocol())+":"+c.GetFormat())
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.GetName(), m.GetProvider(), m.GetUpstreamModel(), strings.Join(caps, " "))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write the models: %w", err)
	}
	return nil
}

func health(ctx context.Context, e *env, args []string) error {
	var conn connFlags
	fs := newFlags("health")
	conn.register(fs, 3*time.Second)
	service := fs.String("service", "", "the service to check (empty: the whole server)")
	pos, err := parse(e, fs, "", "Ask the server's gRPC health service (at $LLMRELAY_ADDR, else $LLMRELAY_LISTEN, else 127.0.0.1:50051); exit 0 if it reports SERVING, 1 if not, 3 if it does not answer, 4 if it does not know -service.", args)
	if err != nil {
		return err
	}
	if err := noArgs(pos); err != nil {
		return err
	}
	ctx, cl, closeConn, err := conn.dial(ctx)
	if err != nil {
		return err
	}
	defer closeConn()
	resp, err := healthpb.NewHealthClient(cl.Conn()).Check(ctx, &healthpb.HealthCheckRequest{Service: *service})
	if err != nil {
		return err
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return &failure{msg: "the server reports " + resp.GetStatus().String()}
	}
	fmt.Fprintln(e.stdout, resp.GetStatus())
	return nil
}

// Version is the release version, set at build time with
// -ldflags "-X github.com/llmrelay/llmrelay/internal/cli.Version=v1.2.3";
// otherwise the module version and VCS revision of the build are shown.
var Version = ""

func version(_ context.Context, e *env, args []string) error {
	fs := newFlags("version")
	pos, err := parse(e, fs, "", "Print the version, the VCS revision and the Go version of this binary.", args)
	if err != nil {
		return err
	}
	if err := noArgs(pos); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, versionString())
	return nil
}

func versionString() string {
	v, rev, modified := Version, "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	out := "llmrelay " + v
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if modified {
			rev += "+dirty"
		}
		out += " " + rev
	}
	return out + " " + runtime.Version()
}

const configSummary = `"config check FILE..." validates configuration files as the server would at
start-up (without credentials) and prints every error of every file with its
line and column. "config default" prints the embedded default configuration.`

// checkExposure finds what the server refuses only when it starts: no
// listener at all, or a non-loopback listen address (the file's, or
// LLMRELAY_LISTEN, which overrides it as in serve) without caller
// authentication.
func checkExposure(path string) error {
	cfg, err := config.Load(path)
	if err != nil {
		return err
	}
	if l := os.Getenv("LLMRELAY_LISTEN"); l != "" {
		if err := cfg.ExposureError(l, "LLMRELAY_LISTEN"); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	}
	if cfg.Server.ListenAddr() == "" && cfg.Server.UnixSocket == "" {
		return cfg.Locate(errors.New(`server.listen: "" without server.unix_socket leaves the server no listener, so it refuses to start`))
	}
	return cfg.Locate(cfg.ExposureError(cfg.Server.ListenAddr(), "server.listen"))
}

// credentialNotes tells, for a valid file, what serve would still refuse
// or take as "" here: keys and tokens that cannot be read in this
// environment (config check validates without credentials, as CI can),
// and ${VAR}s without a default that are unset. Notes, not errors: the
// file may be right for the environment it is deployed to.
func credentialNotes(w io.Writer, path string) {
	cfg, err := config.Load(path)
	if err != nil {
		return // reported by the checks before
	}
	if err := cfg.CredentialErrors(); err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(w, "%s (a note: not needed by config check, but serve and --local refuse to start without it)\n", line)
		}
	}
	for _, u := range cfg.UnsetVariables() {
		fmt.Fprintf(w, "%s (a note)\n", u)
	}
}

func configCmd(_ context.Context, e *env, args []string) error {
	fs := newFlags("config")
	pos, err := parse(e, fs, "check FILE... | default", configSummary, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageErrorf("want \"check FILE...\" or \"default\"")
	}
	switch pos[0] {
	case "default":
		if err := noArgs(pos[1:]); err != nil {
			return err
		}
		if _, err := e.stdout.Write(config.DefaultYAML()); err != nil {
			return fmt.Errorf("write the default: %w", err)
		}
		return nil
	case "check":
		if len(pos) < 2 {
			return usageErrorf("config check: name at least one file")
		}
		var failed []string
		for _, path := range pos[1:] {
			if err := server.CheckConfig(path); err != nil {
				fmt.Fprintln(e.stderr, err)
				failed = append(failed, path)
				continue
			}
			if err := checkExposure(path); err != nil {
				fmt.Fprintln(e.stderr, err)
				failed = append(failed, path)
				continue
			}
			fmt.Fprintf(e.stdout, "%s: ok\n", path)
			credentialNotes(e.stderr, path)
		}
		if len(failed) > 0 {
			return &failure{msg: "invalid: " + strings.Join(failed, ", ")}
		}
		return nil
	default:
		return usageErrorf("config: unknown subcommand %q (want check or default)", pos[0])
	}
}
