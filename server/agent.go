package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/llmrelay/llmrelay/fold"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/server/auth"
	"github.com/llmrelay/llmrelay/server/catalog"
	"github.com/llmrelay/llmrelay/server/cost"
	"github.com/llmrelay/llmrelay/server/mcp"
	"github.com/llmrelay/llmrelay/server/provider"
	"github.com/llmrelay/llmrelay/server/telemetry"
)

const (
	defaultMaxRounds = 10
	maxMaxRounds     = 100
	// mcpConnectTimeout bounds connecting to and listing an MCP server.
	mcpConnectTimeout = 10 * time.Second
	// maxSetupMCPServers bounds the MCP servers one setup may name: a
	// configured name may be repeated and URLs under an allowed prefix
	// are many, and each is a connection and a session for the run.
	maxSetupMCPServers = 32
)

// Agent runs the stateless tool loop: each round is one StreamTools call
// whose events are relayed, folded into the assistant turn, and answered by
// the client's tool results and the MCP servers' before the next round.
func (g *gateway) Agent(ss llmrelayv1.GatewayService_AgentServer) error {
	ctx := ss.Context()
	st := g.state.Load()
	first, err := ss.Recv()
	if errors.Is(err, io.EOF) {
		return toStatus(ctx, invalidField("setup", "the first message must be a setup"), nil, st.redact, g.log)
	}
	if err != nil {
		return err
	}
	setup := first.GetSetup()
	if setup == nil {
		return toStatus(ctx, invalidField("setup", "the first message must be a setup"), nil, st.redact, g.log)
	}
	a, err := g.newAgentRun(ctx, ss, st, setup)
	if err != nil {
		return toStatus(ctx, err, nil, st.redact, g.log)
	}
	defer a.close()
	if err := a.run(); err != nil {
		if c := context.Cause(a.ctx); c != nil && !errors.Is(c, context.Canceled) {
			err = c // the reader's verdict (unknown call_id, cancel) explains the rest
		}
		a.fail(err)
		return toStatus(ctx, err, nil, st.redact, g.log)
	}
	return nil
}

// agentRun is one Agent call.
type agentRun struct {
	g      *gateway
	st     *state
	ss     llmrelayv1.GatewayService_AgentServer
	setup  *llmrelayv1.AgentSetup
	ctx    context.Context
	cancel context.CancelCauseFunc
	// stopDeadline releases ctx's early end (withCallerDeadline).
	stopDeadline context.CancelFunc
	start        time.Time

	maxRounds int

	// toolTimeout is how long a round waits for its tool results: the
	// setup's tool_timeout capped by agent.max_tool_timeout, or that
	// bound when the setup gives none; toolTimeoutKey names its source.
	toolTimeout    time.Duration
	toolTimeoutKey string

	// keepMedia is how many of the conversation's most recent tool-result
	// images and files each model call is sent (0: all), keepMediaKey
	// the setting it comes from; mediaWarned is set once a run warning
	// said media were left out (forModel).
	keepMedia    int
	keepMediaKey string
	mediaWarned  bool

	tools       []*llmrelayv1.Tool
	clientTools map[string]bool
	mcpTools    map[string]*mcp.Session
	sessions    []*mcp.Session
	hosted      []mcp.Server
	// mcpLists are the gateway-executed servers' offered tools, in the
	// setup's order: listed again between rounds when a server says its
	// tools changed (refreshTools).
	mcpLists []mcpList
	// removed names the MCP tools a new list took away, with why: a call
	// of one gets an error result saying so.
	removed map[string]string
	// media says which media of an MCP tool's result the run's model
	// can be given (ToolResult.parts; mcpMedia).
	media mcp.Media

	msgs []*llmrelayv1.Message
	meta *llmrelayv1.AgentMeta
	// complete is how much of msgs is whole rounds (assistant turn and its
	// results): what a failure returns to continue from. current is the
	// round in progress; ended is set once end or go_away went out.
	complete int
	current  int
	ended    bool
	// accepted is set once setup_complete went out: a setup refused before
	// (unknown model, bad tools or options) ends with its status alone, no
	// failure event: there was no run to continue.
	accepted bool

	// Client results, checked by the reader against pending. results is
	// made per round (under mu) with room for every pending call, so the
	// reader never blocks on it.
	halfClosed chan struct{}
	mu         sync.Mutex
	results    chan *llmrelayv1.ToolResult
	pending    map[string]string // asked, not answered: call_id to the call's tool name
	answered   map[string]bool   // answered (a second result is a duplicate)
	expired    map[string]bool   // given up on (tool_timeout): a late result is ignored
	// While no client result is awaited (pending is empty: a model call
	// runs, MCP tools run, or the round's client results are all in), a
	// result for a call not asked for yet is kept in early until the next
	// round's calls are known (a client may answer calls whose ids it knows
	// before they are requested, e.g. grpcurl -d @ with a file). Keyed to
	// pending rather than to the loop's phase, the verdict on a result
	// follows from the order of the client's messages alone: a result
	// sent right after the round's last one no longer depended on whether
	// the loop had started the next model call yet.
	early map[string]*llmrelayv1.ToolResult

	wg sync.WaitGroup
}

// mcpList is one gateway-executed server's tools as offered to the model.
type mcpList struct {
	field   string
	srv     mcp.Server
	session *mcp.Session
	tools   []*llmrelayv1.Tool
}

type mcpOutcome struct {
	call    *llmrelayv1.ToolCall
	session *mcp.Session
	res     mcp.Result
	err     error
}

var errClientCancel = &requestError{code: codes.Canceled, reason: llmrelayv1.ErrorReason_ERROR_REASON_CANCELLED, msg: "cancelled by the client"}

func (g *gateway) newAgentRun(ctx context.Context, ss llmrelayv1.GatewayService_AgentServer, st *state, setup *llmrelayv1.AgentSetup) (*agentRun, error) {
	maxRounds := int(setup.GetMaxRounds())
	switch {
	case maxRounds < 0 || maxRounds > maxMaxRounds:
		return nil, invalidField("setup.max_rounds", "must be between 0 (default %d) and %d", defaultMaxRounds, maxMaxRounds)
	case maxRounds == 0:
		maxRounds = defaultMaxRounds
	}
	if n := len(setup.GetMcpServers()); n > maxSetupMCPServers {
		return nil, invalidField("setup.mcp_servers", "at most %d MCP servers, got %d", maxSetupMCPServers, n)
	}
	if d := setup.GetToolTimeout(); d != nil && (d.CheckValid() != nil || d.AsDuration() <= 0) {
		return nil, invalidField("setup.tool_timeout", "must be a valid, positive duration")
	}
	if n := setup.GetKeepRecentToolMedia(); n < -1 {
		return nil, invalidField("setup.keep_recent_tool_media", "must be at least 1, 0 (the server's agent.keep_recent_tool_media) or -1 (send every tool-result image and file), got %d", n)
	}
	if setup.GetProviderOptions().GetOpenai().GetStore() {
		return nil, invalidField("setup.provider_options.openai.store", "agent runs are stateless (zero data retention): store must be false")
	}
	if _, ok := llmrelayv1.ToolTimeoutAction_name[int32(setup.GetOnToolTimeout())]; !ok {
		return nil, invalidField("setup.on_tool_timeout", "unknown value %d", setup.GetOnToolTimeout())
	}
	if err := checkAnswered(setup.GetMessages()); err != nil {
		return nil, err
	}
	// The model before the MCP servers: an unknown model (or one the
	// caller may not use, or without tools) is the setup's first fault,
	// and connecting to the servers (up to mcpConnectTimeout) would
	// only delay it, or hide it behind an unreachable server's
	// Unavailable. The first model call checks the rest.
	model, capab, err := g.resolve(ctx, st, setup.GetModel(), llmrelayv1.Protocol_PROTOCOL_TOOLS, "tools")
	if err != nil {
		return nil, setupField(err)
	}
	a := &agentRun{
		g: g, st: st, ss: ss, setup: setup, start: g.startTime(ctx), maxRounds: maxRounds,
		clientTools: map[string]bool{}, mcpTools: map[string]*mcp.Session{},
		halfClosed: make(chan struct{}), pending: map[string]string{}, answered: map[string]bool{}, expired: map[string]bool{},
		msgs:  slices.Clone(setup.GetMessages()),
		meta:  &llmrelayv1.AgentMeta{RequestId: requestIDOf(ctx), RequestedModel: setup.GetModel(), Usage: &llmrelayv1.Usage{}},
		media: mcpMedia(model, capab.Format.Name),
	}
	a.toolTimeout, a.toolTimeoutKey = st.maxToolTimeout, "agent.max_tool_timeout"
	if d := setup.GetToolTimeout(); d != nil {
		if d.AsDuration() <= a.toolTimeout {
			a.toolTimeout, a.toolTimeoutKey = d.AsDuration(), "tool_timeout"
		} else {
			a.meta.Warnings = append(a.meta.Warnings, "setup.tool_timeout "+d.AsDuration().String()+" capped to "+
				a.toolTimeout.String()+" (the server's agent.max_tool_timeout)")
		}
	}
	switch n := int(setup.GetKeepRecentToolMedia()); {
	case n > 0:
		a.keepMedia, a.keepMediaKey = n, "setup.keep_recent_tool_media"
	case n == 0 && st.keepRecentToolMedia > 0:
		a.keepMedia, a.keepMediaKey = st.keepRecentToolMedia, "the server's agent.keep_recent_tool_media"
	}
	a.complete = len(a.msgs)
	// The run ends before the caller's deadline, so that its failure
	// event and status reach the caller (withCallerDeadline).
	dctx, stop := withCallerDeadline(ctx)
	a.ctx, a.cancel = context.WithCancelCause(dctx)
	a.stopDeadline = stop
	a.tools = append(a.tools, setup.GetTools()...)
	for _, t := range setup.GetTools() {
		a.clientTools[t.GetName()] = true
	}
	if err := a.connectMCP(); err != nil {
		a.close()
		return nil, err
	}
	return a, nil
}

