//go:build unix

package cli

import (
	"os/exec"
	"syscall"
)

// killTree makes cancelling cmd kill its whole process group, so that a
// shell's children (sh -c "slow-tool") end with it instead of holding its
// output open.
func killTree(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
