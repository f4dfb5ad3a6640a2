//go:build unix

package pipeline

import (
	"errors"
	"net"
	"syscall"
)

// alivePeeks: alive looks at the socket here.
const alivePeeks = true

// probe peeks at one connection's socket; made once per connection, so
// that a check allocates nothing.
type probe struct {
	socket bool            // false: not a socket (tests): the replay rules cover it
	rc     syscall.RawConn // nil for a socket: its descriptor could not be had
	ok     bool
	buf    [1]byte
	peek   func(fd uintptr) bool
}

func newProbe(conn net.Conn) *probe {
	p := &probe{}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return p
	}
	p.socket = true
	rc, err := sc.SyscallConn()
	if err != nil {
		return p // never reused
	}
	p.rc = rc
	p.peek = func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		// 0 bytes with no error: closed; more: bytes sent unasked
		p.ok = errors.Is(rerr, syscall.EAGAIN) || errors.Is(rerr, syscall.EWOULDBLOCK)
		return true // never wait
	}
	return p
}

// alive reports whether a pooled connection can carry a request: the
// server has neither closed it nor sent anything unasked. One
// non-blocking MSG_PEEK read, so that a connection the server closed
// after its keep-alive timeout is dropped before a request is written to
// it instead of failing after.
func (p *probe) alive() bool {
	if !p.socket {
		return true
	}
	p.ok = false
	if p.rc == nil || p.rc.Read(p.peek) != nil {
		return false
	}
	return p.ok
}