// checkAnswered refuses a conversation with a tool call no tool
// message answers, such as the one a run that ended with
// FINISH_REASON_MAX_ROUNDS returns: the providers refuse it (OpenAI and
// Anthropic with a 400 once the model call is made), and the run would not
// know to ask for the results. The client appends them first.
func checkAnswered(msgs []*llmrelayv1.Message) error {
	answered := map[string]bool{}
	for _, m := range msgs {
		for _, p := range m.GetParts() {
			if r := p.GetToolResult(); r != nil {
				answered[r.GetCallId()] = true
			}
		}
	}
	for i, m := range msgs {
		for j, p := range m.GetParts() {
			if c := p.GetToolCall(); c != nil && c.GetCallId() != "" && !answered[c.GetCallId()] {
				return invalidField(fmt.Sprintf("setup.messages[%d].parts[%d].tool_call", i, j),
					"call %q (%s) has no result: append a ROLE_TOOL message with its tool_result (a run that ended with FINISH_REASON_MAX_ROUNDS left its last calls unanswered)",
					c.GetCallId(), c.GetName())
			}
		}
	}
	return nil
}

// maxMCPConnects bounds how many MCP servers one setup connects to at once:
// nothing else bounds how many a setup names (a configured name may be
// repeated, and request URLs under an allowed prefix are many).
const maxMCPConnects = 8

// mcpConn is one requested MCP server on its way to the run.
type mcpConn struct {
	field  string
	srv    mcp.Server
	hosted bool
	// err refuses the request (mcpServer): reported as it is.
	err error
	// session, tools and connErr are the connection's outcome (connErr:
	// connect or list); invalid is the tools' fault (validateTools).
	session *mcp.Session
	tools   []*llmrelayv1.Tool
	connErr error
	invalid error
}

// connectMCP resolves the requested MCP servers, connects to the gateway-
// executed ones and lists their tools. The servers are connected at once
// (at most maxMCPConnects at a time, each within mcpConnectTimeout), then
// judged in the setup's order, as if one after another: the first fault in
// that order is the error (a server refused, unreachable, with invalid or
// colliding tools), and the tools are offered in that order. A server that
// fails stops the servers after it (their outcome can no longer matter);
// every session opened is the run's, closed with it.
func (a *agentRun) connectMCP() error {
	reqs := a.setup.GetMcpServers()
	conns := make([]mcpConn, 0, len(reqs))
	for i, req := range reqs {
		c := mcpConn{field: "setup.mcp_servers[" + strconv.Itoa(i) + "]"}
		c.srv, c.hosted, c.err = a.st.mcpServer(req, c.field)
		conns = append(conns, c)
		if c.err != nil {
			break // the servers after a refused one are not connected
		}
	}
	a.dialMCP(conns)
	for _, c := range conns {
		if c.session != nil {
			a.sessions = append(a.sessions, c.session)
		}
	}
	for _, c := range conns {
		switch {
		case c.err != nil:
			return c.err
		case c.hosted:
			a.hosted = append(a.hosted, c.srv)
			continue
		case c.connErr != nil:
			return mcpConnError(c.field, clean(a.st.redact, c.connErr.Error()), c.connErr)
		case c.invalid != nil:
			// The server's tools are checked like the client's, but the
			// error names the server: the client did not write them.
			return invalidField(c.field, "MCP server %s: %s", c.srv.Name, c.invalid.Error())
		}
		a.mcpLists = append(a.mcpLists, mcpList{field: c.field, srv: c.srv, session: c.session, tools: c.tools})
		listed := make(map[string]bool, len(c.tools))
		for _, t := range c.tools {
			if a.clientTools[t.GetName()] || a.mcpTools[t.GetName()] != nil {
				return invalidField(c.field, "tool %q of MCP server %s collides with another tool of the same name", t.GetName(), c.srv.Name)
			}
			a.mcpTools[t.GetName()] = c.session
			a.tools = append(a.tools, t)
			listed[t.GetName()] = true
		}
		// An allowed tool the server does not list (a typo, a tool renamed
		// or removed upstream) is not offered: the run says so rather than
		// leave the model without it unexplained.
		var missing []string
		for _, n := range c.srv.AllowedTools {
			if !listed[n] && !slices.Contains(missing, n) {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			a.meta.Warnings = append(a.meta.Warnings, fmt.Sprintf("%s: MCP server %s does not list the allowed tool(s) %s: not offered",
				c.field, c.srv.Name, strings.Join(missing, ", ")))
		}
	}
	return nil
}

// mcpConnError is the status of a server that could not be connected or
// listed: Unavailable (MCP_SERVER_UNAVAILABLE), or, when the server
// refused the credentials (401) or the access (403), Unauthenticated or
// PermissionDenied with the upstream reasons a provider's 401 and 403 get:
// that server answered, and trying again with the same headers cannot
// work, where Unavailable tells a client to retry.
func mcpConnError(field, msg string, err error) error {
	code, reason := codes.Unavailable, llmrelayv1.ErrorReason_ERROR_REASON_MCP_SERVER_UNAVAILABLE
	if ae := (*mcp.AuthError)(nil); errors.As(err, &ae) {
		code, reason = codes.Unauthenticated, llmrelayv1.ErrorReason_ERROR_REASON_UPSTREAM_UNAUTHENTICATED
		if ae.Status == http.StatusForbidden {
			code, reason = codes.PermissionDenied, llmrelayv1.ErrorReason_ERROR_REASON_UPSTREAM_PERMISSION_DENIED
		}
	}
	return &requestError{code: code, reason: reason, field: field, msg: field + ": " + msg}
}

// dialMCP connects the gateway-executed servers of conns and lists their
// tools, concurrently, and returns once every attempt ended. The run's
// context (the client's) ends them all; a failure ends those after it in
// the setup's order, and the servers after it not started yet are not
// tried.
func (a *agentRun) dialMCP(conns []mcpConn) {
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		cancels = make([]context.CancelFunc, len(conns))
		failed  = len(conns) // the first failure in the setup's order
	)
	sem := make(chan struct{}, maxMCPConnects)
	fail := func(i int) {
		mu.Lock()
		defer mu.Unlock()
		if i >= failed {
			return
		}
		failed = i
		for _, cancel := range cancels[i+1:] {
			if cancel != nil {
				cancel()
			}
		}
	}
	for i := range conns {
		c := &conns[i]
		if c.err != nil || c.hosted {
			continue
		}
		acquired := false
		select {
		case sem <- struct{}{}:
			acquired = true
		case <-a.ctx.Done():
		}
		mu.Lock()
		skip := failed < i || a.ctx.Err() != nil
		var (
			ctx    context.Context
			cancel context.CancelFunc
		)
		if !skip {
			ctx, cancel = context.WithTimeout(a.ctx, mcpConnectTimeout)
			cancels[i] = cancel
		}
		mu.Unlock()
		if skip {
			// Never reported: an earlier server's failure, or the run's
			// end, decides the outcome.
			if a.ctx.Err() != nil {
				c.connErr = fmt.Errorf("mcp server %s: connect: not tried: %w", c.srv.Name, context.Cause(a.ctx))
			} else {
				c.connErr = fmt.Errorf("mcp server %s: connect: not tried (an earlier MCP server failed)", c.srv.Name)
			}
			if acquired {
				<-sem
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			defer cancel()
			a.dialOne(ctx, c)
			if c.connErr != nil || c.invalid != nil {
				fail(i)
			}
		}()
	}
	wg.Wait()
}

// dialOne connects to one server and lists its tools within ctx.
func (a *agentRun) dialOne(ctx context.Context, c *mcpConn) {
	c.srv.MaxResponseBytes = a.g.limits.MaxResponseBytes
	// A result as large as limits.max_send_message_bytes could not
	// reach the client in its mcp_tool_execution event (nor in the
	// conversation of end): the run failed with ResourceExhausted for
	// what is the tool's answer. A quarter of it leaves room for the
	// rest of the events and the round's other results.
	c.srv.MaxResultBytes = a.g.limits.MaxSendMessageBytes / 4
	c.session, c.connErr = mcp.Connect(ctx, c.srv, nil)
	if c.connErr != nil {
		return
	}
	c.tools, c.connErr = c.session.Tools(ctx)
	if c.connErr == nil {
		c.invalid = validateTools(c.tools)
	}
}

// mcpServer resolves a requested MCP server: a configured one by name, or a
// URL the configuration allows. hosted reports a server to pass to the
// provider instead.
func (st *state) mcpServer(req *llmrelayv1.AgentMcpServer, field string) (mcp.Server, bool, error) {
	if req.GetName() != "" {
		if req.GetUrl() != "" || len(req.GetHeaders()) > 0 {
			return mcp.Server{}, false, invalidField(field, "name and url/headers are exclusive")
		}
		c, ok := st.mcp[req.GetName()]
		if !ok {
			return mcp.Server{}, false, &requestError{code: codes.NotFound, reason: llmrelayv1.ErrorReason_ERROR_REASON_MCP_SERVER_NOT_FOUND,
				field: field + ".name", resourceType: "mcp_server", resource: req.GetName(), msg: fmt.Sprintf("%s.name: no configured MCP server %q", field, req.GetName())}
		}
		s := c.server
		if len(req.GetAllowedTools()) > 0 {
			var narrowed []string
			for _, t := range req.GetAllowedTools() {
				if len(s.AllowedTools) == 0 || slices.Contains(s.AllowedTools, t) {
					narrowed = append(narrowed, t)
				}
			}
			if len(narrowed) == 0 {
				return mcp.Server{}, false, invalidField(field+".allowed_tools", "none of the tools is allowed by the configuration")
			}
			s.AllowedTools = narrowed
		}
		return s, c.hosted || req.GetHosted(), nil
	}
	u := req.GetUrl()
	if u == "" {
		return mcp.Server{}, false, invalidField(field, "name or url is required")
	}
	parsed, err := url.Parse(u)
	if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
		return mcp.Server{}, false, invalidField(field+".url", "must be an http(s) URL")
	}
	if !st.allowMCPURL(u, parsed) {
		return mcp.Server{}, false, &requestError{code: codes.PermissionDenied, reason: llmrelayv1.ErrorReason_ERROR_REASON_PERMISSION_DENIED,
			field: field + ".url", msg: field + ".url: the configuration does not allow this MCP server URL (agent.allow_request_mcp_urls)"}
	}
	if t := req.GetTransport(); t != "" && t != mcp.Streamable && t != mcp.SSE {
		return mcp.Server{}, false, invalidField(field+".transport", "%q: streamable or sse", t)
	}
	return mcp.Server{Name: parsed.Host, URL: u, Transport: req.GetTransport(), Headers: req.GetHeaders(), AllowedTools: req.GetAllowedTools()}, req.GetHosted(), nil
}

