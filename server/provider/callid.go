package provider

import "strconv"

// FallbackCallID is the id made for the answer's call i (its position
// among the answer's tool calls) that came without one: "call_idx<i>".
func FallbackCallID(i int) string { return "call_idx" + strconv.Itoa(i) }

// MadeCallID is the id made for call i: FallbackCallID(i), unless an id
// of the answer (taken) has that value, then the first of its "_2", "_3"
// ... that none has. A made id equal to one the server sent would make
// two calls one (calls are keyed by id).
//
// A call without an id cannot be answered: the tool result names the call
// it answers by that id. Every adapter keys such a call by a made id, with
// a warning, and sends it back as the call's id in the next turn.
func MadeCallID(i int, taken func(string) bool) string {
	id := FallbackCallID(i)
	for n := 2; taken(id); n++ {
		id = FallbackCallID(i) + "_" + strconv.Itoa(n)
	}
	return id
}
