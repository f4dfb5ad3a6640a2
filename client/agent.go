package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"google.golang.org/grpc"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/llmrelay/v1"
)

// ToolFunc executes a client tool: args is the model's arguments JSON text;
// the returned text goes back to the model. A returned error goes back as an
// error result (is_error) with the error's text; it does not stop the run.
type ToolFunc func(ctx context.Context, args string) (string, error)

// ResultFunc executes a client tool whose result is more than text: it
// returns the result's content, its parts (ToolResult.parts: text, images
// and files after the content, e.g. a screenshot) and is_error; the
// call_id and name are filled in. A returned error goes back as an error
// result with the error's text, as with ToolFunc.
type ResultFunc func(ctx context.Context, args string) (*llmrelayv1.ToolResult, error)

type callIDKey struct{}

type callKey struct{}

// ErrToolCallCancelled is the cause (context.Cause) of a ToolFunc's context
// when the server withdrew its call (tool_call_cancellation): the model got
// an error result in its place and the handler's result is not sent.
var ErrToolCallCancelled = errors.New("llmrelay agent: the server cancelled the tool call")

// ToolCallID is the call_id of the call a ToolFunc is answering (from its
// context), for handlers that log or correlate; "" elsewhere.
func ToolCallID(ctx context.Context) string {
	id, _ := ctx.Value(callIDKey{}).(string)
	return id
}

// ToolCall is the server's request a ToolFunc is answering (from its
// context): round, call id, name, arguments and ArgumentsValid; nil
// elsewhere. A server older than arguments_valid leaves it false for
// every call: ArgumentsValid(ctx) accounts for that.
func ToolCall(ctx context.Context) *llmrelayv1.AgentToolCallRequest {
	r, _ := ctx.Value(callKey{}).(*llmrelayv1.AgentToolCallRequest)
	return r
}

// ArgumentsValid reports whether the arguments a ToolFunc was handed are
// a JSON object, as the server says (arguments_valid: false when the
// model wrote them broken in an answer that otherwise ended normally):
// a handler that parses them can tell the model's mistake from its own.
// Arguments that parse as an object locally are valid whatever the server
// said (a server older than the field never sets it). True outside a
// call.
func ArgumentsValid(ctx context.Context) bool {
	r := ToolCall(ctx)
	return r == nil || r.GetArgumentsValid() || argumentsProblem(r.GetArguments()) == ""
}

// argumentsProblem says what is wrong with a call's arguments, "" when
// they are a JSON object.
func argumentsProblem(args string) string {
	trimmed := strings.TrimSpace(args)
	switch {
	case trimmed == "":
		return "the arguments are empty"
	case !json.Valid([]byte(trimmed)):
		return "the arguments are not valid JSON"
	case trimmed[0] != '{':
		return "the arguments must be a JSON object of named parameters, not " + jsonKind(trimmed[0])
	}
	return ""
}