// allowMCPURL reports whether a request may name this MCP server URL: it must
// start with one of the configured prefixes and, compared as URLs, have the
// prefix's scheme and host exactly, no user info and no dot segments. A
// plain string prefix let "https://mcp.example.com@169.254.169.254/" and
// "https://mcp.example.com.evil.net/" through a prefix written without its
// trailing slash, and "/allowed/../admin" out of an allowed path.
func (st *state) allowMCPURL(raw string, u *url.URL) bool {
	if u.User != nil || slices.ContainsFunc(strings.Split(u.Path, "/"), func(seg string) bool { return seg == "." || seg == ".." }) {
		return false
	}
	for _, p := range st.allowMCPURLs {
		pu, err := url.Parse(p) // checked when the configuration was loaded
		if err == nil && strings.HasPrefix(raw, p) && strings.EqualFold(pu.Scheme, u.Scheme) && strings.EqualFold(pu.Host, u.Host) {
			return true
		}
	}
	return false
}

func (a *agentRun) close() {
	a.cancel(nil)
	defer a.stopDeadline()
	a.wg.Wait()
	// The sessions close at once: each close sends a DELETE the SDK bounds
	// at 5 s, and one after another, unresponsive servers would hold the
	// run's status back by that much each.
	var closing sync.WaitGroup
	for _, s := range a.sessions {
		closing.Add(1)
		go func() {
			defer closing.Done()
			if err := s.Close(); err != nil {
				a.g.log.Debug("mcp session close", slog.String("server", s.Name()), slog.String("error", a.st.redact.String(err.Error())))
			}
		}()
	}
	closing.Wait()
}

func (a *agentRun) send(ev *llmrelayv1.AgentResponse) error { return a.ss.Send(ev) }

// read receives the client's messages until the stream ends: results are
// checked against the pending calls and handed to the loop; anything wrong
// cancels the run with the reason.
func (a *agentRun) read() {
	for {
		m, err := a.ss.Recv()
		if errors.Is(err, io.EOF) {
			close(a.halfClosed)
			return
		}
		if err != nil {
			a.cancel(err)
			return
		}
		switch x := m.GetMessage().(type) {
		case *llmrelayv1.AgentRequest_ToolResult:
			if err := a.accept(x.ToolResult); err != nil {
				a.cancel(err)
				return
			}
		case *llmrelayv1.AgentRequest_Cancel:
			a.g.log.DebugContext(a.ctx, "agent cancelled by the client", slog.String("reason", x.Cancel.GetReason()))
			a.cancel(errClientCancel)
			return
		case *llmrelayv1.AgentRequest_Setup:
			a.cancel(invalidField("setup", "only the first message may be a setup"))
			return
		default:
			a.cancel(invalidField("message", "empty or unknown client message"))
			return
		}
	}
}

func (a *agentRun) accept(r *llmrelayv1.ToolResult) error {
	id := r.GetCallId()
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case id == "":
		return invalidField("tool_result.call_id", "required")
	case a.expired[id]:
		return nil // too late: the model already has an error result for it
	case a.answered[id]:
		return invalidField("tool_result.call_id", "%q was already answered", id)
	case a.pending[id] == "" && len(a.pending) == 0:
		if a.early[id] != nil {
			return invalidField("tool_result.call_id", "%q was already answered", id)
		}
		if len(a.early) >= fold.MaxToolCalls {
			return invalidField("tool_result", "more than %d results sent ahead of their calls", fold.MaxToolCalls)
		}
		if a.early == nil {
			a.early = map[string]*llmrelayv1.ToolResult{}
		}
		a.early[id] = r
		return nil
	case a.pending[id] == "":
		return invalidField("tool_result.call_id", "%q is not a call the server asked for", id)
	}
	if err := checkResultName(r, a.pending[id]); err != nil {
		return err
	}
	delete(a.pending, id)
	a.answered[id] = true
	a.results <- r // room for every call pending this round
	return nil
}

// run is the round loop, in one place: each iteration is one model call
// (a round) and the execution of its tool calls.
func (a *agentRun) run() error {
	go a.read()
	for round := 1; ; round++ {
		a.current = round
		if round > 1 && a.g.draining() {
			return a.goAway()
		}
		ctx, span := a.g.tel.StartAgentRound(a.ctx, a.setup.GetModel(), round)
		done, err := a.round(ctx, round)
		if err != nil {
			span.SetStatus(otelcodes.Error, status.Code(err).String())
		}
		span.End()
		if done || err != nil {
			return err
		}
	}
}

