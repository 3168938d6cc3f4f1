// Package simtest holds the helpers the simulator's model tests share.
//
// It is imported by tests only. Its -update flag makes [Golden] rewrite the
// golden files instead of comparing with them; only the test binaries of
// packages that import simtest know the flag, so name them:
//
//	go test ./cmd/again/internal/sim/occ ./cmd/again/internal/sim/outage ./cmd/again/internal/sim/fleet -update
package simtest
