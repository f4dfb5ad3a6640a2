//go:build !unix

package pipeline

import "net"

// alivePeeks: alive does not look at the socket here.
const alivePeeks = false

// probe is the liveness check of one connection: none here.
type probe struct{}

func newProbe(net.Conn) *probe { return &probe{} }

// alive cannot peek at a socket here (no MSG_PEEK through syscall on these
// systems): a pooled connection the server closed is found when the
// request is written or its answer read, and the replay rules of
// RoundTrip apply, as net/http's would for a close that raced the reuse:
// a request that did not go out whole, or an idempotent one, is sent
// again on a fresh connection; a POST that went out whole is left to the
// retry policy. TestH1ReplayWithoutPeek runs this path on every system.
func (*probe) alive() bool { return true }