// round is one model call and the execution of its tool calls; done when
// the run ended (no calls left, or max_rounds reached).
func (a *agentRun) round(ctx context.Context, round int) (done bool, err error) {
	if round > 1 {
		// Each model call of a run is admitted like a call: the caller's
		// request rate, and its token and spend budgets, which the earlier
		// rounds were charged to (the RPC's own admission covered round 1).
		if c := auth.CallerFrom(a.ctx); c != nil {
			warning, err := c.Admit(ctx, a.g.now())
			if err != nil {
				return true, err
			}
			if warning != "" {
				a.meta.Warnings = append(a.meta.Warnings, warning)
			}
		}
	}
	if round > 1 {
		a.refreshTools(ctx, round)
	}
	calls, rec, err := a.modelCall(ctx, round)
	if err != nil {
		return true, err
	}
	// A turn the output token limit cut ends the run with LENGTH: its
	// last call is incomplete (a tool must never run on partial
	// arguments), and a model continuing from a cut turn writes it again
	// into the same limit.
	cut := cutCall(calls, rec.GetMeta().GetFinishReason())
	if len(calls) == 0 || cut != nil || round == a.maxRounds {
		// No tools run: a result sent ahead answers nothing. One for a
		// call of this turn (a client answering from tool_call_done, or
		// from a file) is the model's call all the same: it is left out
		// with a warning, not taken for an unknown call_id that would
		// fail a run about to end with its conversation.
		a.mu.Lock()
		var unused []string
		for _, c := range calls {
			if id := c.GetCallId(); a.early[id] != nil {
				unused = append(unused, id)
				delete(a.early, id)
			}
		}
		a.results = make(chan *llmrelayv1.ToolResult, len(a.early))
		err := a.claimEarly()
		a.mu.Unlock()
		if len(unused) > 0 {
			a.meta.Warnings = append(a.meta.Warnings, fmt.Sprintf("round %d: results sent for calls %s were not used: the round's calls were not run",
				round, strings.Join(unused, ", ")))
		}
		if err != nil {
			return true, err
		}
	}
	if len(calls) == 0 {
		return true, a.end(rec.GetMeta().GetFinishReason())
	}
	if cut != nil {
		a.meta.Warnings = append(a.meta.Warnings, fmt.Sprintf("round %d: tool call %s (%s) was cut by the output token limit; the round's %d call(s) were not run: raise max_tokens",
			round, cut.GetCallId(), cut.GetName(), len(calls)))
		return true, a.end(llmrelayv1.FinishReason_FINISH_REASON_LENGTH)
	}
	if round == a.maxRounds {
		return true, a.end(llmrelayv1.FinishReason_FINISH_REASON_MAX_ROUNDS)
	}
	toolsStart := a.g.now()
	results, err := a.execute(ctx, round, calls)
	if err != nil {
		return true, err
	}
	a.msgs = append(a.msgs, &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_TOOL, Parts: results})
	if err := a.fitsEnd(round); err != nil {
		return true, err
	}
	a.complete = len(a.msgs)
	rec.ToolsDuration = durationpb.New(a.g.now().Sub(toolsStart))
	a.meta.ToolRounds++
	return false, a.send(&llmrelayv1.AgentResponse{Event: &llmrelayv1.AgentResponse_RoundEnd{RoundEnd: &llmrelayv1.AgentRoundEnd{Round: rec}}})
}

// fitsEnd refuses to go on with a conversation that no end event can carry
// any more (limits.max_send_message_bytes): every later event that returns
// the conversation (end, go_away) would be refused, after model calls paid
// for nothing. The run fails before the next model call instead, with the
// conversation up to the previous round (which still fits) to continue
// from with smaller results.
func (a *agentRun) fitsEnd(round int) error {
	max := a.g.limits.MaxSendMessageBytes
	if max <= 0 {
		return nil
	}
	// The setup's messages are the part an end event may leave out
	// (withConversation).
	n := min(len(a.setup.GetMessages()), len(a.msgs))
	size := sizeOf(&llmrelayv1.AgentResponse{Event: &llmrelayv1.AgentResponse_End{End: &llmrelayv1.AgentEnd{Messages: a.msgs[n:], Meta: a.meta, OmittedSetupMessages: int32(n)}}})
	if size <= max {
		return nil
	}
	return &limitError{code: codes.ResourceExhausted, limit: "limits.max_send_message_bytes", field: "tool_result",
		msg: fmt.Sprintf("tool_result: with round %d's tool results the conversation after the setup's messages (%d bytes) exceeds limits.max_send_message_bytes (%d): no event could return it; the run stopped before the next model call (continue from the failure event's conversation with smaller results)",
			round, size, max)}
}

// cutCall is the call a turn's output token limit cut: one whose arguments
// are not whole in a turn that finished at the limit (nil otherwise). An
// invalid call in a turn that finished otherwise (a model writing "" for
// a tool without arguments) is the tool's to judge, and runs.
func cutCall(calls []*llmrelayv1.ToolCall, finish llmrelayv1.FinishReason) *llmrelayv1.ToolCall {
	if finish != llmrelayv1.FinishReason_FINISH_REASON_LENGTH {
		return nil
	}
	for _, c := range calls {
		if !c.GetArgumentsValid() {
			return c
		}
	}
	return nil
}

// modelCall is one round's model call, exactly a StreamTools call whose
// events go to the client; the folded assistant turn joins the conversation.
func (a *agentRun) modelCall(ctx context.Context, round int) ([]*llmrelayv1.ToolCall, *llmrelayv1.AgentRound, error) {
	var req proto.Message
	if round == 1 { // the setup does not change between rounds: walked once
		req = a.setup
	}
	sent := a.forModel(round)
	ctx, p, err := a.g.prepareGeneration(ctx, generation{
		req: req, model: a.setup.GetModel(), messages: sent, tools: a.tools, options: a.setup.GetOptions(),
		providerOptions: a.setup.GetProviderOptions(), call: a.setup.GetCall(), wantTools: true,
		hostedMCP: a.hosted, agentRound: true, setupMessages: len(a.setup.GetMessages()), setupTools: len(a.setup.GetTools()),
	})
	if err != nil {
		return nil, nil, setupField(err)
	}
	if round == 1 {
		// The setup is accepted once the first model call is ready to
		// go: its model, messages, tools and options passed the checks a
		// StreamTools call gets, so a refused setup is a status alone.
		if err := a.send(&llmrelayv1.AgentResponse{Event: &llmrelayv1.AgentResponse_SetupComplete{SetupComplete: &llmrelayv1.AgentSetupComplete{
			RequestId: a.meta.RequestId, Tools: a.tools, MaxRounds: int32(a.maxRounds)}}}); err != nil {
			p.cancel()
			return nil, nil, err
		}
		a.accepted = true
	}
	p.start = a.g.now()
	sink := &agentSink{ss: a.ss}
	if err := a.g.runStream(ctx, p, &toolsSink{ss: sink}); err != nil {
		if m := failedCallMeta(err); m != nil {
			// The failed call was made: its requests, its usage so far
			// and their cost (charged to the caller's budget) are the
			// run's as well; it is the run's last round.
			a.account(&llmrelayv1.AgentRound{Round: int32(round), Meta: m})
		}
		return nil, nil, a.outgrown(round, sent, err)
	}
	msg := sink.acc.Message()
	meta := sink.acc.Meta()
	rec := &llmrelayv1.AgentRound{Round: int32(round), Meta: meta, ToolCalls: meta.GetToolCallCount()}
	a.account(rec)
	if len(msg.GetParts()) == 0 {
		// An empty answer (no text, no calls, no reasoning) is no turn: a
		// message without parts would make the returned conversation one
		// that no setup accepts. This warning says more than the
		// round's own (emptyAnswerWarning), which it replaces in the run's.
		a.meta.Warnings = slices.DeleteFunc(a.meta.Warnings, func(w string) bool { return strings.HasPrefix(w, emptyAnswerWarning) })
		a.meta.Warnings = append(a.meta.Warnings, "round "+strconv.Itoa(round)+": the model answered with nothing (finish reason "+
			meta.GetFinishReason().String()+"); the conversation has no assistant turn for it")
	} else {
		a.msgs = append(a.msgs, msg)
	}
	return sink.acc.ToolCalls(), rec, nil
}

