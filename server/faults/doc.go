// Package faults is the fault-injection suite (faults_test.go): scripted
// upstreams that refuse, reset, hang, trickle, send garbage or never end,
// each checked for its documented status and meta and for leaked
// goroutines (goleak) and file descriptors. It has no code of its own; it
// is a package so that goleak sees only its own goroutines.
package faults
