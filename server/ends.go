package server

import (
	"context"
	"sync"
	"sync/atomic"
)

// callSet holds the cancel functions of the calls in flight, so that the
// end of the grace period can end them (endable). It replaces a
// context.AfterFunc per call on the one drain context, which allocated
// three objects per call and put every call through that context's one
// mutex and children map: calls spread over shards here, each registered
// by a map insert under its shard's lock.
type callSet struct {
	next   atomic.Uint32
	shards [16]callShard
}

type callShard struct {
	mu    sync.Mutex
	ended error // the cause every call gets once the set is ended
	seq   uint64
	calls map[uint64]context.CancelCauseFunc
	_     [64]byte // no false sharing between shards
}

// callSlot is where endable registered a call.
type callSlot struct {
	shard *callShard
	id    uint64
}

// add registers cancel; a set already ended cancels it at once.
func (c *callSet) add(cancel context.CancelCauseFunc) callSlot {
	sh := &c.shards[c.next.Add(1)%uint32(len(c.shards))]
	sh.mu.Lock()
	if err := sh.ended; err != nil {
		sh.mu.Unlock()
		cancel(err)
		return callSlot{}
	}
	if sh.calls == nil {
		sh.calls = map[uint64]context.CancelCauseFunc{}
	}
	sh.seq++
	id := sh.seq
	sh.calls[id] = cancel
	sh.mu.Unlock()
	return callSlot{shard: sh, id: id}
}

// remove forgets a call registered by add.
func (s callSlot) remove() {
	if s.shard == nil {
		return
	}
	s.shard.mu.Lock()
	delete(s.shard.calls, s.id)
	s.shard.mu.Unlock()
}

// end cancels every registered call with cause, and every call added
// later.
func (c *callSet) end(cause error) {
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		sh.ended = cause
		calls := sh.calls
		sh.calls = nil
		sh.mu.Unlock()
		for _, cancel := range calls {
			cancel(cause)
		}
	}
}
