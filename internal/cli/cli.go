// Package cli is the llmrelay command line: the server (serve), the client
// commands (chat, tools, embed, models, health) and the version and
// configuration commands. Run returns the process exit code.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Exit codes of every command.
const (
	// ExitOK: the command did what it was asked.
	ExitOK = 0
	// ExitFailure: any other failure (an invalid configuration file, a
	// server that reports NOT_SERVING, an internal error).
	ExitFailure = 1
	// ExitUsage: unknown command, flag or argument, or a missing one.
	ExitUsage = 2
	// ExitUnavailable: no llmrelay server answered (nothing listens, the
	// connection failed, the deadline passed before an answer), or the
	// gateway's own limits refused the call for now.
	ExitUnavailable = 3
	// ExitInvalidRequest: the server refused the request (invalid input or
	// option, unknown model, a capability the model lacks, the caller's
	// token or permissions).
	ExitInvalidRequest = 4
	// ExitProvider: the provider behind the server failed or refused the
	// call (its key, permissions, rate limit, outage, timeout, content filter).
	ExitProvider = 5
)

const exitCodesHelp = `exit codes:
  0  ok
  1  failure (invalid configuration, server not serving, other errors)
  2  usage (unknown command, flag or argument)
  3  unavailable (no server answered, the deadline passed, the gateway's limits)
  4  invalid request (bad input or option, unknown model, missing capability, caller token)
  5  provider error (the provider failed or refused: key, permission, rate limit, outage, timeout, content filter)`

// env is where a command reads and writes.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

type command struct {
	name    string
	args    string // the positional arguments, for the usage line
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

func commands() []command {
	return []command{
		{"serve", "", "run the server (the default without a command)", serve},
		{"chat", "PROMPT...", "send a prompt to a model and stream the answer", chat},
		{"tools", "PROMPT...", "offer tools to a model and stream its answer and tool calls", tools},
		{"agent", "PROMPT...", "run an agent loop, tools answered by a JSON file or a command", agent},
		{"embed", "TEXT...", "embed texts, one vector per line", embed},
		{"models", "", "list the models the server serves", models},
		{"health", "", "exit 0 if the server reports SERVING", health},
		{"version", "", "print the version", version},
		{"config", "check FILE... | default", "validate configuration files, or print the embedded default", configCmd},
	}
}

func topUsage() string {
	var b strings.Builder
	b.WriteString("usage: llmrelay <command> [flags] [arguments]\n\ncommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-8s %s\n", c.name, c.summary)
	}
	b.WriteString(`
"llmrelay <command> --help" lists a command's flags (one or two dashes).
The client commands talk to --addr (host:port or unix:///path/to.sock; default
$LLMRELAY_ADDR, else the server's $LLMRELAY_LISTEN, else 127.0.0.1:50051), or
with --local to the embedded default configuration run in process.

`)
	b.WriteString(exitCodesHelp)
	b.WriteString("\n")
	return b.String()
}

// usageError is a command line mistake: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// errHelpShown ends a command after --help printed its usage: exit 0.
var errHelpShown = errors.New("help shown")

// failure is an error whose message is complete for the user (exit 1).
type failure struct{ msg string }

func (e *failure) Error() string { return e.msg }

// Run runs the command line args (without the program name) and returns
// the exit code. Errors go to stderr as words: a gRPC status with its code,
// message and each detail.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	name := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		name, args = args[0], args[1:]
	} else if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		name, args = "help", nil
	} else if len(args) == 1 && (args[0] == "-version" || args[0] == "--version") {
		name, args = "version", nil
	}
	if name == "help" {
		if len(args) == 0 {
			fmt.Fprint(stdout, topUsage())
			return ExitOK
		}
		name, args = args[0], []string{"--help"}
	}
	var cmd *command
	for _, c := range commands() {
		if c.name == name {
			cmd = &c
			break
		}
	}
	if cmd == nil {
		fmt.Fprintf(stderr, "llmrelay: unknown command %q\n\n%s", name, topUsage())
		return ExitUsage
	}
	err := cmd.run(ctx, e, args)
	if err == nil || errors.Is(err, errHelpShown) {
		return ExitOK
	}
	code := exitCode(err)
	fmt.Fprintf(stderr, "llmrelay %s: %s\n", cmd.name, describe(err))
	if code == ExitUsage {
		fmt.Fprintf(stderr, "run \"llmrelay %s --help\" for its flags\n", cmd.name)
	}
	return code
}

// newFlags makes a command's flag set; its errors are returned, not printed.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parse parses flags that may come before, between or after the positional
// arguments ("--" ends the flags). --help prints the command's usage to
// stdout and returns errHelpShown.
func parse(e *env, fs *flag.FlagSet, argsUsage, summary string, args []string) ([]string, error) {
	var pos []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			printUsage(e.stdout, fs, argsUsage, summary)
			return nil, errHelpShown
		}
		if err != nil {
			return nil, &usageError{msg: err.Error()}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func printUsage(w io.Writer, fs *flag.FlagSet, argsUsage, summary string) {
	line := "llmrelay " + fs.Name() + " [flags]"
	if argsUsage != "" {
		line += " " + argsUsage
	}
	fmt.Fprintf(w, "usage: %s\n\n%s\n\nflags:\n", line, summary)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	fmt.Fprintf(w, "\n%s\n", exitCodesHelp)
}

// noArgs rejects positional arguments for commands that take none.
func noArgs(pos []string) error {
	if len(pos) > 0 {
		return usageErrorf("unexpected argument %q", pos[0])
	}
	return nil
}
