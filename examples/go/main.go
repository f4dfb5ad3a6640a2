// Command go is the Go client example: a Chat, a StreamTools printing its
// events as they arrive, and the details of an error. It is also the
// README's snippet (a test keeps the two identical).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

func main() {
	addr := os.Getenv("LLMRELAY_ADDR") // host:port or unix:///path/to.sock
	if addr == "" {
		addr = "127.0.0.1:50051"
	}
	c, err := client.New(addr) // no client-side retry: the gateway already retried the provider
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	user := func(text string) []*llmrelayv1.Message {
		return []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER,
			Parts: []*llmrelayv1.Part{{Kind: &llmrelayv1.Part_Text{Text: text}}}}}
	}

	resp, err := c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "builtin/echo", Messages: user("hello")})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("chat:", resp.GetMessage().GetParts()[0].GetText(), "| tokens:", resp.GetMeta().GetUsage().GetTotalTokens())

	s, err := c.StreamTools(ctx, &llmrelayv1.StreamToolsRequest{Model: "builtin/echo", Messages: user("Paris"),
		Tools: []*llmrelayv1.Tool{{Name: "get_weather", Description: "the weather in a city"}}})
	if err != nil {
		log.Fatal(err)
	}
	for {
		ev, err := s.Recv() // each event as it arrives, also folded into s.Acc
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		if done := ev.GetToolCallDone(); done != nil {
			fmt.Println("tool call:", done.GetToolCall().GetName(), done.GetToolCall().GetArguments())
		}
	}
	fmt.Println("finish:", s.Acc.Meta().GetFinishReason())

	_, err = c.Chat(ctx, &llmrelayv1.ChatRequest{Model: "no-such-model", Messages: user("hi")})
	st := status.Convert(err)
	fmt.Println("error:", st.Code(), st.Message())
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			fmt.Println("  reason:", d.GetReason(), d.GetMetadata())
		case *errdetails.BadRequest:
			for _, v := range d.GetFieldViolations() {
				fmt.Println("  field:", v.GetField(), "-", v.GetDescription())
			}
		}
	}
}
