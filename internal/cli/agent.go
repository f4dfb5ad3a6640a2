package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// agentToolSpec is one tool of an agent tools file.
type agentToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	// Result, when set, answers every call of the tool; otherwise -exec runs.
	Result *string `json:"result"`
}

const agentSummary = `Run an agent loop: the model calls tools until it answers. Tools come from
--tools FILE, a JSON array of {"name", "description", "parameters": {schema},
"result": "fixed answer"}; a tool without a result is answered by --exec.
The answer streams to stdout, each tool round to stderr.`

// agent runs an agent loop against a server: tools come from a JSON file
// and are answered by the file's fixed results or by a command.
func agent(ctx context.Context, e *env, args []string) error {
	var conn connFlags
	fs := newFlags("agent")
	conn.register(fs, 10*time.Minute)
	model := fs.String("model", "builtin/echo", "model name (ListModels)")
	fs.StringVar(model, "m", "builtin/echo", "shorthand for --model")
	toolsPath := fs.String("tools", "", `JSON `+"`FILE`"+`: [{"name", "description", "parameters": {schema}, "result": "fixed answer"}]`)
	command := fs.String("exec", "", "command answering tool calls without a fixed result (sh -c; arguments on stdin, "+
		"LLMRELAY_TOOL_NAME and LLMRELAY_TOOL_CALL_ID set; stdout is the result, a failure an error result)")
	mcpNames := fs.String("mcp", "", "configured MCP servers to use, comma-separated")
	maxRounds := fs.Int("max-rounds", 0, "model calls at most (0: the server's default)")
	jsonOut := fs.Bool("json", false, "print the final AgentEnd as JSON instead of the text")
	toolTimeout := fs.Duration("tool-timeout", 0, "how long the server waits for each round's tool results (0: the server's agent.max_tool_timeout, 10m by default, which also caps it); what a miss does is --on-tool-timeout's")
	onToolTimeout := fs.String("on-tool-timeout", "fail", "what a missed --tool-timeout does: fail (the run) or error-result (the model gets an error result, the command is killed)")
	keepMedia := fs.Int("keep-recent-tool-media", 0, "send each model call only this many of the most recent tool-result images and files, older ones as notes (0: the server's agent.keep_recent_tool_media, all by default; -1: all)")
	pos, err := parse(e, fs, "PROMPT...", agentSummary, args)
	if err != nil {
		return err
	}
	prompt := strings.Join(pos, " ")
	if prompt == "" {
		return usageErrorf("a prompt is required (llmrelay agent [flags] PROMPT)")
	}
	if *maxRounds < 0 || *maxRounds > math.MaxInt32 {
		return usageErrorf("--max-rounds %d: want 0 or a positive number", *maxRounds)
	}
	if *keepMedia < -1 || *keepMedia > math.MaxInt32 {
		return usageErrorf("--keep-recent-tool-media %d: want a positive number, 0 (the server's default) or -1 (all)", *keepMedia)
	}
	if *toolTimeout < 0 {
		return usageErrorf("--tool-timeout %v: want 0 or a positive duration", *toolTimeout)
	}
	setup := &llmrelayv1.AgentSetup{Model: *model, MaxRounds: int32(*maxRounds), KeepRecentToolMedia: int32(*keepMedia),
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: prompt}}}}}}
	if *toolTimeout > 0 {
		setup.ToolTimeout = durationpb.New(*toolTimeout)
	}
	switch *onToolTimeout {
	case "fail":
	case "error-result":
		setup.OnToolTimeout = llmrelayv1.ToolTimeoutAction_TOOL_TIMEOUT_ACTION_ERROR_RESULT
	default:
		return usageErrorf("--on-tool-timeout %q: want fail or error-result", *onToolTimeout)
	}
	for _, n := range strings.Split(*mcpNames, ",") {
		if n = strings.TrimSpace(n); n != "" {
			setup.McpServers = append(setup.McpServers, &llmrelayv1.AgentMcpServer{Name: n})
		}
	}
	if *toolsPath == "" && len(setup.McpServers) == 0 {
		return usageErrorf("--tools FILE or --mcp NAMES is required: an agent needs tools (llmrelay chat answers without)")
	}
	// Handlers run concurrently with the event callback.
	stderr := &lockedWriter{w: e.stderr}
	handlers := map[string]client.ToolFunc{}
	if *toolsPath != "" {
		raw, err := os.ReadFile(*toolsPath)
		if err != nil {
			return usageErrorf("--tools: %v", err)
		}
		var specs []agentToolSpec
		if err := decodeJSONFile(raw, &specs); err != nil {
			return usageErrorf("--tools %s: want a JSON array of {name, description, parameters, result}: %v", *toolsPath, err)
		}
		if len(specs) == 0 {
			return usageErrorf("--tools %s: no tools", *toolsPath)
		}
		for i, sp := range specs {
			if sp.Name == "" {
				return usageErrorf("--tools %s: tool %d has no name", *toolsPath, i)
			}
			var params string
			if len(sp.Parameters) > 0 {
				if params, err = toolParameters(sp.Parameters); err != nil {
					return usageErrorf("--tools %s: tool %s: parameters: %v", *toolsPath, sp.Name, err)
				}
			}
			setup.Tools = append(setup.Tools, &llmrelayv1.Tool{Name: sp.Name, Description: sp.Description, Parameters: params})
			switch {
			case sp.Result != nil:
				result := *sp.Result
				handlers[sp.Name] = func(context.Context, string) (string, error) { return result, nil }
			case *command != "":
				handlers[sp.Name] = commandTool(*command, sp.Name, stderr)
			default:
				return usageErrorf("tool %s has no result and no --exec command answers it", sp.Name)
			}
		}
	}
	ctx, c, closeConn, err := conn.dial(ctx)
	if err != nil {
		return err
	}
	defer closeConn()
	stdout := e.stdout
	a := client.Agent{Client: c, Tools: handlers, OnEvent: func(ev *llmrelayv1.AgentResponse) {
		switch {
		case ev.GetModel().GetTextDelta() != nil && !*jsonOut:
			fmt.Fprint(stdout, ev.GetModel().GetTextDelta().GetText())
		case ev.GetModel().GetProviderItem() != nil:
			fmt.Fprintf(stderr, "[provider item %s]\n", ev.GetModel().GetProviderItem().GetType())
		case ev.GetToolCallRequest() != nil:
			r := ev.GetToolCallRequest()
			fmt.Fprintf(stderr, "[round %d] %s %s (%s)\n", r.GetRound(), r.GetName(), r.GetArguments(), r.GetCallId())
		case ev.GetToolCallCancellation() != nil:
			// The command answering these calls is killed with its context.
			x := ev.GetToolCallCancellation()
			fmt.Fprintf(stderr, "[round %d] cancelled %s (%s): the model gets an error result\n", x.GetRound(), strings.Join(x.GetCallIds(), ", "), x.GetReason())
		case ev.GetMcpToolExecution() != nil:
			x := ev.GetMcpToolExecution()
			why := ""
			if x.GetError() != "" {
				why = ": " + x.GetError() // the transport's or protocol's: the result says no more
			}
			fmt.Fprintf(stderr, "[round %d] mcp %s/%s %s -> error=%v (%v)%s\n", x.GetRound(), x.GetServer(), x.GetCall().GetName(),
				x.GetCall().GetArguments(), x.GetResult().GetIsError(), x.GetDuration().AsDuration(), why)
		}
	}}
	res, err := a.Run(ctx, setup)
	if err != nil {
		if f := res.GetFailure(); f != nil {
			// The conversation so far, to retry from: on stdout with
			// -json, like a finished run's end.
			fmt.Fprintf(stderr, "[round %d] the run failed after %d model calls; %d messages of conversation kept\n",
				f.GetRound(), f.GetMeta().GetModelCalls(), len(f.GetMessages()))
			if *jsonOut {
				b, merr := protojson.MarshalOptions{Multiline: true}.Marshal(f)
				if merr != nil {
					return fmt.Errorf("encode the failure: %w", merr)
				}
				if _, werr := fmt.Fprintln(stdout, string(b)); werr != nil {
					return fmt.Errorf("write the failure: %w", werr)
				}
			}
		}
		return err
	}
	if *jsonOut {
		b, err := protojson.MarshalOptions{Multiline: true}.Marshal(&llmrelayv1.AgentEnd{FinishReason: res.FinishReason, Messages: res.Messages, Meta: res.Meta})
		if err != nil {
			return fmt.Errorf("encode the result: %w", err)
		}
		if _, err := fmt.Fprintln(stdout, string(b)); err != nil {
			return fmt.Errorf("write the result: %w", err)
		}
		return nil
	}
	m := res.Meta
	if _, err := fmt.Fprintf(stdout, "\n"); err != nil {
		return fmt.Errorf("write the answer: %w", err)
	}
	for _, w := range m.GetWarnings() {
		fmt.Fprintf(stderr, "llmrelay agent: warning: %s\n", w)
	}
	if res.FinishReason == llmrelayv1.FinishReason_FINISH_REASON_MAX_ROUNDS {
		// The last model call still asked for tools, and no answer came:
		// say which calls were left, or the run reads as an empty answer.
		var left []string
		if n := len(res.Messages); n > 0 {
			for _, p := range res.Messages[n-1].GetParts() {
				if tc := p.GetToolCall(); tc != nil {
					left = append(left, fmt.Sprintf("%s %s (%s)", tc.GetName(), tc.GetArguments(), tc.GetCallId()))
				}
			}
		}
		fmt.Fprintf(stderr, "llmrelay agent: the run stopped after %d model calls with the model still calling tools, unanswered: %s (--max-rounds raises the bound)\n",
			m.GetModelCalls(), strings.Join(left, ", "))
	}
	fmt.Fprintf(stderr, "%v: %d model calls, %d tool rounds, %d tokens\n", res.FinishReason, m.GetModelCalls(), m.GetToolRounds(), m.GetUsage().GetTotalTokens())
	return nil
}

