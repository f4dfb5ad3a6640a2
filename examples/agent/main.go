// Command agent runs an agent loop against an llmrelay server with two Go
// tools, printing the model's text and each tool call as they come.
//
//	go run ./cmd/llmrelay &            # the embedded default: builtin/echo
//	go run ./examples/agent -model builtin/echo "Paris"
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

func main() {
	defaultAddr := os.Getenv("LLMRELAY_ADDR") // as the CLI and examples/go: host:port or unix:///path/to.sock
	if defaultAddr == "" {
		defaultAddr = "127.0.0.1:50051"
	}
	addr := flag.String("addr", defaultAddr, "llmrelay server: host:port or unix:///path/to.sock ($LLMRELAY_ADDR)")
	model := flag.String("model", "builtin/echo", "model name (ListModels)")
	flag.Parse()
	if err := run(*addr, *model, strings.Join(flag.Args(), " ")); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
}

func run(addr, model, prompt string) error {
	if prompt == "" {
		prompt = "What is the weather and the local time in Paris?"
	}
	c, err := client.New(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	params := `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`
	agent := client.Agent{
		Client: c,
		Tools: map[string]client.ToolFunc{
			"get_weather": func(_ context.Context, args string) (string, error) { return `{"sky":"sunny","temp_c":21}`, nil },
			"get_time":    func(_ context.Context, args string) (string, error) { return `{"time":"14:05"}`, nil },
		},
		OnEvent: func(ev *llmrelayv1.AgentResponse) {
			switch {
			case ev.GetModel().GetTextDelta() != nil:
				fmt.Print(ev.GetModel().GetTextDelta().GetText())
			case ev.GetToolCallRequest() != nil:
				r := ev.GetToolCallRequest()
				fmt.Printf("[round %d] %s(%s) call_id=%s\n", r.GetRound(), r.GetName(), r.GetArguments(), r.GetCallId())
			case ev.GetMcpToolExecution() != nil:
				x := ev.GetMcpToolExecution()
				fmt.Printf("[round %d] mcp %s: %s -> %s\n", x.GetRound(), x.GetServer(), x.GetCall().GetName(), x.GetResult().GetContent())
			}
		},
	}
	res, err := agent.Run(context.Background(), &llmrelayv1.AgentSetup{
		Model:    model,
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: prompt}}}}},
		Tools: []*llmrelayv1.Tool{
			{Name: "get_weather", Description: "Current weather of a city", Parameters: params},
			{Name: "get_time", Description: "Local time of a city", Parameters: params},
		},
	})
	if err != nil {
		return err
	}
	m := res.Meta
	fmt.Printf("\n%v after %d model calls, %d tool rounds, %d tokens\n", res.FinishReason, m.GetModelCalls(), m.GetToolRounds(), m.GetUsage().GetTotalTokens())
	return nil
}
