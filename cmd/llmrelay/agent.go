package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// toolSpec is one tool of an agent tools file.
type toolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	// Result, when set, answers every call of the tool; otherwise -exec runs.
	Result *string `json:"result"`
}

// agentCmd runs an agent loop against a server: tools come from a JSON file
// and are answered by the file's fixed results or by a command.
func agentCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", envOr("LLMRELAY_ADDR", "127.0.0.1:50051"), "server address")
	model := fs.String("model", "builtin/echo", "model name (ListModels)")
	toolsPath := fs.String("tools", "", `JSON file: [{"name", "description", "parameters": {schema}, "result": "fixed answer"}]`)
	command := fs.String("exec", "", "command answering tool calls without a fixed result (sh -c; arguments on stdin, "+
		"LLMRELAY_TOOL_NAME and LLMRELAY_TOOL_CALL_ID set; stdout is the result, a failure an error result)")
	mcpNames := fs.String("mcp", "", "configured MCP servers to use, comma-separated")
	maxRounds := fs.Int("max-rounds", 0, "model calls at most (0: the server's default)")
	jsonOut := fs.Bool("json", false, "print the final AgentEnd as JSON instead of the text")
	if err := fs.Parse(args); err != nil {
		return err
	}
	prompt := strings.Join(fs.Args(), " ")
	if prompt == "" {
		return errors.New("agent: a prompt is required (llmrelay agent [flags] PROMPT)")
	}
	setup := &llmrelayv1.AgentSetup{Model: *model, MaxRounds: int32(*maxRounds),
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: prompt}}}}}}
	for _, n := range strings.Split(*mcpNames, ",") {
		if n = strings.TrimSpace(n); n != "" {
			setup.McpServers = append(setup.McpServers, &llmrelayv1.AgentMcpServer{Name: n})
		}
	}
	handlers := map[string]client.ToolFunc{}
	if *toolsPath != "" {
		raw, err := os.ReadFile(*toolsPath)
		if err != nil {
			return fmt.Errorf("agent: -tools: %w", err)
		}
		var specs []toolSpec
		if err := json.Unmarshal(raw, &specs); err != nil {
			return fmt.Errorf("agent: -tools %s: %w", *toolsPath, err)
		}
		for _, sp := range specs {
			params := string(sp.Parameters)
			var s string
			if json.Unmarshal(sp.Parameters, &s) == nil {
				params = s // already JSON text
			}
			setup.Tools = append(setup.Tools, &llmrelayv1.Tool{Name: sp.Name, Description: sp.Description, Parameters: params})
			switch {
			case sp.Result != nil:
				result := *sp.Result
				handlers[sp.Name] = func(context.Context, string) (string, error) { return result, nil }
			case *command != "":
				handlers[sp.Name] = commandTool(*command, sp.Name)
			default:
				return fmt.Errorf("agent: tool %s has no result and no -exec command answers it", sp.Name)
			}
		}
	}
	c, err := client.New(*addr)
	if err != nil {
		return err
	}
	defer c.Close()
	a := client.Agent{Client: c, Tools: handlers, OnEvent: func(ev *llmrelayv1.AgentResponse) {
		switch {
		case ev.GetModel().GetTextDelta() != nil && !*jsonOut:
			fmt.Fprint(stdout, ev.GetModel().GetTextDelta().GetText())
		case ev.GetToolCallRequest() != nil:
			r := ev.GetToolCallRequest()
			fmt.Fprintf(stderr, "[round %d] %s %s (%s)\n", r.GetRound(), r.GetName(), r.GetArguments(), r.GetCallId())
		case ev.GetMcpToolExecution() != nil:
			x := ev.GetMcpToolExecution()
			fmt.Fprintf(stderr, "[round %d] mcp %s/%s %s -> error=%v (%v)\n", x.GetRound(), x.GetServer(), x.GetCall().GetName(),
				x.GetCall().GetArguments(), x.GetResult().GetIsError(), x.GetDuration().AsDuration())
		}
	}}
	res, err := a.Run(ctx, setup)
	if err != nil {
		return err
	}
	if *jsonOut {
		b, err := protojson.MarshalOptions{Multiline: true}.Marshal(&llmrelayv1.AgentEnd{FinishReason: res.FinishReason, Messages: res.Messages, Meta: res.Meta})
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, string(b))
		return nil
	}
	m := res.Meta
	fmt.Fprintf(stdout, "\n")
	fmt.Fprintf(stderr, "%v: %d model calls, %d tool rounds, %d tokens\n", res.FinishReason, m.GetModelCalls(), m.GetToolRounds(), m.GetUsage().GetTotalTokens())
	return nil
}

// commandTool runs command for a call: the arguments on stdin, the tool's
// name and call id in the environment; stdout is the result. A failing
// command is an error result with its stderr.
func commandTool(command, name string) client.ToolFunc {
	return func(ctx context.Context, args string) (string, error) {
		cmd := exec.CommandContext(ctx, "sh", "-c", command)
		cmd.Stdin = strings.NewReader(args)
		cmd.Env = append(os.Environ(), "LLMRELAY_TOOL_NAME="+name, "LLMRELAY_TOOL_CALL_ID="+client.ToolCallID(ctx))
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			msg := strings.TrimSpace(errOut.String())
			if msg == "" {
				msg = err.Error()
			}
			return "", errors.New(msg)
		}
		return strings.TrimRight(out.String(), "\n"), nil
	}
}