// commandTool runs command for a call: the arguments on stdin, the tool's
// name and call id in the environment; stdout is the result. A failing
// command is an error result with its stderr, and says so on log (the run
// went on to exit 0 with nothing but the model's answer to tell of it).
func commandTool(command, name string, log io.Writer) client.ToolFunc {
	return func(ctx context.Context, args string) (string, error) {
		cmd := exec.CommandContext(ctx, "sh", "-c", command)
		// A run that ends (failed, cancelled) cancels ctx: the command and
		// what it started are killed, and Run does not wait past WaitDelay
		// for output a leftover process holds open.
		killTree(cmd)
		cmd.WaitDelay = time.Second
		cmd.Stdin = strings.NewReader(args)
		cmd.Env = append(os.Environ(), "LLMRELAY_TOOL_NAME="+name, "LLMRELAY_TOOL_CALL_ID="+client.ToolCallID(ctx))
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			msg := strings.TrimSpace(errOut.String())
			if msg == "" {
				msg = err.Error()
			}
			if ctx.Err() == nil { // not a withdrawn call or an ended run: those are said already
				fmt.Fprintf(log, "[tool %s (%s)] --exec failed (%v): the model gets an error result: %s\n", name, client.ToolCallID(ctx), err, msg)
			}
			return "", errors.New(msg)
		}
		return strings.TrimRight(out.String(), "\n"), nil
	}
}

// lockedWriter serializes the writes of concurrent tool handlers and the
// agent's event callback.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
