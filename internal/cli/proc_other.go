//go:build !unix

package cli

import "os/exec"

// killTree: elsewhere cancelling kills the shell only (cmd.WaitDelay bounds
// the wait for what it started).
func killTree(*exec.Cmd) {}