// forModel is the conversation a round's model call is sent: a.msgs, or,
// when the run keeps only the most recent tool-result media
// (keep_recent_tool_media) and there are more, a copy in which each older
// image or file of a tool result is a text part naming it. a.msgs (what
// end, go_away and failure return) is never changed: the copy shares every
// message and result it leaves as they are. Media are counted newest first
// over every tool result, the setup's included, so a run continued from
// a returned conversation stays within the bound too; user messages' media
// are the client's own input and always go.
func (a *agentRun) forModel(round int) []*llmrelayv1.Message {
	if a.keepMedia <= 0 {
		return a.msgs
	}
	kept, left, leftBytes := 0, 0, 0
	var out []*llmrelayv1.Message
	for i := len(a.msgs) - 1; i >= 0; i-- {
		m := a.msgs[i]
		var parts []*llmrelayv1.Part // m's parts, copied once one changes
		for j := len(m.GetParts()) - 1; j >= 0; j-- {
			r := m.GetParts()[j].GetToolResult()
			if r == nil || !provider.ToolResultMedia(r) {
				continue
			}
			var rparts []*llmrelayv1.Part // r's parts, copied once one changes
			for k := len(r.GetParts()) - 1; k >= 0; k-- {
				p := r.GetParts()[k]
				if p.GetImage() == nil && p.GetFile() == nil {
					continue
				}
				if kept < a.keepMedia {
					kept++
					continue
				}
				if rparts == nil {
					rparts = slices.Clone(r.GetParts())
				}
				left++
				leftBytes += len(p.GetImage().GetData()) + len(p.GetFile().GetData())
				rparts[k] = &llmrelayv1.Part{Kind: &llmrelayv1.Part_Text{Text: leftOutMedia(p, r.GetCallId(), a.keepMedia)}}
			}
			if rparts == nil {
				continue
			}
			if parts == nil {
				parts = slices.Clone(m.GetParts())
			}
			nr := cloneWithout(r, &r.Parts)
			nr.Parts = rparts
			parts[j] = &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: nr}}
		}
		if parts == nil {
			continue
		}
		if out == nil {
			out = slices.Clone(a.msgs)
		}
		nm := cloneWithout(m, &m.Parts)
		nm.Parts = parts
		out[i] = nm
	}
	if out == nil {
		return a.msgs
	}
	if !a.mediaWarned {
		a.mediaWarned = true
		a.meta.Warnings = append(a.meta.Warnings, fmt.Sprintf("round %d: %d older tool-result image(s) and file(s) (%d bytes inline) left out of the model call, each replaced by a note: "+
			"only the %d most recent are sent (%s), in this round and every later one; the conversation returned keeps them all",
			round, left, leftBytes, a.keepMedia, a.keepMediaKey))
	}
	return out
}

// cloneWithout copies m but for its parts, which the copy's caller
// replaces: a deep copy would copy every image of the conversation each
// round. m is m's field parts points into, restored before returning (the
// run's loop alone reads its conversation).
func cloneWithout[M proto.Message](m M, parts *[]*llmrelayv1.Part) M {
	saved := *parts
	*parts = nil
	c := proto.CloneOf(m)
	*parts = saved
	return c
}

// leftOutMedia is the note that stands for a tool-result image or file
// left out of a model call (forModel): what it was, from which call, and
// why, so the model knows something was there.
func leftOutMedia(p *llmrelayv1.Part, callID string, keep int) string {
	var what string
	if img := p.GetImage(); img != nil {
		what = "image"
		if mt := provider.ImageMediaType(img); mt != "" {
			what += " (" + mt
			if d := img.GetData(); d != nil {
				what += ", " + strconv.Itoa(len(d)) + " bytes"
			}
			what += ")"
		}
	} else {
		f := p.GetFile()
		what = "file"
		if n := f.GetFilename(); n != "" {
			what += " " + strconv.Quote(n)
		}
		if mt := provider.MediaType(f); mt != "" {
			what += " (" + mt
			if d := f.GetData(); d != nil {
				what += ", " + strconv.Itoa(len(d)) + " bytes"
			}
			what += ")"
		}
	}
	return fmt.Sprintf("[%s of call %s left out: only the %d most recent tool-result images and files are sent]", what, callID, keep)
}

// mediaLimitRE matches a provider's refusal of a request for the number
// of images and documents it carries: Anthropic's "Too much media: 0
// document pages + 102 images > 100" and "too many images and documents:
// 104 + 1 > 100" (anthropics/claude-code#19822, #23392), its smaller
// dimension limit once a request has many images ("…exceed max allowed
// size for many-image requests: 2000 pixels", #24630), vLLM's "At most 5
// image(s) may be provided in one request" (vllm-project/vllm#17092) and
// "Request contains 52 images, exceeding the maximum of 50 allowed per
// request" (anomalyco/opencode#48647).
var mediaLimitRE = regexp.MustCompile(`(?i)too much media|too many images|many-image requests|image\(s\) may be provided in one request|\bimages?, exceeding the maximum`)

// outgrown makes the status of a round whose model call the provider
// refused for the request's size say so: a run re-sends the whole
// conversation each round, so a request that grows with every tool result
// (a screenshot each round) fails late, with a provider's bare "Request
// exceeds the maximum allowed number of bytes." The message gains the
// round, what the conversation sent carries, and what to do; the code,
// ErrorInfo and FailedCallMeta (status, retry reasons) are the call's as
// they were. Refusals for the size are a 413 (provider.TooLarge's), the
// context length, and the media limits of mediaLimitRE.
func (a *agentRun) outgrown(round int, sent []*llmrelayv1.Message, err error) error {
	st, ok := status.FromError(err)
	if !ok || st.Code() == codes.OK {
		return err
	}
	var info *errdetails.ErrorInfo
	for _, d := range st.Details() {
		if i, ok := d.(*errdetails.ErrorInfo); ok {
			info = i
		}
	}
	if info == nil {
		return err
	}
	what := ""
	switch {
	case info.GetMetadata()["upstreamStatus"] == "413":
		what = "its size"
	case info.GetReason() == llmrelayv1.ErrorReason_ERROR_REASON_CONTEXT_LENGTH_EXCEEDED.String():
		what = "its length"
	case mediaLimitRE.MatchString(st.Message()):
		what = "its images and documents"
	default:
		return err
	}
	media, inline := toolMedia(sent)
	hint := "continue from the failure event's conversation with less in it"
	switch {
	case media > 0 && a.keepMedia > 0:
		hint = fmt.Sprintf("keep_recent_tool_media %d (%s) was not enough: lower it", a.keepMedia, a.keepMediaKey)
	case media > 0:
		hint = "set setup.keep_recent_tool_media to send only the most recent"
	}
	p := st.Proto()
	p.Message = fmt.Sprintf("round %d: %s (refused for %s: the conversation sent has %d messages and %d tool-result images and files, %d bytes inline, and each round sends it whole again; %s)",
		round, st.Message(), what, len(sent), media, inline, hint)
	return status.FromProto(p).Err()
}

// toolMedia counts the images and files of msgs' tool results and their
// inline bytes.
func toolMedia(msgs []*llmrelayv1.Message) (n, inline int) {
	for _, m := range msgs {
		for _, p := range m.GetParts() {
			for _, rp := range p.GetToolResult().GetParts() {
				if rp.GetImage() != nil || rp.GetFile() != nil {
					n++
					inline += len(rp.GetImage().GetData()) + len(rp.GetFile().GetData())
				}
			}
		}
	}
	return n, inline
}

// failedCallMeta is the FailedCallMeta of a call's status, nil when the
// call failed before it reached a provider.
func failedCallMeta(err error) *llmrelayv1.ResponseMeta {
	for _, d := range status.Convert(err).Details() {
		if f, ok := d.(*llmrelayv1.FailedCallMeta); ok {
			return f.GetMeta()
		}
	}
	return nil
}