// jsonKind names the kind of a JSON value by its first byte (not an object).
func jsonKind(first byte) string {
	switch first {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// Agent runs Agent calls whose client tools are Go functions.
type Agent struct {
	// Client is the connection to use.
	Client *Client
	// Tools are the handlers of the setup's client tools, by name. Each
	// call runs in its own goroutine; parallel calls run concurrently. A
	// handler's context ends with the run, and with its call when the
	// server withdraws it (cause ErrToolCallCancelled).
	Tools map[string]ToolFunc
	// RefuseInvalidArguments answers a call whose arguments are not a JSON
	// object (the server's arguments_valid false, confirmed locally) with
	// an error result saying what is wrong, for the model to write the
	// call again, instead of calling its handler. Empty or null arguments
	// (a model's way to call a tool without parameters) are not refused.
	// Off by default: handlers get every call, and ArgumentsValid(ctx)
	// tells them.
	RefuseInvalidArguments bool
	// Results are handlers whose results carry parts (images, files), by
	// name, run as Tools are; a tool has a handler in Tools or in Results
	// (Tools first when in both).
	Results map[string]ResultFunc
	// OnEvent, when set, sees every server event as it comes (model deltas,
	// tool requests, MCP executions, round ends). It runs on the receiving
	// goroutine: a slow OnEvent slows the stream.
	OnEvent func(*llmrelayv1.AgentResponse)
}

// AgentResult is a finished (or interrupted) run.
type AgentResult struct {
	// FinishReason is the last model call's, or FINISH_REASON_MAX_ROUNDS.
	FinishReason llmrelayv1.FinishReason
	// Messages is the whole conversation, to continue it statelessly (the
	// setup's messages put back where the server left them out of a large
	// end event: omitted_setup_messages).
	Messages []*llmrelayv1.Message
	Meta     *llmrelayv1.AgentMeta
	// GoAway is set when the server shut down mid-run: Messages is then the
	// conversation so far, to continue with another server, and Run's error
	// is the stream's UNAVAILABLE status.
	GoAway *llmrelayv1.AgentGoAway
	// Failure is set when the run failed: Messages is then the conversation
	// up to the last whole round (retry from there with a new setup), Meta
	// the rounds done, and Run's error the failure's status.
	Failure *llmrelayv1.AgentFailure
}

// Run opens an Agent call with setup, answers the server's tool requests
// with the registered handlers, and returns the end. Every tool in
// setup.tools needs a handler. Cancelling ctx cancels the run (and the
// model call in flight); Run returns once its handlers have returned.
func (a *Agent) Run(ctx context.Context, setup *llmrelayv1.AgentSetup, opts ...grpc.CallOption) (*AgentResult, error) {
	for _, t := range setup.GetTools() {
		if a.Tools[t.GetName()] == nil && a.Results[t.GetName()] == nil {
			return nil, fmt.Errorf("llmrelay agent: no handler for tool %q", t.GetName())
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := a.Client.Gateway.Agent(ctx, opts...)
	if err != nil {
		return nil, err
	}
	var (
		sendMu sync.Mutex
		wg     sync.WaitGroup
		// Each running handler's cancel, by call id: a
		// tool_call_cancellation stops the handlers it names.
		callsMu sync.Mutex
		calls   = map[string]*context.CancelCauseFunc{}
	)
	// Cancel, then wait: a handler still running when the run ends sees a
	// cancelled context and returns (deferred separately, wg.Wait would run
	// first and wait forever for a handler blocked on ctx).
	defer func() {
		cancel()
		wg.Wait()
	}()
	send := func(m *llmrelayv1.AgentRequest) error {
		sendMu.Lock()
		defer sendMu.Unlock()
		return s.Send(m)
	}
	if err := send(&llmrelayv1.AgentRequest{Message: &llmrelayv1.AgentRequest_Setup{Setup: setup}}); err != nil {
		return nil, err
	}
	res := &AgentResult{}
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			if res.Meta == nil {
				return nil, errors.New("llmrelay agent: the stream ended without an end event")
			}
			return res, nil
		}
		if err != nil {
			if res.GoAway != nil || res.Failure != nil {
				return res, err
			}
			return nil, err
		}
		if a.OnEvent != nil {
			a.OnEvent(ev)
		}
		switch e := ev.GetEvent().(type) {
		case *llmrelayv1.AgentResponse_ToolCallRequest:
			r := e.ToolCallRequest
			callCtx, callCancel := context.WithCancelCause(context.WithValue(context.WithValue(ctx, callIDKey{}, r.GetCallId()), callKey{}, r))
			entry := &callCancel
			callsMu.Lock()
			calls[r.GetCallId()] = entry // a provider may use an id again in a later round: the newest call has it
			callsMu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() {
					callsMu.Lock()
					if calls[r.GetCallId()] == entry {
						delete(calls, r.GetCallId())
					}
					callsMu.Unlock()
					callCancel(nil)
				}()
				out := &llmrelayv1.ToolResult{CallId: r.GetCallId(), Name: r.GetName()}
				problem := ""
				if t := strings.TrimSpace(r.GetArguments()); a.RefuseInvalidArguments && !ArgumentsValid(callCtx) && t != "" && t != "null" {
					problem = argumentsProblem(r.GetArguments())
				}
				f, g := a.Tools[r.GetName()], a.Results[r.GetName()]
				switch {
				case f == nil && g == nil:
					out.Content, out.IsError = "no handler for tool "+r.GetName(), true
				case problem != "":
					out.Content, out.IsError = problem+": the call was not run; call "+r.GetName()+" again with valid arguments", true
				case f != nil:
					if content, err := f(callCtx, r.GetArguments()); err != nil {
						out.Content, out.IsError = err.Error(), true
					} else {
						out.Content = content
					}
				default:
					if got, err := g(callCtx, r.GetArguments()); err != nil {
						out.Content, out.IsError = err.Error(), true
					} else if got != nil {
						out.Content, out.Parts, out.IsError = got.GetContent(), got.GetParts(), got.GetIsError()
					}
				}
				if callCtx.Err() != nil {
					return // the run is over or the call withdrawn; nobody waits for this result
				}
				// A failed send ends the stream; Recv reports why.
				_ = send(&llmrelayv1.AgentRequest{Message: &llmrelayv1.AgentRequest_ToolResult{ToolResult: out}})
			}()
		case *llmrelayv1.AgentResponse_ToolCallCancellation:
			// The server gave up on these calls (tool_timeout with
			// TOOL_TIMEOUT_ACTION_ERROR_RESULT): their handlers stop.
			cause := fmt.Errorf("%w: %s", ErrToolCallCancelled, e.ToolCallCancellation.GetReason())
			callsMu.Lock()
			for _, id := range e.ToolCallCancellation.GetCallIds() {
				if c := calls[id]; c != nil {
					(*c)(cause)
				}
			}
			callsMu.Unlock()
		case *llmrelayv1.AgentResponse_GoAway:
			res.GoAway, res.Meta = e.GoAway, e.GoAway.GetMeta()
			if res.Messages, err = conversation(setup, e.GoAway); err != nil {
				return res, err
			}
		case *llmrelayv1.AgentResponse_Failure:
			res.Failure, res.Meta = e.Failure, e.Failure.GetMeta()
			if res.Messages, err = conversation(setup, e.Failure); err != nil {
				return res, err
			}
		case *llmrelayv1.AgentResponse_End:
			res.FinishReason, res.Meta = e.End.GetFinishReason(), e.End.GetMeta()
			if res.Messages, err = conversation(setup, e.End); err != nil {
				return res, err
			}
		}
	}
}

// GetFailure is the run's failure event, nil on success, for a nil result
// too (Run returns nil with errors that ended the stream before any event).
func (r *AgentResult) GetFailure() *llmrelayv1.AgentFailure {
	if r == nil {
		return nil
	}
	return r.Failure
}

// conversation is the whole conversation of an end, go-away or failure
// event: the server leaves the setup's messages out of an event that would
// otherwise exceed its send limit, and counts them in
// omitted_setup_messages.
func conversation(setup *llmrelayv1.AgentSetup, ev interface {
	GetMessages() []*llmrelayv1.Message
	GetOmittedSetupMessages() int32
}) ([]*llmrelayv1.Message, error) {
	n := int(ev.GetOmittedSetupMessages())
	if n == 0 {
		return ev.GetMessages(), nil
	}
	if n < 0 || n > len(setup.GetMessages()) {
		return nil, fmt.Errorf("llmrelay agent: the server left out %d setup messages, and the setup has %d", n, len(setup.GetMessages()))
	}
	return append(slices.Clone(setup.GetMessages()[:n]), ev.GetMessages()...), nil
}
