//go:build unix

package pipeline

import (
	"errors"
	"net"
	"syscall"
)

// alivePeeks: alive looks at the socket here.
const alivePeeks = true

// alive reports whether a pooled connection can carry a request: the
// server has neither closed it nor sent anything unasked. One
// non-blocking MSG_PEEK read, so that a connection the server closed
// after its keep-alive timeout is dropped before a request is written to
// it instead of failing after.
func alive(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return true // not a socket (tests): the replay rules cover it
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	ok = false
	var buf [1]byte
	if err := rc.Read(func(fd uintptr) bool {
		n, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		_ = n // 0 with no error: closed; more: bytes sent unasked
		ok = errors.Is(rerr, syscall.EAGAIN) || errors.Is(rerr, syscall.EWOULDBLOCK)
		return true // never wait
	}); err != nil {
		return false
	}
	return ok
}