// account adds a round's meta to the run's.
func (a *agentRun) account(rec *llmrelayv1.AgentRound) {
	m, meta := a.meta, rec.GetMeta()
	m.Provider = meta.GetProvider()
	m.ModelCalls++
	m.ApiCalls += meta.GetAttempts()
	m.Rounds = append(m.Rounds, rec)
	m.ResponseId = meta.GetResponseId()
	m.ResponseStatus = meta.GetProviderFinishReason()
	m.Warnings = append(m.Warnings, meta.GetWarnings()...)
	if c := meta.GetCost(); c != nil {
		sum, err := cost.Sum(m.Cost, c)
		if err != nil {
			// Deployments priced in different currencies: the sum would be
			// wrong, so the run reports none and says why.
			m.Warnings = append(m.Warnings, "cost not summed: "+err.Error())
		}
		m.Cost = sum
	}
	if id := meta.GetTraceId(); id != "" {
		m.TraceId = id
	}
	if u := meta.GetUsage(); u != nil {
		m.Usage = addUsage(m.Usage, u)
	}
}

// setupField names a request field the way the client wrote it: under setup.
func setupField(err error) error {
	var re *requestError
	if errors.As(err, &re) && re.field != "" && !strings.HasPrefix(re.field, "setup.") {
		c := *re
		c.field = "setup." + re.field
		c.msg = "setup." + re.msg
		return &c
	}
	var oe *catalog.OptionError
	if errors.As(err, &oe) && !strings.HasPrefix(oe.RequestField(), "setup.") {
		c := *oe
		c.Field = "setup." + oe.RequestField()
		return &c
	}
	return err
}

// execute asks the client for its tools' results and runs the MCP tools,
// all at once, then waits for every result. The results come back in the
// order of the calls, keyed by call_id.
func (a *agentRun) execute(ctx context.Context, round int, calls []*llmrelayv1.ToolCall) ([]*llmrelayv1.Part, error) {
	got := make(map[string]*llmrelayv1.ToolResult, len(calls))
	// One span per execution: a client tool's from its request to its
	// result, an MCP tool's around the call (callMCP).
	spans := map[string]trace.Span{}
	endSpan := func(id, errType string) {
		if s, ok := spans[id]; ok {
			telemetry.EndToolExecution(s, errType)
			delete(spans, id)
		}
	}
	defer func() {
		for id := range spans {
			endSpan(id, "abandoned")
		}
	}()
	nClient, nMCP := 0, 0
	for _, c := range calls {
		switch {
		case a.clientTools[c.GetName()]:
			nClient++
		case a.mcpTools[c.GetName()] != nil:
			nMCP++
		}
	}
	mcpDone := make(chan mcpOutcome, nMCP)
	results := make(chan *llmrelayv1.ToolResult, nClient)
	a.mu.Lock()
	a.results = results
	for _, c := range calls {
		if a.clientTools[c.GetName()] {
			a.pending[c.GetCallId()] = c.GetName()
			// A provider may use an id again in a later round (ids made
			// from the name, arguments and position, or a plain "call_0"):
			// it is this round's call now, not an answered or withdrawn one.
			delete(a.answered, c.GetCallId())
			delete(a.expired, c.GetCallId())
		}
	}
	err := a.claimEarly()
	a.mu.Unlock()
	if err != nil {
		return nil, err
	}
	clientCalls := 0
	for _, c := range calls {
		switch s := a.mcpTools[c.GetName()]; {
		case a.clientTools[c.GetName()]:
			clientCalls++
			if a.g.tel.Tracing() {
				_, spans[c.GetCallId()] = a.g.tel.StartToolExecution(ctx, c.GetName(), c.GetCallId())
			}
			if err := a.send(&llmrelayv1.AgentResponse{Event: &llmrelayv1.AgentResponse_ToolCallRequest{ToolCallRequest: &llmrelayv1.AgentToolCallRequest{
				Round: int32(round), CallId: c.GetCallId(), Name: c.GetName(), Arguments: c.GetArguments(), ArgumentsValid: c.GetArgumentsValid()}}}); err != nil {
				return nil, err
			}
		case s != nil:
			a.wg.Add(1)
			go a.callMCP(ctx, s, c, mcpDone)
		case a.removed[c.GetName()] != "":
			// A tool an MCP server took away (the model saw it in an
			// earlier round): the model learns it is gone, not unknown.
			why := a.removed[c.GetName()]
			got[c.GetCallId()] = &llmrelayv1.ToolResult{CallId: c.GetCallId(), Name: c.GetName(), IsError: true,
				Content: "tool " + strconv.Quote(c.GetName()) + " is no longer available: " + why}
			a.meta.Warnings = append(a.meta.Warnings, fmt.Sprintf("round %d: the model called %q (call %s), which is no longer available (%s): it got an error result",
				round, c.GetName(), c.GetCallId(), why))
		default:
			// The model called a tool nobody offered: it learns so, and
			// so does the client (no request or execution event shows
			// that call otherwise).
			got[c.GetCallId()] = &llmrelayv1.ToolResult{CallId: c.GetCallId(), Name: c.GetName(), IsError: true,
				Content: "unknown tool " + strconv.Quote(c.GetName())}
			a.meta.Warnings = append(a.meta.Warnings, fmt.Sprintf("round %d: the model called %q (call %s), which is neither a client tool nor an MCP tool of the run: it got an error result",
				round, c.GetName(), c.GetCallId()))
		}
	}
	var timeout <-chan time.Time
	if clientCalls > 0 {
		t := time.NewTimer(a.toolTimeout)
		defer t.Stop()
		timeout = t.C
	}
	halfClosed := a.halfClosed
	want := len(calls)
	if ids := uniqueIDs(calls); ids < want {
		want = ids // a provider that repeats a call id gets one result for it
	}
	for len(got) < want {
		select {
		case r := <-results:
			got[r.GetCallId()] = r
			errType := ""
			if r.GetIsError() {
				errType = "tool_error"
			}
			if r.GetIsError() && strings.TrimSpace(provider.ToolResultText(r)) == "" && !provider.ToolResultMedia(r) {
				// An error with nothing to act on, which Anthropic refuses
				// in the next call ("content cannot be empty if is_error
				// is true"): the model is told, as for an MCP tool's.
				r.Content = mcp.EmptyError
				a.meta.Warnings = append(a.meta.Warnings, fmt.Sprintf("round %d: the error result for call %s has no content: the model got %q",
					round, r.GetCallId(), mcp.EmptyError))
			}
			endSpan(r.GetCallId(), errType)
		case o := <-mcpDone:
			r, err := a.mcpResult(round, o)
			if err != nil {
				return nil, err
			}
			got[r.GetCallId()] = r
		case <-timeout:
			missing := a.expire()
			if len(missing) == 0 {
				continue // answered while the timer fired
			}
			if a.setup.GetOnToolTimeout() != llmrelayv1.ToolTimeoutAction_TOOL_TIMEOUT_ACTION_ERROR_RESULT {
				return nil, &requestError{code: codes.DeadlineExceeded, reason: llmrelayv1.ErrorReason_ERROR_REASON_TOOL_TIMEOUT, field: "tool_result",
					msg: "tool_result: no result within " + a.toolTimeoutKey + " " + a.toolTimeout.String() + " for call ids " + strings.Join(missing, ", ")}
			}
			for _, id := range missing {
				endSpan(id, "timeout")
				got[id] = &llmrelayv1.ToolResult{CallId: id, IsError: true, Content: "the tool did not answer within " + a.toolTimeout.String()}
			}
			if err := a.send(&llmrelayv1.AgentResponse{Event: &llmrelayv1.AgentResponse_ToolCallCancellation{ToolCallCancellation: &llmrelayv1.AgentToolCallCancellation{
				Round: int32(round), CallIds: missing, Reason: "tool_timeout"}}}); err != nil {
				return nil, err
			}
		case <-halfClosed:
			halfClosed = nil
			if ids := a.pendingIDs(); len(ids) > 0 {
				return nil, invalidField("tool_result", "the client closed its side of the stream without results for call ids %s", strings.Join(ids, ", "))
			}
		case <-a.ctx.Done():
			return nil, context.Cause(a.ctx)
		}
	}
	parts := make([]*llmrelayv1.Part, 0, len(calls))
	for _, c := range calls {
		r := got[c.GetCallId()]
		if r.GetName() == "" {
			r.Name = c.GetName()
		}
		parts = append(parts, &llmrelayv1.Part{Kind: &llmrelayv1.Part_ToolResult{ToolResult: r}})
	}
	return parts, nil
}

// claimEarly judges the results sent ahead once a round's calls are known:
// they answer the calls just made pending; any other is an unknown call_id.
// Called with mu held.
func (a *agentRun) claimEarly() error {
	early := a.early
	a.early = nil
	ids := make([]string, 0, len(early))
	for id := range early {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if a.pending[id] == "" {
			return invalidField("tool_result.call_id", "%q is not a call the server asked for", id)
		}
		if err := checkResultName(early[id], a.pending[id]); err != nil {
			return err
		}
		delete(a.pending, id)
		a.answered[id] = true
		a.results <- early[id] // room for every call pending this round
	}
	return nil
}

// checkResultName refuses a result that names another tool than its call:
// providers that key results by name (Gemini) would hand it to the wrong
// function. An empty name is the call's.
func checkResultName(r *llmrelayv1.ToolResult, name string) error {
	if n := r.GetName(); n != "" && n != name {
		return invalidField("tool_result.name", "%q: call %q is a call of %q", n, r.GetCallId(), name)
	}
	return nil
}

func uniqueIDs(calls []*llmrelayv1.ToolCall) int {
	seen := make(map[string]bool, len(calls))
	for _, c := range calls {
		seen[c.GetCallId()] = true
	}
	return len(seen)
}

func (a *agentRun) pendingIDs() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make([]string, 0, len(a.pending))
	for id := range a.pending {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// expire gives up on the pending calls and returns their ids.
func (a *agentRun) expire() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make([]string, 0, len(a.pending))
	for id := range a.pending {
		ids = append(ids, id)
		a.expired[id] = true
		delete(a.pending, id)
	}
	slices.Sort(ids)
	return ids
}

// callMCP executes one MCP call; the run's tool timeout (tool_timeout,
// capped by agent.max_tool_timeout) bounds it as it bounds the client's
// tools.
func (a *agentRun) callMCP(ctx context.Context, s *mcp.Session, c *llmrelayv1.ToolCall, done chan<- mcpOutcome) {
	defer a.wg.Done()
	ctx, span := a.g.tel.StartToolExecution(ctx, c.GetName(), c.GetCallId())
	ctx, cancel := context.WithTimeout(ctx, a.toolTimeout)
	defer cancel()
	res, err := s.CallMedia(ctx, c.GetName(), c.GetArguments(), a.media)
	errType := ""
	switch {
	case err != nil && ctx.Err() != nil && a.ctx.Err() == nil:
		err = errors.New("mcp server " + s.Name() + ": call " + c.GetName() + ": no answer within " + a.toolTimeoutKey + " " + a.toolTimeout.String())
		errType = "timeout"
	case err != nil:
		errType = "mcp_error"
	case res.IsError:
		errType = "tool_error"
	}
	telemetry.EndToolExecution(span, errType)
	done <- mcpOutcome{call: c, session: s, res: res, err: err} // room for each of the round's MCP calls
}

// mcpResult reports an MCP execution to the client and returns the result
// for the model: a failed execution is an error result, not a failed run.
func (a *agentRun) mcpResult(round int, o mcpOutcome) (*llmrelayv1.ToolResult, error) {
	r := &llmrelayv1.ToolResult{CallId: o.call.GetCallId(), Name: o.call.GetName(), Content: o.res.Content, IsError: o.res.IsError, Parts: o.res.Parts}
	ev := &llmrelayv1.AgentMcpToolExecution{Round: int32(round), Call: o.call, Server: o.session.Name(), Result: r, Duration: durationpb.New(o.res.Duration)}
	if o.err != nil {
		msg := clean(a.st.redact, o.err.Error())
		r.IsError, r.Content, r.Parts, ev.Error = true, msg, nil, msg
	}
	for _, om := range o.res.Omitted {
		a.meta.Warnings = append(a.meta.Warnings, fmt.Sprintf("round %d: MCP server %s, tool %s (call %s): %s omitted from the result: the model cannot be given it in a tool result (its format or capabilities)",
			round, o.session.Name(), o.call.GetName(), o.call.GetCallId(), om))
	}
	for _, om := range o.res.OverBound {
		a.meta.Warnings = append(a.meta.Warnings, fmt.Sprintf("round %d: MCP server %s, tool %s (call %s): %s omitted from the result: with it the result would pass a quarter of limits.max_send_message_bytes",
			round, o.session.Name(), o.call.GetName(), o.call.GetCallId(), om))
	}
	if o.res.CutBytes > 0 {
		a.meta.Warnings = append(a.meta.Warnings, fmt.Sprintf("round %d: MCP server %s, tool %s (call %s): result of %d bytes cut to its first %d (a quarter of limits.max_send_message_bytes)",
			round, o.session.Name(), o.call.GetName(), o.call.GetCallId(), o.res.TextBytes, o.res.TextBytes-o.res.CutBytes))
	}
	return r, a.send(&llmrelayv1.AgentResponse{Event: &llmrelayv1.AgentResponse_McpToolExecution{McpToolExecution: ev}})
}

// mcpImageTypes are the image types an MCP tool's image may reach the
// model as: the four every format with images in tool results takes
// inline (Anthropic's Base64ImageSource media types; OpenAI's and Gemini's
// image inputs). Another type (an SVG, a TIFF) stays a note: the model
// call would be refused for it, failing the run.
var mcpImageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// mcpMedia says which media of an MCP tool's result the model can be
// given as ToolResult.parts: those whose capability the model has (vision
// for an image, documents for a document, audio for audio, as for a
// client's parts) and that its tools format sends in a tool result
// (provider.CheckToolResultPart). The rest stay notes in the text.
func mcpMedia(m *catalog.Model, format string) mcp.Media {
	return func(p *llmrelayv1.Part) bool {
		need := llmrelayv1.Protocol_PROTOCOL_VISION
		switch k := p.GetKind().(type) {
		case *llmrelayv1.Part_Image:
			if !mcpImageTypes[provider.ImageMediaType(k.Image)] {
				return false
			}
		case *llmrelayv1.Part_File:
			need = llmrelayv1.Protocol_PROTOCOL_DOCUMENTS
			if provider.IsAudio(k.File) {
				need = llmrelayv1.Protocol_PROTOCOL_AUDIO
			}
			if provider.MediaType(k.File) == "" {
				return false
			}
		default:
			return false
		}
		if _, ok := m.Capabilities[need]; !ok {
			return false
		}
		_, reason := provider.CheckToolResultPart(format, p)
		return reason == ""
	}
}

func (a *agentRun) finalMeta() *llmrelayv1.AgentMeta {
	a.meta.TotalDuration = durationpb.New(a.g.now().Sub(a.start))
	return a.meta
}

// end sends the run's end event. ended is set once it went out: an end
// the stream refused (larger than limits.max_send_message_bytes) leaves
// the failure event to send, with the conversation up to the last whole
// round, rather than nothing at all.
func (a *agentRun) end(reason llmrelayv1.FinishReason) error {
	err := a.send(a.withConversation(a.msgs, func(msgs []*llmrelayv1.Message, omitted int32) *llmrelayv1.AgentResponse {
		return &llmrelayv1.AgentResponse{Event: &llmrelayv1.AgentResponse_End{End: &llmrelayv1.AgentEnd{
			FinishReason: reason, Messages: msgs, Meta: a.finalMeta(), OmittedSetupMessages: omitted}}}
	}))
	a.ended = err == nil
	return err
}

// withConversation is the end, go-away or failure event that event makes
// with the conversation msgs. An event over limits.max_send_message_bytes
// could not be sent, and the client would lose the run's answer and what it
// cost: it is made again without the setup's messages, which the client
// sent and keeps (omitted_setup_messages counts them, meta.warnings says
// why). An event too large even so is left to the stream's send limit.
func (a *agentRun) withConversation(msgs []*llmrelayv1.Message, event func(msgs []*llmrelayv1.Message, omitted int32) *llmrelayv1.AgentResponse) *llmrelayv1.AgentResponse {
	ev := event(msgs, 0)
	max := a.g.limits.MaxSendMessageBytes
	size := sizeOf(ev)
	n := min(len(a.setup.GetMessages()), len(msgs))
	if size <= max || n == 0 {
		return ev
	}
	a.meta.Warnings = append(a.meta.Warnings, fmt.Sprintf("the conversation would make this event %d bytes, over limits.max_send_message_bytes (%d): "+
		"its messages leave out the setup's first %d (omitted_setup_messages)", size, max, n))
	return event(msgs[n:], int32(n))
}

// goAway tells the client the server is shutting down, with the conversation
// so far (complete: the last round's results are in), and ends the run.
func (a *agentRun) goAway() error {
	if err := a.send(a.withConversation(a.msgs, func(msgs []*llmrelayv1.Message, omitted int32) *llmrelayv1.AgentResponse {
		return &llmrelayv1.AgentResponse{Event: &llmrelayv1.AgentResponse_GoAway{GoAway: &llmrelayv1.AgentGoAway{
			Reason: "server shutting down", Messages: msgs, Meta: a.finalMeta(), OmittedSetupMessages: omitted}}}
	})); err != nil {
		return err
	}
	a.ended = true
	return &requestError{code: codes.Unavailable, reason: llmrelayv1.ErrorReason_ERROR_REASON_SHUTTING_DOWN,
		msg: "server shutting down: continue the run elsewhere with go_away's conversation"}
}

// fail sends the failure event for a run that ended with err: the
// conversation up to the last whole round, so the client can retry from
// there. Nothing is sent for a setup refused before setup_complete, once end
// or go_away went out, nor to a client that cancelled or is gone.
func (a *agentRun) fail(err error) {
	if !a.accepted || a.ended || a.ss.Context().Err() != nil || errors.Is(err, errClientCancel) || status.Code(err) == codes.Canceled {
		return
	}
	ev := a.withConversation(a.msgs[:a.complete], func(msgs []*llmrelayv1.Message, omitted int32) *llmrelayv1.AgentResponse {
		return &llmrelayv1.AgentResponse{Event: &llmrelayv1.AgentResponse_Failure{Failure: &llmrelayv1.AgentFailure{
			Round: int32(a.current), Messages: msgs, Meta: a.finalMeta(), OmittedSetupMessages: omitted}}}
	})
	if serr := a.send(ev); serr != nil {
		// The status that follows says why the run failed; a client that
		// cannot take the event will not take the status either.
		a.g.log.DebugContext(a.ctx, "agent failure event not sent", slog.String("error", serr.Error()))
	}
}

// agentSink relays a round's StreamTools events to the agent stream and
// folds them into the round's assistant turn.
type agentSink struct {
	ss  llmrelayv1.GatewayService_AgentServer
	acc fold.Accumulator
}

func (s *agentSink) Send(ev *llmrelayv1.StreamToolsResponse) error {
	if err := s.acc.AddTools(ev); err != nil {
		return err
	}
	return s.ss.Send(&llmrelayv1.AgentResponse{Event: &llmrelayv1.AgentResponse_Model{Model: ev}})
}

// refreshTools lists again, before a round's model call, the tools of the
// MCP servers that said they changed (notifications/tools/list_changed, a
// new session, or a server declaring tools.listChanged where its
// notifications cannot arrive), so the tools offered change between
// rounds only, never during one. A list that cannot be had (or is
// invalid) leaves the server's tools as they were; a new tool named like
// another server's or a client tool is not offered. Every change is a
// run warning: no event carries a new tool list.
func (a *agentRun) refreshTools(ctx context.Context, round int) {
	// The servers are listed at once, all within one mcpConnectTimeout:
	// one after another, servers that do not answer would hold the next
	// model call back by that much each.
	type listing struct {
		done  bool
		tools []*llmrelayv1.Tool
		err   error
	}
	listings := make([]listing, len(a.mcpLists))
	lctx, cancel := context.WithTimeout(ctx, mcpConnectTimeout)
	var wg sync.WaitGroup
	for i, l := range a.mcpLists {
		if !l.session.ToolsChanged() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			tools, err := l.session.Tools(lctx)
			listings[i] = listing{done: true, tools: tools, err: err}
		}()
	}
	wg.Wait()
	cancel()
	changed := false
	for i := range a.mcpLists {
		l := &a.mcpLists[i]
		if !listings[i].done {
			continue
		}
		tools, err := listings[i].tools, listings[i].err
		if err == nil && len(tools) > 0 {
			if verr := validateTools(tools); verr != nil {
				err = fmt.Errorf("MCP server %s: %w", l.srv.Name, verr)
			}
		}
		if err != nil {
			a.meta.Warnings = append(a.meta.Warnings, fmt.Sprintf("round %d: %s: the tools of MCP server %s could not be listed again (%s): they stay as offered before",
				round, l.field, l.srv.Name, clean(a.st.redact, err.Error())))
			continue
		}
		kept := tools[:0:0]
		var collide []string
		for _, t := range tools {
			if owner := a.mcpTools[t.GetName()]; a.clientTools[t.GetName()] || (owner != nil && owner != l.session) {
				collide = append(collide, t.GetName())
				continue
			}
			kept = append(kept, t)
		}
		if len(collide) > 0 {
			a.meta.Warnings = append(a.meta.Warnings, fmt.Sprintf("round %d: %s: MCP server %s now lists %s, named like another tool of the run: not offered",
				round, l.field, l.srv.Name, strings.Join(collide, ", ")))
		}
		// The tool the setup's tool_choice names stays: the model call
		// would be refused without it (options.tool_choice names no
		// offered tool).
		if forced := a.setup.GetOptions().GetToolChoice().GetFunctionName(); forced != "" &&
			!slices.ContainsFunc(kept, func(t *llmrelayv1.Tool) bool { return t.GetName() == forced }) {
			if i := slices.IndexFunc(l.tools, func(t *llmrelayv1.Tool) bool { return t.GetName() == forced }); i >= 0 {
				kept = append(kept, l.tools[i])
				a.meta.Warnings = append(a.meta.Warnings, fmt.Sprintf("round %d: %s: MCP server %s no longer lists %s, which options.tool_choice names: it stays offered (a call of it gets the server's answer)",
					round, l.field, l.srv.Name, forced))
			}
		}
		if len(kept) == 0 && len(l.tools) > 0 {
			others := len(a.setup.GetTools())
			for _, o := range a.mcpLists {
				if o.session != l.session {
					others += len(o.tools)
				}
			}
			if others == 0 {
				// A model call needs a tool: the run would fail as if the
				// setup had offered none.
				a.meta.Warnings = append(a.meta.Warnings, fmt.Sprintf("round %d: %s: MCP server %s lists no tools any more, which would leave the run none to offer: its earlier tools stay offered (a call of one gets the server's answer)",
					round, l.field, l.srv.Name))
				continue
			}
		}
		added, removed, modified := diffTools(l.tools, kept)
		if len(added)+len(removed)+len(modified) == 0 {
			continue
		}
		var what []string
		for _, d := range []struct {
			verb  string
			names []string
		}{{"added", added}, {"removed", removed}, {"changed", modified}} {
			if len(d.names) > 0 {
				what = append(what, d.verb+" "+strings.Join(d.names, ", "))
			}
		}
		a.meta.Warnings = append(a.meta.Warnings, fmt.Sprintf("round %d: %s: MCP server %s changed its tools (%s): round %d offers the new list",
			round, l.field, l.srv.Name, strings.Join(what, "; "), round))
		if a.removed == nil {
			a.removed = map[string]string{}
		}
		for _, n := range removed {
			a.removed[n] = fmt.Sprintf("MCP server %s removed it before round %d", l.srv.Name, round)
		}
		for _, n := range added {
			delete(a.removed, n)
		}
		l.tools = kept
		changed = true
	}
	if !changed {
		return
	}
	// The client's tools first, then each server's in the setup's order,
	// as at setup.
	a.tools = append([]*llmrelayv1.Tool(nil), a.setup.GetTools()...)
	a.mcpTools = map[string]*mcp.Session{}
	for _, l := range a.mcpLists {
		for _, t := range l.tools {
			a.mcpTools[t.GetName()] = l.session
			a.tools = append(a.tools, t)
		}
	}
}

// diffTools names the tools of after that before lacks, those of before
// that after lacks, and those in both whose description or parameters
// differ.
func diffTools(before, after []*llmrelayv1.Tool) (added, removed, modified []string) {
	old := make(map[string]*llmrelayv1.Tool, len(before))
	for _, t := range before {
		old[t.GetName()] = t
	}
	now := make(map[string]bool, len(after))
	for _, t := range after {
		now[t.GetName()] = true
		switch o := old[t.GetName()]; {
		case o == nil:
			added = append(added, t.GetName())
		case o.GetDescription() != t.GetDescription() || o.GetParameters() != t.GetParameters():
			modified = append(modified, t.GetName())
		}
	}
	for _, t := range before {
		if !now[t.GetName()] {
			removed = append(removed, t.GetName())
		}
	}
	return added, removed, modified
}
